/* The whole call of launch.py's one-kernel entry point through Futhark's C API, as a C program makes it: two
 * input arrays made from host memory, the entry point, its result read back, the three arrays freed. Prints
 * each call's microseconds, one a line, after `warm-up` calls. Built by launch.py against the library's header
 * (one.h). Usage: api_call [-d DEVICE] N WARMUP */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "one.h"

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    struct futhark_context_config *cfg = futhark_context_config_new();
    int arg = 1;
    if (argc > 2 && !strcmp(argv[1], "-d")) {
        futhark_context_config_set_device(cfg, argv[2]);
        arg = 3;
    }
    if (argc != arg + 2) {
        fprintf(stderr, "usage: api_call [-d DEVICE] N WARMUP\n");
        return 2;
    }
    long n = atol(argv[arg]), warmup = atol(argv[arg + 1]);
    struct futhark_context *ctx = futhark_context_new(cfg);
    char *error = futhark_context_get_error(ctx);
    if (error) {
        fprintf(stderr, "api_call: %s\n", error);
        return 1;
    }
    float xs[3] = {1, 2, 3}, ys[3] = {4, 5, 6}, zs[3];
    for (long i = 0; i < warmup + n; i++) {
        double start = now_us();
        struct futhark_f32_1d *a = futhark_new_f32_1d(ctx, xs, 3), *b = futhark_new_f32_1d(ctx, ys, 3), *out = NULL;
        if (!a || !b || futhark_entry_main(ctx, &out, a, b) || futhark_values_f32_1d(ctx, out, zs) ||
            futhark_context_sync(ctx)) {
            error = futhark_context_get_error(ctx);
            fprintf(stderr, "api_call: %s\n", error ? error : "failed");
            return 1;
        }
        futhark_free_f32_1d(ctx, a);
        futhark_free_f32_1d(ctx, b);
        futhark_free_f32_1d(ctx, out);
        double us = now_us() - start;
        if (i >= warmup)
            printf("%.3f\n", us);
    }
    futhark_context_free(ctx);
    futhark_context_config_free(cfg);
    return 0;
}
