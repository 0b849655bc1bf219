/* A C program over the library of tests/test_native_host.py's API_SOURCE through Futhark's C API (prog.h):
 * prints what each call gives, for the test to compare. */
#include <stdio.h>
#include <stdlib.h>

#include "prog.h"

int main(int argc, char **argv) {
    struct futhark_context_config *cfg = futhark_context_config_new();
    if (argc > 1)
        futhark_context_config_set_device(cfg, argv[1]);
    if (futhark_context_config_set_tuning_param(cfg, "no such parameter", 1) != 1)
        return 2;
    printf("params %d, first %s (%s)\n", futhark_get_tuning_param_count(), futhark_get_tuning_param_name(0),
           futhark_get_tuning_param_class(0));
    struct futhark_context *ctx = futhark_context_new(cfg);
    char *error = futhark_context_get_error(ctx);
    if (error) {
        printf("context: %s\n", error);
        return 1;
    }
    float xs[4] = {0, 1, 2, 3}, ys[4] = {2, 2, 2, 2}, zs[4], total = 0;
    struct futhark_f32_1d *a = futhark_new_f32_1d(ctx, xs, 4), *b = futhark_new_f32_1d(ctx, ys, 4), *out = NULL;
    if (futhark_entry_main(ctx, &out, &total, a, b) || futhark_context_sync(ctx))
        return 3;
    const int64_t *shape = futhark_shape_f32_1d(ctx, out);
    futhark_values_f32_1d(ctx, out, zs);
    printf("main: [%lld] %g %g %g %g, total %g\n", (long long)shape[0], zs[0], zs[1], zs[2], zs[3], total);
    struct futhark_f32_1d *c = futhark_new_f32_1d(ctx, ys, 3), *none = NULL;
    if (futhark_entry_main(ctx, &none, &total, a, c) == 0)
        return 4;
    error = futhark_context_get_error(ctx);
    printf("error: %s\n", error);
    free(error);
    futhark_free_f32_1d(ctx, a);
    futhark_free_f32_1d(ctx, b);
    futhark_free_f32_1d(ctx, c);
    futhark_free_f32_1d(ctx, out);
    futhark_context_free(ctx);
    futhark_context_config_free(cfg);
    return 0;
}
