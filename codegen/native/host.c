/* The native host's runtime (see host.h): the device, its kernels and memory, parameters and guards, launches:
 * what ir/runtime/device.py does for the Python host. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GPU_DEFAULT_THRESHOLD 32768
#define DEFAULT_TILE_SIZE 16
#define INDEX32_LIMIT (2147483648LL - 65536LL)

void *incflat_grow(void *items, size_t *cap, size_t count, size_t size) {
    if (count < *cap)
        return items;
    *cap = *cap ? 2 * *cap : 16;
    void *more = realloc(items, *cap * size);
    if (!more) {
        fprintf(stderr, "Error: out of host memory\n");
        exit(1);
    }
    return more;
}

double incflat_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *vformat(const char *format, va_list args) {
    va_list again;
    va_copy(again, args);
    int size = vsnprintf(NULL, 0, format, args);
    char *text = malloc(size < 0 ? 1 : (size_t)size + 1);
    if (text)
        vsnprintf(text, (size_t)size + 1, format, again);
    va_end(again);
    return text;
}

char *incflat_format(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *text = vformat(fmt, args);
    va_end(args);
    return text;
}

/* ---- errors ---- */

void incflat_fail(struct incflat_ctx *ctx, const char *where, const char *fmt, ...) {
    if (ctx->failed)
        return; /* the first failure is the one reported */
    va_list args;
    va_start(args, fmt);
    char *text = vformat(fmt, args);
    va_end(args);
    ctx->failed = true;
    ctx->recoverable = ctx->too_large = false;
    ctx->message = where && *where ? incflat_format("%s: %s", where, text) : text;
    if (ctx->message != text)
        free(text);
}

void incflat_clear_error(struct incflat_ctx *ctx) {
    free(ctx->message);
    ctx->message = NULL;
    ctx->failed = ctx->recoverable = ctx->too_large = false;
}

/* An OpenCL call that failed; recoverable where a workgroup-level version may fall back from it. */
bool incflat_cl_failed(struct incflat_ctx *ctx, cl_int code, const char *what, bool recoverable) {
    if (code == CL_SUCCESS)
        return false;
    incflat_fail(ctx, "", "OpenCL: %s failed: %s (%d)", what, incflat_cl_error_name(code), (int)code);
    ctx->recoverable = recoverable;
    return true;
}

void incflat_shape_text(char *out, size_t len, int rank, const int64_t *shape) {
    size_t at = 0;
    out[0] = 0;
    for (int k = 0; k < rank && at < len; k++)
        at += (size_t)snprintf(out + at, len - at, "[%lld]", (long long)shape[k]);
}

/* ---- building ---- */

