/*
 * options.c — command-line parsing for the graphmem command (docs/cli.md). Every option is
 * checked here, so an unknown option or a bad value is a usage error (exit 2) naming it.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graphmem/io.h"

/* Which options a command takes. */
enum { OPT_PLAN = 1, OPT_CONVERT = 2, OPT_RUN = 3 };

static int command_kind(const char *cmd)
{
    if (strcmp(cmd, "plan") == 0 || strcmp(cmd, "check") == 0) return OPT_PLAN;
    if (strcmp(cmd, "convert") == 0) return OPT_CONVERT;
    if (strcmp(cmd, "run") == 0) return OPT_RUN;
    return 0;
}

static gm_status parse_long(const char *opt, const char *v, long lo, long hi, long *out, gm_error *err)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        return gm_error_set(err, GM_ERR_USAGE, "%s: '%s' is not a whole number from %ld to %ld", opt, v, lo, hi);
    }
    *out = x;
    return GM_OK;
}

/* --option KEY=VALUE: GE option keys (ge.*). */
static gm_status add_option(gm_cli_opts *o, char *kv, gm_error *err)
{
    char *eq = strchr(kv, '=');
    if (!eq || eq == kv) return gm_error_set(err, GM_ERR_USAGE, "--option '%s': expected KEY=VALUE", kv);
    if (strncmp(kv, "ge.", 3) != 0) {
        return gm_error_set(err, GM_ERR_USAGE, "--option '%s': GE option keys start with 'ge.'", kv);
    }
    if (o->n_options == (int)(sizeof o->options / sizeof o->options[0])) {
        return gm_error_set(err, GM_ERR_USAGE, "--option: at most %d options", o->n_options);
    }
    *eq = '\0';
    o->options[o->n_options++] = (gm_cli_kv){kv, eq + 1};
    return GM_OK;
}

/* --dim NAME=VALUE: fixes an ONNX symbolic dim (any command that reads a model). The reader
 * judges the text, and the names against the model's, so a mistake has one wording. */
static gm_status add_dim(gm_cli_opts *o, const char *kv, gm_error *err)
{
    if (!kv) return gm_error_set(err, GM_ERR_USAGE, "--dim: expected NAME=VALUE");
    if (o->n_dims == (int)(sizeof o->dims / sizeof o->dims[0]) - 1)
        return gm_error_set(err, GM_ERR_USAGE, "--dim: at most %d dims", o->n_dims);
    o->dims[o->n_dims++] = kv;
    return GM_OK;
}

/* Takes the value of an option: "--x=V" or "--x V". */
static const char *take_value(const char *arg, int argc, char **argv, int *i)
{
    const char *eq = strchr(arg, '=');
    if (arg[0] == '-' && arg[1] == '-' && eq) return eq + 1;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

/* Matches "--name" or "--name=..." */
static bool is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || (arg[n] == '=' && name[1] == '-'));
}

