/* Futhark's value formats, as ir/runtime/values.py reads and writes them (see values.h).

   The grammar, the error messages and the spelling of numbers follow values.py, including its quirks: a hex
   or binary literal of a signed type is its bit pattern, a decimal integer with leading zeros or more than
   4300 digits is rejected as Python's int() rejects it, except where values.py's fast path for a row of plain
   literals lets numpy read the leading zeros (see `scalars`). */

#include "values.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#ifndef INCFLAT_READ_CHUNK
#define INCFLAT_READ_CHUNK 65536 /* the file reader's first buffer; the tests shrink it to cross its edges */
#endif

static const struct {
  const char *name, *binary; /* Futhark's name, and the binary format's 4-byte one */
  unsigned char size;
  char kind; /* 'i' signed, 'u' unsigned, 'f' float, 'b' bool */
} TYPES[] = {
  {"i8", "  i8", 1, 'i'}, {"i16", " i16", 2, 'i'}, {"i32", " i32", 4, 'i'}, {"i64", " i64", 8, 'i'},
  {"u8", "  u8", 1, 'u'}, {"u16", " u16", 2, 'u'}, {"u32", " u32", 4, 'u'}, {"u64", " u64", 8, 'u'},
  {"f32", " f32", 4, 'f'}, {"f64", " f64", 8, 'f'}, {"bool", "bool", 1, 'b'},
};
#define NTYPES ((int)(sizeof TYPES / sizeof TYPES[0]))
#define TYPE_LIST "i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool"
#define IS_INT(t) (TYPES[t].kind == 'i' || TYPES[t].kind == 'u')

const char *incflat_type_name(enum incflat_type t) { return TYPES[t].name; }
size_t incflat_type_size(enum incflat_type t) { return TYPES[t].size; }

static int type_named(const char *s, size_t n) {
  for (int t = 0; t < NTYPES; t++)
    if (strlen(TYPES[t].name) == n && !memcmp(s, TYPES[t].name, n)) return t;
  return -1;
}

int incflat_type_from_name(const char *name) { return type_named(name, strlen(name)); }

size_t incflat_value_count(const struct incflat_value *v) {
  size_t n = 1;
  for (int d = 0; d < v->rank; d++) n *= (size_t)v->shape[d];
  return n;
}

void incflat_value_free(struct incflat_value *v) {
  free(v->data);
  v->data = NULL;
}

/* ---- bytes and elements ---- */

static int little_endian(void) {
  uint16_t one = 1;
  unsigned char c;
  memcpy(&c, &one, 1);
  return c;
}

/* Elements between the binary format (little-endian, a bool any non-zero byte) and struct incflat_value. */
static void fix_elements(unsigned char *p, size_t n, size_t size, int is_bool) {
  if (is_bool) {
    for (size_t i = 0; i < n; i++) p[i] = p[i] != 0;
  } else if (!little_endian() && size > 1) {
    for (unsigned char *e = p; e < p + n * size; e += size)
      for (size_t i = 0; i < size / 2; i++) {
        unsigned char c = e[i];
        e[i] = e[size - 1 - i];
        e[size - 1 - i] = c;
      }
  }
}

/* Integers in the host's layout: an element of `size` bytes to and from 64 bits (two's complement). */
static void put_uint(unsigned char *p, uint64_t v, size_t size) {
  uint8_t a = (uint8_t)v;
  uint16_t b = (uint16_t)v;
  uint32_t c = (uint32_t)v;
  memcpy(p, size == 1 ? (void *)&a : size == 2 ? (void *)&b : size == 4 ? (void *)&c : (void *)&v, size);
}

static uint64_t get_uint(const unsigned char *p, size_t size) {
  uint8_t a; uint16_t b; uint32_t c; uint64_t d;
  switch (size) {
  case 1: memcpy(&a, p, 1); return a;
  case 2: memcpy(&b, p, 2); return b;
  case 4: memcpy(&c, p, 4); return c;
  default: memcpy(&d, p, 8); return d;
  }
}

static int64_t get_int(const unsigned char *p, size_t size) {
  uint64_t u = get_uint(p, size), sign = (uint64_t)1 << (8 * size - 1), mask = (sign << 1) - 1;
  return u & sign ? -(int64_t)(~u & mask) - 1 : (int64_t)u; /* no conversion out of range */
}

/* ---- the reader ---- */

struct incflat_reader {
  FILE *f;                  /* NULL for a memory reader */
  const unsigned char *buf; /* the input from absolute offset `base` on: `len` bytes of it */
  unsigned char *own;       /* a file reader's buffer (buf), `cap` bytes */
  size_t len, cap;
  uint64_t base, pos;       /* absolute offsets: of buf[0], and where reading goes on */
  uint64_t mark;            /* the start of the value being read: the buffer keeps everything from it on */
  uint64_t lines, line_start; /* newlines before mark, and where the line of mark starts */
  int eof, io_error, oom;
  char *scratch;            /* a number without its underscores, for strtod */
  size_t scratch_cap;
  char *err;                /* the caller's message buffer during incflat_read_value: errlen bytes, used */
  size_t errlen, used;
};

struct incflat_reader *incflat_reader_file(FILE *f) {
  struct incflat_reader *r = calloc(1, sizeof *r);
  if (r) r->f = f;
  return r;
}

struct incflat_reader *incflat_reader_memory(const void *data, size_t len) {
  struct incflat_reader *r = calloc(1, sizeof *r);
  if (r) {
    r->buf = data;
    r->len = len;
  }
  return r;
}

void incflat_reader_free(struct incflat_reader *r) {
  if (!r) return;
  free(r->own);
  free(r->scratch);
  free(r);
}

