/*
 * main.c — the graphmem command: dispatch, help, version, and the shared load step.
 * Exit status (docs/cli.md): 0 success, 1 a problem found, 2 bad usage or bad input, 3 the run
 * could not finish (out of memory, a device error, a missing feature, an internal error).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "graphmem/io.h"
#include "graphmem/log.h"
#include "graphmem/plan.h"

static const struct {
    const char *name, *synopsis, *help;
} k_cmds[] = {
    {"plan", "plan    [MODEL] [options]",
     "Runs the compiler passes, plans memory and verifies it; prints a summary.\n"
     "With no MODEL, uses the embedded example (a small training step showing every kind of conflict).\n"},
    {"check", "check   MODEL [options]", "Conflicts and lint only: what would be inserted, and why.\n"},
    {"verify", "verify  MODEL PLAN [--dim NAME=VALUE] [--json]",
     "Checks a plan (ours or another tool's) against a graph; exit 1 when it is wrong.\n"},
    {"run", "run     [MODEL] [options]", "Executes on device streams through the runtime allocator (or --plan: with a static plan)\n"
            "and prints the allocator's stats; checks every read.\n"},
    {"convert", "convert IN OUT [--to json|onnx|ge] [--dim NAME=VALUE] [--json]",
     "Converts between JSON, ONNX and GE text dumps, from GE offline models (.om) too (OUT's\n"
     "format from its extension or --to; OUT may not be IN; .om is read, never written).\n"},
    {"info", "info    MODEL [--dim NAME=VALUE] [--json]", "Nodes, tensors, subgraphs, streams, bytes.\n"},
    {"help", "help    [COMMAND]", "Shows this help, or a command's.\n"},
};

/* The formats and every option are documented in docs/ (docs/cli.md) and in graphmem(1). */
static const char k_plan_options[] =
    "Options of plan and check:\n"
    "  -o, --output FILE     plan: write the plan (JSON, docs/plan-format.md)\n"
    "  --dump-graph FILE     write the graph after the passes (.json, .onnx, .txt = GE dump)\n"
    "  --passes LIST         all (default), none, or a comma list of: hccl_memcpy,\n"
    "                        hccl_continuous_memcpy, subgraph, inplace_support_check,\n"
    "                        atomic_addr_clean, memcpy_addr_async, mark_same_addr, rw_conflict,\n"
    "                        layout_conflict, inplace, access_order, set_io_offset, lint (always in\n"
    "                        GE's order); -NAME leaves one out: all,-access_order is GE's behaviour\n"
    "                        (unordered accesses of one buffer warned about, W18888, not ordered)\n"
    "  --option KEY=VALUE    a GE option (ge.featureBaseRefreshable, ge.buildGraphMode, ...), repeatable\n"
    "  --strategy NAME       plan: auto (default: smallest wins; GE's not run past 20,000 items:\n"
    "                        they never won on the models measured), all (every strategy), or one of:\n"
    "%s"
    "  --threads N           plan: strategy threads, 1-1024 (default: cores)\n"
    "  --align N             plan: feature-map block alignment, a power of two up to 2^30\n"
    "                        (default 512, GE's)\n"
    "  --svg FILE            plan: memory timeline picture\n"
    "  --dot FILE            the graph as Graphviz\n"
    "  --dsa FILE.csv        plan: the offset problem alone (MiniMalloc CSV id,lower,upper,size[,alignment]);\n"
    "                        -o writes the offsets as CSV\n"
    "  --budget SECONDS      plan: the packing's wall clock, every region and strategy together, in\n"
    "                        (0, 3600]: the DSA search stops when it is spent, GE's strategies not yet\n"
    "                        started are not run (default: none; the search's node limit alone, so a\n"
    "                        plan is the same run to run); plan --dsa: the search time (default 10)\n"
    "  --strict              lint warnings make the exit status 1\n"
    "  --reproducible        plan: write strategy times as 0, so a plan file is the same run to run\n"
    "  --ge-sizes            plan: size tensors without an explicit size as GE does: 32-byte granules + 32\n"
    "  Outputs never replace an input, and a command that fails writes none of them.\n";

