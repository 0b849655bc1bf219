/* Futhark's C API over the native runtime (`incflat compile --backend=opencl --library`): configuration, contexts,
 * errors, synchronisation, profiling reports and tuning parameters here; the array types and the entry points,
 * which depend on the program, are generated (codegen/cprogram.py) over the generic functions at the end, which
 * the Python module (codegen/native/library.py) calls too. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The program of this library (every generated program defines it). */
extern const struct incflat_program *const incflat_library_program;

struct futhark_context_config {
    char *device, *platform;
    bool profiling, logging, debugging;
    bool *given;
    int64_t *values;
};

struct futhark_context {
    struct incflat_ctx *ctx; /* NULL where it could not be made: `error` says why */
    char *error;
};

struct futhark_context_config *futhark_context_config_new(void) {
    struct futhark_context_config *cfg = calloc(1, sizeof *cfg);
    int n = incflat_library_program->param_count;
    cfg->given = calloc((size_t)n + 1, sizeof *cfg->given);
    cfg->values = calloc((size_t)n + 1, sizeof *cfg->values);
    return cfg;
}

void futhark_context_config_free(struct futhark_context_config *cfg) {
    if (!cfg)
        return;
    free(cfg->device);
    free(cfg->platform);
    free(cfg->given);
    free(cfg->values);
    free(cfg);
}

void futhark_context_config_set_device(struct futhark_context_config *cfg, const char *s) {
    free(cfg->device);
    cfg->device = s ? incflat_format("%s", s) : NULL;
}

void futhark_context_config_set_platform(struct futhark_context_config *cfg, const char *s) {
    free(cfg->platform);
    cfg->platform = s ? incflat_format("%s", s) : NULL;
}

void futhark_context_config_set_profiling(struct futhark_context_config *cfg, int flag) { cfg->profiling = flag; }
void futhark_context_config_set_logging(struct futhark_context_config *cfg, int flag) { cfg->logging = flag; }
void futhark_context_config_set_debugging(struct futhark_context_config *cfg, int flag) { cfg->debugging = flag; }

int futhark_get_tuning_param_count(void) { return incflat_library_program->param_count; }

const char *futhark_get_tuning_param_name(int i) {
    return i >= 0 && i < incflat_library_program->param_count ? incflat_library_program->params[i].name : NULL;
}

const char *futhark_get_tuning_param_class(int i) {
    static char classes[64][64];
    if (i < 0 || i >= incflat_library_program->param_count)
        return NULL;
    const char *open = strchr(incflat_library_program->params[i].line_format, '(');
    char *out = classes[i % 64];
    snprintf(out, 64, "%.*s", open ? (int)strcspn(open + 1, "(),") : 0, open ? open + 1 : "");
    return out;
}

int futhark_context_config_set_tuning_param(struct futhark_context_config *cfg, const char *name, size_t value) {
    for (int i = 0; i < incflat_library_program->param_count; i++)
        if (!strcmp(incflat_library_program->params[i].name, name)) {
            cfg->given[i] = true;
            cfg->values[i] = (int64_t)value;
            return 0;
        }
    return 1;
}

struct futhark_context *futhark_context_new(struct futhark_context_config *cfg) {
    struct futhark_context *c = calloc(1, sizeof *c);
    struct incflat_options o = {cfg->device, cfg->platform, 0, 0, 0, cfg->logging, cfg->profiling, cfg->debugging,
                                true};
    c->ctx = incflat_ctx_new(incflat_library_program, &o, cfg->given, cfg->values, &c->error);
    return c;
}

void futhark_context_free(struct futhark_context *c) {
    if (!c)
        return;
    if (c->ctx) {
        incflat_release_fresh(c->ctx);
        incflat_ctx_free(c->ctx);
    }
    free(c->error);
    free(c);
}

/* The context's failure moved into its error (for futhark_context_get_error): 0, or 1 where it failed. */
static int settle_error(struct futhark_context *c) {
    if (!c->ctx)
        return 1;
    if (!c->ctx->failed)
        return 0;
    if (!c->error) {
        c->error = c->ctx->message;
        c->ctx->message = NULL;
    }
    incflat_clear_error(c->ctx);
    incflat_release_fresh(c->ctx);
    return 1;
}

char *futhark_context_get_error(struct futhark_context *c) {
    char *error = c->error;
    c->error = NULL;
    return error;
}

int futhark_context_sync(struct futhark_context *c) {
    if (!c->ctx)
        return 1;
    incflat_finish(c->ctx);
    incflat_check_errors(c->ctx);
    return settle_error(c);
}

int futhark_context_clear_caches(struct futhark_context *c) { return c->ctx ? 0 : 1; }

void futhark_context_pause_profiling(struct futhark_context *c) {
    if (c->ctx)
        c->ctx->profile = false;
}

void futhark_context_unpause_profiling(struct futhark_context *c) {
    if (c->ctx)
        c->ctx->profile = true;
}

char *futhark_context_report(struct futhark_context *c) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f || !c->ctx)
        return NULL;
    incflat_report_profile(c->ctx, f);
    fclose(f);
    return text;
}

/* ---- the generic functions of arrays and entry points ---- */

