/* The native runtime's arrays (see host.h): views, copies on the device, the array operations of the host
 * code, and values in and out: what ir/runtime/arrays.py and updates.py do for the Python host. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
                incflat_shape_text(text, sizeof text, a->rank, a->shape);
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
                incflat_shape_text(text, sizeof text, a->rank, a->shape);
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
    incflat_download(ctx, &out, a.mem->buf, 1, size, (size_t)view.offset * size);
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
    if (incflat_cl_failed(ctx, err, "clCreateKernel", false) || s->copy_count >= 32)
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
            if (incflat_cl_failed(ctx, ctx->cl->clSetKernelArg(r->kernel, (cl_uint)i, sizes[i], args[i]), "clSetKernelArg",
                          false))
                return;
            memcpy(r->last[i], args[i], sizes[i]);
            r->last_size[i] = sizes[i];
        }
    cl_event event = NULL;
    if (!incflat_cl_failed(ctx, ctx->cl->clEnqueueNDRangeKernel(ctx->queue, r->kernel, (cl_uint)dims, NULL, global, local, 0,
                                                        NULL, ctx->profile ? &event : NULL),
                   "clEnqueueNDRangeKernel", false) && ctx->profile)
        incflat_timed(ctx, name, event);
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

#define COPY_ARGS (4 + 3 * INCFLAT_RANK) /* the runtime's incflat_copy_args: offsets, count, rank, dimensions */
#define COPIES 4                          /* the copies one launch of incflat_copies_N makes at most */

/* The incflat_copy_args of a copy of n elements between two views of one shape: the destination's smallest
 * stride last (writes coalesced), adjacent dimensions that both views walk as one merged. */
