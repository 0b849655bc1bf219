/* The test driver of codegen/native/values.c (tests/test_native_values.py): reads every value on stdin and
   writes it back on stdout, in the text format one a line, or with -b in the binary format. With -m it reads
   all of stdin into memory first and parses it with the memory reader. On malformed input it prints the
   message on stderr and exits with status 1. */

#include <stdlib.h>
#include <string.h>

#include "values.h"

static char *slurp(FILE *f, size_t *len) {
  size_t cap = 1 << 16;
  char *buf = malloc(cap), *more;
  *len = 0;
  while (buf) {
    *len += fread(buf + *len, 1, cap - *len, f);
    if (*len < cap) return ferror(f) ? NULL : buf;
    more = realloc(buf, cap *= 2);
    if (!more) free(buf);
    buf = more;
  }
  return NULL;
}

int main(int argc, char **argv) {
  int binary = 0, memory = 0, rc;
  char err[1 << 16], *input = NULL;
  size_t len = 0;
  struct incflat_reader *r;
  struct incflat_value v;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-b")) binary = 1;
    else if (!strcmp(argv[i], "-m")) memory = 1;
    else return fprintf(stderr, "usage: %s [-b] [-m] < values\n", argv[0]), 2;
  }
  if (memory && !(input = slurp(stdin, &len))) return fprintf(stderr, "cannot read stdin\n"), 2;
  r = memory ? incflat_reader_memory(input, len) : incflat_reader_file(stdin);
  if (!r) return fprintf(stderr, "out of memory\n"), 2;
  while ((rc = incflat_read_value(r, &v, err, sizeof err)) > 0) {
    if (binary) incflat_write_binary(stdout, &v);
    else incflat_write_text(stdout, &v), putchar('\n');
    incflat_value_free(&v);
  }
  incflat_reader_free(r);
  free(input);
  if (fflush(stdout) || ferror(stdout)) return fprintf(stderr, "cannot write stdout\n"), 2;
  if (rc < 0) return fprintf(stderr, "%s\n", err), 1;
  return 0;
}