static const char k_run_options[] =
    "Options of run:\n"
    "  --streams N           spread the nodes over N streams, 1-64 (default 1)\n"
    "  --iterations K        run the graph K times, 1-1000000 (default 1)\n"
    "  --backend host|cuda   host: streams are threads (default); cuda: a GPU\n"
    "  --device ID           the device, 0-63 (default 0)\n"
    "  --devices 1|2         nodes with \"_device\": 1 run on the next device, copies peer to peer\n"
    "  --dynamic             (the default) every tensor from the runtime allocator (caching L1,\n"
    "                        per-stream L2 pools, cross-stream borrowing) as it runs; its stats printed\n"
    "  --plan                instead: one allocation per region of a verified static plan\n"
    "  --memory-limit BYTES  the device refuses allocations beyond BYTES (the allocators then recycle\n"
    "                        and, in dynamic mode, borrow across streams; exit 3 if it still fails)\n"
    "  --memory-first        dynamic mode: less device memory for stream synchronizes (4 KiB pages, an\n"
    "                        expandable L1 in the device's virtual memory; before L1 grows the pools\n"
    "                        recycle and the releases still waiting for events are settled)\n"
    "  --learn-plan          dynamic mode: the allocator records the first iteration, packs it into one\n"
    "                        region, and answers the next ones from that plan while they repeat it\n"
    "  --vm-granularity BYTES  the device maps memory first's virtual memory in granules of BYTES,\n"
    "                        a power of two multiple of its own, up to 2^30 (the host's: the OS page;\n"
    "                        2097152 maps as a GPU does)\n"
    "  --passes LIST, --option KEY=VALUE: as for plan\n";

static const char k_convert_options[] =
    "Options of convert:\n"
    "  --to json|onnx|ge     OUT's format, whatever its name\n";

static const char k_common_options[] =
    "Options of every command:\n"
    "  --dim NAME=VALUE      fix an ONNX symbolic dim (dim_param) to VALUE, a whole number >= 0;\n"
    "                        repeatable; a NAME the model lacks is an error naming those it has\n"
    "  --json                print the result as JSON\n"
    "  -v, -q                more ([MemConflict] lines) or less output (-q: errors only)\n"
    "  -h, --help            this command's help\n";

static const char k_exit_status[] =
    "Exit status:\n"
    "  0  success\n"
    "  1  a problem found: a plan that does not verify, a wrong read in run, lint warnings with --strict\n"
    "  2  bad usage or bad input: an unknown command or option, a file that cannot be read or\n"
    "     written, a malformed model or plan, an output that would replace an input\n"
    "  3  the run could not finish: out of memory (the host's, or the device's under --memory-limit),\n"
    "     a device error, a feature the input needs that this version lacks, or an internal error\n";

static void print_plan_options(void)
{
    /* the strategy names from the planner itself, wrapped under --strategy's text */
    char names[512], lines[1024];
    gm_plan_strategy_names(names, sizeof names);
    const char *w = strstr(names, "all, ");
    w = w ? w + 5 : names;
    size_t n = 0, col = 0;
    while (*w && n + 128 < sizeof lines) {
        size_t len = strcspn(w, ",");
        if (col && col + len > 66) n += (size_t)snprintf(lines + n, sizeof lines - n, "\n"), col = 0;
        if (!col) n += (size_t)snprintf(lines + n, sizeof lines - n, "%24s", "");
        n += (size_t)snprintf(lines + n, sizeof lines - n, "%s%.*s", col ? " " : "", (int)len, w);
        col += len + 1;
        w += len;
        if (*w) n += (size_t)snprintf(lines + n, sizeof lines - n, ","), col++;
        while (*w == ',' || *w == ' ') w++;
    }
    snprintf(lines + n, sizeof lines - n, "\n");
    printf(k_plan_options, lines);
}

void gm_cli_usage(const char *cmd)
{
    for (size_t i = 0; cmd && i < sizeof k_cmds / sizeof k_cmds[0]; i++) {
        if (strcmp(cmd, k_cmds[i].name) == 0) {
            printf("usage: graphmem %s\n\n%s", k_cmds[i].synopsis, k_cmds[i].help);
            if (!strcmp(cmd, "plan") || !strcmp(cmd, "check")) printf("\n"), print_plan_options();
            if (!strcmp(cmd, "run")) printf("\n%s", k_run_options);
            if (!strcmp(cmd, "convert")) printf("\n%s", k_convert_options);
            if (strcmp(cmd, "help") != 0) printf("\n%s\n%s", k_common_options, k_exit_status);
            return;
        }
    }
    printf("graphmem %s — memory conflicts and memory planning for ML computation graphs\n\nusage:\n",
           GM_VERSION_STRING);
    for (size_t i = 0; i < sizeof k_cmds / sizeof k_cmds[0]; i++) printf("  graphmem %s\n", k_cmds[i].synopsis);
    printf("  graphmem --version\n\n");
    print_plan_options();
    printf("\n%s\n%s\n%s\n%s", k_run_options, k_convert_options, k_common_options, k_exit_status);
    printf("\nThe formats and every option in full: docs/cli.md and graphmem(1).\n");
}

int gm_cli_fail(const gm_error *err)
{
    gm_cli_progress_stop(); /* the message starts on a clean line */
    fprintf(stderr, "graphmem: %s\n", err->message[0] ? err->message : gm_status_name(err->code));
    return gm_status_exit_code(err->code);
}

