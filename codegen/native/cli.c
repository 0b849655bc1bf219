/* The executable's command line, as ir/runtime/program.py's command_line: arguments on stdin, results on stdout,
 * the options of Futhark's compiled programs and incflat's own, the same messages and exit statuses. */
#define _POSIX_C_SOURCE 200809L
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_ALTERNATES 16

struct args {
    const char *entry, *runtime_file, *device, *platform, *tuning, *profile_json;
    int64_t runs, default_threshold, default_group_size, default_tile_size;
    bool server, group_size_given, tile_size_given, binary, list_devices, print_params, log, profile, debug, no_fallback;
    const char **params;
    int param_count;
    const char *alternate_tuning[MAX_ALTERNATES], *alternate_times[MAX_ALTERNATES];
    int alternate_count, times_count;
};

static const char *prog_name = "program";

static void usage_error(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "%s: error: ", prog_name);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(2);
}

/* Python's repr of a str of these bytes (ASCII escapes; other bytes as they are). */
static void py_repr(char *out, size_t len, const char *s, size_t n) {
    bool single = memchr(s, '\'', n) == NULL || memchr(s, '"', n) != NULL;
    char q = single ? '\'' : '"';
    size_t at = 0;
    out[at++] = q;
    for (size_t i = 0; i < n && at + 6 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == (unsigned char)q)
            at += (size_t)snprintf(out + at, len - at, "\\%c", c);
        else if (c == '\n')
            at += (size_t)snprintf(out + at, len - at, "\\n");
        else if (c == '\r')
            at += (size_t)snprintf(out + at, len - at, "\\r");
        else if (c == '\t')
            at += (size_t)snprintf(out + at, len - at, "\\t");
        else if (c < 0x20 || c == 0x7f)
            at += (size_t)snprintf(out + at, len - at, "\\x%02x", c);
        else
            out[at++] = (char)c;
    }
    out[at++] = q;
    out[at] = 0;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* tuning.parse_int: ASCII digits with an optional leading minus, blanks around. */
static bool parse_int(const char *s, size_t n, int64_t *out) {
    while (n && is_space(*s))
        s++, n--;
    while (n && is_space(s[n - 1]))
        n--;
    size_t i = s[0] == '-' && n > 1 ? 1 : 0;
    if (i == n)
        return false;
    for (size_t k = i; k < n; k++)
        if (s[k] < '0' || s[k] > '9')
            return false;
    char buf[64];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno)
        return false;
    *out = v;
    return true;
}

static int64_t option_int(const char *option, const char *text) {
    int64_t v;
    if (!parse_int(text, strlen(text), &v)) {
        char shown[600];
        py_repr(shown, sizeof shown, text, strlen(text));
        fprintf(stderr, "%s: error: argument %s: invalid integer: %s (ASCII digits, with an optional leading -)\n",
                prog_name, option, shown);
        exit(2);
    }
    return v;
}

struct option_spec { const char *short_name, *long_name; bool takes_value; };
static const struct option_spec OPTIONS[] = {
    {"-e", "--entry-point", true}, {"-t", "--write-runtime-to", true}, {"-r", "--runs", true},
    {"-b", "--binary-output", false}, {"-d", "--device", true}, {"-p", "--platform", true},
    {NULL, "--list-devices", false}, {NULL, "--param", true}, {NULL, "--tuning", true},
    {NULL, "--default-threshold", true}, {NULL, "--default-group-size", true}, {NULL, "--default-tile-size", true},
    {NULL, "--print-params", false}, {"-L", "--log", false}, {"-P", "--profile", false},
    {NULL, "--profile-json", true}, {"-D", "--debug", false}, {NULL, "--no-fallback", false},
    {NULL, "--alternate-tuning", true}, {NULL, "--alternate-times", true}, {"-h", "--help", false},
    {NULL, "--server", false},
};
#define OPTION_COUNT (int)(sizeof OPTIONS / sizeof *OPTIONS)

