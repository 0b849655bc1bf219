/* The host's cost of a kernel launch from C, through the native host's OpenCL layer (codegen/native/opencl.c):
 * microseconds per launch of an empty kernel over N launches, after a warm-up, as
 *   bare:      clEnqueueNDRangeKernel (one work-item) and clFinish, the arguments set once before;
 *   args:      clSetKernelArg of both arguments, clEnqueueNDRangeKernel and clFinish;
 *   pipelined: N enqueues, then one clFinish (the launch's cost alone, the device working meanwhile).
 * Prints one JSON object. launch.py builds and runs it beside pyopencl's figures.
 *
 *   launch [-d DEVICE] [-p PLATFORM] [-n N] [--library PATH]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opencl.h"

#define WARMUP 100

enum mode { BARE, ARGS, PIPELINED };
static const char *const MODES[] = {"bare", "args", "pipelined"};

struct bench {
    const struct incflat_cl *cl;
    cl_command_queue queue;
    cl_kernel kernel;
    cl_mem a;
    cl_long n;
};

static void fail(char *why) {
    fprintf(stderr, "launch: %s\n", why);
    free(why);
    exit(1);
}

static void check(const char *what, cl_int err) {
    if (err != CL_SUCCESS)
        fail(incflat_cl_error(what, err));
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void set_args(const struct bench *b) {
    check("clSetKernelArg", b->cl->clSetKernelArg(b->kernel, 0, sizeof b->a, &b->a));
    check("clSetKernelArg", b->cl->clSetKernelArg(b->kernel, 1, sizeof b->n, &b->n));
}

static void enqueue(const struct bench *b) {
    static const size_t one = 1;
    check("clEnqueueNDRangeKernel", b->cl->clEnqueueNDRangeKernel(b->queue, b->kernel, 1, NULL, &one, &one, 0, NULL,
                                                                  NULL));
}

/* Microseconds per launch over `count` launches of a mode (the queue empty before and after). */
static double run(const struct bench *b, enum mode mode, long count) {
    check("clFinish", b->cl->clFinish(b->queue));
    double start = now_us();
    for (long i = 0; i < count; i++) {
        if (mode == ARGS)
            set_args(b);
        enqueue(b);
        if (mode != PIPELINED)
            check("clFinish", b->cl->clFinish(b->queue));
    }
    check("clFinish", b->cl->clFinish(b->queue));
    return (now_us() - start) / count;
}

/* The text as a JSON string (device names are the driver's). */
static void json_string(const char *text) {
    putchar('"');
    for (; *text; text++)
        if (*text == '"' || *text == '\\')
            printf("\\%c", *text);
        else if ((unsigned char)*text < 0x20)
            printf("\\u%04x", (unsigned)*text);
        else
            putchar(*text);
    putchar('"');
}

static void usage(void) {
    fprintf(stderr, "usage: launch [-d DEVICE] [-p PLATFORM] [-n N] [--library PATH]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *device_sub = NULL, *platform_sub = NULL, *library = NULL;
    long n = 10000;
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value)
            usage();
        if (!strcmp(argv[i], "-d"))
            device_sub = value;
        else if (!strcmp(argv[i], "-p"))
            platform_sub = value;
        else if (!strcmp(argv[i], "-n")) {
            char *end;
            n = strtol(value, &end, 10);
            if (*end || n < 1)
                usage();
        } else if (!strcmp(argv[i], "--library"))
            library = value;
        else
            usage();
        i++;
    }
    struct incflat_cl cl;
    struct incflat_cl_device device;
    cl_context context;
    cl_program program;
    cl_int err;
    struct bench b = {&cl, NULL, NULL, NULL, 1};
    char *why = incflat_cl_load(&cl, library, NULL);
    if (why || (why = incflat_cl_choose_device(&cl, platform_sub, device_sub, &device)) ||
        (why = incflat_cl_create(&cl, device.id, 0, &context, &b.queue)) ||
        (why = incflat_cl_build(&cl, context, device.id, "__kernel void k(__global int *a, const long n) { }", NULL,
                                &program)))
        fail(why);
    b.kernel = cl.clCreateKernel(program, "k", &err);
    check("clCreateKernel", err);
    b.a = cl.clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, &err);
    check("clCreateBuffer", err);

    double us[3];
    for (int mode = BARE; mode <= PIPELINED; mode++) {
        set_args(&b); /* (bare and pipelined launch with these) */
        run(&b, mode, WARMUP);
        us[mode] = run(&b, mode, n);
    }
    printf("{\"device\": ");
    json_string(device.name);
    printf(", \"platform\": ");
    json_string(device.platform_name);
    printf(", \"library\": ");
    json_string(cl.path);
    printf(", \"n\": %ld", n);
    for (int mode = BARE; mode <= PIPELINED; mode++)
        printf(", \"%s_us\": %.3f", MODES[mode], us[mode]);
    printf("}\n");

    cl.clReleaseMemObject(b.a);
    cl.clReleaseKernel(b.kernel);
    cl.clReleaseProgram(program);
    cl.clReleaseCommandQueue(b.queue);
    cl.clReleaseContext(context);
    incflat_cl_unload(&cl);
    return 0;
}
