/* The native runtime's host arithmetic (Python's semantics), checks, kernels' errors, and runs with their -P
 * records (see host.h). */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Python's str.format of {0} {1} ... with integers. */
char *incflat_fill_template(const char *template, const int64_t *values, int count) {
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
    if (incflat_cl_failed(ctx, ctx->cl->clEnqueueReadBuffer(ctx->queue, ctx->error_buf, 1, 0, sizeof record, record, 0, NULL,
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
    char *text = incflat_fill_template(p->errors[code - 1].message, record + 1, 7);
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

uint64_t incflat_uint_div(struct incflat_ctx *ctx, uint64_t x, uint64_t y, const char *kind, const char *where) {
    if (y == 0) {
        incflat_fail(ctx, where, "division by zero");
        return 0;
    }
    return !strcmp(kind, "/") || !strcmp(kind, "//") ? x / y : x % y; /* (floored and truncated alike) */
}

int64_t incflat_int_pow(struct incflat_ctx *ctx, int64_t x, int64_t y, const char *where) {
    if (y < 0) {
        incflat_fail(ctx, where, "Negative exponent in integer power.");
        return 0;
    }
    return incflat_ipow(x, y);
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
    incflat_shape_text(from, sizeof from, rank, shape);
    incflat_shape_text(to, sizeof to, rank, wanted);
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
    char *text = incflat_fill_template(message, values, count);
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
            p->times = incflat_grow(p->times, &p->time_cap, p->time_count, sizeof *p->times);
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
        p->log = incflat_grow(p->log, &p->log_cap, p->log_count, sizeof *p->log);
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
    incflat_cl_failed(ctx, ctx->cl->clFinish(ctx->queue), "clFinish", false);
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
    if (p->time_count) /* (qsort of NULL is undefined, even of nothing) */
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
            s->epars = incflat_grow(s->epars, &s->cap, s->epar_count, sizeof *s->epars);
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
    if (p->time_count) /* (qsort of NULL is undefined, even of nothing) */
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