static void set_option(struct args *a, const struct option_spec *o, const char *value) {
    const char *name = o->long_name;
    char shown[128];
    snprintf(shown, sizeof shown, "%s%s%s", o->short_name ? o->short_name : "", o->short_name ? "/" : "", name);
    if (!strcmp(name, "--entry-point")) a->entry = value;
    else if (!strcmp(name, "--write-runtime-to")) a->runtime_file = value;
    else if (!strcmp(name, "--runs")) a->runs = option_int(shown, value);
    else if (!strcmp(name, "--binary-output")) a->binary = true;
    else if (!strcmp(name, "--device")) a->device = value;
    else if (!strcmp(name, "--platform")) a->platform = value;
    else if (!strcmp(name, "--list-devices")) a->list_devices = true;
    else if (!strcmp(name, "--param")) a->params[a->param_count++] = value;
    else if (!strcmp(name, "--tuning")) a->tuning = value;
    else if (!strcmp(name, "--default-threshold")) a->default_threshold = option_int(shown, value);
    else if (!strcmp(name, "--default-group-size")) {
        a->default_group_size = option_int(shown, value);
        a->group_size_given = true;
    } else if (!strcmp(name, "--default-tile-size")) {
        a->default_tile_size = option_int(shown, value);
        a->tile_size_given = true;
    }
    else if (!strcmp(name, "--print-params")) a->print_params = true;
    else if (!strcmp(name, "--log")) a->log = true;
    else if (!strcmp(name, "--profile")) a->profile = true;
    else if (!strcmp(name, "--profile-json")) a->profile_json = value;
    else if (!strcmp(name, "--debug")) a->debug = true;
    else if (!strcmp(name, "--no-fallback")) a->no_fallback = true;
    else if (!strcmp(name, "--server")) a->server = true;
    else if (!strcmp(name, "--alternate-tuning")) {
        if (a->alternate_count >= MAX_ALTERNATES)
            usage_error("at most %s --alternate-tuning options%s", "16", "");
        a->alternate_tuning[a->alternate_count++] = value;
    } else if (!strcmp(name, "--alternate-times")) {
        if (a->times_count >= MAX_ALTERNATES)
            usage_error("at most %s --alternate-times options%s", "16", "");
        a->alternate_times[a->times_count++] = value;
    } else if (!strcmp(name, "--help")) {
        printf("usage: %s [options] < input > output\n", prog_name);
        for (int i = 0; i < OPTION_COUNT; i++)
            printf("  %s%s%s%s\n", OPTIONS[i].short_name ? OPTIONS[i].short_name : "",
                   OPTIONS[i].short_name ? ", " : "", OPTIONS[i].long_name, OPTIONS[i].takes_value ? " VALUE" : "");
        exit(0);
    }
}

static void parse_args(struct args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->entry = "main";
    a->runs = 1;
    a->params = calloc((size_t)argc + 1, sizeof *a->params);
    char unknown[4096] = "";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const struct option_spec *o = NULL;
        const char *value = NULL;
        if (arg[0] == '-' && arg[1] == '-' && arg[2]) {
            const char *eq = strchr(arg, '=');
            size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
            for (int k = 0; k < OPTION_COUNT; k++)
                if (strlen(OPTIONS[k].long_name) == n && !strncmp(OPTIONS[k].long_name, arg, n))
                    o = &OPTIONS[k];
            if (o && eq) {
                if (!o->takes_value)
                    usage_error("argument %s: ignored explicit argument '%s'", o->long_name, eq + 1);
                value = eq + 1;
            }
        } else if (arg[0] == '-' && arg[1] && arg[1] != '-') {
            /* short options: -r5, -r 5, -bL */
            for (const char *c = arg + 1; *c; c++) {
                o = NULL;
                for (int k = 0; k < OPTION_COUNT; k++)
                    if (OPTIONS[k].short_name && OPTIONS[k].short_name[1] == *c)
                        o = &OPTIONS[k];
                if (!o)
                    break;
                if (o->takes_value) {
                    if (c[1])
                        value = c + 1;
                    break;
                }
                if (c[1])
                    set_option(a, o, NULL);
            }
        }
        if (!o) {
            if (strlen(unknown) + strlen(arg) + 2 < sizeof unknown)
                strcat(strcat(unknown, *unknown ? " " : ""), arg);
            continue;
        }
        if (o->takes_value && !value) {
            if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] && !(argv[i + 1][1] >= '0' && argv[i + 1][1] <= '9'))) {
                char shown[128];
                snprintf(shown, sizeof shown, "%s%s%s", o->short_name ? o->short_name : "", o->short_name ? "/" : "",
                         o->long_name);
                usage_error("argument %s: expected one argument%s", shown, "");
            }
            value = argv[++i];
        }
        set_option(a, o, value);
    }
    if (*unknown)
        usage_error("unrecognized arguments: %s%s", unknown, "");
}

/* ---- errors ---- */