static gm_status parse_plan_opt(gm_cli_opts *o, const char *arg, int argc, char **argv, int *i, gm_error *err)
{
    static const char *const valued[] = {"-o", "--output", "--dump-graph", "--passes", "--option", "--strategy",
                                         "--threads", "--align", "--svg", "--dot", "--dsa", "--budget"};
    const char *name = NULL;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) {
        if (is_opt(arg, valued[k])) name = valued[k];
    }
    if (!name) {
        if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) o->verbosity = 1;
        else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) o->verbosity = -1;
        else if (strcmp(arg, "--strict") == 0) o->strict = true;
        else if (strcmp(arg, "--reproducible") == 0) o->reproducible = true;
        else if (strcmp(arg, "--ge-sizes") == 0) o->ge_sizes = true;
        else return gm_error_set(err, GM_ERR_USAGE, "%s: unknown option '%s' (see graphmem %s --help)", o->cmd, arg, o->cmd);
        return GM_OK;
    }
    const char *v = take_value(arg, argc, argv, i);
    if (!v) return gm_error_set(err, GM_ERR_USAGE, "%s: option %s needs a value", o->cmd, name);
    long x = 0;
    gm_status st = GM_OK;
    if (!strcmp(name, "-o") || !strcmp(name, "--output")) o->output = v;
    else if (!strcmp(name, "--dump-graph")) o->dump_graph = v;
    else if (!strcmp(name, "--svg")) o->svg = v;
    else if (!strcmp(name, "--dot")) o->dot = v;
    else if (!strcmp(name, "--passes")) st = gm_pass_set_parse(v, &o->passes, err);
    else if (!strcmp(name, "--option")) st = add_option(o, (char *)v, err);
    if (!o->plan_only && (!strcmp(name, "--strategy") || !strcmp(name, "--budget") || !strcmp(name, "--threads") ||
                          !strcmp(name, "--align")))
        o->plan_only = name;
    if (!strcmp(name, "--strategy")) o->strategy = v;
    else if (!strcmp(name, "--dsa")) o->dsa = v;
    else if (!strcmp(name, "--budget")) {
        char *end;
        o->budget_s = strtod(v, &end);
        o->budget_given = true;
        if (end == v || *end || !(o->budget_s > 0) || o->budget_s > 3600)
            return gm_error_set(err, GM_ERR_USAGE, "--budget: '%s' is not a number of seconds in (0, 3600]", v);
    }
    else if (!strcmp(name, "--threads")) {
        if ((st = parse_long("--threads", v, 1, 1024, &x, err)) == GM_OK) o->threads = x;
    } else if (!strcmp(name, "--align")) {
        if ((st = parse_long("--align", v, 1, 1L << 30, &x, err)) == GM_OK) {
            if (x & (x - 1)) return gm_error_set(err, GM_ERR_USAGE, "--align: %ld is not a power of two", x);
            o->align = x;
        }
    }
    return st;
}

/* Options of run: --streams N, --iterations K, --backend host|cuda, --device ID, --passes,
 * --option, --json, --dynamic (the default) or --plan, --memory-limit BYTES, --vm-granularity BYTES,
 * --memory-first, --learn-plan. */
static gm_status parse_run_opt(gm_cli_opts *o, const char *arg, int argc, char **argv, int *i, gm_error *err)
{
    static const char *const valued[] = {"--streams", "--iterations", "--backend", "--device", "--devices",
                                         "--passes",  "--option",     "--memory-limit", "--vm-granularity"};
    const char *name = NULL;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
        if (is_opt(arg, valued[k])) name = valued[k];
    if (!name) {
        if (strcmp(arg, "--dynamic") == 0) return o->dynamic = true, GM_OK; /* the default, said explicitly */
        if (strcmp(arg, "--plan") == 0) return o->dynamic = false, GM_OK;
        if (strcmp(arg, "--memory-first") == 0) return o->memory_first = true, GM_OK;
        if (strcmp(arg, "--learn-plan") == 0) return o->learn_plan = true, GM_OK;
        return gm_error_set(err, GM_ERR_USAGE, "run: unknown option '%s' (see graphmem run --help)", arg);
    }
    const char *v = take_value(arg, argc, argv, i);
    if (!v) return gm_error_set(err, GM_ERR_USAGE, "run: option %s needs a value", name);
    long x = 0;
    gm_status st = GM_OK;
    if (!strcmp(name, "--streams")) {
        if ((st = parse_long(name, v, 1, 64, &x, err)) == GM_OK) o->streams = (unsigned)x;
    } else if (!strcmp(name, "--iterations")) {
        if ((st = parse_long(name, v, 1, 1000000, &x, err)) == GM_OK) o->iterations = (unsigned)x;
    } else if (!strcmp(name, "--memory-limit")) {
        if ((st = parse_long(name, v, 1, LONG_MAX, &x, err)) == GM_OK) o->memory_limit = (uint64_t)x;
    } else if (!strcmp(name, "--vm-granularity")) {
        if ((st = parse_long(name, v, 1, 1L << 30, &x, err)) == GM_OK && (x & (x - 1)))
            st = gm_error_set(err, GM_ERR_USAGE, "run: --vm-granularity %ld: expected a power of two", x);
        o->vm_granularity = (uint64_t)x;
    } else if (!strcmp(name, "--devices")) {
        if ((st = parse_long(name, v, 1, 2, &x, err)) == GM_OK) o->devices = (unsigned)x;
    } else if (!strcmp(name, "--device")) {
        if ((st = parse_long(name, v, 0, 63, &x, err)) == GM_OK) o->device = (int)x;
    } else if (!strcmp(name, "--backend")) {
        if (strcmp(v, "host") && strcmp(v, "cuda"))
            return gm_error_set(err, GM_ERR_USAGE, "run: --backend '%s': expected host or cuda", v);
        o->backend = v;
    } else if (!strcmp(name, "--passes")) {
        st = gm_pass_set_parse(v, &o->passes, err);
    } else {
        st = add_option(o, (char *)v, err);
    }
    return st;
}