static char *build_all(struct incflat_shared *s, const struct incflat_program *p, bool wide) {
    struct build *b = &s->builds[wide];
    int n = p->kernel_count;
    b->kernels = calloc((size_t)n + 1, sizeof *b->kernels);
    b->failures = calloc((size_t)n + 1, sizeof *b->failures);
    b->singles = calloc((size_t)n + 1, sizeof *b->singles);
    b->last_mem = calloc((size_t)n + 1, sizeof *b->last_mem);
    b->last_local = calloc((size_t)n + 1, sizeof *b->last_local);
    b->last_scalars = calloc((size_t)n + 1, sizeof *b->last_scalars);
    b->last_scalars_size = calloc((size_t)n + 1, sizeof *b->last_scalars_size);
    b->made = true;
    const char *options = wide ? "-w -DINDEX64" : "-w";
    size_t total = strlen(p->prelude) + 1;
    for (int k = 0; k < n; k++)
        total += strlen(p->kernels[k].source);
    char *source = malloc(total);
    strcpy(source, p->prelude);
    for (int k = 0; k < n; k++)
        strcat(source, p->kernels[k].source);
    char *why = n ? incflat_cl_build(&s->cl, s->context, s->device.id, source, options, &b->program) : NULL;
    free(source);
    if (!n)
        return NULL;
    if (!why) {
        for (int k = 0; k < n; k++) {
            cl_int err;
            b->kernels[k] = s->cl.clCreateKernel(b->program, p->kernels[k].name, &err);
            if (err != CL_SUCCESS)
                return incflat_cl_error("clCreateKernel", err);
        }
        return NULL;
    }
    free(why);
    /* one kernel the device cannot build takes only its own version out */
    for (int k = 0; k < n; k++) {
        char *text = malloc(strlen(p->prelude) + strlen(p->kernels[k].source) + 1);
        strcpy(text, p->prelude);
        strcat(text, p->kernels[k].source);
        char *failure = incflat_cl_build(&s->cl, s->context, s->device.id, text, options, &b->singles[k]);
        free(text);
        if (failure) {
            /* the log's last line that says error, without its file position */
            char *last = NULL;
            for (char *line = strtok(failure, "\n"); line; line = strtok(NULL, "\n"))
                if (strstr(line, "error") || strstr(line, "Error"))
                    last = line;
            const char *shown = last ? last : failure;
            const char *cut = strstr(shown, ".cl:");
            if (cut) {
                const char *after = strstr(cut, ": ");
                while (after && after[2] >= '0' && after[2] <= '9')
                    after = strstr(after + 2, ": ");
                if (after)
                    shown = after + 2;
            }
            while (*shown == ' ' || *shown == '\t')
                shown++;
            b->failures[k] = incflat_format("%s", shown);
            free(failure);
            continue;
        }
        cl_int err;
        b->kernels[k] = s->cl.clCreateKernel(b->singles[k], p->kernels[k].name, &err);
        if (err != CL_SUCCESS)
            b->failures[k] = incflat_cl_error("clCreateKernel", err);
    }
    return NULL;
}

static struct build *build_of(struct incflat_ctx *ctx, bool wide) {
    struct incflat_shared *s = ctx->shared;
    if (!s->builds[wide].made) {
        char *why = build_all(s, ctx->program, wide);
        if (why) {
            incflat_fail(ctx, "", "%s", why);
            free(why);
            return NULL;
        }
        if (wide)
            memset(s->group_limits, 0, sizeof(int64_t) * (size_t)(ctx->program->kernel_count + 1));
    }
    return &s->builds[wide];
}

static void unavailable(struct incflat_ctx *ctx, int kernel, bool wide) {
    incflat_fail(ctx, "", "kernel %s could not be built for %s: %s", ctx->program->kernels[kernel].name,
                 ctx->device_name, ctx->shared->builds[wide].failures[kernel]);
    ctx->recoverable = true;
}

/* ---- the context ---- */

static struct incflat_ctx *ctx_make(struct incflat_shared *s, const struct incflat_program *p,
                                    const struct incflat_options *o, const bool *given, const int64_t *overrides) {
    struct incflat_ctx *ctx = calloc(1, sizeof *ctx);
    ctx->program = p;
    ctx->shared = s;
    ctx->cl = &s->cl;
    ctx->queue = s->queue;
    snprintf(ctx->device_name, sizeof ctx->device_name, "%s", s->device.name);
    ctx->is_gpu = (s->device.type & CL_DEVICE_TYPE_GPU) != 0;
    ctx->log = o->log;
    ctx->profile = o->profile;
    ctx->debug = o->debug;
    ctx->fallback = o->fallback;
    ctx->max_group_size = (int64_t)s->device.max_group_size;
    ctx->local_mem_size = (int64_t)s->device.local_mem_size;
    ctx->global_mem_size = (int64_t)s->device.global_mem_size;
    int64_t cus = s->device.compute_units;
    ctx->default_threshold = o->default_threshold ? o->default_threshold : (ctx->is_gpu ? GPU_DEFAULT_THRESHOLD : cus);
    int64_t group = o->default_group_size ? o->default_group_size : (ctx->is_gpu ? 256 : 32);
    ctx->group_size = group < ctx->max_group_size ? group : ctx->max_group_size;
    ctx->num_groups = (ctx->is_gpu ? 8 : 1) * cus;
    ctx->default_tile_size = o->default_tile_size ? o->default_tile_size : DEFAULT_TILE_SIZE;
    int n = p->param_count;
    ctx->values = calloc((size_t)n + 1, sizeof *ctx->values);
    ctx->failed_groups = calloc((size_t)n + 1, sizeof *ctx->failed_groups);
    ctx->warned = calloc((size_t)n + 1, sizeof *ctx->warned);
    for (int i = 0; i < n; i++) {
        const struct incflat_param_info *q = &p->params[i];
        ctx->values[i] = q->threshold ? (q->has_default ? q->default_value : ctx->default_threshold)
                                      : (q->user ? INCFLAT_UNSET : 0);
        if (p->tuned[2 * i])
            ctx->values[i] = p->tuned[2 * i + 1];
        if (given && given[i])
            ctx->values[i] = overrides[i];
        ctx->failed_groups[i] = INT64_MAX;
    }
    ctx->error_buf = s->error_buf;
    ctx->prof = calloc(1, sizeof *ctx->prof);
    s->users++;
    if (ctx->debug) {
        fprintf(stderr, p->formats.device_line, s->device.name, s->device.platform_name);
        fputc('\n', stderr);
        fprintf(stderr, p->formats.default_threshold_line, (long long)ctx->default_threshold);
        fputc('\n', stderr);
    }
    return ctx;
}