static int failure(const char *fmt, const char *a, const char *b, const char *c) {
    fprintf(stderr, "Error: ");
    fprintf(stderr, fmt, a, b, c);
    fputc('\n', stderr);
    return 1;
}

static int ctx_failure(struct incflat_ctx *ctx) {
    fprintf(stderr, "Error: %s\n", ctx->message ? ctx->message : "unknown failure");
    return 1;
}

/* ---- tuning files ---- */

static int param_index(const struct incflat_program *p, const char *name, size_t n) {
    for (int i = 0; i < p->param_count; i++)
        if (strlen(p->params[i].name) == n && !strncmp(p->params[i].name, name, n))
            return i;
    return -1;
}

/* A UTF-8 check that names the first bad byte as Python's decoder does. */
static const char *utf8_error(const unsigned char *s, size_t n, size_t *at) {
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t need = c < 0x80 ? 0 : (c >= 0xc2 && c <= 0xdf) ? 1 : (c >= 0xe0 && c <= 0xef) ? 2
                                                                 : (c >= 0xf0 && c <= 0xf4) ? 3 : 9;
        if (need == 9) {
            *at = i;
            return "invalid start byte";
        }
        for (size_t k = 1; k <= need; k++)
            if (i + k >= n) {
                *at = i;
                return "unexpected end of data";
            } else if ((s[i + k] & 0xc0) != 0x80) {
                *at = i;
                return "invalid continuation byte";
            }
        i += need + 1;
    }
    return NULL;
}

static int read_tuning_file(const struct incflat_program *p, const char *path, bool *given, int64_t *values) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return failure("cannot read tuning file %s: %s%s", path, strerror(errno), "");
    size_t cap = 4096, n = 0;
    char *data = malloc(cap);
    size_t got;
    while ((got = fread(data + n, 1, cap - n, f)) > 0)
        if ((n += got) == cap)
            data = realloc(data, cap *= 2);
    fclose(f);
    size_t bad;
    const char *reason = utf8_error((const unsigned char *)data, n, &bad);
    if (reason) {
        int line = 1;
        for (size_t i = 0; i < bad; i++)
            line += data[i] == '\n';
        fprintf(stderr, "Error: %s:%d: not UTF-8 text (%s at byte %zu)\n", path, line, reason, bad);
        free(data);
        return 1;
    }
    int number = 0;
    for (size_t start = 0; start < n;) {
        size_t end = start;
        while (end < n && data[end] != '\n' && data[end] != '\r')
            end++;
        number++;
        const char *line = data + start;
        size_t len = end - start;
        start = end + (end < n && data[end] == '\r' && end + 1 < n && data[end + 1] == '\n' ? 2 : 1);
        size_t a = 0, b = len;
        while (a < b && is_space(line[a]))
            a++;
        while (b > a && is_space(line[b - 1]))
            b--;
        if (a == b || (b - a >= 2 && line[a] == '-' && line[a + 1] == '-'))
            continue;
        const char *eq = memchr(line + a, '=', b - a);
        size_t na = a, nb = eq ? (size_t)(eq - line) : b;
        while (na < nb && is_space(line[na]))
            na++;
        while (nb > na && is_space(line[nb - 1]))
            nb--;
        int64_t v;
        if (!eq || na == nb || !parse_int(eq + 1, (size_t)(line + b - eq - 1), &v)) {
            char shown[2048];
            py_repr(shown, sizeof shown, line, len);
            fprintf(stderr, "Error: %s:%d: invalid line (must be of form 'name=int'): %s\n", path, number, shown);
            free(data);
            return 1;
        }
        int i = param_index(p, line + na, nb - na);
        if (i < 0) {
            char shown[2048];
            py_repr(shown, sizeof shown, line + na, nb - na);
            fprintf(stderr, "Error: %s:%d: unknown tuning parameter %s\n", path, number, shown);
            free(data);
            return 1;
        }
        given[i] = true;
        values[i] = v;
    }
    free(data);
    return 0;
}

/* ---- files ---- */

static int check_output_file(const char *option, const char *path) {
    struct stat st, link;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return failure("%s %s: is a directory%s", option, path, "");
    bool existed = access(path, F_OK) == 0;
    if (existed && !S_ISREG(st.st_mode))
        return 0; /* a FIFO or a device: opening it could wait for a reader; it is written as it is, at the end */
    FILE *f = fopen(path, "a");
    if (!f)
        return failure("%s %s: cannot write: %s", option, path, strerror(errno));
    fclose(f);
    if (!existed && !(lstat(path, &link) == 0 && S_ISLNK(link.st_mode))) /* a link to nothing keeps its file */
        unlink(path);
    return 0;
}

