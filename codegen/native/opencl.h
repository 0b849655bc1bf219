/* OpenCL for the native host, loaded at run time (dlopen): building a program needs no OpenCL headers or
 * libraries, and one binary runs wherever an ICD loader is found, or the one pyopencl bundles is named.
 *
 * The types, constants and functions below are those of OpenCL 1.2 that the host uses, declared here with the
 * values of Khronos's CL/cl.h (do not include both). The functions are called through the table of a loaded
 * struct incflat_cl: cl->clFinish(queue).
 *
 * Helpers return NULL on success and, on failure, a message in words that the caller frees: a build log has
 * no bound on its length, and a caller can pass the message on without knowing what failed. */
#ifndef INCFLAT_OPENCL_H
#define INCFLAT_OPENCL_H

#include <stddef.h>
#include <stdint.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef int64_t cl_long;
typedef uint64_t cl_ulong;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type, cl_mem_flags, cl_command_queue_properties;
typedef cl_uint cl_platform_info, cl_device_info, cl_program_build_info, cl_kernel_work_group_info,
    cl_profiling_info;
typedef intptr_t cl_context_properties;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

/* The error codes, once: they make the enum below and incflat_cl_error_name's table. */
#define INCFLAT_CL_ERRORS(X) \
    X(CL_SUCCESS, 0) X(CL_DEVICE_NOT_FOUND, -1) X(CL_DEVICE_NOT_AVAILABLE, -2) X(CL_COMPILER_NOT_AVAILABLE, -3) \
    X(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4) X(CL_OUT_OF_RESOURCES, -5) X(CL_OUT_OF_HOST_MEMORY, -6) \
    X(CL_PROFILING_INFO_NOT_AVAILABLE, -7) X(CL_MEM_COPY_OVERLAP, -8) X(CL_IMAGE_FORMAT_MISMATCH, -9) \
    X(CL_IMAGE_FORMAT_NOT_SUPPORTED, -10) X(CL_BUILD_PROGRAM_FAILURE, -11) X(CL_MAP_FAILURE, -12) \
    X(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13) X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14) \
    X(CL_COMPILE_PROGRAM_FAILURE, -15) X(CL_LINKER_NOT_AVAILABLE, -16) X(CL_LINK_PROGRAM_FAILURE, -17) \
    X(CL_DEVICE_PARTITION_FAILED, -18) X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, -19) \
    X(CL_INVALID_VALUE, -30) X(CL_INVALID_DEVICE_TYPE, -31) X(CL_INVALID_PLATFORM, -32) \
    X(CL_INVALID_DEVICE, -33) X(CL_INVALID_CONTEXT, -34) X(CL_INVALID_QUEUE_PROPERTIES, -35) \
    X(CL_INVALID_COMMAND_QUEUE, -36) X(CL_INVALID_HOST_PTR, -37) X(CL_INVALID_MEM_OBJECT, -38) \
    X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, -39) X(CL_INVALID_IMAGE_SIZE, -40) X(CL_INVALID_SAMPLER, -41) \
    X(CL_INVALID_BINARY, -42) X(CL_INVALID_BUILD_OPTIONS, -43) X(CL_INVALID_PROGRAM, -44) \
    X(CL_INVALID_PROGRAM_EXECUTABLE, -45) X(CL_INVALID_KERNEL_NAME, -46) X(CL_INVALID_KERNEL_DEFINITION, -47) \
    X(CL_INVALID_KERNEL, -48) X(CL_INVALID_ARG_INDEX, -49) X(CL_INVALID_ARG_VALUE, -50) \
    X(CL_INVALID_ARG_SIZE, -51) X(CL_INVALID_KERNEL_ARGS, -52) X(CL_INVALID_WORK_DIMENSION, -53) \
    X(CL_INVALID_WORK_GROUP_SIZE, -54) X(CL_INVALID_WORK_ITEM_SIZE, -55) X(CL_INVALID_GLOBAL_OFFSET, -56) \
    X(CL_INVALID_EVENT_WAIT_LIST, -57) X(CL_INVALID_EVENT, -58) X(CL_INVALID_OPERATION, -59) \
    X(CL_INVALID_GL_OBJECT, -60) X(CL_INVALID_BUFFER_SIZE, -61) X(CL_INVALID_MIP_LEVEL, -62) \
    X(CL_INVALID_GLOBAL_WORK_SIZE, -63) X(CL_INVALID_PROPERTY, -64) X(CL_INVALID_IMAGE_DESCRIPTOR, -65) \
    X(CL_INVALID_COMPILER_OPTIONS, -66) X(CL_INVALID_LINKER_OPTIONS, -67) \
    X(CL_INVALID_DEVICE_PARTITION_COUNT, -68) X(CL_PLATFORM_NOT_FOUND_KHR, -1001)