struct incflat_ctx *incflat_ctx_new(const struct incflat_program *p, const struct incflat_options *o,
                                    const bool *given, const int64_t *overrides, char **error) {
    struct incflat_shared *s = calloc(1, sizeof *s);
    char *why = incflat_cl_load(&s->cl, NULL, p->opencl_loader);
    if (!why)
        why = incflat_cl_choose_device(&s->cl, o->platform, o->device, &s->device);
    if (!why)
        why = incflat_cl_create(&s->cl, s->device.id, o->profile, &s->context, &s->queue);
    if (!why) {
        cl_int err;
        int64_t zeros[8] = {0};
        s->error_buf = s->cl.clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zeros, zeros,
                                            &err);
        why = incflat_cl_error("clCreateBuffer", err);
    }
    if (!why) {
        s->group_limits = calloc((size_t)p->kernel_count + 1, sizeof *s->group_limits);
        why = build_all(s, p, false);
    }
    if (why) {
        *error = why;
        return NULL; /* (a process that fails here exits: nothing is freed) */
    }
    struct incflat_ctx *ctx = ctx_make(s, p, o, given, overrides);
    ctx->owner = true;
    return ctx;
}

struct incflat_ctx *incflat_ctx_alternate(struct incflat_ctx *first, const bool *given, const int64_t *overrides) {
    struct incflat_options o = {NULL, NULL, first->default_threshold, first->group_size, first->default_tile_size,
                                first->log, first->profile, first->debug, first->fallback};
    bool debug = first->debug;
    o.debug = false;
    struct incflat_ctx *ctx = ctx_make(first->shared, first->program, &o, given, overrides);
    ctx->debug = debug;
    return ctx;
}

void incflat_ctx_free(struct incflat_ctx *ctx) {
    /* The process ends after this: the device's objects go with it. */
    free(ctx->values);
    free(ctx->failed_groups);
    free(ctx->warned);
    free(ctx->message);
    free(ctx);
}

/* ---- parameters and guards ---- */

bool incflat_cmp(struct incflat_ctx *ctx, int param, int64_t par) {
    bool result = ctx->values[param] <= par;
    if (ctx->log) {
        fprintf(stderr, result ? ctx->program->formats.compared_true : ctx->program->formats.compared_false,
                ctx->program->params[param].name, (long long)par);
        fputc('\n', stderr);
    }
    return result;
}

int64_t incflat_size(struct incflat_ctx *ctx, int param, int64_t fallback, int64_t most) {
    int64_t value = ctx->values[param];
    return value > 0 ? (value < most ? value : most) : fallback;
}

int64_t incflat_user_param(struct incflat_ctx *ctx, int param, int64_t fallback) {
    return ctx->values[param] == INCFLAT_UNSET ? fallback : ctx->values[param];
}

