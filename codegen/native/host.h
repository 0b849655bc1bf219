/* The native host's runtime: what a compiled program's C host code (codegen/chost.py's printing of the host
 * IR) calls, as ir/runtime's Python modules are what the pyopencl backend's host code calls. The same names
 * do the same things: a run's context (device, built kernels, tuning-parameter values, -L and -P records),
 * device memory from a free list, arrays as views of it, launches, checks and the run-time errors of kernels.
 *
 * Errors: a function that fails sets ctx->failed (with ctx->message) and returns a harmless value; the
 * generated code tests ctx->failed after each statement that can fail. A failure a workgroup-level version
 * may fall back from (a kernel the device could not build or launch) is `recoverable`. */
#ifndef INCFLAT_HOST_H
#define INCFLAT_HOST_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "opencl.h"
#include "values.h"

#define INCFLAT_RANK 8 /* the most dimensions an array of a compiled program has (the runtime's COPY_RANK) */

/* Device memory, counted: the arrays that refer to it. At no reference it goes back to the free list. */
struct incflat_mem {
    cl_mem buf;
    size_t size;
    int64_t refs;
    bool fresh; /* made and not yet referred to (see incflat_arr_set) */
    struct incflat_mem *next;
};

/* An array on the device: a view of memory (offset and strides in elements). */
struct incflat_array {
    struct incflat_mem *mem;
    int64_t offset;
    int rank;
    enum incflat_type type;
    int64_t shape[INCFLAT_RANK];
    int64_t strides[INCFLAT_RANK];
};

union incflat_scalar {
    int8_t i8; int16_t i16; int32_t i32; int64_t i64;
    uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
    float f32; double f64; bool b;
};

/* An argument or result of an entry point: an array, or a scalar. */
struct incflat_slot {
    struct incflat_array array;
    union incflat_scalar scalar;
};

struct incflat_ctx;

/* ---- the program, as generated ---- */

struct incflat_kernel_info {
    const char *name;
    const char *source; /* OpenCL C, after the prelude */
};

struct incflat_param_info {
    const char *name;
    bool threshold, user; /* a threshold; a user parameter (unset until given) */
    bool has_default;     /* a threshold's listed default (else the device's) */
    int64_t default_value;
    const char *line_format, *default_text; /* its --print-params line: the format of its default's text */
};

struct incflat_error_info {
    const char *where, *message; /* message: Python's format, {0} {1} ... filled by the kernel's values */
};

struct incflat_entry_info {
    const char *name;
    int params, results;
    const char *const *param_types; /* Futhark's spelling without sizes, "[][]f32" */
    const char *const *result_types;
    void (*fn)(struct incflat_ctx *ctx, const struct incflat_slot *in, struct incflat_slot *out);
};

/* Texts whose owner is ir/runtime/tuning.py, as printf formats. */
struct incflat_formats {
    const char *compared_true, *compared_false; /* (threshold, ePar) */
    const char *device_line;                    /* (device, platform) */
    const char *default_threshold_line;         /* (value) */
    const char *no_fallback;                    /* (threshold, ePar, device, why) */
};

struct incflat_program {
    const char *name;
    const char *prelude, *copy_source; /* the kernels' OpenCL prelude; the runtime's own kernels */
    const struct incflat_kernel_info *kernels;
    int kernel_count;
    const struct incflat_param_info *params;
    int param_count;
    const struct incflat_error_info *errors;
    int error_count;
    const struct incflat_entry_info *entries;
    int entry_count;
    /* The tuned defaults the tuner wrote into the binary (codegen/cprogram.py patches them): per parameter,
     * whether it is set and its value; their provenance ("" for none). */
    const int64_t *tuned;
    const char *provenance;
    struct incflat_formats formats;
    const char *opencl_loader; /* the loader pyopencl's wheel held where the program was built, or NULL */
};

/* ---- the context ---- */

struct incflat_options {
    const char *device, *platform;
    int64_t default_threshold, default_group_size, default_tile_size; /* 0: the device's */
    bool log, profile, debug, fallback;
};

/* A context for the program with the options and overrides (parameter index -> value, set where given).
 * NULL with *error (the caller frees it) where the device or the kernels cannot be had. */