static void copy_args(const struct incflat_array *src, const struct incflat_array *dst, int64_t n, int64_t *args) {
    int order[INCFLAT_RANK], rank = src->rank;
    for (int k = 0; k < rank; k++)
        order[k] = k;
    for (int i = 1; i < rank; i++) /* a stable sort by descending |dst stride|, as Python's sorted */
        for (int j = i; j > 0 && llabs(dst->strides[order[j - 1]]) < llabs(dst->strides[order[j]]); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    memset(args, 0, sizeof(int64_t) * COPY_ARGS);
    int64_t *d = args + 4, *ss = d + INCFLAT_RANK, *ds = ss + INCFLAT_RANK;
    int merged = 0;
    for (int i = 0; i < rank; i++) {
        int k = order[i];
        int64_t dim = src->shape[k], a = src->strides[k], b = dst->strides[k];
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
    args[0] = src->offset;
    args[1] = dst->offset;
    args[2] = n;
    args[3] = merged;
}

/* Copies each srcs[i] into dsts[i] (views of one shape; the destinations in one buffer, disjoint), COPIES of
 * them a launch. */
static void copy_many(struct incflat_ctx *ctx, int count, const struct incflat_array *srcs,
                      const struct incflat_array *dsts) {
    for (int start = 0; start < count && !ctx->failed; start += COPIES) {
        int part = count - start < COPIES ? count - start : COPIES;
        if (part == 1) {
            incflat_copy_into(ctx, srcs[start], dsts[start]);
            continue;
        }
        int64_t packed[1 + COPIES * COPY_ARGS] = {part}, total = 0;
        cl_mem sources[COPIES];
        for (int i = 0; i < COPIES; i++) {
            const struct incflat_array *src = &srcs[start + (i < part ? i : 0)];
            sources[i] = src->mem->buf;
            if (i < part) {
                int64_t n = incflat_count(src->rank, src->shape);
                copy_args(src, &dsts[start + i], n, packed + 1 + i * COPY_ARGS);
                total += n;
            }
        }
        size_t size = incflat_type_size(srcs[start].type);
        size_t global = (size_t)incflat_ceil_div(total, COPY_GROUP) * COPY_GROUP, local = COPY_GROUP;
        const void *values[] = {&sources[0], &sources[1], &sources[2], &sources[3], &dsts[start].mem->buf, packed};
        size_t sizes[] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                          sizeof packed};
        const char *names[] = {"incflat_copies_1", "incflat_copies_2", "incflat_copies_4", "incflat_copies_8"};
        run_runtime_kernel(ctx, names[size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3], 1, &global, &local, 6,
                           values, sizes);
    }
}

void incflat_copy_into(struct incflat_ctx *ctx, struct incflat_array src, struct incflat_array dst) {
    int64_t n = incflat_count(src.rank, src.shape);
    if (n == 0 || ctx->failed)
        return;
    size_t size = incflat_type_size(src.type);
    if (src.mem != dst.mem && incflat_contiguous(&src) && incflat_contiguous(&dst)) {
        cl_event event = NULL;
        if (!incflat_cl_failed(ctx, ctx->cl->clEnqueueCopyBuffer(ctx->queue, src.mem->buf, dst.mem->buf,
                                                         (size_t)src.offset * size, (size_t)dst.offset * size,
                                                         (size_t)n * size, 0, NULL, ctx->profile ? &event : NULL),
                       "clEnqueueCopyBuffer", false) && ctx->profile)
            incflat_timed(ctx, "incflat_copy_buffer", event);
        return;
    }
    int64_t args[COPY_ARGS];
    copy_args(&src, &dst, n, args);
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
    if (negative || incflat_count(rank, shape) != incflat_count(a.rank, a.shape)) {
        char from[INCFLAT_RANK * 24 + 1], to[INCFLAT_RANK * 24 + 1];
        incflat_shape_text(from, sizeof from, a.rank, a.shape);
        incflat_shape_text(to, sizeof to, rank, shape);
        incflat_fail(ctx, where, "Cannot reshape array of shape %s to array of shape %s.", from, to);
        return a;
    }
    struct incflat_array flat = incflat_contiguous(&a) ? a : incflat_manifest(ctx, a);
    flat.rank = rank;
    for (int k = 0; k < rank; k++)
        flat.shape[k] = shape[k];
    incflat_row_major(rank, flat.shape, flat.strides);
    return flat;
}

struct incflat_array incflat_coalesced(struct incflat_ctx *ctx, struct incflat_array a, int inner) {
    if (a.rank <= inner || incflat_count(a.rank, a.shape) == 0)
        return a;
    int64_t threads = incflat_count(inner, a.shape), row = incflat_count(a.rank - inner, a.shape + inner);
    struct incflat_array out = incflat_empty(ctx, a.rank, a.shape, a.type, "", NULL, inner);
    if (ctx->failed)
        return out;
    bool same = true;
    for (int k = 0; k < a.rank; k++)
        same &= a.shape[k] == 1 || a.strides[k] == out.strides[k];
    if (threads == 1 || same) {
        incflat_drop(ctx, out.mem); /* (out was made only for its strides) */
        return a;
    }
    size_t size = incflat_type_size(a.type);
    if (incflat_contiguous(&a)) { /* a tiled transpose of the [threads][row] matrix */
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
    incflat_upload(ctx, out.mem->buf, data, count, (size_t)count * incflat_type_size(type), 0, true);
    out.mem->refs++; /* kept for the program's life */
    out.mem->fresh = false;
    s->constants = realloc(s->constants, (s->constant_count + 1) * sizeof *s->constants);
    s->constants[s->constant_count++] = (struct constant){data, type, out};
    return out;
}

struct incflat_array incflat_replicate_scalar(struct incflat_ctx *ctx, union incflat_scalar x, int rank,
                                              const int64_t *shape, enum incflat_type type, const char *where) {
    struct incflat_array out = incflat_empty(ctx, rank, shape, type, where, "replicate", 0);
    int64_t n = incflat_count(out.rank, out.shape);
    if (ctx->failed || !rank || !n)
        return out;
    size_t size = incflat_type_size(type);
    cl_event event = NULL;
    if (!incflat_cl_failed(ctx, ctx->cl->clEnqueueFillBuffer(ctx->queue, out.mem->buf, &x, size, 0, (size_t)n * size, 0, NULL,
                                                     ctx->profile ? &event : NULL),
                   "clEnqueueFillBuffer", false) && ctx->profile)
        incflat_timed(ctx, "incflat_fill", event);
    return out;
}

struct incflat_array incflat_replicate_array(struct incflat_ctx *ctx, struct incflat_array x, int rank,
                                             const int64_t *shape, const char *where) {
    struct incflat_array out = incflat_empty(ctx, rank, shape, x.type, where, "replicate", 0);
    if (ctx->failed || !rank || !incflat_count(out.rank, out.shape))
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

/* ---- the array operations of the host code ---- */

#define IOTAS_KEPT 32
#define IOTA_KEPT_ELEMENTS (1LL << 22)

struct incflat_array incflat_iota(struct incflat_ctx *ctx, int64_t n, enum incflat_type type, const char *where) {
    struct incflat_shared *s = ctx->shared;
    for (int i = 0; i < s->iota_count; i++)
        if (s->iotas[i].shape[0] == n && s->iotas[i].type == type)
            return s->iotas[i];
    struct incflat_array out = incflat_empty(ctx, 1, &n, type, where, "iota", 0);
    if (ctx->failed || n <= 0)
        return out;
    size_t size = incflat_type_size(type);
    if (type <= INCFLAT_U64) {
        size_t global = (size_t)incflat_ceil_div(n, COPY_GROUP) * COPY_GROUP, local = COPY_GROUP;
        cl_long count = n;
        const void *values[] = {&out.mem->buf, &count};
        size_t sizes[] = {sizeof(cl_mem), 8};
        const char *names[] = {"incflat_iota_1", "incflat_iota_2", "incflat_iota_4", "incflat_iota_8"};
        run_runtime_kernel(ctx, names[size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3], 1, &global, &local, 2,
                           values, sizes);
    } else { /* not expected: iota's elements are integers */
        void *host = malloc((size_t)n * size);
        for (int64_t i = 0; i < n; i++)
            if (type == INCFLAT_F32)
                ((float *)host)[i] = (float)i;
            else
                ((double *)host)[i] = (double)i;
        incflat_upload(ctx, out.mem->buf, host, n, (size_t)n * size, 0, false);
        free(host);
    }
    if (n <= IOTA_KEPT_ELEMENTS) { /* kept: no statement writes into an iota's buffer */
        if (s->iota_count == IOTAS_KEPT) {
            incflat_mem_release(ctx, s->iotas[0].mem);
            memmove(s->iotas, s->iotas + 1, sizeof *s->iotas * (IOTAS_KEPT - 1));
            s->iota_count--;
        }
        out.mem->refs++;
        out.mem->fresh = false;
        s->iotas[s->iota_count++] = out;
    }
    return out;
}

static bool same_shape(int rank, const int64_t *a, int other_rank, const int64_t *b) {
    return rank == other_rank && (rank == 0 || !memcmp(a, b, sizeof(int64_t) * (size_t)rank)); /* (a may be NULL) */
}

/* The view of `count` rows of a from row `start`. */
static struct incflat_array rows_of(struct incflat_array a, int64_t start, int64_t count) {
    a.offset += start * a.strides[0];
    a.shape[0] = count;
    return a;
}

struct incflat_array incflat_concat(struct incflat_ctx *ctx, int count, const struct incflat_array *arrs, int64_t size,
                                    const char *where) {
    int64_t total = 0;
    for (int i = 0; i < count; i++) {
        if (!same_shape(arrs[i].rank - 1, arrs[i].shape + 1, arrs[0].rank - 1, arrs[0].shape + 1)) {
            char text[4096] = "", one[INCFLAT_RANK * 24 + 1];
            for (int k = 0; k < count; k++) {
                incflat_shape_text(one, sizeof one, arrs[k].rank, arrs[k].shape);
                if (strlen(text) + strlen(one) + 3 < sizeof text)
                    strcat(strcat(text, k ? ", " : ""), one);
            }
            incflat_fail(ctx, where, "cannot concatenate arrays of shapes %s.", text);
            return arrs[0];
        }
        total += arrs[i].shape[0];
    }
    if (total != size) {
        incflat_fail(ctx, where, "size mismatch: the concatenation has %lld elements, not %lld.", (long long)total,
                     (long long)size);
        return arrs[0];
    }
    int64_t shape[INCFLAT_RANK];
    memcpy(shape, arrs[0].shape, sizeof shape);
    shape[0] = total;
    struct incflat_array out = incflat_empty(ctx, arrs[0].rank, shape, arrs[0].type, "", NULL, 0);
    int64_t start = 0;
    for (int i = 0; i < count && !ctx->failed; i++) {
        if (arrs[i].shape[0])
            incflat_copy_into(ctx, arrs[i], rows_of(out, start, arrs[i].shape[0]));
        start += arrs[i].shape[0];
    }
    return out;
}

struct incflat_array incflat_rotate(struct incflat_ctx *ctx, int64_t amount, struct incflat_array a) {
    int64_t n = a.shape[0], k = n ? incflat_floormod(amount, n) : 0;
    if (k == 0)
        return a;
    struct incflat_array out = incflat_empty(ctx, a.rank, a.shape, a.type, "", NULL, 0);
    if (ctx->failed)
        return out;
    incflat_copy_into(ctx, rows_of(a, k, n - k), rows_of(out, 0, n - k));
    incflat_copy_into(ctx, rows_of(a, 0, k), rows_of(out, n - k, k));
    return out;
}

struct incflat_array incflat_destination(struct incflat_ctx *ctx, struct incflat_array a, bool in_place, int count,
                                         const struct incflat_array *reads) {
    bool shared = false;
    for (int i = 0; i < count; i++)
        shared |= reads[i].mem == a.mem;
    if (in_place && !shared && incflat_contiguous(&a))
        return a;
    return incflat_manifest(ctx, a);
}

static bool in_bounds_region(struct incflat_array a, const struct incflat_indices *at, struct incflat_array *region) {
    bool slice = at->n < a.rank;
    for (int k = 0; k < at->n; k++)
        slice |= at->i[k].is_slice;
    if (!slice)
        return false;
    struct incflat_ctx quiet; /* (an index out of bounds: no region; the update reports it) */
    memset(&quiet, 0, sizeof quiet);
    quiet.failed = true;
    return locate(&quiet, &a, at->n, at->i, "", region);
}

static bool same_view(const struct incflat_array *a, const struct incflat_array *b) {
    return a->offset == b->offset && same_shape(a->rank, a->shape, b->rank, b->shape) &&
           !memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->rank);
}

/* The lowest and highest offsets of a view's elements; false where it has none. */
static bool span(const struct incflat_array *a, int64_t *low, int64_t *high) {
    *low = *high = a->offset;
    for (int k = 0; k < a->rank; k++) {
        if (a->shape[k] == 0)
            return false;
        int64_t reach = (a->shape[k] - 1) * a->strides[k];
        *(reach < 0 ? low : high) += reach;
    }
    return true;
}

static bool spans_apart(const struct incflat_array *a, const struct incflat_array *b) {
    int64_t al, ah, bl, bh;
    return !span(a, &al, &ah) || !span(b, &bl, &bh) || ah < bl || bh < al;
}

/* Per dimension, the lowest and highest index an update writes ((1, 0): nothing). */
static void selection(const struct incflat_indices *at, int rank, const int64_t *shape, int64_t *low, int64_t *high) {
    for (int k = 0; k < rank; k++) {
        if (k >= at->n) {
            low[k] = 0;
            high[k] = shape[k] - 1;
        } else if (at->i[k].is_slice) {
            const int64_t *v = at->i[k].v;
            int64_t last = v[0] + (v[3] - 1) * v[2];
            low[k] = v[3] > 0 ? (v[0] < last ? v[0] : last) : 1;
            high[k] = v[3] > 0 ? (v[0] < last ? last : v[0]) : 0;
        } else
            low[k] = high[k] = at->i[k].v[0];
    }
}

static bool disjoint(const struct incflat_indices *one, const struct incflat_indices *other, int rank,
                     const int64_t *shape) {
    int64_t al[INCFLAT_RANK], ah[INCFLAT_RANK], bl[INCFLAT_RANK], bh[INCFLAT_RANK];
    selection(one, rank, shape, al, ah);
    selection(other, rank, shape, bl, bh);
    for (int k = 0; k < rank; k++)
        if (ah[k] < bl[k] || bh[k] < al[k])
            return true;
    return false;
}

struct incflat_array incflat_empty_in_region(struct incflat_ctx *ctx, struct incflat_array root,
                                             const struct incflat_indices *at, int other_count,
                                             const struct incflat_indices *others, int same_count,
                                             const struct incflat_array *same, int apart_count,
                                             const struct incflat_array *apart, int points, int rank,
                                             const int64_t *shape, enum incflat_type type, const char *where) {
    struct incflat_array region;
    bool ok = in_bounds_region(root, at, &region) && same_shape(region.rank, region.shape, rank, shape) &&
              region.type == type;
    if (ok) {
        int64_t strides[INCFLAT_RANK];
        incflat_row_major(rank - points, region.shape + points, strides);
        ok = !memcmp(strides, region.strides + points, sizeof(int64_t) * (size_t)(rank - points));
    }
    for (int i = 0; ok && i < other_count; i++)
        ok = disjoint(at, &others[i], root.rank, root.shape);
    for (int i = 0; ok && i < same_count; i++)
        ok = same[i].mem != root.mem || same_view(&same[i], &region) || spans_apart(&same[i], &region);
    for (int i = 0; ok && i < apart_count; i++)
        ok = apart[i].mem != root.mem || spans_apart(&apart[i], &region);
    return ok ? region : incflat_empty(ctx, rank, shape, type, where, NULL, 0);
}

static bool placed(struct incflat_array a, const struct incflat_indices *at, const struct incflat_array *value) {
    struct incflat_array region;
    return value && value->mem == a.mem && value->rank > 0 && in_bounds_region(a, at, &region) &&
           same_view(value, &region);
}

static bool check_written(struct incflat_ctx *ctx, int rank, const int64_t *shape, const struct incflat_array *target,
                          const char *what, const char *where) {
    if (same_shape(rank, shape, target->rank, target->shape))
        return true;
    char from[INCFLAT_RANK * 24 + 1], to[INCFLAT_RANK * 24 + 1];
    incflat_shape_text(from, sizeof from, rank, shape);
    incflat_shape_text(to, sizeof to, target->rank, target->shape);
    incflat_fail(ctx, where, "cannot write a value of shape %s into %s of shape %s.", from, what, to);
    return false;
}

struct incflat_array incflat_update(struct incflat_ctx *ctx, struct incflat_array a, const struct incflat_indices *at,
                                    const struct incflat_array *value, union incflat_scalar scalar,
                                    const char *where, bool in_place) {
    if (placed(a, at, value))
        return incflat_destination(ctx, a, in_place, 0, NULL);
    struct incflat_array target;
    if (!locate(ctx, &a, at->n, at->i, where, &target))
        return a;
    bool slice = false;
    for (int k = 0; k < at->n; k++)
        slice |= at->i[k].is_slice;
    int value_rank = value ? value->rank : 0;
    if (!check_written(ctx, value_rank, value ? value->shape : NULL, &target, slice ? "a slice" : "a row", where))
        return a;
    struct incflat_array out = incflat_destination(ctx, a, in_place, value ? 1 : 0, value);
    if (ctx->failed || !incflat_count(target.rank, target.shape))
        return out;
    locate(ctx, &out, at->n, at->i, where, &target);
    size_t size = incflat_type_size(a.type);
    if (!value)
        incflat_upload(ctx, out.mem->buf, &scalar, 1, size, (size_t)target.offset * size, false);
    else if (value->mem == out.mem) { /* a view of the array it is written into */
        struct incflat_array part = incflat_manifest(ctx, *value);
        incflat_copy_into(ctx, part, target);
        incflat_drop(ctx, part.mem);
    } else
        incflat_copy_into(ctx, *value, target);
    return out;
}

struct incflat_array incflat_update_many(struct incflat_ctx *ctx, struct incflat_array a, int count,
                                         const struct incflat_indices *ats, const struct incflat_array *values,
                                         const char *const *wheres, bool in_place) {
    bool apart = true;
    for (int i = 0; i < count; i++)
        for (int k = i + 1; k < count; k++)
            apart = apart && disjoint(&ats[i], &ats[k], a.rank, a.shape);
    union incflat_scalar none;
    memset(&none, 0, sizeof none);
    if (!apart) {
        for (int i = 0; i < count && !ctx->failed; i++) {
            a = incflat_update(ctx, a, &ats[i], &values[i], none, wheres[i], in_place);
            in_place = true; /* the chain's later updates write into what the first made */
        }
        return a;
    }
    /* values made in their targets (empty_in_region) are there already, also in a copy destination makes */
    struct incflat_array *srcs = calloc((size_t)count + 1, sizeof *srcs), *dsts = calloc((size_t)count + 1, sizeof *dsts);
    int pairs = 0, reads = 0;
    for (int i = 0; i < count; i++)
        if (!placed(a, &ats[i], &values[i]))
            srcs[reads++] = values[i];
    struct incflat_array out = incflat_destination(ctx, a, in_place, reads, srcs);
    for (int i = 0; i < count && !ctx->failed; i++) {
        if (placed(a, &ats[i], &values[i]))
            continue;
        struct incflat_array target;
        if (!locate(ctx, &out, ats[i].n, ats[i].i, wheres[i], &target))
            break;
        bool slice = false;
        for (int k = 0; k < ats[i].n; k++)
            slice |= ats[i].i[k].is_slice;
        if (check_written(ctx, values[i].rank, values[i].shape, &target, slice ? "a slice" : "a row", wheres[i]) &&
            incflat_count(target.rank, target.shape)) {
            srcs[pairs] = values[i];
            dsts[pairs++] = target;
        }
    }
    if (!ctx->failed)
        copy_many(ctx, pairs, srcs, dsts);
    free(srcs);
    free(dsts);
    return out;
}

struct incflat_array incflat_scatter(struct incflat_ctx *ctx, struct incflat_array dest, struct incflat_array idxs,
                                     struct incflat_array vals, bool in_place) {
    const struct incflat_array reads[2] = {idxs, vals};
    struct incflat_array out = incflat_destination(ctx, dest, in_place, 2, reads);
    int64_t row = incflat_count(dest.rank - 1, dest.shape + 1), count = idxs.shape[0];
    if (ctx->failed || count * row == 0)
        return out;
    if (!incflat_contiguous(&vals))
        vals = incflat_manifest(ctx, vals);
    size_t size = incflat_type_size(dest.type);
    size_t global = (size_t)incflat_ceil_div(count * row, COPY_GROUP) * COPY_GROUP, local = COPY_GROUP;
    cl_long dst_off = out.offset, n = dest.shape[0], row_l = row, idx_off = idxs.offset, idx_stride = idxs.strides[0],
            src_off = vals.offset, count_l = count;
    const void *values[] = {&out.mem->buf, &dst_off, &n, &row_l, &idxs.mem->buf, &idx_off, &idx_stride,
                            &vals.mem->buf, &src_off, &count_l};
    size_t sizes[] = {sizeof(cl_mem), 8, 8, 8, sizeof(cl_mem), 8, 8, sizeof(cl_mem), 8, 8};
    const char *names[] = {"incflat_scatter_1", "incflat_scatter_2", "incflat_scatter_4", "incflat_scatter_8"};
    run_runtime_kernel(ctx, names[size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3], 1, &global, &local, 10, values,
                       sizes);
    return out;
}

int64_t incflat_compact(struct incflat_ctx *ctx, struct incflat_array flags, int count,
                        const struct incflat_array *arrs, struct incflat_array *outs, const char *where) {
    int64_t n = flags.shape[0];
    for (int i = 0; i < count; i++)
        outs[i] = arrs[i];
    if (n == 0) {
        for (int i = 0; i < count && !ctx->failed; i++) {
            int64_t shape[INCFLAT_RANK];
            memcpy(shape, arrs[i].shape, sizeof shape);
            shape[0] = 0;
            outs[i] = incflat_empty(ctx, arrs[i].rank, shape, arrs[i].type, where, "filter", 0);
        }
        return 0;
    }
    if (flags.offset || !incflat_contiguous(&flags))
        flags = incflat_manifest(ctx, flags);
    int64_t most = ctx->max_group_size < 256 ? ctx->max_group_size : 256, group = 1;
    while (group * 2 <= most)
        group *= 2;
    int64_t groups = incflat_ceil_div(n, group);
    groups = groups < 1024 ? groups : 1024;
    int64_t per_group = incflat_ceil_div(incflat_ceil_div(n, groups), group) * group, count_plus = groups + 1;
    struct incflat_array counts = incflat_empty(ctx, 1, &count_plus, INCFLAT_I64, where, "filter", 0);
    struct incflat_array positions = incflat_empty(ctx, 1, &n, INCFLAT_I64, where, "filter", 0);
    if (ctx->failed)
        return 0;
    cl_long n_l = n, per = per_group, groups_l = groups;
    size_t global = (size_t)(groups * group), local = (size_t)group, one = 1;
    const void *count_args[] = {&flags.mem->buf, &n_l, &per, &counts.mem->buf};
    size_t count_sizes[] = {sizeof(cl_mem), 8, 8, sizeof(cl_mem)};
    run_runtime_kernel(ctx, "incflat_compact_counts", 1, &global, &local, 4, count_args, count_sizes);
    const void *offset_args[] = {&counts.mem->buf, &groups_l};
    size_t offset_sizes[] = {sizeof(cl_mem), 8};
    run_runtime_kernel(ctx, "incflat_compact_offsets", 1, &one, &one, 2, offset_args, offset_sizes);
    const void *position_args[] = {&flags.mem->buf, &n_l, &per, &counts.mem->buf, &positions.mem->buf};
    size_t position_sizes[] = {sizeof(cl_mem), 8, 8, sizeof(cl_mem), sizeof(cl_mem)};
    run_runtime_kernel(ctx, "incflat_compact_positions", 1, &global, &local, 5, position_args, position_sizes);
    struct incflat_index last = {false, {groups, 0, 0, 0}};
    int64_t kept = incflat_index_scalar(ctx, counts, 1, &last, where).i64;
    for (int i = 0; i < count && !ctx->failed; i++) {
        int64_t shape[INCFLAT_RANK];
        memcpy(shape, arrs[i].shape, sizeof shape);
        shape[0] = kept;
        struct incflat_array dest = incflat_empty(ctx, arrs[i].rank, shape, arrs[i].type, where, "filter", 0);
        outs[i] = kept && !ctx->failed ? incflat_scatter(ctx, dest, positions, arrs[i], true) : dest;
    }
    incflat_drop(ctx, counts.mem);
    incflat_drop(ctx, positions.mem);
    return kept;
}

struct incflat_array incflat_array_literal(struct incflat_ctx *ctx, int count, const struct incflat_element *elems,
                                           enum incflat_type type, const char *where) {
    const struct incflat_array *first = elems[0].on_device ? &elems[0].array : NULL;
    int rank = first ? first->rank : 0;
    bool any_device = false;
    for (int i = 0; i < count; i++) {
        const struct incflat_array *e = elems[i].on_device ? &elems[i].array : NULL;
        any_device |= e != NULL;
        if (!same_shape(e ? e->rank : 0, e ? e->shape : NULL, rank, first ? first->shape : NULL)) {
            char text[4096] = "", one[INCFLAT_RANK * 24 + 1];
            for (int k = 0; k < count; k++) {
                const struct incflat_array *x = elems[k].on_device ? &elems[k].array : NULL;
                incflat_shape_text(one, sizeof one, x ? x->rank : 0, x ? x->shape : NULL);
                if (strlen(text) + strlen(one) + 3 < sizeof text)
                    strcat(strcat(text, k ? ", " : ""), one);
            }
            incflat_fail(ctx, where, "the elements of an array literal have different shapes: %s.", text);
            return elems[0].array;
        }
    }
    int64_t shape[INCFLAT_RANK] = {count};
    if (first)
        memcpy(shape + 1, first->shape, sizeof(int64_t) * (size_t)rank);
    struct incflat_array out = incflat_empty(ctx, rank + 1, shape, type, "", NULL, 0);
    size_t size = incflat_type_size(type);
    if (ctx->failed || !count)
        return out;
    if (!any_device) { /* all on the host: one upload */
        unsigned char *host = malloc((size_t)count * size);
        for (int i = 0; i < count; i++)
            memcpy(host + (size_t)i * size, &elems[i].scalar, size);
        incflat_upload(ctx, out.mem->buf, host, count, (size_t)count * size, 0, false);
        free(host);
        return out;
    }
    for (int i = 0; i < count && !ctx->failed; i++) {
        struct incflat_array row = rows_of(out, i, 1);
        if (elems[i].on_device) { /* the element seen with the row's one-long first dimension */
            struct incflat_array e = elems[i].array;
            for (int k = e.rank; k > 0; k--) {
                e.shape[k] = e.shape[k - 1];
                e.strides[k] = e.strides[k - 1];
            }
            e.rank++;
            e.shape[0] = 1;
            e.strides[0] = row.strides[0];
            incflat_copy_into(ctx, e, row);
        } else if (incflat_count(rank, shape + 1))
            incflat_upload(ctx, out.mem->buf, &elems[i].scalar, 1, size, (size_t)row.offset * size, false);
    }
    return out;
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
    int64_t n = incflat_count(a.rank, a.shape);
    if (n)
        incflat_upload(ctx, a.mem->buf, v->data, n, (size_t)n * incflat_type_size(v->type), 0, false);
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
    int64_t n = incflat_count(rank, a->shape);
    if (!n)
        return 0;
    out->data = malloc((size_t)n * size);
    if (incflat_contiguous(a)) {
        incflat_download(ctx, out->data, a->mem->buf, n, (size_t)n * size, (size_t)a->offset * size);
        return ctx->failed ? -1 : 0;
    }
    /* a strided view: the span of its elements read back (the elements between too), gathered here */
    int64_t low, high;
    span(a, &low, &high);
    unsigned char *whole = malloc((size_t)(high - low + 1) * size), *to = out->data;
    incflat_download(ctx, whole, a->mem->buf, n, (size_t)(high - low + 1) * size, (size_t)low * size);
    int64_t index[INCFLAT_RANK] = {0};
    for (int64_t e = 0; e < n && !ctx->failed; e++) {
        int64_t at = a->offset - low;
        for (int k = 0; k < rank; k++)
            at += index[k] * a->strides[k];
        memcpy(to + (size_t)e * size, whole + (size_t)at * size, size);
        for (int k = rank - 1; k >= 0 && ++index[k] == a->shape[k]; k--)
            index[k] = 0;
    }
    free(whole);
    return ctx->failed ? -1 : 0;
}