#define INCFLAT_CL_ENUM(name, value) name = value,
enum { INCFLAT_CL_ERRORS(INCFLAT_CL_ENUM) };
#undef INCFLAT_CL_ENUM

#define CL_FALSE 0
#define CL_TRUE 1
#define CL_DEVICE_TYPE_DEFAULT (1 << 0)
#define CL_DEVICE_TYPE_CPU (1 << 1)
#define CL_DEVICE_TYPE_GPU (1 << 2)
#define CL_DEVICE_TYPE_ACCELERATOR (1 << 3)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF
#define CL_MEM_READ_WRITE (1 << 0)
#define CL_MEM_WRITE_ONLY (1 << 1)
#define CL_MEM_READ_ONLY (1 << 2)
#define CL_MEM_USE_HOST_PTR (1 << 3)
#define CL_MEM_ALLOC_HOST_PTR (1 << 4)
#define CL_MEM_COPY_HOST_PTR (1 << 5)
#define CL_QUEUE_PROFILING_ENABLE (1 << 1)
#define CL_PLATFORM_NAME 0x0902
#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define CL_DEVICE_LOCAL_MEM_SIZE 0x1023
#define CL_DEVICE_NAME 0x102B
#define CL_DEVICE_EXTENSIONS 0x1030
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_KERNEL_WORK_GROUP_SIZE 0x11B0
#define CL_PROFILING_COMMAND_START 0x1282
#define CL_PROFILING_COMMAND_END 0x1283

/* The functions, once: (return type, name, parameters). They make the table's members and its lookup. */
#define INCFLAT_CL_FUNCTIONS(X) \
    X(cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *)) \
    X(cl_int, clGetPlatformInfo, (cl_platform_id, cl_platform_info, size_t, void *, size_t *)) \
    X(cl_int, clGetDeviceIDs, (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *)) \
    X(cl_int, clGetDeviceInfo, (cl_device_id, cl_device_info, size_t, void *, size_t *)) \
    X(cl_context, clCreateContext, (const cl_context_properties *, cl_uint, const cl_device_id *, \
                                    void (*)(const char *, const void *, size_t, void *), void *, cl_int *)) \
    X(cl_int, clReleaseContext, (cl_context)) \
    X(cl_command_queue, clCreateCommandQueue, (cl_context, cl_device_id, cl_command_queue_properties, cl_int *)) \
    X(cl_int, clReleaseCommandQueue, (cl_command_queue)) \
    X(cl_mem, clCreateBuffer, (cl_context, cl_mem_flags, size_t, void *, cl_int *)) \
    X(cl_int, clReleaseMemObject, (cl_mem)) \
    X(cl_program, clCreateProgramWithSource, (cl_context, cl_uint, const char **, const size_t *, cl_int *)) \
    X(cl_int, clBuildProgram, (cl_program, cl_uint, const cl_device_id *, const char *, \
                               void (*)(cl_program, void *), void *)) \
    X(cl_int, clGetProgramBuildInfo, (cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *)) \
    X(cl_int, clReleaseProgram, (cl_program)) \
    X(cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *)) \
    X(cl_int, clReleaseKernel, (cl_kernel)) \
    X(cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *)) \
    X(cl_int, clGetKernelWorkGroupInfo, (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, \
                                         size_t *)) \
    X(cl_int, clEnqueueNDRangeKernel, (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, \
                                       const size_t *, cl_uint, const cl_event *, cl_event *)) \
    X(cl_int, clEnqueueReadBuffer, (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, \
                                    const cl_event *, cl_event *)) \
    X(cl_int, clEnqueueWriteBuffer, (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, \
                                     const cl_event *, cl_event *)) \
    X(cl_int, clEnqueueCopyBuffer, (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, \
                                    const cl_event *, cl_event *)) \
    X(cl_int, clEnqueueFillBuffer, (cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint, \
                                    const cl_event *, cl_event *)) \
    X(cl_int, clFlush, (cl_command_queue)) \
    X(cl_int, clFinish, (cl_command_queue)) \
    X(cl_int, clWaitForEvents, (cl_uint, const cl_event *)) \
    X(cl_int, clGetEventProfilingInfo, (cl_event, cl_profiling_info, size_t, void *, size_t *)) \
    X(cl_int, clReleaseEvent, (cl_event))