/* An output file opened for writing; a FIFO that no process reads is an error (errno ENXIO), not a wait
   without end. */
static FILE *open_output(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
        return fopen(path, "w");
    int fd = open(path, O_WRONLY | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fdopen(fd, "w");
}

static int output_failure(const char *option, const char *path) {
    return errno == ENXIO ? failure("%s %s: no process reads this FIFO%s", option, path, "")
                          : failure("%s %s: cannot write: %s", option, path, strerror(errno));
}

static int write_times(const char *option, const char *path, const int64_t *times, int64_t count) {
    FILE *f = open_output(path);
    if (!f)
        return output_failure(option, path);
    for (int64_t i = 0; i < count; i++)
        fprintf(f, "%lld\n", (long long)times[i]);
    if (fclose(f))
        return failure("%s %s: cannot write: %s", option, path, strerror(errno));
    return 0;
}

static void interrupted(int sig) {
    (void)sig;
    static const char text[] = "Interrupted.\n";
    if (write(2, text, sizeof text - 1) < 0) {
    }
    _exit(130);
}

static int list_devices(const struct incflat_program *p) {
    struct incflat_cl cl;
    char *why = incflat_cl_load(&cl, NULL, p->opencl_loader);
    if (why) {
        fprintf(stderr, "Error: %s\n", why);
        return 1;
    }
    cl_platform_id platforms[16];
    cl_uint count = 0;
    if (cl.clGetPlatformIDs(16, platforms, &count) != CL_SUCCESS || !count) {
        fprintf(stderr, "Error: no OpenCL platform is installed: install a GPU driver's OpenCL, or PoCL "
                        "(pip install pocl-binary-distribution)\n");
        return 1;
    }
    for (cl_uint i = 0; i < count && i < 16; i++) {
        char pname[256] = "";
        cl.clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        cl_device_id devices[64];
        cl_uint n = 0;
        if (cl.clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 64, devices, &n) != CL_SUCCESS)
            continue;
        for (cl_uint k = 0; k < n && k < 64; k++) {
            char dname[256] = "";
            cl.clGetDeviceInfo(devices[k], CL_DEVICE_NAME, sizeof dname, dname, NULL);
            printf("%s: %s\n", pname, dname);
        }
    }
    return 0;
}

/* ---- the runs ---- */

static const char *value_type_name(const struct incflat_value *v, char *out, size_t len, bool sizes) {
    size_t at = 0;
    for (int k = 0; k < v->rank; k++)
        at += sizes ? (size_t)snprintf(out + at, len - at, "[%lld]", (long long)v->shape[k])
                    : (size_t)snprintf(out + at, len - at, "[]");
    snprintf(out + at, len - at, "%s", incflat_type_name(v->type));
    return out;
}

