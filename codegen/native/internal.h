/* What the native runtime's files share (host.c, arrays.c, runs.c) and generated code does not see. */
#ifndef INCFLAT_INTERNAL_H
#define INCFLAT_INTERNAL_H

#include "host.h"

#include <stdarg.h>

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
    unsigned char last[12][1024]; /* the arguments it was last launched with */
    size_t last_size[12];
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
    int64_t mem_blocks, mem_bytes; /* the device memory the program holds: in use and in the free list */
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
    struct incflat_array iotas[32];
    int iota_count;
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


void *incflat_grow(void *items, size_t *cap, size_t count, size_t size); /* room for one more item */
double incflat_now(void);                                                /* seconds, monotonic */
char *incflat_format(const char *fmt, ...);                              /* allocated */
char *incflat_fill_template(const char *template, const int64_t *values, int count); /* Python's {0} {1} */
/* An OpenCL call that failed fails the run; recoverable where a workgroup-level version may fall back from it. */
bool incflat_cl_failed(struct incflat_ctx *ctx, cl_int code, const char *what, bool recoverable);
void incflat_shape_text(char *out, size_t len, int rank, const int64_t *shape); /* "[2][3]" */
void incflat_timed(struct incflat_ctx *ctx, const char *name, cl_event event); /* a command for -P */
void incflat_drop(struct incflat_ctx *ctx, struct incflat_mem *m);              /* memory made here, not kept */
bool incflat_contiguous(const struct incflat_array *a);                          /* row-major from its offset */
int64_t incflat_count(int rank, const int64_t *shape);
void incflat_row_major(int rank, const int64_t *shape, int64_t *strides);
void incflat_upload(struct incflat_ctx *ctx, cl_mem buf, const void *host, int64_t elements, size_t bytes,
                    size_t byte_offset, bool constant);
void incflat_download(struct incflat_ctx *ctx, void *host, cl_mem buf, int64_t elements, size_t bytes,
                      size_t byte_offset);

#endif
