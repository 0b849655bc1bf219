/* `--server`: Futhark's server protocol (its docs/server-protocol.rst) over stdin and stdout. Each command is one
 * line of words (a word in double quotes may hold spaces); its response ends with the line `%%% OK`, a failed
 * one starts with `%%% FAILURE` and its message. Variables hold values of the entry points' types: primitives and
 * arrays of them (incflat has no opaque types), arrays kept on the device between commands. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_WORDS 1024

struct variable {
    char *name;
    const char *type; /* one of the program's type names */
    struct incflat_slot slot;
};

struct server {
    const struct incflat_program *program;
    struct incflat_ctx *ctx;
    struct variable *vars;
    size_t count, cap;
    const char *types[512];
    int type_count;
};

static void ok(void) {
    fputs("%%% OK\n", stdout);
    fflush(stdout);
}

/* The failure marker and its message (printf-formatted, one line). */
static void failure(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fputs("%%% FAILURE\n", stdout);
    vprintf(fmt, args);
    putchar('\n');
    va_end(args);
}

static int rank_of(const char *type) {
    int rank = 0;
    while (type[2 * rank] == '[')
        rank++;
    return rank;
}

static const char *known_type(struct server *s, const char *name) {
    for (int i = 0; i < s->type_count; i++)
        if (!strcmp(s->types[i], name))
            return s->types[i];
    return NULL;
}

static struct variable *find(struct server *s, const char *name) {
    for (size_t i = 0; i < s->count; i++)
        if (!strcmp(s->vars[i].name, name))
            return &s->vars[i];
    return NULL;
}

static struct variable *create(struct server *s, const char *name, const char *type) {
    s->vars = incflat_grow(s->vars, &s->cap, s->count, sizeof *s->vars);
    struct variable *v = &s->vars[s->count++];
    memset(v, 0, sizeof *v);
    v->name = incflat_format("%s", name);
    v->type = type;
    return v;
}

static void drop(struct server *s, struct variable *v) {
    if (rank_of(v->type))
        incflat_arr_release(s->ctx, &v->slot.array);
    free(v->name);
    *v = s->vars[--s->count];
}

static const struct incflat_entry_info *entry_named(struct server *s, const char *name) {
    for (int i = 0; i < s->program->entry_count; i++)
        if (!strcmp(s->program->entries[i].name, name))
            return &s->program->entries[i];
    failure("Unknown entry point: %s", name);
    return NULL;
}

/* The failure of the context, reported and cleared. */
static bool failed(struct server *s) {
    incflat_check_errors(s->ctx);
    if (!s->ctx->failed)
        return false;
    failure("%s", s->ctx->message ? s->ctx->message : "unknown failure");
    incflat_clear_error(s->ctx);
    incflat_release_fresh(s->ctx);
    return true;
}