int incflat_main(const struct incflat_program *program, int argc, char **argv) {
    const char *slash = strrchr(argv[0], '/');
    prog_name = slash ? slash + 1 : argv[0];
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, interrupted);
    struct args a;
    parse_args(&a, argc, argv);
    if (a.print_params) {
        for (int i = 0; i < program->param_count; i++) { /* a threshold's default is the tuned value baked in */
            const struct incflat_param_info *q = &program->params[i];
            char tuned[32];
            snprintf(tuned, sizeof tuned, "%lld", (long long)program->tuned[2 * i + 1]);
            printf(q->line_format, q->threshold && program->tuned[2 * i] ? tuned : q->default_text);
            putchar('\n');
        }
        return fflush(stdout) ? 1 : 0;
    }
    if (a.list_devices)
        return list_devices(program);
    const struct incflat_entry_info *entry = NULL;
    for (int i = 0; i < program->entry_count; i++)
        if (!strcmp(program->entries[i].name, a.entry))
            entry = &program->entries[i];
    if (!entry && !a.server) { /* (a server calls any entry point) */
        char shown[600], names[4096] = "";
        py_repr(shown, sizeof shown, a.entry, strlen(a.entry));
        const char *sorted[256];
        int n = program->entry_count < 256 ? program->entry_count : 256;
        for (int i = 0; i < n; i++) {
            int k = i;
            while (k > 0 && strcmp(sorted[k - 1], program->entries[i].name) > 0) {
                sorted[k] = sorted[k - 1];
                k--;
            }
            sorted[k] = program->entries[i].name;
        }
        for (int i = 0; i < n; i++)
            if (strlen(names) + strlen(sorted[i]) + 3 < sizeof names)
                strcat(strcat(names, i ? ", " : ""), sorted[i]);
        return failure("unknown entry point %s; this program has %s%s", shown, n ? names : "no entry points", "");
    }
    char number[32];
    if (a.runs < 1) {
        snprintf(number, sizeof number, "%lld", (long long)a.runs);
        return failure("-r %s: the number of runs must be at least 1%s%s", number, "", "");
    }
    const char *sized[2] = {"--default-group-size", "--default-tile-size"};
    int64_t sizes[2] = {a.default_group_size, a.default_tile_size};
    bool sizes_given[2] = {a.group_size_given, a.tile_size_given};
    for (int i = 0; i < 2; i++)
        if (sizes_given[i] && sizes[i] < 1) {
            snprintf(number, sizeof number, "%lld", (long long)sizes[i]);
            return failure("%s %s: must be at least 1%s", sized[i], number, "");
        }
    if (a.runtime_file && check_output_file("-t", a.runtime_file))
        return 1;
    if (a.profile_json && check_output_file("--profile-json", a.profile_json))
        return 1;
    for (int i = 0; i < a.times_count; i++)
        if (check_output_file("--alternate-times", a.alternate_times[i]))
            return 1;
    int np = program->param_count;
    bool *given = calloc((size_t)np + 1, sizeof *given);
    int64_t *values = calloc((size_t)np + 1, sizeof *values);
    if (a.tuning && read_tuning_file(program, a.tuning, given, values))
        return 1;
    for (int i = 0; i < a.param_count; i++) {
        const char *p = a.params[i], *eq = strchr(p, '=');
        int64_t v;
        if (!eq || !parse_int(eq + 1, strlen(eq + 1), &v))
            return failure("--param %s: must be of form NAME=INT%s%s", p, "", "");
        int k = param_index(program, p, (size_t)(eq - p));
        if (k < 0) {
            char shown[600];
            py_repr(shown, sizeof shown, p, (size_t)(eq - p));
            return failure("--param %s: unknown tuning parameter %s%s", p, shown, "");
        }
        given[k] = true;
        values[k] = v;
    }
    bool profile = a.profile || a.profile_json;
    if (a.times_count > a.alternate_count)
        return failure("each --alternate-times needs an --alternate-tuning before it%s%s%s", "", "", "");
    if (a.server && (a.alternate_count || a.runtime_file || a.runs != 1))
        return failure("--server takes no --alternate-tuning, -t or -r: each call prints its runtime%s%s%s", "", "", "");
    if (a.alternate_count) {
        const char *opts[3] = {"-L", "-P", "--profile-json"};
        bool set[3] = {a.log, a.profile, a.profile_json != NULL};
        for (int i = 0; i < 3; i++)
            if (set[i])
                return failure("--alternate-tuning cannot be combined with %s: its records would mix the "
                               "configurations%s%s", opts[i], "", "");
    }
    bool *alt_given[MAX_ALTERNATES];
    int64_t *alt_values[MAX_ALTERNATES];
    for (int i = 0; i < a.alternate_count; i++) {
        alt_given[i] = calloc((size_t)np + 1, sizeof(bool));
        alt_values[i] = calloc((size_t)np + 1, sizeof(int64_t));
        if (read_tuning_file(program, a.alternate_tuning[i], alt_given[i], alt_values[i]))
            return 1;
    }
    struct incflat_options options = {a.device, a.platform, a.default_threshold, a.default_group_size,
                                      a.default_tile_size, a.log, profile, a.debug, !a.no_fallback};
    char *why = NULL;
    struct incflat_ctx *ctx = incflat_ctx_new(program, &options, given, values, &why);
    if (!ctx) {
        fprintf(stderr, "Error: %s\n", why);
        return 1;
    }
    int contexts = 1 + a.alternate_count;
    struct incflat_ctx *all[1 + MAX_ALTERNATES] = {ctx};
    for (int i = 0; i < a.alternate_count; i++)
        all[i + 1] = incflat_ctx_alternate(ctx, alt_given[i], alt_values[i]);
    if (a.debug && *program->provenance)
        fprintf(stderr, "Tuned defaults: %s\n", program->provenance);
    if (a.server) /* Futhark's server protocol on stdin and stdout (server.c) */
        return incflat_server(program, ctx);
    /* the inputs */
    struct incflat_reader *reader = incflat_reader_file(stdin);
    struct incflat_value inputs[256];
    int count = 0;
    char err[1024];
    for (;;) {
        struct incflat_value v;
        int r = incflat_read_value(reader, &v, err, sizeof err);
        if (r < 0)
            return failure("reading input: %s%s%s", err, "", "");
        if (r == 0)
            break;
        if (count == 256) {
            snprintf(number, sizeof number, "%d", entry->params);
            return failure("entry point '%s' takes %s arguments, but more than 256 were given", entry->name, number,
                           "");
        }
        inputs[count++] = v;
    }
    if (count != entry->params) {
        fprintf(stderr, "Error: entry point '%s' takes %d arguments, but %d were given\n", entry->name, entry->params,
                count);
        return 1;
    }
    struct incflat_slot *in = calloc((size_t)count + 1, sizeof *in);
    for (int i = 0; i < count; i++) {
        char t[700], s[700];
        value_type_name(&inputs[i], t, sizeof t, false);
        if (strcmp(t, entry->param_types[i])) {
            fprintf(stderr, "Error: argument %d of entry point '%s': expected a value of type %s, got %s\n", i + 1,
                    entry->name, entry->param_types[i], value_type_name(&inputs[i], s, sizeof s, true));
            return 1;
        }
        in[i] = incflat_upload_value(ctx, &inputs[i]);
        if (ctx->failed)
            return ctx_failure(ctx);
        incflat_value_free(&inputs[i]);
    }
    incflat_end_timed_runs(ctx); /* the inputs' upload is not the runs' */
    memset(&ctx->timed_transfers, 0, sizeof ctx->timed_transfers);
    ctx->have_timed = false;
    int64_t *times[1 + MAX_ALTERNATES];
    struct incflat_slot *results = calloc((size_t)entry->results + 1, sizeof *results);
    struct incflat_slot *scratch = calloc((size_t)entry->results + 1, sizeof *scratch);
    for (int c = 0; c < contexts; c++)
        times[c] = calloc((size_t)a.runs, sizeof(int64_t));
    for (int64_t run = 0; run < a.runs; run++) {
        for (int step = 0; step < contexts; step++) {
            int which = run % 2 == 0 ? step : contexts - 1 - step;
            struct incflat_ctx *current = all[which];
            struct incflat_slot *out = which == 0 ? results : scratch;
            for (int r = 0; r < entry->results; r++) /* the last results back to the free list first */
                incflat_arr_release(current, &out[r].array);
            incflat_begin_run(current);
            incflat_finish(current);
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            entry->fn(current, in, out);
            if (!current->failed)
                incflat_finish(current);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            times[which][run] = (int64_t)nearbyint((double)(t1.tv_sec - t0.tv_sec) * 1e6 +
                                                 (double)(t1.tv_nsec - t0.tv_nsec) / 1e3);
            incflat_check_errors(current);
            if (current->failed)
                return ctx_failure(current);
        }
    }
    incflat_end_timed_runs(ctx);
    if (a.debug) {
        int64_t blocks, bytes;
        incflat_memory_held(ctx, &blocks, &bytes);
        fprintf(stderr, "Device memory: %lld blocks, %lld bytes\n", (long long)blocks, (long long)bytes);
    }
    if (a.runtime_file && write_times("-t", a.runtime_file, times[0], a.runs))
        return 1;
    for (int i = 0; i < a.times_count; i++)
        if (write_times("--alternate-times", a.alternate_times[i], times[i + 1], a.runs))
            return 1;
    for (int r = 0; r < entry->results; r++) {
        struct incflat_value v;
        if (incflat_download_value(ctx, &results[r], entry->result_types[r], &v))
            return ctx_failure(ctx);
        int bad = a.binary ? incflat_write_binary(stdout, &v) : incflat_write_text(stdout, &v);
        if (!a.binary && !bad)
            bad = fputc('\n', stdout) == EOF;
        incflat_value_free(&v);
        if (bad || fflush(stdout)) {
            if (errno == EPIPE)
                return 128 + SIGPIPE;
            return failure("writing the results to stdout: %s%s%s", strerror(errno), "", "");
        }
    }
    if (a.profile)
        incflat_report_profile(ctx, stderr);
    if (a.profile_json) {
        FILE *f = open_output(a.profile_json);
        if (!f)
            return output_failure("--profile-json", a.profile_json);
        if (incflat_profile_json(ctx, f) || fclose(f))
            return failure("--profile-json %s: cannot write: %s%s", a.profile_json, strerror(errno), "");
    }
    return 0;
}