int gm_cli_print_json(cJSON *j)
{
    char *text = j ? cJSON_Print(j) : NULL;
    cJSON_Delete(j);
    if (!text) {
        gm_error err;
        gm_error_set(&err, GM_ERR_NOMEM, "out of memory writing the JSON summary");
        return gm_cli_fail(&err);
    }
    printf("%s\n", text);
    cJSON_free(text);
    return 0;
}

void gm_cli_print_tensors(int indent, int width, const char *label, const gm_model_stats *before,
                          const gm_model_stats *after)
{
    printf("%*s%-*s", indent, "", width, label);
    if (after)
        printf("%zu / %zu (%zu / %zu", before->tensors, after->tensors, before->dynamic_tensors,
               after->dynamic_tensors);
    else printf("%zu (%zu", before->tensors, before->dynamic_tensors);
    printf(" of run-time size: a size known only at run time)\n");
}

void gm_cli_json_tensors(cJSON *j, const gm_model_stats *before, const gm_model_stats *after)
{
    const gm_model_stats *now = after ? after : before;
    cJSON_AddNumberToObject(j, "tensors", (double)now->tensors);
    cJSON_AddNumberToObject(j, "dynamic_tensors", (double)now->dynamic_tensors);
    if (!after) return;
    cJSON_AddNumberToObject(j, "tensors_before", (double)before->tensors);
    cJSON_AddNumberToObject(j, "dynamic_tensors_before", (double)before->dynamic_tensors);
}

gm_status gm_cli_load(const gm_cli_opts *o, bool allow_embedded, gm_model **out, gm_error *err)
{
    gm_status st;
    if (o->n_positional == 0) {
        if (!allow_embedded) return gm_error_set(err, GM_ERR_USAGE, "%s: needs a MODEL file", o->cmd);
        if (o->n_dims)
            return gm_error_set(err, GM_ERR_USAGE, "dim '%s': the embedded example has no symbolic dims", o->dims[0]);
        st = gm_model_read_embedded_example(out, err);
    } else {
        st = gm_model_read_file_dims(o->positional[0], o->n_dims ? o->dims : NULL, out, err);
    }
    if (st != GM_OK) return st;
    /* A symbolic dim left open sizes its tensors at run time: the plan holds 0 bytes for them
     * and the user would not know why, nor that one --dim makes them static. */
    const char *open_dims = gm_model_unfixed_dims(*out);
    if (open_dims && o->verbosity >= 0)
        fprintf(stderr, "graphmem: note: %s: symbolic dim%s %s not fixed: what depends on %s is sized at run time "
                        "(fix with --dim %.*s=N)\n",
                gm_model_source(*out), strchr(open_dims, ',') ? "s" : "", open_dims,
                strchr(open_dims, ',') ? "them" : "it", (int)strcspn(open_dims, ","), open_dims);
    for (int i = 0; i < o->n_options; i++) {
        if (gm_model_set_option(*out, o->options[i].key, o->options[i].value) != GM_OK) {
            gm_model_free(*out);
            *out = NULL;
            return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        }
    }
    return GM_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        gm_cli_usage(NULL);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("graphmem %s\n", GM_VERSION_STRING);
        return 0;
    }
    bool help = !strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h");
    if (help && argc > 3) {
        fprintf(stderr, "graphmem: help takes one COMMAND; unexpected argument '%s'\n", argv[3]);
        return 2;
    }
    const char *name = help ? (argc > 2 ? argv[2] : NULL) : cmd;
    bool known = !name;
    for (size_t i = 0; name && i < sizeof k_cmds / sizeof k_cmds[0]; i++) known |= strcmp(name, k_cmds[i].name) == 0;
    if (!known) {
        fprintf(stderr, "graphmem: unknown command '%s' (see graphmem help)\n", name);
        return 2;
    }
    if (help) {
        gm_cli_usage(name);
        return 0;
    }
    gm_cli_opts o;
    gm_error err;
    gm_error_clear(&err);
    if (gm_cli_parse(cmd, argc, argv, 2, &o, &err) != GM_OK) return gm_cli_fail(&err);
    if (o.help) {
        gm_cli_usage(cmd);
        return 0;
    }
    gm_log_set_level(o.verbosity < 0 ? GM_LOG_ERROR : o.verbosity > 0 ? GM_LOG_INFO : GM_LOG_WARN);
    if (!strcmp(cmd, "plan") || !strcmp(cmd, "check")) return gm_cmd_plan(&o);
    if (!strcmp(cmd, "info")) return gm_cmd_info(&o);
    if (!strcmp(cmd, "convert")) return gm_cmd_convert(&o);
    if (!strcmp(cmd, "verify")) return gm_cmd_verify(&o);
    if (!strcmp(cmd, "run")) return gm_cmd_run(&o);
    return 2;
}