/* A new array of `rank` dimensions of type `type` from row-major host data (NULL on failure). */
struct incflat_array *incflat_lib_new(struct futhark_context *c, int type, int rank, const int64_t *shape,
                                      const void *data) {
    if (!c->ctx)
        return NULL;
    struct incflat_value v = {(enum incflat_type)type, rank, {0}, (void *)data};
    memcpy(v.shape, shape, sizeof(int64_t) * (size_t)rank);
    struct incflat_slot slot = incflat_upload_value(c->ctx, &v);
    if (settle_error(c))
        return NULL;
    struct incflat_array *a = malloc(sizeof *a);
    *a = slot.array; /* (the reference the slot took is the array's) */
    return a;
}

int incflat_lib_free(struct futhark_context *c, struct incflat_array *a) {
    if (a && c->ctx)
        incflat_arr_release(c->ctx, a);
    free(a);
    return 0;
}

const int64_t *incflat_lib_shape(struct futhark_context *c, const struct incflat_array *a) {
    (void)c;
    return a->shape;
}

int incflat_lib_values(struct futhark_context *c, const struct incflat_array *a, void *data) {
    if (!c->ctx)
        return 1;
    char type[80];
    snprintf(type, sizeof type, "%.*s%s", 2 * a->rank, "[][][][][][][][][][][][][][][][]", incflat_type_name(a->type));
    struct incflat_slot slot = {*a, {0}};
    struct incflat_value v;
    if (incflat_download_value(c->ctx, &slot, type, &v))
        return settle_error(c);
    if (v.data)
        memcpy(data, v.data, incflat_value_count(&v) * incflat_type_size(v.type));
    incflat_value_free(&v);
    return 0;
}

/* Entry point `entry` (its index): ins[i] points to an array (struct incflat_array) or to a scalar; outs[i] to
 * where a new array's pointer or a scalar is written. 0, or 1 with the error in the context. */
int incflat_lib_call(struct futhark_context *c, int entry, void *const *outs, const void *const *ins) {
    if (!c->ctx)
        return 1;
    const struct incflat_entry_info *e = &incflat_library_program->entries[entry];
    struct incflat_slot in[256], out[256];
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    for (int i = 0; i < e->params; i++) {
        if (e->param_types[i][0] == '[')
            in[i].array = *(const struct incflat_array *)ins[i];
        else
            memcpy(&in[i].scalar, ins[i], incflat_type_size((enum incflat_type)incflat_type_from_name(e->param_types[i])));
    }
    e->fn(c->ctx, in, out);
    incflat_check_errors(c->ctx);
    if (settle_error(c)) {
        for (int i = 0; i < e->results; i++)
            incflat_arr_release(c->ctx, &out[i].array);
        return 1;
    }
    for (int i = 0; i < e->results; i++) {
        if (e->result_types[i][0] == '[') {
            struct incflat_array *a = malloc(sizeof *a);
            *a = out[i].array; /* (the reference the slot holds is the array's) */
            *(struct incflat_array **)outs[i] = a;
        } else
            memcpy(outs[i], &out[i].scalar,
                   incflat_type_size((enum incflat_type)incflat_type_from_name(e->result_types[i])));
    }
    return 0;
}

/* incflat_lib_call from host values, as the Python module calls it (one foreign call where it would make seven):
 * ins[i] points to an array's elements, its shape the next values of `shapes`, or to a scalar. The arrays made
 * for the call are freed after it. The shapes of the array results are written one after the other to
 * `result_shapes`. */
int incflat_lib_call_host(struct futhark_context *c, int entry, void *const *outs, const void *const *ins,
                          const int64_t *shapes, int64_t *result_shapes) {
    if (!c->ctx)
        return 1;
    const struct incflat_entry_info *e = &incflat_library_program->entries[entry];
    struct incflat_array *made[256];
    const void *args[256];
    int count = 0, failed = 0;
    for (int i = 0; i < e->params && !failed; i++) {
        const char *t = e->param_types[i];
        int rank = 0;
        while (t[2 * rank] == '[')
            rank++;
        if (!rank) {
            args[i] = ins[i];
            continue;
        }
        made[count] = incflat_lib_new(c, incflat_type_from_name(t + 2 * rank), rank, shapes, ins[i]);
        shapes += rank;
        failed = !made[count];
        args[i] = made[count++];
    }
    if (!failed)
        failed = incflat_lib_call(c, entry, outs, args);
    for (int k = 0; k < count; k++)
        incflat_lib_free(c, made[k]);
    for (int i = 0; i < e->results && !failed; i++)
        if (e->result_types[i][0] == '[') {
            const struct incflat_array *a = *(struct incflat_array *const *)outs[i];
            memcpy(result_shapes, a->shape, sizeof(int64_t) * (size_t)a->rank);
            result_shapes += a->rank;
        }
    return failed;
}

/* incflat_lib_values, then incflat_lib_free (the Python module's one call for each array it returns). */
int incflat_lib_take(struct futhark_context *c, struct incflat_array *a, void *data) {
    int failed = incflat_lib_values(c, a, data);
    incflat_lib_free(c, a);
    return failed;
}