/* Reads more of the file into the buffer, dropping what lies before mark when that frees half of it. */
static int more(struct incflat_reader *r) {
  if (!r->f || r->eof) return 0;
  if (r->len == r->cap) {
    size_t drop = (size_t)(r->mark - r->base);
    if (drop > 0 && drop >= r->cap / 2) {
      memmove(r->own, r->own + drop, r->len - drop);
      r->len -= drop;
      r->base += drop;
    } else {
      size_t cap = r->cap ? 2 * r->cap : INCFLAT_READ_CHUNK;
      unsigned char *own = cap > r->cap ? realloc(r->own, cap) : NULL;
      if (!own) {
        r->oom = r->eof = 1;
        return 0;
      }
      r->buf = r->own = own;
      r->cap = cap;
    }
  }
  size_t got = fread(r->own + r->len, 1, r->cap - r->len, r->f);
  r->len += got;
  if (got == 0) {
    r->eof = 1;
    r->io_error = ferror(r->f);
  }
  return got > 0;
}

/* The byte at absolute offset p (>= mark), or -1 past the end of the input. */
static int byte_at(struct incflat_reader *r, uint64_t p) {
  while (p - r->base >= r->len)
    if (!more(r)) return -1;
  return r->buf[p - r->base];
}

static int peek(struct incflat_reader *r, size_t i) {
  uint64_t at = r->pos + i - r->base;
  return at < r->len ? r->buf[at] : byte_at(r, r->pos + i);
}

static const unsigned char *at(const struct incflat_reader *r, uint64_t p) { return r->buf + (p - r->base); }

static void count_lines(struct incflat_reader *r, const unsigned char *s, size_t n, uint64_t offset) {
  const unsigned char *p = s, *nl;
  while ((nl = memchr(p, '\n', n - (size_t)(p - s))) != NULL) {
    r->lines++;
    r->line_start = offset + (uint64_t)(nl - s) + 1;
    p = nl + 1;
  }
}

/* Moves mark to pos, counting the newlines passed: values.py numbers lines over the whole input. */
static void set_mark(struct incflat_reader *r) {
  count_lines(r, at(r, r->mark), (size_t)(r->pos - r->mark), r->mark);
  r->mark = r->pos;
}

/* ---- errors, worded as values.py words them ---- */

static void vappend(struct incflat_reader *r, const char *fmt, va_list ap) {
  int n = r->used + 1 < r->errlen ? vsnprintf(r->err + r->used, r->errlen - r->used, fmt, ap) : 0;
  if (n > 0) r->used = r->used + (size_t)n < r->errlen ? r->used + (size_t)n : r->errlen - 1;
}

static void append(struct incflat_reader *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vappend(r, fmt, ap);
  va_end(ap);
}

/* Starts the message afresh. */
static void message(struct incflat_reader *r) {
  r->used = 0;
  r->err[0] = 0;
}

/* "line 3, column 5 (byte offset 17)" for offset p (>= mark) */
static void append_where(struct incflat_reader *r, uint64_t p) {
  uint64_t lines = r->lines, line_start = r->line_start;
  for (const unsigned char *s = at(r, r->mark), *e = at(r, p); s < e; s++)
    if (*s == '\n') {
      lines++;
      line_start = r->base + (uint64_t)(s - r->buf) + 1;
    }
  append(r, "line %llu, column %llu (byte offset %llu)", (unsigned long long)lines + 1,
         (unsigned long long)(p - line_start + 1), (unsigned long long)p);
}

/* Python's repr of the bytes as a latin-1 string, but with every byte outside ASCII as \xNN. */
static void append_repr(struct incflat_reader *r, const unsigned char *s, size_t n) {
  char q = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
  append(r, "%c", q);
  for (size_t i = 0; i < n && r->used + 1 < r->errlen; i++) {
    int c = s[i];
    if (c == '\\' || c == q) append(r, "\\%c", c);
    else if (c == '\t' || c == '\n' || c == '\r') append(r, "\\%c", c == '\t' ? 't' : c == '\n' ? 'n' : 'r');
    else if (c < 0x20 || c >= 0x7f) append(r, "\\x%02x", c);
    else append(r, "%c", c);
  }
  append(r, "%c", q);
}

static size_t token_len(struct incflat_reader *r, uint64_t p);

/* "Invalid value: expected <what> at <where>, found <token>" */
static int expected(struct incflat_reader *r, const char *what, uint64_t p) {
  message(r);
  append(r, "Invalid value: expected %s at ", what);
  append_where(r, p);
  if (byte_at(r, p) < 0) {
    append(r, ", found end of input");
  } else {
    size_t n = token_len(r, p);
    append(r, ", found ");
    append_repr(r, at(r, p), n ? n : 1);
  }
  return -1;
}

/* "Invalid value at <where>: <message>" */
static int invalid(struct incflat_reader *r, uint64_t p, const char *fmt, ...) {
  va_list ap;
  message(r);
  append(r, "Invalid value at ");
  append_where(r, p);
  append(r, ": ");
  va_start(ap, fmt);
  vappend(r, fmt, ap);
  va_end(ap);
  return -1;
}

/* "Invalid binary value at byte offset <p>: <message>" */
static int invalid_binary(struct incflat_reader *r, uint64_t p, const char *fmt, ...) {
  va_list ap;
  message(r);
  append(r, "Invalid binary value at byte offset %llu: ", (unsigned long long)p);
  va_start(ap, fmt);
  vappend(r, fmt, ap);
  va_end(ap);
  return -1;
}