int64_t incflat_tile_size(struct incflat_ctx *ctx, int kernel, int param) {
    int64_t tile = incflat_size(ctx, param, ctx->default_tile_size, 1 << 15);
    int64_t most = incflat_kernel_group_size(ctx, 1, &kernel, tile * tile);
    int64_t root = (int64_t)sqrt((double)most);
    while (root * root > most)
        root--;
    while ((root + 1) * (root + 1) <= most)
        root++;
    int64_t out = tile < root ? tile : root;
    return out > 1 ? out : 1;
}

static void falling_back(struct incflat_ctx *ctx, int param, int64_t par, const char *why) {
    const char *name = ctx->program->params[param].name;
    if (!ctx->fallback) {
        char *why_copy = incflat_format("%s", why);
        incflat_clear_error(ctx);
        incflat_fail(ctx, "", ctx->program->formats.no_fallback, name, (long long)par, ctx->device_name, why_copy);
        free(why_copy);
        return;
    }
    if (ctx->log)
        fprintf(stderr, "%s: the version does not fit (%s); using the next version.\n", name, why);
}

bool incflat_fits_group(struct incflat_ctx *ctx, int param, int64_t par, int64_t local_bytes) {
    bool fits = 0 < par && par <= ctx->max_group_size && par * local_bytes <= ctx->local_mem_size;
    if (fits && par >= ctx->failed_groups[param]) {
        char why[128];
        snprintf(why, sizeof why, "a workgroup of %lld threads failed to launch before", (long long)par);
        falling_back(ctx, param, par, why);
        return false;
    }
    if (!fits) {
        char why[512];
        snprintf(why, sizeof why, "a workgroup of %lld threads and %lld bytes of local memory each; %s has at most "
                 "%lld threads and %lld bytes", (long long)par, (long long)local_bytes, ctx->device_name,
                 (long long)ctx->max_group_size, (long long)ctx->local_mem_size);
        falling_back(ctx, param, par, why);
    }
    return fits;
}

void incflat_warn_once(struct incflat_ctx *ctx, int param, int64_t par) {
    char *why = ctx->message;
    bool too_large = ctx->too_large;
    ctx->message = NULL;
    incflat_clear_error(ctx);
    falling_back(ctx, param, par, why ? why : "");
    if (par < ctx->failed_groups[param])
        ctx->failed_groups[param] = par;
    if (!ctx->failed && !too_large && !ctx->warned[param]) {
        ctx->warned[param] = true;
        /* (the message without the "OpenCL: " of a failed call, as pyopencl's error reads) */
        fprintf(stderr, "Warning: the version guarded by %s could not be run on %s (%s); using the next version.\n",
                ctx->program->params[param].name, ctx->device_name, why ? why : "");
    }
    free(why);
}

void incflat_enter(struct incflat_ctx *ctx, int param, bool outcome, int64_t par) {
    struct incflat_profile *p = ctx->prof;
    if (ctx->profile && p->open_count < 64)
        p->open[p->open_count++] =
            (struct open_version){param, outcome, par, (int64_t)p->command_count - 1, incflat_now()};
}

void incflat_leave(struct incflat_ctx *ctx) {
    struct incflat_profile *p = ctx->prof;
    if (!ctx->profile || !p->open_count)
        return;
    double left = incflat_now();
    struct open_version v = p->open[--p->open_count];
    p->unsettled = incflat_grow(p->unsettled, &p->unsettled_cap, p->unsettled_count, sizeof *p->unsettled);
    p->unsettled[p->unsettled_count++] =
        (struct unsettled){v.param, v.outcome, v.par, v.before, (int64_t)p->command_count - 1, left - v.entered};
}

void incflat_timed(struct incflat_ctx *ctx, const char *name, cl_event event) {
    struct incflat_profile *p = ctx->prof;
    p->commands = incflat_grow(p->commands, &p->command_cap, p->command_count, sizeof *p->commands);
    p->commands[p->command_count++] = (struct command){name, event, 0, 0};
}

/* ---- memory ---- */

