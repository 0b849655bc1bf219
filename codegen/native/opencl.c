/* OpenCL loaded at run time, and the host's first steps with it: choosing a device, a context and queue,
 * building a program. See opencl.h. */
#define _POSIX_C_SOURCE 200809L /* dup, dup2 (C99 alone has neither) */
#include "opencl.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEVICES 64 /* over all platforms: more than any machine has */

/* A message as printf formats it, allocated (NULL only when memory is out). */
static char *message(const char *format, ...) {
    va_list args, again;
    va_start(args, format);
    va_copy(again, args);
    int size = vsnprintf(NULL, 0, format, args);
    char *text = size < 0 ? NULL : malloc((size_t)size + 1);
    if (text)
        vsnprintf(text, (size_t)size + 1, format, again);
    va_end(again);
    va_end(args);
    return text;
}

/* The name and offset of each member of the table: dlsym's result is copied into it, since ISO C has no
 * conversion from void * to a function pointer (POSIX makes them the same size). */
static const struct { const char *name; size_t offset; } SYMBOLS[] = {
#define INCFLAT_CL_SYMBOL(ret, name, params) {#name, offsetof(struct incflat_cl, name)},
    INCFLAT_CL_FUNCTIONS(INCFLAT_CL_SYMBOL)
#undef INCFLAT_CL_SYMBOL
};

/* For pyopencl's bundled loader at `library` (a file in a folder named .libs): PYOPENCL_HOME, where unset, and the
 * vendor libraries that the folder's .icd files name by file name alone, loaded by path (a later dlopen of the
 * bare name finds a library already loaded). */
static void prepare_pyopencl_loader(const char *library) {
    const char *slash = strrchr(library, '/');
    size_t folder_length = slash ? (size_t)(slash - library) : 0;
    if (folder_length < 6 || strncmp(slash - 6, "/.libs", 6) != 0 || folder_length >= 3800)
        return;
    char folder[4096], home[4096];
    memcpy(folder, library, folder_length);
    folder[folder_length] = '\0';
    memcpy(home, library, folder_length - 6);
    home[folder_length - 6] = '\0';
    setenv("PYOPENCL_HOME", home, 0);
    DIR *dir = opendir(folder);
    if (!dir)
        return;
    for (struct dirent *entry; (entry = readdir(dir));) {
        size_t length = strlen(entry->d_name);
        char path[8192], named[256];
        if (length < 5 || strcmp(entry->d_name + length - 4, ".icd") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", folder, entry->d_name);
        FILE *icd = fopen(path, "r");
        if (!icd)
            continue;
        if (fgets(named, sizeof named, icd)) {
            named[strcspn(named, "\r\n")] = '\0';
            snprintf(path, sizeof path, "%s/%s", folder, named);
            if (*named && !strchr(named, '/') && access(path, R_OK) == 0)
                dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* (left loaded for the process's life, as the loader would) */
        }
        fclose(icd);
    }
    closedir(dir);
}

char *incflat_cl_load(struct incflat_cl *cl, const char *path, const char *fallback) {
    static const char *const SYSTEM[] = {"libOpenCL.so.1", "libOpenCL.so"};
    const char *env = getenv("INCFLAT_OPENCL_LIBRARY");
    const char *named = env && *env ? env : path ? path : fallback && access(fallback, R_OK) == 0 ? fallback : NULL;
    char tried[2][512] = {"", ""};
    memset(cl, 0, sizeof *cl);
    if (named) {
        prepare_pyopencl_loader(named);
        if (!(cl->library = dlopen(named, RTLD_NOW | RTLD_LOCAL)))
            return message("cannot load the OpenCL library%s: %s", /* (dlerror names the file) */
                           named == env ? " that INCFLAT_OPENCL_LIBRARY names" : "", dlerror());
    } else {
        for (int i = 0; i < 2 && !cl->library; i++)
            if (!(cl->library = dlopen(named = SYSTEM[i], RTLD_NOW | RTLD_LOCAL)))
                snprintf(tried[i], sizeof tried[i], "%s", dlerror());
        if (!cl->library)
            return message("cannot load OpenCL (install an ICD loader, or set INCFLAT_OPENCL_LIBRARY to one): %s; %s",
                           tried[0], tried[1]);
    }
    for (size_t i = 0; i < sizeof SYMBOLS / sizeof *SYMBOLS; i++) {
        void *function = dlsym(cl->library, SYMBOLS[i].name);
        if (!function) {
            char *why = message("the OpenCL library %s has no function %s: it is not an OpenCL 1.2 loader", named,
                                SYMBOLS[i].name);
            incflat_cl_unload(cl);
            return why;
        }
        memcpy((char *)cl + SYMBOLS[i].offset, &function, sizeof function);
    }
    if (!(cl->path = message("%s", named))) {
        incflat_cl_unload(cl);
        return message("out of memory");
    }
    return NULL;
}

void incflat_cl_unload(struct incflat_cl *cl) {
    if (cl->library)
        dlclose(cl->library);
    free(cl->path);
    memset(cl, 0, sizeof *cl);
}

const char *incflat_cl_error_name(cl_int code) {
    switch (code) {
#define INCFLAT_CL_CASE(name, value) case value: return #name;
        INCFLAT_CL_ERRORS(INCFLAT_CL_CASE)
#undef INCFLAT_CL_CASE
    }
    return "an unknown OpenCL error";
}

char *incflat_cl_error(const char *what, cl_int code) {
    return code == CL_SUCCESS ? NULL : message("%s failed: %s (%d)", what, incflat_cl_error_name(code), (int)code);
}

/* The text without the blanks around it (drivers pad names). */
static void strip(char *text) {
    size_t start = 0, end = strlen(text);
    while (start < end && isspace((unsigned char)text[start]))
        start++;
    while (end > start && isspace((unsigned char)text[end - 1]))
        end--;
    memmove(text, text + start, end - start);
    text[end - start] = '\0';
}

/* Whether sub (NULL: anything) is in the text, case ignored, as Python's `sub.lower() in text.lower()`. */
static int contains(const char *text, const char *sub) {
    if (!sub)
        return 1;
    for (; *text; text++) {
        size_t i = 0;
        while (sub[i] && tolower((unsigned char)text[i]) == tolower((unsigned char)sub[i]))
            i++;
        if (!sub[i])
            return 1;
    }
    return !*sub;
}

/* PoCL's clang prints a failing kernel's diagnostics straight to the process's stderr; the build log says
 * them once, in the message. (Not for threads: the descriptor is the process's.) */
static int stderr_off(void) {
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, 2);
        close(null);
    }
    return saved;
}