struct incflat_cl {
    void *library; /* dlopen's handle */
    char *path;    /* the library loaded, as it was named */
#define INCFLAT_CL_MEMBER(ret, name, params) ret(*name) params;
    INCFLAT_CL_FUNCTIONS(INCFLAT_CL_MEMBER)
#undef INCFLAT_CL_MEMBER
};

/* What the runtime needs to know of a device (the names without surrounding blanks). */
struct incflat_cl_device {
    cl_platform_id platform;
    cl_device_id id;
    char name[256], platform_name[256];
    cl_device_type type;
    size_t max_group_size;
    cl_ulong local_mem_size, global_mem_size;
    cl_uint compute_units;
};

/* Loads OpenCL. The library is the one INCFLAT_OPENCL_LIBRARY names if it is set (a user's choice reaches
 * programs run by tools), else `path` if not NULL, else `fallback` if not NULL and the file exists, else
 * libOpenCL.so.1, then libOpenCL.so. A library that was named is the only one tried: another one, loaded in its
 * place, would hide the mistake. The loader pyopencl's wheel bundles (a pyopencl/.libs/libOpenCL*) crashes
 * without PYOPENCL_HOME set and finds the vendor libraries its .icd files name only on the library path: for one
 * in a folder named .libs, PYOPENCL_HOME is set (where unset) and those libraries are loaded first, by path. */
char *incflat_cl_load(struct incflat_cl *cl, const char *path, const char *fallback);
void incflat_cl_unload(struct incflat_cl *cl);

/* "CL_INVALID_VALUE" for -30; "an unknown OpenCL error" for a code it does not know. */
const char *incflat_cl_error_name(cl_int code);
/* The message "<what> failed: <name> (<code>)", or NULL where code is CL_SUCCESS. */
char *incflat_cl_error(const char *what, cl_int code);

/* The device incflat's Python runtime (ir/runtime/device.py, choose_device) chooses: the first whose names
 * contain the substrings (NULL: any; case ignored) and whose compiler builds a trivial kernel, GPUs first. */
char *incflat_cl_choose_device(const struct incflat_cl *cl, const char *platform_sub, const char *device_sub,
                               struct incflat_cl_device *out);
/* A context for the device and an in-order queue, with profiling if asked (for event times). */
char *incflat_cl_create(const struct incflat_cl *cl, cl_device_id device, int profiling, cl_context *context,
                        cl_command_queue *queue);
/* The program built from source with options (NULL: none); on failure the message holds the build log. */
char *incflat_cl_build(const struct incflat_cl *cl, cl_context context, cl_device_id device, const char *source,
                       const char *options, cl_program *program);

#endif