static void cmd_call(struct server *s, int n, char **w) {
    const struct incflat_entry_info *e = n > 1 ? entry_named(s, w[1]) : NULL;
    if (!e) {
        if (n <= 1)
            failure("call: expected an entry point");
        return;
    }
    if (n != 2 + e->results + e->params) {
        failure("call %s: expected %d outputs and %d inputs, got %d names", e->name, e->results, e->params, n - 2);
        return;
    }
    struct incflat_slot in[256], out[256];
    if (e->params > 256 || e->results > 256) {
        failure("call %s: more than 256 inputs or outputs", e->name);
        return;
    }
    memset(out, 0, sizeof out);
    for (int i = 0; i < e->params; i++) {
        struct variable *v = find(s, w[2 + e->results + i]);
        if (!v) {
            failure("Unknown variable: %s", w[2 + e->results + i]);
            return;
        }
        if (strcmp(v->type, e->param_types[i])) {
            failure("Wrong input type.  Expected %s, got %s.", e->param_types[i], v->type);
            return;
        }
        in[i] = v->slot;
    }
    for (int i = 0; i < e->results; i++)
        if (find(s, w[2 + i])) {
            failure("Variable already exists: %s", w[2 + i]);
            return;
        }
    incflat_begin_run(s->ctx);
    incflat_finish(s->ctx);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    e->fn(s->ctx, in, out);
    if (!s->ctx->failed)
        incflat_finish(s->ctx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("runtime: %lld\n", /* (rounded, as -t's times: cli.c) */
           (long long)nearbyint((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3));
    if (failed(s)) {
        for (int i = 0; i < e->results; i++)
            incflat_arr_release(s->ctx, &out[i].array);
        return;
    }
    for (int i = 0; i < e->results; i++)
        create(s, w[2 + i], known_type(s, e->result_types[i]))->slot = out[i];
}

static void cmd_restore(struct server *s, int n, char **w) {
    if (n < 2 || n % 2) {
        failure("restore: expected a file, then pairs of a variable and its type");
        return;
    }
    FILE *f = fopen(w[1], "rb");
    if (!f) {
        failure("Failed to open %s: %s", w[1], strerror(errno));
        return;
    }
    struct incflat_reader *r = incflat_reader_file(f);
    char err[1024];
    int made = 0;
    for (int i = 2; i < n; i += 2) {
        const char *type = known_type(s, w[i + 1]);
        struct incflat_value value;
        char shown[700];
        int got = 0;
        if (!type)
            failure("Unknown type: %s", w[i + 1]);
        else if (find(s, w[i]))
            failure("Variable already exists: %s", w[i]);
        else if ((got = incflat_read_value(r, &value, err, sizeof err)) <= 0)
            failure("Failed to restore variable %s: %s", w[i], got < 0 ? err : "the file holds no more values");
        else if (snprintf(shown, sizeof shown, "%.*s%s", 2 * value.rank, "[][][][][][][][][][][][][][][][]",
                          incflat_type_name(value.type)),
                 strcmp(shown, type)) {
            failure("Failed to restore variable %s: it is of type %s, the file's value of type %s", w[i], type, shown);
            incflat_value_free(&value);
            got = -1;
        } else {
            struct incflat_slot slot = incflat_upload_value(s->ctx, &value);
            incflat_value_free(&value);
            if (failed(s))
                got = -1;
            else {
                create(s, w[i], type)->slot = slot;
                made++;
                continue;
            }
        }
        for (; made > 0; made--) /* a failed restore makes no variable */
            drop(s, &s->vars[s->count - 1]);
        incflat_reader_free(r);
        fclose(f);
        return;
    }
    struct incflat_value extra;
    if (incflat_read_value(r, &extra, err, sizeof err) != 0) {
        failure("Expected EOF after reading %d values from %s", made, w[1]);
        for (; made > 0; made--)
            drop(s, &s->vars[s->count - 1]);
    }
    incflat_reader_free(r);
    fclose(f);
}

static void cmd_store(struct server *s, int n, char **w) {
    if (n < 2) {
        failure("store: expected a file, then variables");
        return;
    }
    for (int i = 2; i < n; i++)
        if (!find(s, w[i])) {
            failure("Unknown variable: %s", w[i]);
            return;
        }
    FILE *f = fopen(w[1], "wb");
    if (!f) {
        failure("Failed to open %s: %s", w[1], strerror(errno));
        return;
    }
    for (int i = 2; i < n; i++) {
        struct variable *v = find(s, w[i]);
        struct incflat_value value;
        if (incflat_download_value(s->ctx, &v->slot, v->type, &value)) {
            fclose(f);
            failed(s);
            return;
        }
        incflat_write_binary(f, &value);
        incflat_value_free(&value);
    }
    if (fclose(f))
        failure("Failed to write %s: %s", w[1], strerror(errno));
}

static void cmd_free(struct server *s, int n, char **w) {
    for (int i = 1; i < n; i++) {
        struct variable *v = find(s, w[i]);
        if (!v) {
            failure("Unknown variable: %s", w[i]);
            return;
        }
        drop(s, v);
    }
}

static void cmd_rename(struct server *s, int n, char **w) {
    struct variable *v = n == 3 ? find(s, w[1]) : NULL;
    if (n != 3)
        failure("rename: expected two variables");
    else if (!v)
        failure("Unknown variable: %s", w[1]);
    else if (find(s, w[2]))
        failure("Variable already exists: %s", w[2]);
    else {
        free(v->name);
        v->name = incflat_format("%s", w[2]);
    }
}

static void cmd_types_of(struct server *s, int n, char **w, bool inputs, bool single) {
    const struct incflat_entry_info *e = n > 1 ? entry_named(s, w[1]) : NULL;
    if (!e) {
        if (n <= 1)
            failure("%s: expected an entry point", w[0]);
        return;
    }
    if (single && e->results != 1) {
        failure("output: entry point %s has %d outputs (see outputs)", e->name, e->results);
        return;
    }
    int count = inputs ? e->params : e->results;
    for (int i = 0; i < count; i++)
        puts(inputs ? e->param_types[i] : e->result_types[i]);
}

static void cmd_clear(struct server *s) {
    while (s->count)
        drop(s, &s->vars[s->count - 1]);
    incflat_release_fresh(s->ctx);
}

static int param_named(struct server *s, const char *name) {
    for (int i = 0; i < s->program->param_count; i++)
        if (!strcmp(s->program->params[i].name, name))
            return i;
    failure("Unknown tuning parameter: %s", name);
    return -1;
}

/* A parameter's class, as --print-params names it: `threshold`, `thread_block_size`, ... */
static void print_class(const struct incflat_param_info *q) {
    const char *open = strchr(q->line_format, '(');
    int length = open ? (int)strcspn(open + 1, "(),") : 0;
    printf("%.*s\n", length, open ? open + 1 : "");
}

static void cmd_tuning_params(struct server *s, int n, char **w) {
    const struct incflat_entry_info *e = n > 1 ? entry_named(s, w[1]) : NULL;
    if (!e) {
        if (n <= 1)
            failure("tuning_params: expected an entry point");
        return;
    }
    size_t prefix = strlen(e->name);
    for (int i = 0; i < s->program->param_count; i++) {
        const struct incflat_param_info *q = &s->program->params[i];
        if (!strncmp(q->name, e->name, prefix) && q->name[prefix] == '.') {
            printf("%s ", q->name);
            print_class(q);
        }
    }
}

static void cmd_set_tuning_param(struct server *s, int n, char **w) {
    int i = n == 3 ? param_named(s, w[1]) : -1;
    if (n != 3) {
        failure("set_tuning_param: expected a parameter and a value");
        return;
    }
    char *end;
    errno = 0;
    long long value = strtoll(w[2], &end, 10);
    if (i >= 0 && (*end || end == w[2] || errno))
        failure("Failed to set tuning parameter %s: %s is not an integer", w[1], w[2]);
    else if (i >= 0)
        s->ctx->values[i] = value;
}

static void cmd_array_query(struct server *s, int n, char **w) {
    const char *what = w[0];
    if (!strcmp(what, "shape") || !strcmp(what, "type")) {
        struct variable *v = n == 2 ? find(s, w[1]) : NULL;
        if (!v) {
            failure(n == 2 ? "Unknown variable: %s" : "%s: expected a variable", n == 2 ? w[1] : what);
            return;
        }
        if (!strcmp(what, "type"))
            puts(v->type);
        else if (!rank_of(v->type))
            failure("Not an array: %s", v->name);
        else
            for (int k = 0; k < v->slot.array.rank; k++)
                printf("%lld\n", (long long)v->slot.array.shape[k]);
        return;
    }
    const char *type = n == 2 ? known_type(s, w[1]) : NULL;
    if (!type) {
        failure(n == 2 ? "Unknown type: %s" : "%s: expected a type", n == 2 ? w[1] : what);
        return;
    }
    int rank = rank_of(type);
    if (!strcmp(what, "kind"))
        puts(rank ? "array" : "primitive");
    else if (!rank)
        failure("Not an array type: %s", type);
    else if (!strcmp(what, "rank"))
        printf("%d\n", rank);
    else
        puts(type + 2 * rank);
}

/* Splits a line into words; false where a quote is not closed. */
static bool words(char *line, int *n, char **w) {
    *n = 0;
    for (char *p = line; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (!*p || *n == MAX_WORDS)
            break;
        if (*p == '"') {
            char *end = strchr(p + 1, '"');
            if (!end)
                return false;
            *end = 0;
            w[(*n)++] = p + 1;
            p = end + 1;
        } else {
            w[(*n)++] = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
                p++;
            if (*p)
                *p++ = 0;
        }
    }
    return true;
}

int incflat_server(const struct incflat_program *program, struct incflat_ctx *ctx) {
    struct server s = {program, ctx, NULL, 0, 0, {0}, 0};
    for (int i = 0; i < program->entry_count; i++) {
        const struct incflat_entry_info *e = &program->entries[i];
        for (int k = 0; k < e->params + e->results; k++) {
            const char *t = k < e->params ? e->param_types[k] : e->result_types[k - e->params];
            if (!known_type(&s, t) && s.type_count < 512)
                s.types[s.type_count++] = t;
        }
    }
    bool profiling = ctx->profile;
    size_t cap = 0;
    char *line = NULL, *w[MAX_WORDS];
    ok();
    while (getline(&line, &cap, stdin) > 0) {
        int n;
        if (!words(line, &n, w))
            failure("unclosed quote in the command");
        else if (n == 0)
            ;
        else if (!strcmp(w[0], "call"))
            cmd_call(&s, n, w);
        else if (!strcmp(w[0], "restore"))
            cmd_restore(&s, n, w);
        else if (!strcmp(w[0], "store"))
            cmd_store(&s, n, w);
        else if (!strcmp(w[0], "free"))
            cmd_free(&s, n, w);
        else if (!strcmp(w[0], "rename"))
            cmd_rename(&s, n, w);
        else if (!strcmp(w[0], "inputs"))
            cmd_types_of(&s, n, w, true, false);
        else if (!strcmp(w[0], "outputs") || !strcmp(w[0], "output"))
            cmd_types_of(&s, n, w, false, !strcmp(w[0], "output"));
        else if (!strcmp(w[0], "entry_points"))
            for (int i = 0; i < program->entry_count; i++)
                puts(program->entries[i].name);
        else if (!strcmp(w[0], "types"))
            for (int i = 0; i < s.type_count; i++)
                puts(s.types[i]);
        else if (!strcmp(w[0], "clear"))
            cmd_clear(&s);
        else if (!strcmp(w[0], "pause_profiling"))
            ctx->profile = false;
        else if (!strcmp(w[0], "unpause_profiling"))
            ctx->profile = profiling; /* (events need the queue the -P option made) */
        else if (!strcmp(w[0], "report"))
            incflat_report_profile(ctx, stdout);
        else if (!strcmp(w[0], "set_tuning_param"))
            cmd_set_tuning_param(&s, n, w);
        else if (!strcmp(w[0], "tuning_params"))
            cmd_tuning_params(&s, n, w);
        else if (!strcmp(w[0], "tuning_param_class")) {
            int i = n == 2 ? param_named(&s, w[1]) : -1;
            if (i >= 0)
                print_class(&program->params[i]);
            else if (n != 2)
                failure("tuning_param_class: expected a parameter");
        } else if (!strcmp(w[0], "attributes")) {
            if (n == 2)
                entry_named(&s, w[1]); /* (incflat keeps no entry point attributes) */
        } else if (!strcmp(w[0], "kind") || !strcmp(w[0], "rank") || !strcmp(w[0], "elemtype") ||
                   !strcmp(w[0], "shape") || !strcmp(w[0], "type"))
            cmd_array_query(&s, n, w);
        else if (!strcmp(w[0], "fields") || !strcmp(w[0], "variants") || !strcmp(w[0], "new") ||
                 !strcmp(w[0], "project") || !strcmp(w[0], "construct") || !strcmp(w[0], "destruct") ||
                 !strcmp(w[0], "variant") || !strcmp(w[0], "zip") || !strcmp(w[0], "unzip"))
            failure("%s: incflat's entry points take and give no records or sums", w[0]);
        else
            failure("Unknown command: %s", w[0]);
        ok();
    }
    free(line);
    cmd_clear(&s);
    return 0;
}