static struct incflat_mem *allocate(struct incflat_ctx *ctx, size_t nbytes) {
    struct incflat_shared *s = ctx->shared;
    if (nbytes < 1)
        nbytes = 1;
    struct incflat_mem **best = NULL;
    for (struct incflat_mem **m = &s->free_list; *m; m = &(*m)->next)
        if ((*m)->size >= nbytes && (!best || (*m)->size < (*best)->size))
            best = m;
    struct incflat_mem *mem;
    if (best && (*best)->size <= 2 * nbytes + 4096) {
        mem = *best;
        *best = mem->next;
    } else {
        cl_int err;
        cl_mem buf = s->cl.clCreateBuffer(s->context, CL_MEM_READ_WRITE, nbytes, NULL, &err);
        if (err != CL_SUCCESS) { /* the free list's memory back to the driver, and once more */
            while (s->free_list) {
                struct incflat_mem *m = s->free_list;
                s->free_list = m->next;
                s->mem_blocks--;
                s->mem_bytes -= (int64_t)m->size;
                s->cl.clReleaseMemObject(m->buf);
                free(m);
            }
            buf = s->cl.clCreateBuffer(s->context, CL_MEM_READ_WRITE, nbytes, NULL, &err);
        }
        if (err != CL_SUCCESS)
            return NULL;
        mem = calloc(1, sizeof *mem);
        mem->buf = buf;
        mem->size = nbytes;
        s->mem_blocks++;
        s->mem_bytes += (int64_t)nbytes;
    }
    mem->refs = 0;
    mem->fresh = true;
    mem->next = NULL;
    if (s->fresh_count >= 64) { /* drop those referred to since */
        size_t kept = 0;
        for (size_t i = 0; i < s->fresh_count; i++)
            if (s->fresh[i]->fresh)
                s->fresh[kept++] = s->fresh[i];
        s->fresh_count = kept;
    }
    s->fresh = incflat_grow(s->fresh, &s->fresh_cap, s->fresh_count, sizeof *s->fresh);
    s->fresh[s->fresh_count++] = mem;
    return mem;
}

void incflat_memory_held(struct incflat_ctx *ctx, int64_t *blocks, int64_t *bytes) {
    *blocks = ctx->shared->mem_blocks;
    *bytes = ctx->shared->mem_bytes;
}

void incflat_mem_release(struct incflat_ctx *ctx, struct incflat_mem *m) {
    if (!m || --m->refs > 0)
        return;
    m->refs = 0;
    m->fresh = false;
    m->next = ctx->shared->free_list;
    ctx->shared->free_list = m;
}

/* Memory made here and not kept. */
void incflat_drop(struct incflat_ctx *ctx, struct incflat_mem *m) {
    if (m && m->fresh && m->refs == 0) {
        m->refs = 1;
        incflat_mem_release(ctx, m);
    }
}

void incflat_release_fresh(struct incflat_ctx *ctx) {
    struct incflat_shared *s = ctx->shared;
    for (size_t i = 0; i < s->fresh_count; i++)
        incflat_drop(ctx, s->fresh[i]);
    s->fresh_count = 0;
}

void incflat_arr_set(struct incflat_ctx *ctx, struct incflat_array *target, struct incflat_array value) {
    if (value.mem && value.mem->refs == 0 && !value.mem->fresh) { /* (a wrong result otherwise: shared memory) */
        incflat_fail(ctx, "", "internal error: memory given back to the free list is referred to again");
        return;
    }
    if (value.mem) {
        value.mem->refs++;
        value.mem->fresh = false;
    }
    struct incflat_mem *old = target->mem;
    *target = value;
    incflat_mem_release(ctx, old);
}

void incflat_arr_release(struct incflat_ctx *ctx, struct incflat_array *a) {
    incflat_mem_release(ctx, a->mem);
    a->mem = NULL;
}

bool incflat_contiguous(const struct incflat_array *a) {
    int64_t stride = 1;
    for (int k = a->rank - 1; k >= 0; k--) {
        if (a->strides[k] != stride)
            return false;
        stride *= a->shape[k] > 1 ? a->shape[k] : 1;
    }
    return true;
}

int64_t incflat_count(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= shape[k];
    return n;
}

