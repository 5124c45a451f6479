/* cli.h — the graphmem command's shared pieces: parsed options and the subcommands. */
#ifndef GM_CLI_H
#define GM_CLI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "graphmem/graph.h"
#include "graphmem/passes.h"

typedef struct gm_cli_kv {
    const char *key, *value; /* point into argv */
} gm_cli_kv;

typedef struct gm_cli_opts {
    const char *cmd;
    const char *positional[2];
    int n_positional;
    const char *output, *dump_graph, *svg, *dot, *to;
    const char *dsa;      /* plan --dsa FILE.csv: the offset problem alone */
    double budget_s;      /* --budget SECONDS for the packer's search (default 10) */
    bool budget_given;    /* plan: --budget bounds the DSA search by the clock (else its nodes) */
    gm_pass_set passes;
    const char *strategy;
    const char *plan_only; /* the first option given that only planning reads (check refuses it) */
    long threads;
    int64_t align;
    int verbosity; /* -1 quiet, 0 normal, 1 verbose */
    bool json, strict, help;
    bool reproducible;    /* plan: strategy times written as 0 */
    bool ge_sizes;        /* plan: GE's padded tensor sizes */
    unsigned streams, iterations; /* run */
    bool dynamic;         /* run: allocate through the runtime allocator (default); false: --plan */
    uint64_t memory_limit; /* run: device bytes the run may hold, 0 = no limit */
    uint64_t vm_granularity; /* run: the devices' virtual-memory granule, 0 = their own */
    bool memory_first;     /* run: gm_run_options.memory_first */
    bool learn_plan;       /* run: gm_run_options.learn_plan */
    const char *backend;  /* run: "host" or "cuda" */
    int device;           /* run: device id */
    unsigned devices;     /* run --plan: 1 or 2 (nodes with "_device": 1 on the second) */
    gm_cli_kv options[64];
    int n_options;
    const char *dims[65]; /* --dim NAME=VALUE for ONNX symbolic dims, NULL-terminated */
    int n_dims;
} gm_cli_opts;

/* Parses argv[first..] for command `cmd`; prints nothing, fills err on a usage problem. */
gm_status gm_cli_parse(const char *cmd, int argc, char **argv, int first, gm_cli_opts *o, gm_error *err);
/* Loads MODEL (or the embedded example when none and allowed) and applies --option pairs. */
gm_status gm_cli_load(const gm_cli_opts *o, bool allow_embedded, gm_model **out, gm_error *err);

int gm_cmd_plan(const gm_cli_opts *o);  /* plan and check */
int gm_cmd_info(const gm_cli_opts *o);
int gm_cmd_convert(const gm_cli_opts *o);
int gm_cmd_verify(const gm_cli_opts *o); /* verify MODEL PLAN */
int gm_cmd_plan_dsa(const gm_cli_opts *o); /* plan --dsa FILE.csv */
int gm_cmd_run(const gm_cli_opts *o);      /* run [MODEL] */
void gm_cli_usage(const char *cmd);
/* Progress on stderr (plan, check, run) for work over a second, when stderr is a terminal and
 * not -q (progress.c): start with the first stage's name, name each next stage, stop before
 * printing the result (the line is erased). Stage names must outlive the work (literals). */
void gm_cli_progress_start(const gm_cli_opts *o, const char *stage);
void gm_cli_progress_stage(const char *stage);
void gm_cli_progress_stop(void);
/* The files a command writes, all or none (outputs.c): begin checks what o names before any
 * work (no output is an input or another output, each directory exists); add stages one
 * output (nothing is visible yet); commit puts them all in place; end removes whatever was not
 * committed, so every path out of a command calls it. */
typedef struct gm_files gm_files;
typedef struct gm_cli_outputs {
    gm_files *files;
    struct {
        const char *path, *what;
        size_t bytes;
    } v[4];
    int n;
} gm_cli_outputs;
gm_status gm_cli_outputs_begin(gm_cli_outputs *out, const gm_cli_opts *o, gm_error *err);
gm_status gm_cli_outputs_add(gm_cli_outputs *out, const char *path, const char *what, const void *data, size_t len,
                             gm_error *err);
/* Withdraws the output added last (its staged file removed). */
void gm_cli_outputs_drop_last(gm_cli_outputs *out);
gm_status gm_cli_outputs_commit(gm_cli_outputs *out, gm_error *err);
/* "wrote PATH (WHAT, N bytes)" per output, unless -q; _json adds the list as "wrote". */
void gm_cli_outputs_print(const gm_cli_outputs *out, const gm_cli_opts *o);
typedef struct cJSON cJSON;
void gm_cli_outputs_json(const gm_cli_outputs *out, cJSON *j);
void gm_cli_outputs_end(gm_cli_outputs *out);
/* `plan -o` (plan_stager.c): the plan's file staged from the planner's on_text while the
 * verifier runs. finish stages the returned text unless it already is; discard removes what
 * was staged (a plan that did not verify). */
typedef struct gm_cli_plan_stager {
    gm_cli_outputs *outs;
    const char *path; /* -o, or NULL: nothing to stage */
    const char *text;
    size_t len;
    pthread_t tid;
    bool running, staged;
    gm_status st;
    gm_error err;
} gm_cli_plan_stager;
void gm_cli_plan_stager_init(gm_cli_plan_stager *s, gm_cli_outputs *outs, const char *path);
void gm_cli_plan_stager_on_text(const char *text, size_t len, void *ctx);
gm_status gm_cli_plan_stager_finish(gm_cli_plan_stager *s, const char *text, size_t len, gm_error *err);
void gm_cli_plan_stager_discard(gm_cli_plan_stager *s);
/* Prints j (taking it) as JSON on stdout; 0, or the exit code of running out of memory. */
int gm_cli_print_json(cJSON *j);
/* Prints an error as "graphmem: message" and returns its exit code. */
int gm_cli_fail(const gm_error *err);
/* The tensor counts info, plan and run print, written once (main.c) from gm_model_get_stats, so
 * that the three count tensors of run-time size (a size known only at run time,
 * gm_desc_size_at_run_time) alike: `before` the model as read (with --dim), `after` the graph
 * the command's passes left (plan, run) or NULL (info). The line, label padded to `width` after
 * `indent` spaces: "20 (3 of run-time size: ...)", or with an after "20 / 22 (3 / 4 of ...)".
 * The JSON: tensors and dynamic_tensors (after, or the model as read), and with an after
 * tensors_before and dynamic_tensors_before. */
void gm_cli_print_tensors(int indent, int width, const char *label, const gm_model_stats *before,
                          const gm_model_stats *after);
void gm_cli_json_tensors(cJSON *j, const gm_model_stats *before, const gm_model_stats *after);

#endif
