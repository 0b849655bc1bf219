/* The native host's runtime (see host.h): what ir/runtime/device.py and arrays.py do for the Python host. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "host.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GPU_DEFAULT_THRESHOLD 32768
#define DEFAULT_TILE_SIZE 16
#define INDEX32_LIMIT (2147483648LL - 65536LL)
#define COPY_GROUP 256

/* ---- what the context's of one device share ---- */

struct build {
    bool made;
    cl_program program;  /* the whole program, or NULL where kernels were built one by one */
    cl_program *singles; /* per kernel, where they were */
    cl_kernel *kernels;  /* NULL where the kernel did not build */
    char **failures;     /* why */
    cl_mem **last_mem;   /* per kernel: the buffers it was last launched with */
    size_t **last_local;
    unsigned char **last_scalars;
    size_t *last_scalars_size;
};

struct runtime_kernel {
    const char *name;
    cl_kernel kernel;
    unsigned char last[8][256];
    size_t last_size[8];
};

struct constant {
    const void *data;
    enum incflat_type type;
    struct incflat_array array;
};

struct incflat_shared {
    struct incflat_cl cl;
    struct incflat_cl_device device;
    cl_context context;
    cl_command_queue queue;
    struct build builds[2];
    int64_t *group_limits; /* per kernel, 0 until asked */
    struct incflat_mem *free_list;
    struct incflat_mem **fresh;
    size_t fresh_count, fresh_cap;
    int64_t widest;
    cl_mem error_buf, counters, scan_status, scan_counters;
    int64_t counters_size, scan_blocks, scan_epoch;
    cl_program copy_program;
    struct runtime_kernel copies[32];
    int copy_count;
    struct constant *constants;
    size_t constant_count;
    int users;
};

struct command { const char *name; cl_event event; uint64_t start, end; };
struct open_version { int param; bool outcome; int64_t par; int64_t before; double entered; };
struct unsettled { int param; bool outcome; int64_t par; int64_t before, last; double host; };
struct version_record { int param; bool outcome; int64_t par; double time_us, host_us, span_us; };
struct kernel_time { const char *name; double total; int64_t count; };

struct incflat_profile {
    struct command *commands;
    size_t command_count, command_cap;
    struct open_version open[64];
    int open_count;
    struct unsettled *unsettled;
    size_t unsettled_count, unsettled_cap;
    struct version_record *log;
    size_t log_count, log_cap;
    struct kernel_time *times;
    size_t time_count, time_cap;
};