void incflat_row_major(int rank, const int64_t *shape, int64_t *strides) {
    int64_t stride = 1;
    for (int k = rank - 1; k >= 0; k--) {
        strides[k] = stride;
        stride *= shape[k] > 1 ? shape[k] : 1;
    }
}

struct incflat_array incflat_empty(struct incflat_ctx *ctx, int rank, const int64_t *shape, enum incflat_type type,
                                   const char *where, const char *what, int interleave) {
    struct incflat_array a = {0};
    a.rank = rank;
    a.type = type;
    if (rank > INCFLAT_RANK) {
        incflat_fail(ctx, where, "arrays of %d dimensions are not supported (at most %d)", rank, INCFLAT_RANK);
        return a;
    }
    bool zero = false, negative = false;
    for (int k = 0; k < rank; k++) {
        a.shape[k] = shape[k];
        zero |= shape[k] == 0;
        negative |= shape[k] < 0;
    }
    if (negative) {
        if (zero) /* no element: a size no element computed cannot be wrong */
            for (int k = 0; k < rank; k++)
                a.shape[k] = a.shape[k] > 0 ? a.shape[k] : 0;
        else {
            incflat_check_sizes(ctx, rank, shape, what ? what : "an allocation", where);
            return a;
        }
    }
    int64_t count = incflat_count(rank, a.shape);
    size_t size = incflat_type_size(type);
    char text[INCFLAT_RANK * 24 + 1];
    incflat_shape_text(text, sizeof text, rank, a.shape);
    if ((double)count * (double)size > (double)ctx->global_mem_size) {
        incflat_fail(ctx, where, "Out of memory: %s would make an array of shape %s (%lld bytes; the device %s has "
                     "%lld bytes).", what ? what : "an allocation", text, (long long)(count * (int64_t)size),
                     ctx->device_name, (long long)ctx->global_mem_size);
        return a;
    }
    a.mem = allocate(ctx, (size_t)count * size);
    if (!a.mem) {
        incflat_fail(ctx, where, "Out of memory: %s would make an array of shape %s (%lld bytes, more than the "
                     "device %s could allocate).", what ? what : "an allocation", text,
                     (long long)(count * (int64_t)size), ctx->device_name);
        return a;
    }
    if (count > ctx->shared->widest)
        ctx->shared->widest = count;
    if (interleave && rank > interleave) { /* the first `interleave` dimensions innermost */
        int64_t threads = 1, inner[INCFLAT_RANK];
        for (int k = 0; k < interleave; k++)
            threads *= a.shape[k] > 1 ? a.shape[k] : 1;
        incflat_row_major(interleave, a.shape, a.strides);
        incflat_row_major(rank - interleave, a.shape + interleave, inner);
        for (int k = interleave; k < rank; k++)
            a.strides[k] = inner[k - interleave] * threads;
    } else
        incflat_row_major(rank, a.shape, a.strides);
    return a;
}

struct incflat_mem *incflat_scratch(struct incflat_ctx *ctx, int64_t count, enum incflat_type type) {
    if (count > ctx->shared->widest)
        ctx->shared->widest = count;
    struct incflat_mem *m = allocate(ctx, (size_t)(count > 0 ? count : 1) * incflat_type_size(type));
    if (!m)
        incflat_fail(ctx, "", "Out of memory: %lld bytes of scratch memory", (long long)count);
    return m;
}

static void count_transfer(struct incflat_ctx *ctx, bool up, int64_t elements, int64_t bytes, bool constant) {
    struct incflat_transfers *t = &ctx->transfers;
    if (constant)
        t->constants++;
    else if (up) {
        if (elements > 1) {
            t->arrays_up++;
            t->bytes_up += bytes;
        } else
            t->values_up++;
    } else if (elements > 1) {
        t->arrays_down++;
        t->bytes_down += bytes;
    } else
        t->values_down++;
}