/* The shape as values.py prints it, "[2][0]", appended to the message. */
static void append_shape(struct incflat_reader *r, int rank, const uint64_t *shape) {
  for (int d = 0; d < rank; d++) append(r, "[%llu]", (unsigned long long)shape[d]);
}

/* numpy's limits on an array that values.py would make: its rank, and its size in bytes counting no empty
   dimension (so the limits hold for empty arrays too). */
static int shape_ok(int rank, const uint64_t *shape, size_t size) {
  uint64_t bytes = size;
  if (rank > INCFLAT_MAX_RANK) return 0;
  for (int d = 0; d < rank; d++) {
    if (shape[d] > INT64_MAX) return 0;
    if (shape[d] && bytes > INT64_MAX / shape[d]) return 0;
    bytes *= shape[d] ? shape[d] : 1;
  }
  return 1;
}

/* ---- text: white space, tokens and literals ---- */

static int is_space(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Skips white space and `--` comments. Returns 0 if it skipped more than the fast path's [ \t\r\n]. */
static int skip(struct incflat_reader *r) {
  int plain = 1, c;
  for (;;) {
    c = peek(r, 0);
    if (is_space(c)) {
      r->pos++;
    } else if (c == '\f' || c == '\v') {
      r->pos++;
      plain = 0;
    } else if (c == '-' && peek(r, 1) == '-') {
      plain = 0;
      while ((c = peek(r, 0)) >= 0 && c != '\n') r->pos++;
    } else {
      return plain;
    }
  }
}

static int word_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A word, [A-Za-z_][A-Za-z0-9_]*, at p: its length, or 0. */
static size_t word_len(struct incflat_reader *r, uint64_t p) {
  size_t n = 0;
  int c = byte_at(r, p);
  if (!word_char(c) || (c >= '0' && c <= '9')) return 0;
  while (word_char(byte_at(r, p + n))) n++;
  return n;
}

/* A token, -?[A-Za-z0-9_.]+([+-][A-Za-z0-9_.]+)?, at p: its length, or 0. */
static size_t token_len(struct incflat_reader *r, uint64_t p) {
  size_t n = byte_at(r, p) == '-', start = n;
  int c;
  while (word_char(c = byte_at(r, p + n)) || c == '.') n++;
  if (n == start) return 0;
  if ((c == '+' || c == '-') && (word_char(c = byte_at(r, p + n + 1)) || c == '.'))
    for (n++; word_char(c = byte_at(r, p + n)) || c == '.'; n++) {
    }
  return n;
}

/* The value of digit c in base (2, 10 or 16), or -1. */
static int digit(int c, int base) {
  int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
  return d < base ? d : -1;
}

/* The end of a run of digits of base and underscores in t[j..n). */
static size_t digits_end(const char *t, size_t n, size_t j, int base) {
  while (j < n && (t[j] == '_' || digit(t[j], base) >= 0)) j++;
  return j;
}

struct scalar {
  enum incflat_type type;
  unsigned char bytes[8]; /* the value, as an element */
  int suffixed;           /* it ends in its type's name */
  int plain;              /* an integer as values.py's fast path reads it: -?[0-9]+ and the suffix */
  int leading_zeros;      /* a decimal integer with leading zeros, which only the fast path reads */
};

/* values.py's _FV_INT on the token t: 1 and the value in s, 0 if t is no integer literal, -1 on error. */
static int int_literal(struct incflat_reader *r, const char *t, size_t n, uint64_t p, struct scalar *s, int lz_ok) {
  size_t i = t[0] == '-', j;
  int neg = t[0] == '-', base = 10, first = -1, lead = 0, over = 0, type = INCFLAT_I32;
  uint64_t m = 0, nd = 0;
  if (i + 2 < n && t[i] == '0' && (t[i + 1] | 32) == 'x' && (t[i + 2] == '_' || digit(t[i + 2], 16) >= 0)) base = 16;
  else if (i + 2 < n && t[i] == '0' && (t[i + 1] | 32) == 'b' && (t[i + 2] == '_' || digit(t[i + 2], 2) >= 0)) base = 2;
  else if (i >= n || digit(t[i], 10) < 0) return 0;
  if (base != 10) i += 2;
  j = digits_end(t, n, i, base);
  if (j < n) { /* a suffix, or no integer literal */
    type = type_named(t + j, n - j);
    if (type < 0 || !IS_INT(type)) return 0;
    s->suffixed = 1;
  }
  for (size_t k = i; k < j; k++) {
    int d = digit(t[k], base);
    if (d < 0) continue; /* an underscore */
    if (nd++ == 0) first = d;
    else if (d && !first && base == 10) lead = 1;
    over |= m > (UINT64_MAX - (uint64_t)d) / (uint64_t)base;
    m = m * (uint64_t)base + (uint64_t)d; /* modulo 2^64 */
  }
  s->type = (enum incflat_type)type;
  {
    /* values.py's fast path takes a row only where each literal is in its type's range as written */
    int bits = 8 * TYPES[type].size;
    uint64_t hi = TYPES[type].kind == 'u' ? UINT64_MAX >> (64 - bits) : UINT64_MAX >> (65 - bits);
    int exact = !over && (TYPES[type].kind == 'u' ? (neg ? m == 0 : m <= hi) : m <= hi + (uint64_t)neg);
    s->plain = base == 10 && nd == j - i && exact;
  }
  s->leading_zeros = lead;
  /* Python's int(digits, 0) refuses no digits, leading zeros and (sys.get_int_max_str_digits) 4301 digits. */
  if (nd == 0 || (base == 10 && nd > 4300) || (lead && !(lz_ok && s->plain))) return expected(r, "a value", p);
  /* wrapped to the type's width, as Futhark and values.py read it: m is the literal modulo 2^64 */
  put_uint(s->bytes, neg ? 0 - m : m, TYPES[type].size);
  return 1;
}

/* The end of values.py's _FV_FLOAT (hex = 0) or _FV_HEXFLOAT (hex = 1) number that t starts with, or 0. */
static size_t float_end(const char *t, size_t n, int hex) {
  size_t j = t[0] == '-', k;
  if (hex) {
    if (!(j + 2 < n && t[j] == '0' && (t[j + 1] | 32) == 'x')) return 0;
    k = digits_end(t, n, j + 2, 16);
    if (k == j + 2 || k >= n || t[k] != '.') return 0;
    j = digits_end(t, n, k + 1, 16);
    if (j == k + 1 || j >= n || (t[j] | 32) != 'p') return 0;
    j += 1 + (j + 1 < n && (t[j + 1] == '+' || t[j + 1] == '-'));
    for (k = j; j < n && t[j] >= '0' && t[j] <= '9'; j++) {
    }
    return j > k ? j : 0;
  }
  if (j >= n || digit(t[j], 10) < 0) return 0;
  j = digits_end(t, n, j, 10);
  if (j < n && t[j] == '.') {
    if (j + 1 >= n || digit(t[j + 1], 10) < 0) return 0;
    j = digits_end(t, n, j + 1, 10);
  }
  if (j < n && (t[j] | 32) == 'e') {
    k = j + 1 + (j + 1 < n && (t[j + 1] == '+' || t[j + 1] == '-'));
    if (k >= n || digit(t[k], 10) < 0) return 0;
    j = digits_end(t, n, k, 10);
  }
  return j;
}

static void put_float(struct scalar *s, double d) {
  float f = (float)d;
  if (s->type == INCFLAT_F32) memcpy(s->bytes, &f, 4);
  else memcpy(s->bytes, &d, 8);
}

/* A float literal (decimal, hex, or f32.nan and the like): 1 and the value in s, 0 if t is none, -1 on error. */
static int float_literal(struct incflat_reader *r, const char *t, size_t n, uint64_t p, struct scalar *s) {
  size_t i = t[0] == '-';
  double d;
  for (int hex = 0; hex < 2; hex++) {
    size_t j = float_end(t, n, hex), k = 0;
    int type;
    char *end;
    if (!j) continue;
    if (n - j == 3 && !memcmp(t + j, "f16", 3)) return invalid(r, p, "f16 is not supported");
    type = j == n ? INCFLAT_F64 : type_named(t + j, n - j);
    if (type != INCFLAT_F32 && type != INCFLAT_F64) continue;
    s->type = (enum incflat_type)type;
    s->suffixed = j < n;
    if (j + 1 > r->scratch_cap) {
      char *b = realloc(r->scratch, j + 1);
      if (!b) return invalid(r, p, "out of memory");
      r->scratch = b;
      r->scratch_cap = j + 1;
    }
    for (size_t q = 0; q < j; q++)
      if (t[q] != '_') r->scratch[k++] = t[q];
    r->scratch[k] = 0;
    d = strtod(r->scratch, &end);
    if (*end || (hex && isinf(d))) return expected(r, "a value", p); /* float.fromhex refuses these */
    /* values.py rounds a decimal exactly to f32 (as strtof does), except that one that rounds to an f64 at or
       above f32's overflow threshold is f32.inf; a hex float it rounds to f64 first. */
    if (type == INCFLAT_F32 && !hex && !isinf((float)d)) d = strtof(r->scratch, NULL);
    put_float(s, d);
    return 1;
  }
  if (n - i == 7 && t[i] == 'f' && t[i + 3] == '.' && (!memcmp(t + i + 4, "nan", 3) || !memcmp(t + i + 4, "inf", 3))) {
    int type = type_named(t + i, 3);
    if (!memcmp(t + i, "f16", 3)) return invalid(r, p, "f16 is not supported");
    if (type != INCFLAT_F32 && type != INCFLAT_F64) return 0;
    d = t[i + 4] == 'n' ? (double)NAN : (double)INFINITY;
    s->type = (enum incflat_type)type;
    put_float(s, i ? -d : d);
    return 1;
  }
  return 0;
}

/* The scalar at pos; lz_ok lets a decimal integer have leading zeros. 0, or -1 on error. */
static int scalar(struct incflat_reader *r, struct scalar *s, int lz_ok) {
  uint64_t p = r->pos;
  size_t n = token_len(r, p);
  const char *t = (const char *)at(r, p);
  int rc = 0;
  memset(s, 0, sizeof *s);
  if (!n) return expected(r, "a value", p);
  if ((n == 4 && !memcmp(t, "true", 4)) || (n == 5 && !memcmp(t, "false", 5))) {
    s->type = INCFLAT_BOOL;
    s->bytes[0] = n == 4;
    rc = 1;
  }
  if (!rc) rc = int_literal(r, t, n, p, s, lz_ok);
  if (!rc) rc = float_literal(r, t, n, p, s);
  if (rc < 0) return -1;
  if (!rc) return expected(r, "a value", p);
  r->pos = p + n;
  return 0;
}

/* ---- text: arrays ---- */

struct elements { /* the elements of the array being read: the type of its first row of scalars */
  enum incflat_type type;
  int typed;
  unsigned char *data;
  size_t used, cap; /* bytes */
};

struct row { /* the type of an array read, for values.py's check that an array is regular */
  enum incflat_type type;
  int rank;
  uint64_t shape[INCFLAT_MAX_RANK];
};

static int add_element(struct incflat_reader *r, struct elements *e, const unsigned char *bytes) {
  size_t size = TYPES[e->type].size;
  if (e->used + size > e->cap) {
    size_t cap = e->cap ? 2 * e->cap : 64;
    unsigned char *data = cap > e->cap ? realloc(e->data, cap) : NULL;
    if (!data) return invalid(r, r->pos, "out of memory");
    e->data = data;
    e->cap = cap;
  }
  memcpy(e->data + e->used, bytes, size);
  e->used += size;
  return 0;
}

/* A row of scalars, at its first element. *lz: where a decimal literal with leading zeros is, if one is. */
static int row_of_scalars(struct incflat_reader *r, struct elements *e, struct row *row, uint64_t *lz) {
  struct scalar s;
  enum incflat_type t;
  int suffixed, plain, store, c;
  uint64_t p;
  int64_t n = 0;
  if (scalar(r, &s, 0) < 0) return -1;
  t = s.type;
  suffixed = s.suffixed;
  plain = IS_INT(t) && s.plain;
  if (!e->typed) e->type = t, e->typed = 1;
  store = e->type == t; /* else the array is irregular, and values.py says so once this row is read */
  for (;;) {
    if (store && add_element(r, e, s.bytes) < 0) return -1;
    n++;
    plain &= skip(r);
    c = peek(r, 0);
    if ((*lz && !plain) || c == ']') break;
    if (c != ',') return expected(r, "',' or ']'", r->pos);
    r->pos++;
    plain &= skip(r);
    p = r->pos;
    if (*lz && !plain) return -1;
    if (peek(r, 0) == '[') return invalid(r, p, "irregular array: an array follows scalars");
    if (scalar(r, &s, plain) < 0) return -1;
    if (s.type != t)
      return invalid(r, p, "array element of type %s follows elements of type %s", TYPES[s.type].name, TYPES[t].name);
    plain &= s.plain && s.suffixed == suffixed;
    if (s.leading_zeros && !*lz) *lz = p;
  }
  if (*lz && !plain) return -1;
  r->pos++;
  row->type = t;
  row->rank = 1;
  row->shape[0] = (uint64_t)n;
  return 0;
}

/* values.py reads a row of scalars with numpy where the whole row (up to the first `]`) is plain literals
   separated by [ \t\r\n] and commas, and numpy takes the leading zeros that int() refuses: so a literal with
   leading zeros is an error only once the row turns out not to be plain, and then the first error. */
static int scalars(struct incflat_reader *r, struct elements *e, struct row *row) {
  uint64_t lz = 0; /* never a literal's offset: a row starts with `[` */
  if (row_of_scalars(r, e, row, &lz) < 0) return lz ? expected(r, "a value", lz) : -1;
  return 0;
}

static int irregular(struct incflat_reader *r, uint64_t p, const struct row *got, const struct row *first) {
  invalid(r, p, "irregular array: an element of type ");
  append_shape(r, got->rank, got->shape);
  append(r, "%s follows elements of type ", TYPES[got->type].name);
  append_shape(r, first->rank, first->shape);
  append(r, "%s", TYPES[first->type].name);
  return -1;
}

/* The array at `[`, at nesting depth: its elements go to e, its type to row. */
static int array(struct incflat_reader *r, struct elements *e, int depth, struct row *row) {
  uint64_t start = r->pos;
  int64_t n = 0;
  int c;
  r->pos++;
  skip(r);
  c = peek(r, 0);
  if (c == ']') return invalid(r, start, "an empty array must be written as empty([0]t), not []");
  if (depth == INCFLAT_MAX_RANK) return invalid(r, start, "an array of more than %d dimensions", INCFLAT_MAX_RANK);
  if (c != '[') return scalars(r, e, row);
  for (;;) { /* rows: each must have the first one's type */
    struct row next;
    uint64_t row_start = r->pos;
    if (peek(r, 0) != '[') return expected(r, "'[' (arrays must be regular)", row_start);
    if (array(r, e, depth + 1, n ? &next : row) < 0) return -1;
    if (n && (next.type != row->type || next.rank != row->rank ||
              memcmp(next.shape, row->shape, (size_t)row->rank * sizeof row->shape[0])))
      return irregular(r, row_start, &next, row);
    n++;
    skip(r);
    c = peek(r, 0);
    if (c == ']') break;
    if (c != ',') return expected(r, "',' or ']'", r->pos);
    r->pos++;
    skip(r);
  }
  r->pos++;
  memmove(row->shape + 1, row->shape, (size_t)row->rank * sizeof row->shape[0]);
  row->shape[0] = (uint64_t)n;
  row->rank++;
  return 0;
}

/* empty([0][3]t), at `empty`. */
static int empty(struct incflat_reader *r, struct incflat_value *v) {
  uint64_t start = r->pos, shape[INCFLAT_MAX_RANK + 1];
  int rank = 0, zero = 0, big = 0, over, t;
  size_t w;
  r->pos += 5;
  skip(r);
  if (peek(r, 0) != '(') return expected(r, "'(' after empty", r->pos);
  r->pos++;
  skip(r);
  for (;;) { /* dimensions, \[[ \t\r\n]*([0-9]+)[ \t\r\n]*\] */
    size_t i = 1, digits = 0;
    uint64_t d = 0;
    over = 0;
    if (peek(r, 0) != '[') break;
    while (is_space(peek(r, i))) i++;
    for (; digit(peek(r, i), 10) >= 0; i++, digits++) {
      int x = peek(r, i) - '0';
      over |= d > (UINT64_MAX - (uint64_t)x) / 10;
      d = d * 10 + (uint64_t)x;
    }
    while (is_space(peek(r, i))) i++;
    if (!digits || peek(r, i) != ']') break;
    r->pos += i + 1;
    skip(r);
    zero |= d == 0 && !over;
    shape[rank < INCFLAT_MAX_RANK ? rank : INCFLAT_MAX_RANK] = d;
    rank++;
    big |= over || rank > INCFLAT_MAX_RANK;
  }
  if (!rank) return expected(r, "a dimension such as [0]", r->pos);
  w = word_len(r, r->pos);
  t = type_named((const char *)at(r, r->pos), w);
  if (t < 0) return expected(r, "a primitive type (" TYPE_LIST ")", r->pos);
  r->pos += w;
  skip(r);
  if (peek(r, 0) != ')') return expected(r, "')'", r->pos);
  if (!zero) {
    invalid(r, start, "empty array with non-empty shape ");
    append_shape(r, rank < INCFLAT_MAX_RANK ? rank : INCFLAT_MAX_RANK, shape);
    return -1;
  }
  if (big || !shape_ok(rank, shape, TYPES[t].size))
    return invalid(r, start, "an empty array of too many or too large dimensions");
  r->pos++;
  v->type = (enum incflat_type)t;
  v->rank = rank;
  for (int d = 0; d < rank; d++) v->shape[d] = (int64_t)shape[d];
  return 0;
}

static int text_value(struct incflat_reader *r, struct incflat_value *v) {
  if (peek(r, 0) == '[') {
    struct elements e = {INCFLAT_BOOL, 0, NULL, 0, 0};
    struct row row;
    if (array(r, &e, 0, &row) < 0) {
      free(e.data);
      return -1;
    }
    v->type = row.type;
    v->rank = row.rank;
    for (int d = 0; d < row.rank; d++) v->shape[d] = (int64_t)row.shape[d];
    v->data = e.data;
    return 0;
  }
  if (word_len(r, r->pos) == 5 && !memcmp(at(r, r->pos), "empty", 5)) return empty(r, v);
  {
    struct scalar s;
    if (scalar(r, &s, 0) < 0) return -1;
    v->type = s.type;
    v->rank = 0;
    v->data = malloc(TYPES[s.type].size);
    if (!v->data) return invalid(r, r->pos, "out of memory");
    memcpy(v->data, s.bytes, TYPES[s.type].size);
    return 0;
  }
}

/* ---- binary ---- */

/* Copies the next n bytes into dst: what is buffered, then the rest with one fread. Returns how many came. */
static size_t read_bytes(struct incflat_reader *r, unsigned char *dst, size_t n) {
  size_t off = (size_t)(r->pos - r->base), got = r->len - off < n ? r->len - off : n, buffered = got;
  memcpy(dst, r->buf + off, got);
  if (got < n && r->f && !r->eof) {
    got += fread(dst + got, 1, n - got, r->f);
    if (got < n) {
      r->eof = 1;
      r->io_error = ferror(r->f);
    }
  }
  if (got > buffered) { /* the buffer is used up */
    r->base = r->pos + got;
    r->len = 0;
  }
  count_lines(r, dst, got, r->pos);
  r->pos += got;
  r->mark = r->pos;
  return got;
}

/* The bytes left in the input (reading them), for a message. */
static uint64_t bytes_left(struct incflat_reader *r) {
  uint64_t n = r->base + r->len - r->pos;
  unsigned char chunk[4096];
  size_t got;
  while (r->f && !r->eof && (got = fread(chunk, 1, sizeof chunk, r->f)) > 0) n += got;
  return n;
}

static int binary_value(struct incflat_reader *r, struct incflat_value *v) {
  uint64_t start = r->pos, shape[255], count = 1, nbytes, found, data_at;
  const unsigned char *h;
  int rank, t, over = 0, zero = 0;
  size_t size;
  if (peek(r, 6) < 0)
    return invalid_binary(r, start, "expected a 7-byte header (b, version, rank, type), found end of input "
                                    "after %llu bytes", (unsigned long long)(r->base + r->len - start));
  h = at(r, start);
  if (h[1] != 2) return invalid_binary(r, start + 1, "expected format version 2, got %d", h[1]);
  rank = h[2];
  for (t = 0; t < NTYPES && memcmp(h + 3, TYPES[t].binary, 4); t++) {
  }
  if (t == NTYPES) {
    invalid_binary(r, start + 3, "expected one of the types " TYPE_LIST "; ");
    if (!memcmp(h + 3, " f16", 4)) append(r, "f16 is not supported");
    else append(r, "unknown type "), append_repr(r, h + 3, 4);
    return -1;
  }
  size = TYPES[t].size;
  r->pos += 7;
  if (rank && peek(r, 8 * (size_t)rank - 1) < 0)
    return invalid_binary(r, r->pos, "expected %d dimensions (%d bytes), found end of input", rank, 8 * rank);
  for (int d = 0; d < rank; d++) {
    unsigned char b[8];
    memcpy(b, at(r, r->pos + 8 * (uint64_t)d), 8);
    fix_elements(b, 1, 8, 0);
    memcpy(&shape[d], b, 8);
    zero |= shape[d] == 0;
    over |= shape[d] && count > UINT64_MAX / shape[d];
    count *= shape[d];
  }
  over = !zero && (over || count > UINT64_MAX / size);
  nbytes = count * size;
  r->pos = data_at = r->pos + 8 * (uint64_t)rank;
  set_mark(r); /* the data may bypass the buffer */
  if (!over && nbytes <= (size_t)-1 && (v->data = malloc(nbytes ? (size_t)nbytes : 1)) != NULL) {
    found = read_bytes(r, v->data, (size_t)nbytes);
  } else {
    found = bytes_left(r);
    if (!over && found >= nbytes)
      return invalid_binary(r, data_at, "out of memory for %llu bytes", (unsigned long long)nbytes);
  }
  if (over || found < nbytes) {
    invalid_binary(r, data_at, "expected ");
    append(r, over ? "more than %llu" : "%llu", over ? (unsigned long long)UINT64_MAX : (unsigned long long)nbytes);
    append(r, " bytes of %s data for shape ", TYPES[t].name);
    append_shape(r, rank, shape);
    append(r, ", found %llu", (unsigned long long)found);
    return -1;
  }
  if (!shape_ok(rank, shape, size)) return invalid_binary(r, start + 2, "an array of too many or too large dimensions");
  fix_elements(v->data, (size_t)count, size, t == INCFLAT_BOOL);
  v->type = (enum incflat_type)t;
  v->rank = rank;
  for (int d = 0; d < rank; d++) v->shape[d] = (int64_t)shape[d];
  if (!count) incflat_value_free(v);
  return 0;
}

int incflat_read_value(struct incflat_reader *r, struct incflat_value *out, char *err, size_t errlen) {
  char none[1];
  int rc;
  r->err = errlen ? err : none;
  r->errlen = errlen ? errlen : 1;
  message(r);
  memset(out, 0, sizeof *out);
  skip(r);
  set_mark(r);
  if (peek(r, 0) < 0) {
    rc = 0;
  } else {
    rc = peek(r, 0) == 'b' ? binary_value(r, out) : text_value(r, out);
    rc = rc < 0 ? -1 : 1;
  }
  if (r->oom || r->io_error) { /* the input was cut short, not malformed */
    message(r);
    append(r, "%s after byte offset %llu", r->oom ? "out of memory reading the input" :
             "cannot read the input", (unsigned long long)(r->base + r->len));
    rc = -1;
  }
  if (rc < 0) incflat_value_free(out);
  return rc;
}

/* ---- writing ---- */

/* dig * 10^e, dig a digit string read as an integer: -1, 0 or 1 as it reads back below, as or above x. */
static int reads_back(const char *dig, int e, double x, int f32) {
  char s[48];
  size_t n = strlen(dig);
  double y;
  memcpy(s, dig, n);
  sprintf(s + n, "e%d", e);
  y = f32 ? (double)strtof(s, NULL) : strtod(s, NULL);
  return (y > x) - (y < x);
}

/* Moves dig * 10^e by one unit of its last digit, keeping its number of digits; returns the new e. */
static int step(char *dig, int e, int up) {
  size_t n = strlen(dig), i = n;
  while (i-- > 0) {
    if (dig[i] != (up ? '9' : '0')) {
      dig[i] = (char)(dig[i] + (up ? 1 : -1));
      break;
    }
    dig[i] = up ? '0' : '9';
  }
  if (up && dig[0] == '0') { /* 99 + 1 = 100: "10" one place up */
    dig[0] = '1';
    return e + 1;
  }
  if (!up && dig[0] == '0' && n > 1) { /* 10 - 1 = 9.9: "99" one place down */
    memmove(dig, dig + 1, n - 1);
    dig[n - 1] = '9';
    return e - 1;
  }
  return e;
}

/* x (> 0) to n significant digits, correctly rounded by printf: the digits go to dig; returns the exponent of
   the last one. */
static int printed(double x, int n, char *dig) {
  char s[40];
  const char *p = s;
  int k = 0;
  snprintf(s, sizeof s, "%.*e", n - 1, x);
  for (; *p != 'e'; p++)
    if (*p >= '0' && *p <= '9') dig[k++] = *p;
  dig[k] = 0;
  return atoi(p + 1) - (n - 1);
}

struct digits { /* x > 0 to its precision's most digits (17 or 9), correctly rounded: all shorter roundings of x
                   can be told from them, but for a tie, where printf is asked again */
  double x;
  int f32, n, e;  /* e: the exponent of the last digit */
  int lopsided;   /* x is a power of two: the gap below it is half the gap above */
  char dig[24];
};

/* Whether an n-digit decimal reads back as x: the nearest one, else the nearest on the other side of x (only
   around a power of two, where x's rounding interval is lopsided, can that one read back and the nearest not).
   The decimal goes to dig, the exponent of its last digit to *e. */
static int candidate(const struct digits *x, int n, char *dig, int *e) {
  const char *rest = x->dig + n;
  int side, tie;
  memcpy(dig, x->dig, (size_t)n);
  dig[n] = 0;
  *e = x->e + (x->n - n);
  tie = *rest == '5' && strspn(rest + 1, "0") == strlen(rest + 1);
  if (tie) *e = printed(x->x, n, dig); /* a tie in x's digits, maybe not in x itself */
  else if (*rest >= '5') *e = step(dig, *e, 1);
  side = reads_back(dig, *e, x->x, x->f32);
  if (!side || !x->lopsided) return !side;
  *e = step(dig, *e, side < 0);
  return !reads_back(dig, *e, x->x, x->f32);
}

/* The shortest digits that read back as x (> 0, finite) at its precision, the closest to x of them: the
   digits Python's repr (f64) and numpy's format_float_*(unique=True) (f32) print. Returns the exponent of the
   first digit. Some n-digit decimal reads back for every n from the shortest on, so the search bisects, but
   tries one and two digits less than the most first (what most values need). */
static int shortest(double x, int f32, char *dig) {
  struct digits all;
  char trial[24];
  int lo = 1, e, exponent;
  size_t n;
  all.lopsided = frexp(x, &exponent) == 0.5;
  all.x = x;
  all.f32 = f32;
  all.n = f32 ? 9 : 17;
  all.e = printed(x, all.n, all.dig);
  strcpy(dig, all.dig); /* all.n digits always read back */
  e = all.e;
  for (int hi = all.n, mid = hi - 1, f; lo < hi; mid = hi == all.n - 1 ? hi - 1 : (lo + hi) / 2) {
    if (candidate(&all, mid, trial, &f)) hi = mid, strcpy(dig, trial), e = f;
    else lo = mid + 1;
  }
  for (n = strlen(dig); n > 1 && dig[n - 1] == '0'; n--) e++;
  dig[n] = 0;
  return e + (int)n - 1;
}

/* A float as values.py's _fv_float_str spells it: repr for f64; for f32 numpy's positional form, or its
   scientific one where 0 < |x| < 1e-4 or |x| >= 1e16 (compared as f32, as NumPy 2 compares). */
static int float_text(char *s, double x, int f32) {
  const char *suffix = f32 ? "f32" : "f64";
  char dig[24], *o = s;
  double ax = fabs(x);
  int e = 0, n, sci;
  if (isnan(x)) return sprintf(s, "%s.nan", suffix);
  if (isinf(x)) return sprintf(s, "%s%s.inf", x < 0 ? "-" : "", suffix);
  if (ax == 0) strcpy(dig, "0");
  else e = shortest(ax, f32, dig);
  n = (int)strlen(dig);
  sci = f32 ? ax != 0 && ((float)ax < 1e-4f || (float)ax >= 1e16f) : e < -4 || e >= 16;
  if (signbit(x)) *o++ = '-';
  if (sci) {
    o += sprintf(o, "%c%s%se%c%02d", dig[0], n > 1 ? "." : "", dig + 1, e < 0 ? '-' : '+', e < 0 ? -e : e);
  } else if (e < 0) { /* 0.00ddd */
    o += sprintf(o, "0.");
    for (int i = -1; i > e; i--) *o++ = '0';
    o += sprintf(o, "%s", dig);
  } else { /* ddd.ddd, or ddd00.0 */
    for (int i = 0; i <= e || i < n; i++) {
      if (i == e + 1) *o++ = '.';
      *o++ = i < n ? dig[i] : '0';
    }
    if (n <= e + 1) o += sprintf(o, ".0");
  }
  return (int)(o - s) + sprintf(o, "%s", suffix);
}

static int element_text(char *s, enum incflat_type t, const unsigned char *p) {
  float f;
  double d;
  switch (TYPES[t].kind) {
  case 'b':
    return sprintf(s, "%s", *p ? "true" : "false");
  case 'i':
    return sprintf(s, "%lld%s", (long long)get_int(p, TYPES[t].size), TYPES[t].name);
  case 'u':
    return sprintf(s, "%llu%s", (unsigned long long)get_uint(p, TYPES[t].size), TYPES[t].name);
  default:
    if (t == INCFLAT_F32) memcpy(&f, p, 4), d = f;
    else memcpy(&d, p, 8);
    return float_text(s, d, t == INCFLAT_F32);
  }
}

int incflat_write_text(FILE *f, const struct incflat_value *v) {
  size_t n = incflat_value_count(v), size = TYPES[v->type].size, block[INCFLAT_MAX_RANK + 1];
  const unsigned char *p = v->data;
  char s[64];
  int d;
  if (v->rank > 0 && n == 0) {
    fputs("empty(", f);
    for (d = 0; d < v->rank; d++) fprintf(f, "[%lld]", (long long)v->shape[d]);
    fprintf(f, "%s)", TYPES[v->type].name);
    return ferror(f) ? -1 : 0;
  }
  block[v->rank] = 1; /* elements in a row of each dimension: where rows end and begin */
  for (d = v->rank - 1; d >= 0; d--) block[d] = block[d + 1] * (size_t)v->shape[d];
  for (d = 0; d < v->rank; d++) fputc('[', f);
  for (size_t i = 0; i < n; i++, p += size) {
    if (i > 0) {
      int k = 0;
      while (k < v->rank - 1 && i % block[v->rank - 1 - k] == 0) k++;
      for (d = 0; d < k; d++) fputc(']', f);
      fputs(", ", f);
      for (d = 0; d < k; d++) fputc('[', f);
    }
    fwrite(s, 1, (size_t)element_text(s, v->type, p), f);
  }
  for (d = 0; d < v->rank; d++) fputc(']', f);
  return ferror(f) ? -1 : 0;
}

int incflat_write_binary(FILE *f, const struct incflat_value *v) {
  unsigned char header[7 + 8 * INCFLAT_MAX_RANK], chunk[4096];
  size_t n = incflat_value_count(v), size = TYPES[v->type].size, per = sizeof chunk / size;
  const unsigned char *p = v->data;
  int is_bool = v->type == INCFLAT_BOOL;
  header[0] = 'b';
  header[1] = 2;
  header[2] = (unsigned char)v->rank;
  memcpy(header + 3, TYPES[v->type].binary, 4);
  for (int d = 0; d < v->rank; d++) {
    put_uint(header + 7 + 8 * d, (uint64_t)v->shape[d], 8);
    fix_elements(header + 7 + 8 * d, 1, 8, 0);
  }
  fwrite(header, 1, 7 + 8 * (size_t)v->rank, f);
  if (little_endian() && !is_bool) {
    if (n) fwrite(p, size, n, f);
  } else {
    for (size_t i = 0; i < n; i += per) { /* a copy to make little-endian, or bools 0 and 1 */
      size_t k = n - i < per ? n - i : per;
      memcpy(chunk, p + i * size, k * size);
      fix_elements(chunk, k, size, is_bool);
      fwrite(chunk, size, k, f);
    }
  }
  return ferror(f) ? -1 : 0;
}