static void *grow(void *items, size_t *cap, size_t count, size_t size) {
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

static double now(void) {
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

static char *format(const char *fmt, ...) {
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
    ctx->message = where && *where ? format("%s: %s", where, text) : text;
    if (ctx->message != text)
        free(text);
}

void incflat_clear_error(struct incflat_ctx *ctx) {
    free(ctx->message);
    ctx->message = NULL;
    ctx->failed = ctx->recoverable = ctx->too_large = false;
}

/* An OpenCL call that failed; recoverable where a workgroup-level version may fall back from it. */
static bool cl_failed(struct incflat_ctx *ctx, cl_int code, const char *what, bool recoverable) {
    if (code == CL_SUCCESS)
        return false;
    incflat_fail(ctx, "", "OpenCL: %s failed: %s (%d)", what, incflat_cl_error_name(code), (int)code);
    ctx->recoverable = recoverable;
    return true;
}

static void shape_text(char *out, size_t len, int rank, const int64_t *shape) {
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
            b->failures[k] = format("%s", shown);
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
        for (const struct incflat_default *d = p->tuned; d && d->name; d++)
            if (!strcmp(d->name, q->name))
                ctx->values[i] = d->value;
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
    char *why = incflat_cl_load(&s->cl, NULL);
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
        char *why_copy = format("%s", why);
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
            (struct open_version){param, outcome, par, (int64_t)p->command_count - 1, now()};
}

void incflat_leave(struct incflat_ctx *ctx) {
    struct incflat_profile *p = ctx->prof;
    if (!ctx->profile || !p->open_count)
        return;
    double left = now();
    struct open_version v = p->open[--p->open_count];
    p->unsettled = grow(p->unsettled, &p->unsettled_cap, p->unsettled_count, sizeof *p->unsettled);
    p->unsettled[p->unsettled_count++] =
        (struct unsettled){v.param, v.outcome, v.par, v.before, (int64_t)p->command_count - 1, left - v.entered};
}

static void timed(struct incflat_ctx *ctx, const char *name, cl_event event) {
    struct incflat_profile *p = ctx->prof;
    p->commands = grow(p->commands, &p->command_cap, p->command_count, sizeof *p->commands);
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
    s->fresh = grow(s->fresh, &s->fresh_cap, s->fresh_count, sizeof *s->fresh);
    s->fresh[s->fresh_count++] = mem;
    return mem;
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
static void drop(struct incflat_ctx *ctx, struct incflat_mem *m) {
    if (m && m->fresh && m->refs == 0) {
        m->refs = 1;
        incflat_mem_release(ctx, m);
    }
}

void incflat_release_fresh(struct incflat_ctx *ctx) {
    struct incflat_shared *s = ctx->shared;
    for (size_t i = 0; i < s->fresh_count; i++)
        drop(ctx, s->fresh[i]);
    s->fresh_count = 0;
}

void incflat_arr_set(struct incflat_ctx *ctx, struct incflat_array *target, struct incflat_array value) {
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

static bool contiguous(const struct incflat_array *a) {
    int64_t stride = 1;
    for (int k = a->rank - 1; k >= 0; k--) {
        if (a->strides[k] != stride)
            return false;
        stride *= a->shape[k] > 1 ? a->shape[k] : 1;
    }
    return true;
}

static int64_t count_of(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= shape[k];
    return n;
}

static void row_major(int rank, const int64_t *shape, int64_t *strides) {
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
    int64_t count = count_of(rank, a.shape);
    size_t size = incflat_type_size(type);
    char text[INCFLAT_RANK * 24 + 1];
    shape_text(text, sizeof text, rank, a.shape);
    if ((double)count * (double)size > (double)ctx->global_mem_size) {
        incflat_fail(ctx, where, "Out of memory: %s would make an array of shape %s (%lld bytes; the device %s has "
                     "%lld bytes).", what ? what : "an allocation", text, (long long)(count * (int64_t)size),
                     ctx->device_name, (long long)ctx->global_mem_size);
        return a;
    }
    a.mem = allocate(ctx, (size_t)count * size);
    if (!a.mem) {
        incflat_fail(ctx, where, "Out of memory: %s would make an array of shape %s (%lld bytes), more than the "
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
        row_major(interleave, a.shape, a.strides);
        row_major(rank - interleave, a.shape + interleave, inner);
        for (int k = interleave; k < rank; k++)
            a.strides[k] = inner[k - interleave] * threads;
    } else
        row_major(rank, a.shape, a.strides);
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

static void upload(struct incflat_ctx *ctx, cl_mem buf, const void *host, int64_t elements, size_t bytes,
                   size_t byte_offset, bool constant) {
    count_transfer(ctx, true, elements, (int64_t)bytes, constant);
    if (bytes)
        cl_failed(ctx, ctx->cl->clEnqueueWriteBuffer(ctx->queue, buf, 1, byte_offset, bytes, host, 0, NULL, NULL),
                  "clEnqueueWriteBuffer", false);
}

static void download(struct incflat_ctx *ctx, void *host, cl_mem buf, int64_t elements, size_t bytes,
                     size_t byte_offset) {
    count_transfer(ctx, false, elements, (int64_t)bytes, false);
    if (bytes)
        cl_failed(ctx, ctx->cl->clEnqueueReadBuffer(ctx->queue, buf, 1, byte_offset, bytes, host, 0, NULL, NULL),
                  "clEnqueueReadBuffer", false);
}

/* ---- views ---- */

struct incflat_array incflat_permute(struct incflat_array a, int n, const int64_t *perm) {
    struct incflat_array out = a;
    for (int k = 0; k < n; k++) {
        out.shape[k] = a.shape[perm[k]];
        out.strides[k] = a.strides[perm[k]];
    }
    return out;
}

static bool locate(struct incflat_ctx *ctx, const struct incflat_array *a, int n, const struct incflat_index *idxs,
                   const char *where, struct incflat_array *view) {
    *view = *a;
    int64_t offset = a->offset;
    int out = 0;
    char text[INCFLAT_RANK * 24 + 1];
    for (int k = 0; k < n; k++) {
        int64_t d = a->shape[k], s = a->strides[k];
        const int64_t *v = idxs[k].v;
        if (idxs[k].is_slice) {
            int64_t start = v[0], end = v[1], stride = v[2], size = v[3];
            bool ok = stride != 0 && size >= 0 &&
                      (size == 0 || (0 <= start && start < d && 0 <= start + (size - 1) * stride &&
                                     start + (size - 1) * stride < d));
            int64_t expected = stride ? -incflat_floordiv(-(end - start), stride) : 0;
            if (!ok || size != (expected > 0 ? expected : 0)) {
                shape_text(text, sizeof text, a->rank, a->shape);
                if (stride != 1)
                    incflat_fail(ctx, where, "Index [%lld:%lld:%lld] out of bounds for array of shape %s.",
                                 (long long)start, (long long)end, (long long)stride, text);
                else
                    incflat_fail(ctx, where, "Index [%lld:%lld] out of bounds for array of shape %s.",
                                 (long long)start, (long long)end, text);
                return false;
            }
            offset += size ? start * s : 0;
            view->shape[out] = size;
            view->strides[out++] = s * stride;
        } else {
            if (!(0 <= v[0] && v[0] < d)) {
                char shown[INCFLAT_RANK * 48 + 1];
                size_t at = 0;
                for (int j = 0; j < n && at < sizeof shown; j++)
                    at += (size_t)(idxs[j].is_slice
                                       ? snprintf(shown + at, sizeof shown - at, "%s%lld:%lld", j ? ", " : "",
                                                  (long long)idxs[j].v[0], (long long)idxs[j].v[1])
                                       : snprintf(shown + at, sizeof shown - at, "%s%lld", j ? ", " : "",
                                                  (long long)idxs[j].v[0]));
                shape_text(text, sizeof text, a->rank, a->shape);
                incflat_fail(ctx, where, "Index [%s] out of bounds for array of shape %s.", shown, text);
                return false;
            }
            offset += v[0] * s;
        }
    }
    for (int k = n; k < a->rank; k++) {
        view->shape[out] = a->shape[k];
        view->strides[out++] = a->strides[k];
    }
    view->rank = out;
    view->offset = offset;
    return true;
}

struct incflat_array incflat_index_view(struct incflat_ctx *ctx, struct incflat_array a, int n,
                                        const struct incflat_index *idxs, const char *where) {
    struct incflat_array view;
    if (!locate(ctx, &a, n, idxs, where, &view))
        view.mem = NULL;
    return view;
}

union incflat_scalar incflat_index_scalar(struct incflat_ctx *ctx, struct incflat_array a, int n,
                                          const struct incflat_index *idxs, const char *where) {
    union incflat_scalar out;
    memset(&out, 0, sizeof out);
    struct incflat_array view;
    if (!locate(ctx, &a, n, idxs, where, &view))
        return out;
    size_t size = incflat_type_size(a.type);
    download(ctx, &out, a.mem->buf, 1, size, (size_t)view.offset * size);
    return out;
}

union incflat_scalar incflat_to_host(struct incflat_ctx *ctx, struct incflat_array a) {
    return incflat_index_scalar(ctx, a, 0, NULL, "");
}

/* ---- the runtime's own kernels ---- */

static struct runtime_kernel *runtime_kernel(struct incflat_ctx *ctx, const char *name) {
    struct incflat_shared *s = ctx->shared;
    if (!s->copy_program) {
        char *why = incflat_cl_build(&s->cl, s->context, s->device.id, ctx->program->copy_source, "-w",
                                     &s->copy_program);
        if (why) {
            incflat_fail(ctx, "", "the runtime's kernels did not build: %s", why);
            free(why);
            return NULL;
        }
    }
    for (int i = 0; i < s->copy_count; i++)
        if (!strcmp(s->copies[i].name, name))
            return &s->copies[i];
    cl_int err;
    cl_kernel k = s->cl.clCreateKernel(s->copy_program, name, &err);
    if (cl_failed(ctx, err, "clCreateKernel", false) || s->copy_count >= 32)
        return NULL;
    struct runtime_kernel *r = &s->copies[s->copy_count++];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->kernel = k;
    return r;
}

/* One of the runtime's kernels with its arguments (pointer and size each), setting those that changed. */
static void run_runtime_kernel(struct incflat_ctx *ctx, const char *name, int dims, const size_t *global,
                               const size_t *local, int count, const void *const *args, const size_t *sizes) {
    struct runtime_kernel *r = runtime_kernel(ctx, name);
    if (!r)
        return;
    for (int i = 0; i < count; i++)
        if (r->last_size[i] != sizes[i] || memcmp(r->last[i], args[i], sizes[i])) {
            if (cl_failed(ctx, ctx->cl->clSetKernelArg(r->kernel, (cl_uint)i, sizes[i], args[i]), "clSetKernelArg",
                          false))
                return;
            memcpy(r->last[i], args[i], sizes[i]);
            r->last_size[i] = sizes[i];
        }
    cl_event event = NULL;
    if (!cl_failed(ctx, ctx->cl->clEnqueueNDRangeKernel(ctx->queue, r->kernel, (cl_uint)dims, NULL, global, local, 0,
                                                        NULL, ctx->profile ? &event : NULL),
                   "clEnqueueNDRangeKernel", false) && ctx->profile)
        timed(ctx, name, event);
}

static const char *sized(const char *stem, size_t size) {
    static char names[8][64];
    static int next;
    char *out = names[next++ % 8];
    snprintf(out, 64, "%s_%zu", stem, size);
    return out;
}

static const char *kernel_name(const char *stem, size_t size) {
    /* the names of the runtime kernels, kept for -P's table (which holds the pointer) */
    static const char *const copy[] = {"incflat_copy_1", "incflat_copy_2", "incflat_copy_4", "incflat_copy_8"};
    static const char *const transpose[] = {"incflat_transpose_1", "incflat_transpose_2", "incflat_transpose_4",
                                            "incflat_transpose_8"};
    int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
    if (!strcmp(stem, "incflat_copy"))
        return copy[k];
    if (!strcmp(stem, "incflat_transpose"))
        return transpose[k];
    return sized(stem, size);
}

void incflat_copy_into(struct incflat_ctx *ctx, struct incflat_array src, struct incflat_array dst) {
    int64_t n = count_of(src.rank, src.shape);
    if (n == 0 || ctx->failed)
        return;
    size_t size = incflat_type_size(src.type);
    if (src.mem != dst.mem && contiguous(&src) && contiguous(&dst)) {
        cl_event event = NULL;
        if (!cl_failed(ctx, ctx->cl->clEnqueueCopyBuffer(ctx->queue, src.mem->buf, dst.mem->buf,
                                                         (size_t)src.offset * size, (size_t)dst.offset * size,
                                                         (size_t)n * size, 0, NULL, ctx->profile ? &event : NULL),
                       "clEnqueueCopyBuffer", false) && ctx->profile)
            timed(ctx, "incflat_copy_buffer", event);
        return;
    }
    /* the destination's smallest stride last; adjacent dimensions both views walk as one merged */
    int order[INCFLAT_RANK], rank = src.rank;
    for (int k = 0; k < rank; k++)
        order[k] = k;
    for (int i = 1; i < rank; i++) /* a stable sort by descending |dst stride|, as Python's sorted */
        for (int j = i; j > 0 && llabs(dst.strides[order[j - 1]]) < llabs(dst.strides[order[j]]); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int64_t args[4 + 3 * INCFLAT_RANK] = {0};
    int64_t *d = args + 4, *ss = d + INCFLAT_RANK, *ds = ss + INCFLAT_RANK;
    int merged = 0;
    for (int i = 0; i < rank; i++) {
        int k = order[i];
        int64_t dim = src.shape[k], a = src.strides[k], b = dst.strides[k];
        if (dim == 1)
            continue;
        if (merged && ss[merged - 1] == a * dim && ds[merged - 1] == b * dim) {
            d[merged - 1] *= dim;
            ss[merged - 1] = a;
            ds[merged - 1] = b;
        } else {
            d[merged] = dim;
            ss[merged] = a;
            ds[merged++] = b;
        }
    }
    if (!merged) {
        d[0] = 1;
        merged = 1;
    }
    args[0] = src.offset;
    args[1] = dst.offset;
    args[2] = n;
    args[3] = merged;
    size_t global = (size_t)incflat_ceil_div(n, COPY_GROUP) * COPY_GROUP, local = COPY_GROUP;
    const void *values[] = {&src.mem->buf, &dst.mem->buf, args};
    size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof args};
    run_runtime_kernel(ctx, kernel_name("incflat_copy", size), 1, &global, &local, 3, values, sizes);
}

struct incflat_array incflat_manifest(struct incflat_ctx *ctx, struct incflat_array a) {
    struct incflat_array out = incflat_empty(ctx, a.rank, a.shape, a.type, "", NULL, 0);
    if (!ctx->failed)
        incflat_copy_into(ctx, a, out);
    return out;
}

struct incflat_array incflat_reshape(struct incflat_ctx *ctx, int rank, const int64_t *shape, struct incflat_array a,
                                     const char *where) {
    bool negative = false;
    for (int k = 0; k < rank; k++)
        negative |= shape[k] < 0;
    if (negative || count_of(rank, shape) != count_of(a.rank, a.shape)) {
        char from[INCFLAT_RANK * 24 + 1], to[INCFLAT_RANK * 24 + 1];
        shape_text(from, sizeof from, a.rank, a.shape);
        shape_text(to, sizeof to, rank, shape);
        incflat_fail(ctx, where, "Cannot reshape array of shape %s to array of shape %s.", from, to);
        return a;
    }
    struct incflat_array flat = contiguous(&a) ? a : incflat_manifest(ctx, a);
    flat.rank = rank;
    for (int k = 0; k < rank; k++)
        flat.shape[k] = shape[k];
    row_major(rank, flat.shape, flat.strides);
    return flat;
}

struct incflat_array incflat_coalesced(struct incflat_ctx *ctx, struct incflat_array a, int inner) {
    if (a.rank <= inner || count_of(a.rank, a.shape) == 0)
        return a;
    int64_t threads = count_of(inner, a.shape), row = count_of(a.rank - inner, a.shape + inner);
    struct incflat_array out = incflat_empty(ctx, a.rank, a.shape, a.type, "", NULL, inner);
    if (ctx->failed)
        return out;
    bool same = true;
    for (int k = 0; k < a.rank; k++)
        same &= a.shape[k] == 1 || a.strides[k] == out.strides[k];
    if (threads == 1 || same) {
        drop(ctx, out.mem); /* (out was made only for its strides) */
        return a;
    }
    size_t size = incflat_type_size(a.type);
    if (contiguous(&a)) { /* a tiled transpose of the [threads][row] matrix */
        size_t global[2] = {(size_t)incflat_ceil_div(row, 32) * 32, (size_t)incflat_ceil_div(threads, 32) * 8};
        size_t local[2] = {32, 8};
        cl_long so = a.offset, dof = out.offset, rows = threads, cols = row;
        const void *values[] = {&a.mem->buf, &so, &out.mem->buf, &dof, &rows, &cols};
        size_t sizes[] = {sizeof(cl_mem), 8, sizeof(cl_mem), 8, 8, 8};
        run_runtime_kernel(ctx, kernel_name("incflat_transpose", size), 2, global, local, 6, values, sizes);
    } else
        incflat_copy_into(ctx, a, out);
    return out;
}

struct incflat_array incflat_constant_array(struct incflat_ctx *ctx, const void *data, int64_t count,
                                            enum incflat_type type) {
    struct incflat_shared *s = ctx->shared;
    for (size_t i = 0; i < s->constant_count; i++)
        if (s->constants[i].data == data && s->constants[i].type == type)
            return s->constants[i].array;
    struct incflat_array out = incflat_empty(ctx, 1, &count, type, "", NULL, 0);
    if (ctx->failed)
        return out;
    upload(ctx, out.mem->buf, data, count, (size_t)count * incflat_type_size(type), 0, true);
    out.mem->refs++; /* kept for the program's life */
    out.mem->fresh = false;
    s->constants = realloc(s->constants, (s->constant_count + 1) * sizeof *s->constants);
    s->constants[s->constant_count++] = (struct constant){data, type, out};
    return out;
}

struct incflat_array incflat_replicate_scalar(struct incflat_ctx *ctx, union incflat_scalar x, int rank,
                                              const int64_t *shape, enum incflat_type type, const char *where) {
    struct incflat_array out = incflat_empty(ctx, rank, shape, type, where, "replicate", 0);
    int64_t n = count_of(out.rank, out.shape);
    if (ctx->failed || !rank || !n)
        return out;
    size_t size = incflat_type_size(type);
    cl_event event = NULL;
    if (!cl_failed(ctx, ctx->cl->clEnqueueFillBuffer(ctx->queue, out.mem->buf, &x, size, 0, (size_t)n * size, 0, NULL,
                                                     ctx->profile ? &event : NULL),
                   "clEnqueueFillBuffer", false) && ctx->profile)
        timed(ctx, "incflat_fill", event);
    return out;
}

struct incflat_array incflat_replicate_array(struct incflat_ctx *ctx, struct incflat_array x, int rank,
                                             const int64_t *shape, const char *where) {
    struct incflat_array out = incflat_empty(ctx, rank, shape, x.type, where, "replicate", 0);
    if (ctx->failed || !rank || !count_of(out.rank, out.shape))
        return out;
    struct incflat_array repeated = x; /* x seen through a first dimension of stride 0 */
    repeated.rank = out.rank;
    for (int k = 0; k < out.rank; k++) {
        repeated.shape[k] = out.shape[k];
        repeated.strides[k] = k ? x.strides[k - 1] : 0;
    }
    incflat_copy_into(ctx, repeated, out);
    return out;
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
                if (cl_failed(ctx, ctx->cl->clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &m->buf), "clSetKernelArg",
                              true))
                    return;
                b->last_mem[kernel][i] = m->buf;
                b->last_local[kernel][i] = 0;
            }
        } else {
            local_bytes += (int64_t)m->local;
            if (b->last_local[kernel][i] != m->local) {
                if (cl_failed(ctx, ctx->cl->clSetKernelArg(k, (cl_uint)i, m->local, NULL), "clSetKernelArg", true))
                    return;
                b->last_local[kernel][i] = m->local;
                b->last_mem[kernel][i] = NULL;
            }
        }
    }
    if (scalars_size && (b->last_scalars_size[kernel] != scalars_size ||
                         memcmp(b->last_scalars[kernel], scalars, scalars_size))) {
        if (cl_failed(ctx, ctx->cl->clSetKernelArg(k, (cl_uint)memory_count, scalars_size, scalars), "clSetKernelArg",
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
    if (!cl_failed(ctx, ctx->cl->clEnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global, &local, 0, NULL,
                                                        ctx->profile ? &event : NULL),
                   "clEnqueueNDRangeKernel", true) && ctx->profile)
        timed(ctx, ctx->program->kernels[kernel].name, event);
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
                if (cl_failed(ctx, ctx->cl->clGetKernelWorkGroupInfo(s->builds[wide].kernels[k], s->device.id,
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

cl_mem incflat_segment_counters(struct incflat_ctx *ctx, int64_t segments) {
    struct incflat_shared *s = ctx->shared;
    if (segments > s->counters_size) {
        int64_t size = segments;
        if (2 * s->counters_size > size)
            size = 2 * s->counters_size;
        if (size < 1024)
            size = 1024;
        if (s->counters)
            s->cl.clReleaseMemObject(s->counters);
        cl_int err;
        s->counters = s->cl.clCreateBuffer(s->context, CL_MEM_READ_WRITE, (size_t)size * 4, NULL, &err);
        if (cl_failed(ctx, err, "clCreateBuffer", false))
            return NULL;
        s->counters_size = size;
        uint32_t zero = 0;
        cl_failed(ctx, s->cl.clEnqueueFillBuffer(ctx->queue, s->counters, &zero, 4, 0, (size_t)size * 4, 0, NULL, NULL),
                  "clEnqueueFillBuffer", false);
    }
    return s->counters;
}

cl_mem incflat_lookback(struct incflat_ctx *ctx, int64_t blocks) {
    struct incflat_shared *s = ctx->shared;
    cl_int err;
    if (!s->scan_counters) {
        uint32_t zeros[2] = {0, 0};
        s->scan_counters = s->cl.clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zeros,
                                                zeros, &err);
        if (cl_failed(ctx, err, "clCreateBuffer", false))
            return NULL;
    }
    if (blocks > s->scan_blocks || s->scan_epoch + 1 >= (1LL << 29)) {
        int64_t size = blocks;
        if (2 * s->scan_blocks > size)
            size = 2 * s->scan_blocks;
        if (size < 1024)
            size = 1024;
        if (s->scan_status)
            s->cl.clReleaseMemObject(s->scan_status);
        s->scan_status = s->cl.clCreateBuffer(s->context, CL_MEM_READ_WRITE, (size_t)size * 8, NULL, &err);
        if (cl_failed(ctx, err, "clCreateBuffer", false))
            return NULL;
        s->scan_blocks = size;
        uint64_t zero = 0;
        if (cl_failed(ctx, s->cl.clEnqueueFillBuffer(ctx->queue, s->scan_status, &zero, 8, 0, (size_t)size * 8, 0,
                                                     NULL, NULL),
                      "clEnqueueFillBuffer", false))
            return NULL;
        s->scan_epoch = 0;
    }
    s->scan_epoch++;
    return s->scan_status;
}

cl_mem incflat_scan_counters(struct incflat_ctx *ctx) { return ctx->shared->scan_counters; }

int64_t incflat_scan_epoch(struct incflat_ctx *ctx) { return ctx->shared->scan_epoch; }

/* Python's str.format of {0} {1} ... with integers. */
static char *fill_template(const char *template, const int64_t *values, int count) {
    size_t cap = strlen(template) + 32 * (size_t)count + 1, at = 0;
    char *out = malloc(cap);
    for (const char *p = template; *p;) {
        if (p[0] == '{' && p[1] == '{') {
            out[at++] = '{';
            p += 2;
        } else if (p[0] == '}' && p[1] == '}') {
            out[at++] = '}';
            p += 2;
        } else if (p[0] == '{') {
            char *end;
            long k = strtol(p + 1, &end, 10);
            if (*end == '}' && k >= 0 && k < count) {
                at += (size_t)snprintf(out + at, cap - at, "%lld", (long long)values[k]);
                p = end + 1;
            } else
                out[at++] = *p++;
        } else
            out[at++] = *p++;
        if (at + 24 >= cap)
            out = realloc(out, cap *= 2);
    }
    out[at] = 0;
    return out;
}

void incflat_check_errors(struct incflat_ctx *ctx) {
    const struct incflat_program *p = ctx->program;
    if (!p->error_count)
        return;
    int64_t record[8];
    if (cl_failed(ctx, ctx->cl->clEnqueueReadBuffer(ctx->queue, ctx->error_buf, 1, 0, sizeof record, record, 0, NULL,
                                                    NULL),
                  "clEnqueueReadBuffer", false))
        return;
    int32_t code;
    memcpy(&code, record, 4);
    if (!code)
        return;
    int64_t zeros[8] = {0};
    ctx->cl->clEnqueueWriteBuffer(ctx->queue, ctx->error_buf, 1, 0, sizeof zeros, zeros, 0, NULL, NULL);
    if (code < 1 || code > p->error_count)
        return;
    char *text = fill_template(p->errors[code - 1].message, record + 1, 7);
    incflat_clear_error(ctx); /* an error a kernel recorded came first */
    incflat_fail(ctx, p->errors[code - 1].where, "%s", text);
    free(text);
}

/* ---- host arithmetic ---- */

int64_t incflat_floordiv(int64_t x, int64_t y) {
    if (y == 0)
        return 0;
    if (y == -1)
        return (int64_t)(0 - (uint64_t)x);
    int64_t q = x / y;
    return (q * y != x && ((x < 0) != (y < 0))) ? q - 1 : q;
}

int64_t incflat_floormod(int64_t x, int64_t y) {
    if (y == 0 || y == -1)
        return 0;
    int64_t r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

int64_t incflat_ipow(int64_t x, int64_t y) {
    uint64_t r = 1, b = (uint64_t)x;
    while (y > 0) {
        if (y & 1)
            r *= b;
        b *= b;
        y >>= 1;
    }
    return (int64_t)r;
}

int64_t incflat_shl(int64_t x, int64_t y) { return y >= 64 || y < 0 ? 0 : (int64_t)((uint64_t)x << y); }

int64_t incflat_shr(int64_t x, int64_t y) { return y >= 64 || y < 0 ? (x < 0 ? -1 : 0) : x >> y; }

int64_t incflat_ceil_div(int64_t a, int64_t b) { return -incflat_floordiv(-a, b); }

int64_t incflat_groups_per_segment(int64_t segments, int64_t width, int64_t num_groups, int64_t group_size) {
    if (segments == 0 || segments >= num_groups)
        return 1;
    int64_t a = incflat_ceil_div(num_groups, segments), b = incflat_ceil_div(width, group_size);
    int64_t m = a < b ? a : b;
    return m > 1 ? m : 1;
}

int64_t incflat_segment_group_size(int64_t group_size, int64_t width) {
    int64_t fitting = 32, bound = group_size < width / 64 ? group_size : width / 64;
    while (fitting * 2 <= bound)
        fitting *= 2;
    return group_size < fitting ? group_size : fitting;
}

int64_t incflat_thread_parts(int64_t segments, int64_t width, int64_t num_groups, int64_t group_size) {
    int64_t a = incflat_ceil_div(incflat_floordiv(num_groups * group_size, 2), segments), b = width / 32;
    int64_t m = a < b ? a : b;
    return m > 1 ? m : 1;
}

int64_t incflat_int_div(struct incflat_ctx *ctx, int64_t x, int64_t y, const char *kind, const char *where) {
    if (y == 0) {
        incflat_fail(ctx, where, "division by zero");
        return 0;
    }
    bool floor = !strcmp(kind, "/") || !strcmp(kind, "%");
    bool quotient = !strcmp(kind, "/") || !strcmp(kind, "//");
    int64_t q;
    if (y == -1)
        q = (int64_t)(0 - (uint64_t)x);
    else
        q = floor ? incflat_floordiv(x, y) : x / y;
    return quotient ? q : (int64_t)((uint64_t)x - (uint64_t)q * (uint64_t)y);
}

int64_t incflat_int_pow(struct incflat_ctx *ctx, int64_t x, int64_t y, const char *where) {
    if (y < 0) {
        incflat_fail(ctx, where, "Negative exponent in integer power.");
        return 0;
    }
    return incflat_ipow(x, y);
}

int64_t incflat_fptoi(double x) {
    if (!isfinite(x))
        return 0;
    if (x >= 9223372036854775808.0) /* wrapped through 64 bits, as the kernels' fptoi */
        return (int64_t)(uint64_t)fmod(x, 18446744073709551616.0);
    if (x < -9223372036854775808.0)
        return (int64_t)(0 - (uint64_t)fmod(-x, 18446744073709551616.0));
    return (int64_t)x;
}

/* ---- checks ---- */

void incflat_check_size(struct incflat_ctx *ctx, int64_t expected, int64_t actual, const char *name,
                        const char *array) {
    if (expected != actual)
        incflat_fail(ctx, "", "size mismatch: %s has size %lld where %s = %lld", array, (long long)actual, name,
                     (long long)expected);
}

void incflat_check_coercion(struct incflat_ctx *ctx, int64_t expected, int rank, const int64_t *shape, int dim,
                            const char *where) {
    if (expected == shape[dim])
        return;
    int64_t wanted[INCFLAT_RANK];
    memcpy(wanted, shape, sizeof(int64_t) * (size_t)rank);
    wanted[dim] = expected;
    char from[INCFLAT_RANK * 24 + 1], to[INCFLAT_RANK * 24 + 1];
    shape_text(from, sizeof from, rank, shape);
    shape_text(to, sizeof to, rank, wanted);
    incflat_fail(ctx, where, "Cannot coerce an array of shape %s to shape %s.", from, to);
}

void incflat_check_sizes(struct incflat_ctx *ctx, int rank, const int64_t *shape, const char *what,
                         const char *where) {
    for (int k = 0; k < rank; k++)
        if (shape[k] < 0) {
            incflat_fail(ctx, where, "Negative size %lld in %s.", (long long)shape[k], what);
            return;
        }
}

void incflat_check_assertion(struct incflat_ctx *ctx, bool cond, const char *message, int count,
                             const int64_t *values, const char *where) {
    if (cond)
        return;
    char *text = fill_template(message, values, count);
    incflat_fail(ctx, where, "%s", text);
    free(text);
}

/* ---- runs and -P ---- */

static void settle(struct incflat_ctx *ctx) {
    if (!ctx->profile)
        return;
    struct incflat_profile *p = ctx->prof;
    ctx->cl->clFinish(ctx->queue);
    for (size_t i = 0; i < p->command_count; i++) {
        struct command *c = &p->commands[i];
        if (!c->event)
            continue;
        cl_ulong start = 0, end = 0;
        ctx->cl->clGetEventProfilingInfo(c->event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
        ctx->cl->clGetEventProfilingInfo(c->event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
        ctx->cl->clReleaseEvent(c->event);
        c->event = NULL;
        c->start = start;
        c->end = end;
        size_t t = 0;
        while (t < p->time_count && strcmp(p->times[t].name, c->name))
            t++;
        if (t == p->time_count) {
            p->times = grow(p->times, &p->time_cap, p->time_count, sizeof *p->times);
            p->times[p->time_count++] = (struct kernel_time){c->name, 0, 0};
        }
        p->times[t].total += (double)(end - start) / 1e3;
        p->times[t].count++;
    }
    for (size_t i = 0; i < p->unsettled_count; i++) {
        struct unsettled *u = &p->unsettled[i];
        struct version_record r = {u->param, u->outcome, u->par, 0, round(u->host * 1e9) / 1e3, 0};
        if (u->last > u->before) {
            double total = 0;
            for (int64_t c = u->before + 1; c <= u->last; c++)
                total += (double)(p->commands[c].end - p->commands[c].start);
            r.time_us = round(total) / 1e3;
            uint64_t since = u->before >= 0 ? p->commands[u->before].end : p->commands[u->before + 1].start;
            r.span_us = round((double)(p->commands[u->last].end - since)) / 1e3;
        }
        p->log = grow(p->log, &p->log_cap, p->log_count, sizeof *p->log);
        p->log[p->log_count++] = r;
    }
    p->unsettled_count = 0;
}

void incflat_begin_run(struct incflat_ctx *ctx) {
    settle(ctx);
    ctx->prof->command_count = 0;
    ctx->runs++;
}

void incflat_finish(struct incflat_ctx *ctx) {
    cl_failed(ctx, ctx->cl->clFinish(ctx->queue), "clFinish", false);
}

void incflat_end_timed_runs(struct incflat_ctx *ctx) {
    ctx->timed_transfers = ctx->transfers;
    ctx->timed_runs = ctx->runs;
    ctx->have_timed = true;
    memset(&ctx->transfers, 0, sizeof ctx->transfers);
    ctx->runs = 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const struct kernel_time *)a)->name, ((const struct kernel_time *)b)->name);
}

struct summary { char key[300]; int64_t count; double total, host, span; int64_t *epars; size_t epar_count, cap; };

static int by_key(const void *a, const void *b) {
    return strcmp(((const struct summary *)a)->key, ((const struct summary *)b)->key);
}

static int by_value(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void incflat_report_profile(struct incflat_ctx *ctx, FILE *out) {
    settle(ctx);
    struct incflat_profile *p = ctx->prof;
    fprintf(out, "%-32s %6s %12s\n", "kernel", "runs", "total us");
    qsort(p->times, p->time_count, sizeof *p->times, by_name);
    for (size_t i = 0; i < p->time_count; i++)
        fprintf(out, "%-32s %6lld %12.1f\n", p->times[i].name, (long long)p->times[i].count, p->times[i].total);
    fprintf(out, "%-48s %6s %12s %12s %12s  ePar values\n", "version (guard: outcome)", "runs", "total us", "host us",
            "span us");
    struct summary *rows = calloc(p->log_count + 1, sizeof *rows);
    size_t count = 0;
    for (size_t i = 0; i < p->log_count; i++) {
        struct version_record *r = &p->log[i];
        char key[300];
        snprintf(key, sizeof key, "%s: %s", ctx->program->params[r->param].name, r->outcome ? "true" : "false");
        size_t k = 0;
        while (k < count && strcmp(rows[k].key, key))
            k++;
        if (k == count)
            snprintf(rows[count++].key, sizeof key, "%s", key);
        struct summary *s = &rows[k];
        s->count++;
        s->total += r->time_us;
        s->host += r->host_us;
        s->span += r->span_us;
        bool seen = false;
        for (size_t e = 0; e < s->epar_count; e++)
            seen |= s->epars[e] == r->par;
        if (!seen) {
            s->epars = grow(s->epars, &s->cap, s->epar_count, sizeof *s->epars);
            s->epars[s->epar_count++] = r->par;
        }
    }
    qsort(rows, count, sizeof *rows, by_key);
    for (size_t k = 0; k < count; k++) {
        struct summary *s = &rows[k];
        qsort(s->epars, s->epar_count, sizeof *s->epars, by_value);
        fprintf(out, "%-48s %6lld %12.1f %12.1f %12.1f  ", s->key, (long long)s->count, s->total, s->host, s->span);
        for (size_t e = 0; e < s->epar_count && e < 8; e++)
            fprintf(out, "%s%lld", e ? ", " : "", (long long)s->epars[e]);
        fprintf(out, "%s\n", s->epar_count > 8 ? ", ..." : "");
        free(s->epars);
    }
    free(rows);
    if (ctx->have_timed) {
        double runs = (double)(ctx->timed_runs > 1 ? ctx->timed_runs : 1);
        struct incflat_transfers *t = &ctx->timed_transfers;
        fprintf(out, "host-device transfers per run: %g arrays to the device (%g bytes), %g from it (%g bytes); "
                "%g scalars written, %g read; %lld constant arrays uploaded\n", (double)t->arrays_up / runs,
                (double)t->bytes_up / runs, (double)t->arrays_down / runs, (double)t->bytes_down / runs,
                (double)t->values_up / runs, (double)t->values_down / runs, (long long)t->constants);
    }
}

static void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

int incflat_profile_json(struct incflat_ctx *ctx, FILE *out) {
    settle(ctx);
    struct incflat_profile *p = ctx->prof;
    qsort(p->times, p->time_count, sizeof *p->times, by_name);
    fprintf(out, "{\n \"kernels\": {");
    for (size_t i = 0; i < p->time_count; i++) {
        fprintf(out, "%s\n  ", i ? "," : "");
        json_string(out, p->times[i].name);
        fprintf(out, ": {\n   \"runs\": %lld,\n   \"total_us\": %.3f\n  }", (long long)p->times[i].count,
                p->times[i].total);
    }
    fprintf(out, "%s},\n \"versions\": [", p->time_count ? "\n " : "");
    for (size_t i = 0; i < p->log_count; i++) {
        struct version_record *r = &p->log[i];
        fprintf(out, "%s\n  {\n   \"threshold\": ", i ? "," : "");
        json_string(out, ctx->program->params[r->param].name);
        fprintf(out, ",\n   \"outcome\": %s,\n   \"epar\": %lld,\n   \"time_us\": %.3f,\n   \"host_us\": %.3f,\n"
                "   \"span_us\": %.3f\n  }", r->outcome ? "true" : "false", (long long)r->par, r->time_us, r->host_us,
                r->span_us);
    }
    fprintf(out, "%s]", p->log_count ? "\n " : "");
    if (ctx->have_timed) {
        struct incflat_transfers *t = &ctx->timed_transfers;
        fprintf(out, ",\n \"runs\": %lld,\n \"transfers\": {\n  \"to_device\": {\n   \"arrays\": %lld,\n   \"bytes\": "
                "%lld\n  },\n  \"from_device\": {\n   \"arrays\": %lld,\n   \"bytes\": %lld\n  },\n  \"scalars_written\": "
                "%lld,\n  \"scalars_read\": %lld,\n  \"constants\": %lld\n }", (long long)ctx->timed_runs,
                (long long)t->arrays_up, (long long)t->bytes_up, (long long)t->arrays_down, (long long)t->bytes_down,
                (long long)t->values_up, (long long)t->values_down, (long long)t->constants);
    }
    fprintf(out, "\n}");
    return ferror(out) ? -1 : 0;
}

/* ---- values in and out ---- */

struct incflat_slot incflat_upload_value(struct incflat_ctx *ctx, const struct incflat_value *v) {
    struct incflat_slot slot;
    memset(&slot, 0, sizeof slot);
    if (v->rank == 0) {
        memcpy(&slot.scalar, v->data, incflat_type_size(v->type));
        return slot;
    }
    struct incflat_array a = incflat_empty(ctx, v->rank, v->shape, v->type, "", NULL, 0);
    if (ctx->failed)
        return slot;
    int64_t n = count_of(a.rank, a.shape);
    if (n)
        upload(ctx, a.mem->buf, v->data, n, (size_t)n * incflat_type_size(v->type), 0, false);
    incflat_arr_set(ctx, &slot.array, a);
    return slot;
}

int incflat_download_value(struct incflat_ctx *ctx, const struct incflat_slot *slot, const char *type,
                           struct incflat_value *out) {
    int rank = 0;
    while (type[2 * rank] == '[')
        rank++;
    memset(out, 0, sizeof *out);
    out->type = (enum incflat_type)incflat_type_from_name(type + 2 * rank);
    out->rank = rank;
    size_t size = incflat_type_size(out->type);
    if (!rank) {
        out->data = malloc(size);
        memcpy(out->data, &slot->scalar, size);
        return 0;
    }
    const struct incflat_array *a = &slot->array;
    memcpy(out->shape, a->shape, sizeof(int64_t) * (size_t)rank);
    int64_t n = count_of(rank, a->shape);
    if (!n)
        return 0;
    out->data = malloc((size_t)n * size);
    if (contiguous(a)) {
        download(ctx, out->data, a->mem->buf, n, (size_t)n * size, (size_t)a->offset * size);
        return ctx->failed ? -1 : 0;
    }
    struct incflat_array copy = incflat_manifest(ctx, *a); /* a strided view: made row-major on the device */
    if (!ctx->failed)
        download(ctx, out->data, copy.mem->buf, n, (size_t)n * size, 0);
    drop(ctx, copy.mem);
    return ctx->failed ? -1 : 0;
}