void incflat_upload(struct incflat_ctx *ctx, cl_mem buf, const void *host, int64_t elements, size_t bytes,
                   size_t byte_offset, bool constant) {
    count_transfer(ctx, true, elements, (int64_t)bytes, constant);
    if (bytes)
        incflat_cl_failed(ctx, ctx->cl->clEnqueueWriteBuffer(ctx->queue, buf, 1, byte_offset, bytes, host, 0, NULL, NULL),
                  "clEnqueueWriteBuffer", false);
}

void incflat_download(struct incflat_ctx *ctx, void *host, cl_mem buf, int64_t elements, size_t bytes,
                     size_t byte_offset) {
    count_transfer(ctx, false, elements, (int64_t)bytes, false);
    if (bytes)
        incflat_cl_failed(ctx, ctx->cl->clEnqueueReadBuffer(ctx->queue, buf, 1, byte_offset, bytes, host, 0, NULL, NULL),
                  "clEnqueueReadBuffer", false);
}

/* ---- kernels ---- */

void incflat_launch(struct incflat_ctx *ctx, int kernel, int64_t global_size, int64_t local_size,
                    const struct incflat_karg *memory, int memory_count, const void *scalars, size_t scalars_size,
                    int64_t reach) {
    if (global_size == 0)
        return;
    struct incflat_shared *s = ctx->shared;
    bool wide = reach >= INDEX32_LIMIT || global_size >= INDEX32_LIMIT || s->widest >= INDEX32_LIMIT;
    struct build *b = build_of(ctx, wide);
    if (!b)
        return;
    cl_kernel k = b->kernels[kernel];
    if (!k) {
        unavailable(ctx, kernel, wide);
        return;
    }
    /* setting an argument costs more than launching: only those that changed since the last launch */
    if (!b->last_mem[kernel]) {
        b->last_mem[kernel] = calloc((size_t)memory_count + 1, sizeof(cl_mem));
        b->last_local[kernel] = calloc((size_t)memory_count + 1, sizeof(size_t));
        b->last_scalars[kernel] = calloc(scalars_size + 1, 1);
        b->last_scalars_size[kernel] = (size_t)-1;
    }
    int64_t local_bytes = 0;
    for (int i = 0; i < memory_count; i++) {
        const struct incflat_karg *m = &memory[i];
        if (m->buf) {
            if (b->last_mem[kernel][i] != m->buf || b->last_local[kernel][i]) {
                if (incflat_cl_failed(ctx, ctx->cl->clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &m->buf), "clSetKernelArg",
                              true))
                    return;
                b->last_mem[kernel][i] = m->buf;
                b->last_local[kernel][i] = 0;
            }
        } else {
            local_bytes += (int64_t)m->local;
            if (b->last_local[kernel][i] != m->local) {
                if (incflat_cl_failed(ctx, ctx->cl->clSetKernelArg(k, (cl_uint)i, m->local, NULL), "clSetKernelArg", true))
                    return;
                b->last_local[kernel][i] = m->local;
                b->last_mem[kernel][i] = NULL;
            }
        }
    }
    if (scalars_size && (b->last_scalars_size[kernel] != scalars_size ||
                         memcmp(b->last_scalars[kernel], scalars, scalars_size))) {
        if (incflat_cl_failed(ctx, ctx->cl->clSetKernelArg(k, (cl_uint)memory_count, scalars_size, scalars), "clSetKernelArg",
                      true))
            return;
        memcpy(b->last_scalars[kernel], scalars, scalars_size);
        b->last_scalars_size[kernel] = scalars_size;
    }
    if (local_bytes > ctx->local_mem_size) {
        incflat_fail(ctx, "", "kernel %s's workgroups need %lld bytes of local memory; %s has %lld",
                     ctx->program->kernels[kernel].name, (long long)local_bytes, ctx->device_name,
                     (long long)ctx->local_mem_size);
        ctx->recoverable = ctx->too_large = true;
        return;
    }
    size_t global = (size_t)global_size, local = (size_t)local_size;
    cl_event event = NULL;
    if (!incflat_cl_failed(ctx, ctx->cl->clEnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global, &local, 0, NULL,
                                                        ctx->profile ? &event : NULL),
                   "clEnqueueNDRangeKernel", true) && ctx->profile)
        incflat_timed(ctx, ctx->program->kernels[kernel].name, event);
}