struct incflat_ctx *incflat_ctx_new(const struct incflat_program *program, const struct incflat_options *options,
                                    const bool *given, const int64_t *overrides, char **error);
void incflat_ctx_free(struct incflat_ctx *ctx);
/* A second context with other overrides sharing the first's device, kernels and memory (--alternate-tuning). */
struct incflat_ctx *incflat_ctx_alternate(struct incflat_ctx *first, const bool *given, const int64_t *overrides);

struct incflat_ctx {
    const struct incflat_program *program;
    struct incflat_shared *shared; /* the device's objects, shared with alternates */
    struct incflat_cl *cl;
    cl_command_queue queue;
    char device_name[256];
    bool is_gpu, log, profile, debug, fallback, owner;
    int64_t max_group_size, local_mem_size, global_mem_size, default_threshold, group_size, num_groups,
        default_tile_size;
    int64_t *values; /* each parameter's value; a user parameter unset is INCFLAT_UNSET */
    cl_mem error_buf;
    /* the failure of the statement that just ran */
    bool failed, recoverable, too_large;
    char *message;
    /* -P: commands, decisions, transfers */
    struct incflat_profile *prof;
    int64_t *failed_groups; /* per parameter: the fewest threads its workgroup version failed with */
    bool *warned;
    struct incflat_transfers {
        int64_t arrays_up, bytes_up, arrays_down, bytes_down, values_up, values_down, constants;
    } transfers, timed_transfers;
    int64_t runs, timed_runs;
    bool have_timed;
};

#define INCFLAT_UNSET INT64_MIN

/* Fails the run: the message "where: text" (where may be ""), printf-formatted. */
void incflat_fail(struct incflat_ctx *ctx, const char *where, const char *format, ...);
void incflat_clear_error(struct incflat_ctx *ctx);

/* ---- parameters and guards ---- */
bool incflat_cmp(struct incflat_ctx *ctx, int param, int64_t par);
int64_t incflat_size(struct incflat_ctx *ctx, int param, int64_t fallback, int64_t most);
int64_t incflat_user_param(struct incflat_ctx *ctx, int param, int64_t fallback);
int64_t incflat_tile_size(struct incflat_ctx *ctx, int kernel, int param);
bool incflat_fits_group(struct incflat_ctx *ctx, int param, int64_t par, int64_t local_bytes);
void incflat_warn_once(struct incflat_ctx *ctx, int param, int64_t par); /* after a recoverable failure */
void incflat_enter(struct incflat_ctx *ctx, int param, bool outcome, int64_t par);
void incflat_leave(struct incflat_ctx *ctx);

/* ---- memory and arrays ---- */
struct incflat_array incflat_empty(struct incflat_ctx *ctx, int rank, const int64_t *shape, enum incflat_type type,
                                   const char *where, const char *what, int interleave);
struct incflat_mem *incflat_scratch(struct incflat_ctx *ctx, int64_t count, enum incflat_type type);
void incflat_arr_set(struct incflat_ctx *ctx, struct incflat_array *target, struct incflat_array value);
void incflat_arr_release(struct incflat_ctx *ctx, struct incflat_array *a);
void incflat_mem_release(struct incflat_ctx *ctx, struct incflat_mem *m);
void incflat_release_fresh(struct incflat_ctx *ctx); /* memory made and never referred to */
/* The device memory the program holds (in use and in the free list): blocks and bytes. */
void incflat_memory_held(struct incflat_ctx *ctx, int64_t *blocks, int64_t *bytes);
struct incflat_array incflat_permute(struct incflat_array a, int n, const int64_t *perm);
/* An index: an integer (is_slice false: vals[0]) or a slice (start, end, stride, size). */
struct incflat_index { bool is_slice; int64_t v[4]; };
struct incflat_array incflat_index_view(struct incflat_ctx *ctx, struct incflat_array a, int n,
                                        const struct incflat_index *idxs, const char *where);
union incflat_scalar incflat_index_scalar(struct incflat_ctx *ctx, struct incflat_array a, int n,
                                          const struct incflat_index *idxs, const char *where);
