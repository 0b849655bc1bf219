/* Futhark's value formats for incflat's native host: reading text and binary values, writing text and binary
   values, byte for byte as the Python runtime (ir/runtime/values.py) reads and writes them.

   Portable C99; needs only libc and libm. Numbers are read and printed with strtod/printf, so the host must
   leave LC_NUMERIC at "C" (the default: never call setlocale(LC_ALL, "")). */

#ifndef INCFLAT_VALUES_H
#define INCFLAT_VALUES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The primitive types, in the order of ir/runtime/prims.py (f16 is not supported). */
enum incflat_type {
  INCFLAT_I8, INCFLAT_I16, INCFLAT_I32, INCFLAT_I64,
  INCFLAT_U8, INCFLAT_U16, INCFLAT_U32, INCFLAT_U64,
  INCFLAT_F32, INCFLAT_F64, INCFLAT_BOOL
};

/* numpy's limit on an array's rank: values.py cannot hold more dimensions either. */
#define INCFLAT_MAX_RANK 64

struct incflat_value {
  enum incflat_type type;
  int rank; /* 0 for a scalar */
  int64_t shape[INCFLAT_MAX_RANK];
  void *data; /* the elements, row-major, in the host's byte order; a bool is one byte, 0 or 1.
                 NULL for an empty array. */
};

const char *incflat_type_name(enum incflat_type t); /* "i32", "bool", ... */
size_t incflat_type_size(enum incflat_type t);      /* bytes of one element */
int incflat_type_from_name(const char *name);       /* the type named, or -1 */
size_t incflat_value_count(const struct incflat_value *v); /* elements: 1 for a scalar */
void incflat_value_free(struct incflat_value *v);   /* frees the elements; the struct is the caller's */

/* A reader of values, text and binary mixed, from a stream or from memory. */
struct incflat_reader;
struct incflat_reader *incflat_reader_file(FILE *f); /* reads f in large blocks, as values are asked for:
                                                        for a whole stdin, not for a conversation */
struct incflat_reader *incflat_reader_memory(const void *data, size_t len); /* data must outlive the reader */
void incflat_reader_free(struct incflat_reader *r);   /* does not close the stream */

/* Reads the next value into *out: returns 1, or 0 at the end of the input (only white space and comments
   left), or -1 on malformed input, with a message in err saying what was expected where (line, column and
   byte offset for text, byte offset for binary), as values.py says it. After an error, stop reading. */
int incflat_read_value(struct incflat_reader *r, struct incflat_value *out, char *err, size_t errlen);

/* Write one value as values.py's write_text (no newline after it) and write_binary do. 0, or -1 if the
   stream failed. */
int incflat_write_text(FILE *f, const struct incflat_value *v);
int incflat_write_binary(FILE *f, const struct incflat_value *v);

#endif