gm_status gm_cli_parse(const char *cmd, int argc, char **argv, int first, gm_cli_opts *o, gm_error *err)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->passes = GM_PASS_SET_ALL;
    o->strategy = "auto";
    o->align = 512;
    o->budget_s = 10;
    o->streams = 1;
    o->iterations = 1;
    o->dynamic = true; /* run: the runtime allocator unless --plan */
    o->devices = 1;
    o->backend = "host";
    int kind = command_kind(cmd);
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        gm_status st = GM_OK;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            o->help = true;
        } else if (is_opt(arg, "--dim")) {
            st = add_dim(o, take_value(arg, argc, argv, &i), err);
        } else if (!strcmp(arg, "-q") || !strcmp(arg, "--quiet")) {
            o->verbosity = -1; /* every command: only errors */
        } else if (!strcmp(arg, "-v") || !strcmp(arg, "--verbose")) {
            o->verbosity = 1;
        } else if (!strcmp(arg, "--json")) {
            o->json = true; /* every command: its result as JSON on stdout */
        } else if (arg[0] == '-' && arg[1] != '\0') {
            if (kind == OPT_PLAN) {
                st = parse_plan_opt(o, arg, argc, argv, &i, err);
            } else if (kind == OPT_RUN) {
                st = parse_run_opt(o, arg, argc, argv, &i, err);
            } else if (kind == OPT_CONVERT && is_opt(arg, "--to")) {
                o->to = take_value(arg, argc, argv, &i);
                if (!o->to) st = gm_error_set(err, GM_ERR_USAGE, "convert: option --to needs a value");
                else if (gm_format_from_name(o->to) == GM_FORMAT_UNKNOWN || gm_format_from_name(o->to) == GM_FORMAT_GE_OM)
                    st = gm_error_set(err, GM_ERR_USAGE, "convert: --to '%s': expected json, onnx or ge", o->to);
            } else {
                st = gm_error_set(err, GM_ERR_USAGE, "%s: unknown option '%s' (see graphmem %s --help)", cmd, arg, cmd);
            }
        } else if (o->n_positional < 2) {
            o->positional[o->n_positional++] = arg;
        } else {
            st = gm_error_set(err, GM_ERR_USAGE, "%s: unexpected argument '%s'", cmd, arg);
        }
        if (st != GM_OK) return st;
    }
    /* plan, check, info and run read one model: a second is a mistake, not something to ignore */
    if (o->n_positional > 1 && strcmp(cmd, "verify") && strcmp(cmd, "convert") && !o->help)
        return gm_error_set(err, GM_ERR_USAGE, "%s: takes one MODEL; unexpected argument '%s'", cmd, o->positional[1]);
    return GM_OK;
}