static void stderr_on(int saved) {
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
}

char *incflat_cl_build(const struct incflat_cl *cl, cl_context context, cl_device_id device, const char *source,
                       const char *options, cl_program *program) {
    cl_int err;
    *program = cl->clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (err != CL_SUCCESS)
        return incflat_cl_error("clCreateProgramWithSource", err);
    int saved = stderr_off();
    err = cl->clBuildProgram(*program, 1, &device, options ? options : "", NULL, NULL);
    stderr_on(saved);
    if (err == CL_SUCCESS)
        return NULL;
    size_t size = 0;
    char *log = NULL;
    if (cl->clGetProgramBuildInfo(*program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) == CL_SUCCESS &&
        (log = calloc(size + 1, 1))) {
        cl->clGetProgramBuildInfo(*program, device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
        strip(log);
    }
    char *why = message("building the program failed: %s (%d)%s%s", incflat_cl_error_name(err), (int)err,
                        log && *log ? "\n" : "", log ? log : "");
    free(log);
    cl->clReleaseProgram(*program);
    *program = NULL;
    return why;
}

char *incflat_cl_create(const struct incflat_cl *cl, cl_device_id device, int profiling, cl_context *context,
                        cl_command_queue *queue) {
    cl_int err;
    *queue = NULL;
    *context = cl->clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return incflat_cl_error("clCreateContext", err);
    *queue = cl->clCreateCommandQueue(*context, device, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (err == CL_SUCCESS)
        return NULL;
    cl->clReleaseContext(*context);
    *context = NULL;
    return incflat_cl_error("clCreateCommandQueue", err);
}

static void device_info(const struct incflat_cl *cl, cl_platform_id platform, cl_device_id id,
                        struct incflat_cl_device *d) {
    memset(d, 0, sizeof *d);
    d->platform = platform;
    d->id = id;
    cl->clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof d->platform_name - 1, d->platform_name, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof d->name - 1, d->name, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof d->type, &d->type, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_group_size, &d->max_group_size, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof d->local_mem_size, &d->local_mem_size, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem_size, &d->global_mem_size, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units, &d->compute_units, NULL);
}

/* NULL if the device's compiler builds a trivial kernel, else the last line of its log that names an error:
 * a device can be listed and compile nothing (PoCL 3.0's LLVM 14 on AMD's Zen 5). */
static char *compiler_failure(const struct incflat_cl *cl, cl_device_id device) {
    cl_int err;
    cl_program program;
    cl_context context = cl->clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return incflat_cl_error("clCreateContext", err);
    char *why = incflat_cl_build(cl, context, device, "__kernel void probe(__global int *a) { a[0] = 1; }", NULL,
                                 &program);
    if (!why)
        cl->clReleaseProgram(program);
    cl->clReleaseContext(context);
    char *line = why, *pick = NULL;
    for (char *next; line && *line; line = next) { /* the last line saying "error", else the first */
        next = line + strcspn(line, "\n");
        if (*next)
            *next++ = '\0';
        if (!pick || contains(line, "error"))
            pick = line;
    }
    if (pick) {
        strip(pick);
        memmove(why, pick, strlen(pick) + 1);
    }
    return why;
}

char *incflat_cl_choose_device(const struct incflat_cl *cl, const char *platform_sub, const char *device_sub,
                               struct incflat_cl_device *out) {
    struct incflat_cl_device present[MAX_DEVICES];
    cl_platform_id platforms[16];
    cl_uint nplatforms = 0;
    int npresent = 0;
    platform_sub = platform_sub && *platform_sub ? platform_sub : NULL; /* "" asks for nothing, as in Python */
    device_sub = device_sub && *device_sub ? device_sub : NULL;
    cl_int err = cl->clGetPlatformIDs(16, platforms, &nplatforms);
    if (err != CL_SUCCESS || nplatforms == 0)
        return message("no OpenCL platform is installed (clGetPlatformIDs: %s): install a GPU driver's OpenCL, or "
                       "PoCL (pip install pocl-binary-distribution)",
                       err != CL_SUCCESS ? incflat_cl_error_name(err) : "none");
    for (cl_uint p = 0; p < nplatforms && p < 16; p++) {
        cl_device_id ids[MAX_DEVICES];
        cl_uint n = 0;
        if (cl->clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &n) != CL_SUCCESS)
            continue; /* a platform with no device */
        for (cl_uint i = 0; i < n && i < MAX_DEVICES && npresent < MAX_DEVICES; i++)
            device_info(cl, platforms[p], ids[i], &present[npresent++]);
    }
    /* The candidates, GPUs first, each kind in the order listed (Python's stable sort). */
    int order[MAX_DEVICES], ncandidates = 0;
    for (int gpu = 1; gpu >= 0; gpu--)
        for (int i = 0; i < npresent; i++)
            if (!(present[i].type & CL_DEVICE_TYPE_GPU) == !gpu && contains(present[i].platform_name, platform_sub) &&
                contains(present[i].name, device_sub))
                order[ncandidates++] = i;
    for (int i = 0; i < npresent; i++) {
        strip(present[i].name);
        strip(present[i].platform_name);
    }
    char listed[4096] = "", failures[4096] = "";
    size_t used = 0;
    for (int i = 0; i < npresent && used < sizeof listed; i++)
        used += snprintf(listed + used, sizeof listed - used, "%s%s (%s)", i ? "; " : "", present[i].name,
                         present[i].platform_name);
    if (ncandidates == 0) {
        char asked[1024] = "anything";
        int at = platform_sub ? snprintf(asked, sizeof asked, "platform '%s'", platform_sub) : 0;
        if (device_sub && at >= 0 && (size_t)at < sizeof asked)
            snprintf(asked + at, sizeof asked - at, "%sdevice '%s'", at ? " and " : "", device_sub);
        return message("no OpenCL device matches %s (the devices: %s)", asked, npresent ? listed : "none");
    }
    used = 0;
    for (int c = 0; c < ncandidates; c++) {
        struct incflat_cl_device *d = &present[order[c]];
        char *failure = compiler_failure(cl, d->id);
        if (!failure) {
            *out = *d;
            return NULL;
        }
        if (used < sizeof failures)
            used += snprintf(failures + used, sizeof failures - used, "%s%s (%s): %s", c ? "; " : "", d->name,
                             d->platform_name, failure);
        free(failure);
    }
    return message("no OpenCL device that matches can compile a kernel: %s", failures);
}