union incflat_scalar incflat_to_host(struct incflat_ctx *ctx, struct incflat_array a);
struct incflat_array incflat_reshape(struct incflat_ctx *ctx, int rank, const int64_t *shape, struct incflat_array a,
                                     const char *where);
struct incflat_array incflat_manifest(struct incflat_ctx *ctx, struct incflat_array a);
struct incflat_array incflat_coalesced(struct incflat_ctx *ctx, struct incflat_array a, int inner);
struct incflat_array incflat_constant_array(struct incflat_ctx *ctx, const void *data, int64_t count,
                                            enum incflat_type type);
struct incflat_array incflat_replicate_scalar(struct incflat_ctx *ctx, union incflat_scalar x, int rank,
                                              const int64_t *shape, enum incflat_type type, const char *where);
struct incflat_array incflat_replicate_array(struct incflat_ctx *ctx, struct incflat_array x, int rank,
                                             const int64_t *shape, const char *where);
void incflat_copy_into(struct incflat_ctx *ctx, struct incflat_array src, struct incflat_array dst);
struct incflat_array incflat_iota(struct incflat_ctx *ctx, int64_t n, enum incflat_type type, const char *where);
struct incflat_array incflat_concat(struct incflat_ctx *ctx, int count, const struct incflat_array *arrs, int64_t size,
                                    const char *where);
struct incflat_array incflat_rotate(struct incflat_ctx *ctx, int64_t amount, struct incflat_array a);
/* The array an update or scatter writes into: a itself where in place and none of `reads` is in its memory. */
struct incflat_array incflat_destination(struct incflat_ctx *ctx, struct incflat_array a, bool in_place, int count,
                                         const struct incflat_array *reads);
/* The indices of an update's target. */
struct incflat_indices { int n; struct incflat_index i[INCFLAT_RANK]; };
/* a with [at] = value (a device array), or = scalar where value is NULL (a host scalar). */
struct incflat_array incflat_update(struct incflat_ctx *ctx, struct incflat_array a, const struct incflat_indices *at,
                                    const struct incflat_array *value, union incflat_scalar scalar,
                                    const char *where, bool in_place);
struct incflat_array incflat_update_many(struct incflat_ctx *ctx, struct incflat_array a, int count,
                                         const struct incflat_indices *ats, const struct incflat_array *values,
                                         const char *const *wheres, bool in_place);
/* Memory for a kernel's result that an update then writes into root[at] (codegen/placement.py). */
struct incflat_array incflat_empty_in_region(struct incflat_ctx *ctx, struct incflat_array root,
                                             const struct incflat_indices *at, int other_count,
                                             const struct incflat_indices *others, int same_count,
                                             const struct incflat_array *same, int apart_count,
                                             const struct incflat_array *apart, int points, int rank,
                                             const int64_t *shape, enum incflat_type type, const char *where);
struct incflat_array incflat_scatter(struct incflat_ctx *ctx, struct incflat_array dest, struct incflat_array idxs,
                                     struct incflat_array vals, bool in_place);
/* filter's second half: the count kept, and each array's kept elements in outs. */
int64_t incflat_compact(struct incflat_ctx *ctx, struct incflat_array flags, int count,
                        const struct incflat_array *arrs, struct incflat_array *outs, const char *where);
/* An element of an array literal: on the device, or a host scalar. */
struct incflat_element { bool on_device; struct incflat_array array; union incflat_scalar scalar; };
struct incflat_array incflat_array_literal(struct incflat_ctx *ctx, int count, const struct incflat_element *elems,
                                           enum incflat_type type, const char *where);

/* ---- kernels ---- */
/* A kernel's memory argument: a buffer, or local memory of `local` bytes (buf NULL). */
struct incflat_karg { cl_mem buf; size_t local; };
#define INCFLAT_BUF(b) ((struct incflat_karg){(b), 0})
#define INCFLAT_LOCAL(n) ((struct incflat_karg){NULL, (size_t)((n) > 1 ? (n) : 1)})
void incflat_launch(struct incflat_ctx *ctx, int kernel, int64_t global_size, int64_t local_size,
                    const struct incflat_karg *memory, int memory_count, const void *scalars, size_t scalars_size,
                    int64_t reach);