int64_t incflat_kernel_group_size(struct incflat_ctx *ctx, int count, const int *kernels, int64_t group_size) {
    struct incflat_shared *s = ctx->shared;
    for (int i = 0; i < count; i++) {
        int k = kernels[i];
        if (!s->builds[0].kernels[k]) {
            unavailable(ctx, k, false);
            return group_size;
        }
        if (!s->group_limits[k]) {
            int64_t least = INT64_MAX;
            for (int wide = 0; wide < 2; wide++) {
                if (!s->builds[wide].made || !s->builds[wide].kernels[k])
                    continue;
                size_t most = 0;
                if (incflat_cl_failed(ctx, ctx->cl->clGetKernelWorkGroupInfo(s->builds[wide].kernels[k], s->device.id,
                                                                     CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most,
                                                                     NULL),
                              "clGetKernelWorkGroupInfo", true))
                    return group_size;
                if ((int64_t)most < least)
                    least = (int64_t)most;
            }
            s->group_limits[k] = least;
        }
        if (s->group_limits[k] < group_size)
            group_size = s->group_limits[k];
    }
    return group_size;
}

int64_t incflat_fit_local(struct incflat_ctx *ctx, int64_t group_size, int64_t bytes_per_thread) {
    int64_t fit = incflat_floordiv(ctx->local_mem_size - 256, bytes_per_thread);
    int64_t out = group_size < fit ? group_size : fit;
    return out > 1 ? out : 1;
}

/* A buffer of the runtime's own kept at `*size` elements of `element` bytes, zeros, and made larger (twice, at
 * least 1024 elements) where `need` are more: false where that fails. */
static bool zeroed(struct incflat_ctx *ctx, cl_mem *buf, int64_t *size, int64_t need, size_t element) {
    struct incflat_shared *s = ctx->shared;
    if (need <= *size)
        return true;
    int64_t grown = need > 2 * *size ? need : 2 * *size;
    grown = grown > 1024 ? grown : 1024;
    if (*buf)
        s->cl.clReleaseMemObject(*buf);
    cl_int err;
    *buf = s->cl.clCreateBuffer(s->context, CL_MEM_READ_WRITE, (size_t)grown * element, NULL, &err);
    if (incflat_cl_failed(ctx, err, "clCreateBuffer", false)) {
        *buf = NULL;
        *size = 0;
        return false;
    }
    *size = grown;
    uint64_t zero = 0;
    return !incflat_cl_failed(ctx, s->cl.clEnqueueFillBuffer(ctx->queue, *buf, &zero, element, 0,
                                                             (size_t)grown * element, 0, NULL, NULL),
                              "clEnqueueFillBuffer", false);
}

cl_mem incflat_segment_counters(struct incflat_ctx *ctx, int64_t segments) {
    struct incflat_shared *s = ctx->shared;
    return zeroed(ctx, &s->counters, &s->counters_size, segments, 4) ? s->counters : NULL;
}

cl_mem incflat_lookback(struct incflat_ctx *ctx, int64_t blocks) {
    struct incflat_shared *s = ctx->shared;
    cl_int err;
    if (!s->scan_counters) {
        uint32_t zeros[2] = {0, 0};
        s->scan_counters = s->cl.clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zeros,
                                                zeros, &err);
        if (incflat_cl_failed(ctx, err, "clCreateBuffer", false))
            return NULL;
    }
    if (s->scan_epoch + 1 >= (1LL << 29)) /* the epochs wrap: the statuses cleared (made again) */
        s->scan_blocks = 0;
    if (blocks > s->scan_blocks) {
        if (!zeroed(ctx, &s->scan_status, &s->scan_blocks, blocks, 8))
            return NULL;
        s->scan_epoch = 0;
    }
    s->scan_epoch++;
    return s->scan_status;
}

cl_mem incflat_scan_counters(struct incflat_ctx *ctx) { return ctx->shared->scan_counters; }

int64_t incflat_scan_epoch(struct incflat_ctx *ctx) { return ctx->shared->scan_epoch; }