int64_t incflat_kernel_group_size(struct incflat_ctx *ctx, int count, const int *kernels, int64_t group_size);
int64_t incflat_fit_local(struct incflat_ctx *ctx, int64_t group_size, int64_t bytes_per_thread);
cl_mem incflat_segment_counters(struct incflat_ctx *ctx, int64_t segments);
/* A single-pass scan's block statuses for a new launch over `blocks` blocks (a new epoch), and its counters. */
cl_mem incflat_lookback(struct incflat_ctx *ctx, int64_t blocks);
cl_mem incflat_scan_counters(struct incflat_ctx *ctx);
int64_t incflat_scan_epoch(struct incflat_ctx *ctx);
void incflat_check_errors(struct incflat_ctx *ctx); /* the first error a kernel recorded, if any */

/* ---- host arithmetic with Python's semantics ---- */
int64_t incflat_floordiv(int64_t x, int64_t y);
int64_t incflat_floormod(int64_t x, int64_t y);
int64_t incflat_ipow(int64_t x, int64_t y);
int64_t incflat_shl(int64_t x, int64_t y);
int64_t incflat_shr(int64_t x, int64_t y);
int64_t incflat_ceil_div(int64_t a, int64_t b);
int64_t incflat_groups_per_segment(int64_t segments, int64_t width, int64_t num_groups, int64_t group_size);
int64_t incflat_segment_group_size(int64_t group_size, int64_t width);
int64_t incflat_thread_parts(int64_t segments, int64_t width, int64_t num_groups, int64_t group_size);
/* Futhark's integer division and remainder at kind "/" "%" (floor) "//" "%%" (truncate), of `type` */
int64_t incflat_int_div(struct incflat_ctx *ctx, int64_t x, int64_t y, const char *kind, const char *where);
uint64_t incflat_uint_div(struct incflat_ctx *ctx, uint64_t x, uint64_t y, const char *kind, const char *where);
int64_t incflat_int_pow(struct incflat_ctx *ctx, int64_t x, int64_t y, const char *where);
/* A float converted to an integer as Futhark's C backends convert it on x86 (cscalar.py's cvtt32/64) */
static inline int32_t incflat_cvtt32(double x) {
    double t = trunc(x);
    return t >= -0x1p31 && t < 0x1p31 ? (int32_t)t : INT32_MIN;
}
static inline int64_t incflat_cvtt64(double x) {
    double t = trunc(x);
    return t >= -0x1p63 && t < 0x1p63 ? (int64_t)t : INT64_MIN;
}
static inline uint64_t incflat_cvttu64(double x) {
    return x >= 0x1p63 ? (uint64_t)incflat_cvtt64(x - 0x1p63) + UINT64_C(0x8000000000000000) : (uint64_t)incflat_cvtt64(x);
}

/* Python's max and min of two: the first, replaced by the second where it compares beyond it. */
#define INCFLAT_MIN_MAX(T, N) \
    static inline T incflat_max_##N(T a, T b) { return b > a ? b : a; } \
    static inline T incflat_min_##N(T a, T b) { return b < a ? b : a; }
INCFLAT_MIN_MAX(int8_t, i8) INCFLAT_MIN_MAX(int16_t, i16) INCFLAT_MIN_MAX(int32_t, i32) INCFLAT_MIN_MAX(int64_t, i64)
INCFLAT_MIN_MAX(uint8_t, u8) INCFLAT_MIN_MAX(uint16_t, u16) INCFLAT_MIN_MAX(uint32_t, u32)
INCFLAT_MIN_MAX(uint64_t, u64) INCFLAT_MIN_MAX(float, f32) INCFLAT_MIN_MAX(double, f64) INCFLAT_MIN_MAX(bool, bool)
#undef INCFLAT_MIN_MAX

/* The prelude's functions on host scalars, as the kernels' OpenCL builtins compute them. */
#define INCFLAT_FLOAT_FUNCTIONS(T, N, B) \
    static inline T incflat_sgn_##N(T x) { return x != x ? x : (T)((x > 0) - (x < 0)); } \
    static inline T incflat_mad_##N(T a, T b, T c) { T p = a * b; return p + c; } \
    static inline T incflat_lerp_##N(T v0, T v1, T t) { T d = v1 - v0; T p = d * t; return v0 + p; } \
    static inline B incflat_to_bits_##N(T x) { B b; memcpy(&b, &x, sizeof b); return b; } \
    static inline T incflat_from_bits_##N(B b) { T x; memcpy(&x, &b, sizeof x); return x; }
INCFLAT_FLOAT_FUNCTIONS(float, f32, uint32_t) INCFLAT_FLOAT_FUNCTIONS(double, f64, uint64_t)
#undef INCFLAT_FLOAT_FUNCTIONS
static inline int32_t incflat_popc(uint64_t u) { int32_t n = 0; for (; u; u &= u - 1) n++; return n; }
static inline int32_t incflat_clz(uint64_t u, int width) { int32_t n = width; for (; u; u >>= 1) n--; return n; }
static inline int32_t incflat_ctz(uint64_t u, int width) {
    int32_t n = 0;
    for (; n < width && !(u & 1); u >>= 1) n++;
    return n;
}

/* The high half of a product: 64-bit ones from 32-bit halves (C99 has no wider type), signed from unsigned. */
static inline uint64_t incflat_mul_hi_u64(uint64_t a, uint64_t b) {
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t low = a0 * b0, middle1 = a1 * b0 + (low >> 32), middle2 = a0 * b1 + (middle1 & 0xffffffffu);
    return a1 * b1 + (middle1 >> 32) + (middle2 >> 32);
}
static inline int64_t incflat_mul_hi_i64(int64_t a, int64_t b) {
    uint64_t high = incflat_mul_hi_u64((uint64_t)a, (uint64_t)b);
    high -= (a < 0 ? (uint64_t)b : 0) + (b < 0 ? (uint64_t)a : 0);
    return (int64_t)high;
}
#define INCFLAT_MUL_HI(T, N, W, BITS) \
    static inline T incflat_mul_hi_##N(T a, T b) { return (T)(((W)a * (W)b) >> BITS); }
INCFLAT_MUL_HI(int8_t, i8, int32_t, 8) INCFLAT_MUL_HI(int16_t, i16, int32_t, 16)
INCFLAT_MUL_HI(int32_t, i32, int64_t, 32) INCFLAT_MUL_HI(uint8_t, u8, uint32_t, 8)
INCFLAT_MUL_HI(uint16_t, u16, uint32_t, 16) INCFLAT_MUL_HI(uint32_t, u32, uint64_t, 32)
#undef INCFLAT_MUL_HI

/* ---- checks ---- */
void incflat_check_size(struct incflat_ctx *ctx, int64_t expected, int64_t actual, const char *name,
                        const char *array);
void incflat_check_coercion(struct incflat_ctx *ctx, int64_t expected, int rank, const int64_t *shape, int dim,
                            const char *where);
void incflat_check_sizes(struct incflat_ctx *ctx, int rank, const int64_t *shape, const char *what,
                         const char *where);
void incflat_check_assertion(struct incflat_ctx *ctx, bool cond, const char *message, int count,
                             const int64_t *values, const char *where);

/* ---- runs ---- */
void incflat_begin_run(struct incflat_ctx *ctx);
void incflat_finish(struct incflat_ctx *ctx);
void incflat_end_timed_runs(struct incflat_ctx *ctx);
void incflat_report_profile(struct incflat_ctx *ctx, FILE *out);
int incflat_profile_json(struct incflat_ctx *ctx, FILE *out);
/* An entry's argument on the device (arrays uploaded), or a failure. */
struct incflat_slot incflat_upload_value(struct incflat_ctx *ctx, const struct incflat_value *v);
/* A result on the host (the caller frees it with incflat_value_free). */
int incflat_download_value(struct incflat_ctx *ctx, const struct incflat_slot *slot, const char *type,
                           struct incflat_value *out);

/* The executable's command line (cli.c), and its --server mode (server.c). */
int incflat_main(const struct incflat_program *program, int argc, char **argv);
int incflat_server(const struct incflat_program *program, struct incflat_ctx *ctx);

#endif
