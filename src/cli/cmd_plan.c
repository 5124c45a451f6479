/*
 * cmd_plan.c — `graphmem plan` and `graphmem check`: load and validate, run the compiler passes
 * (GE's order), and print the summary of docs/cli.md, as text or --json. Parts that later
 * versions add (the memory plan and its proof) are reported as not planned, never invented.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "graphmem/report.h"
#include "util/clock.h"

typedef struct plan_result {
    const gm_model *m;
    size_t nodes_before, nodes_after;
    gm_pass_set requested, available;
    gm_pass_report report;
    gm_model_stats stats_before; /* the model as read */
    gm_model_stats stats;        /* the graph the passes left */
    gm_plan *plan;        /* plan only; verified before it is printed */
    double ms;
    /* wall time of the command's stages (-v): reading, the passes, the planner (its own stages
     * are in the plan), and staging and writing the outputs */
    double ms_read, ms_passes, ms_plan, ms_outputs;
} plan_result;

/* The planner's stages on the progress line. */
static void planning_stage(const char *stage, void *ctx)
{
    (void)ctx;
    gm_cli_progress_stage(!strcmp(stage, "lifetimes") ? "planning: lifetimes"
                          : !strcmp(stage, "packing") ? "planning: packing"
                                                      : "planning: verifying");
}

/* Options that need parts this version lacks are refused up front: nothing half-done. */
static gm_status check_supported(const gm_cli_opts *o, gm_error *err)
{
    if (!gm_plan_strategy_known(o->strategy)) {
        char names[512];
        gm_plan_strategy_names(names, sizeof names);
        return gm_error_set(err, GM_ERR_USAGE, "%s: unknown strategy '%s' (%s)", o->cmd, o->strategy, names);
    }
    if (o->dsa) return gm_error_set(err, GM_ERR_USAGE, "%s: --dsa goes with plan", o->cmd);
    if (o->svg && strcmp(o->cmd, "plan") != 0)
        return gm_error_set(err, GM_ERR_USAGE, "%s: --svg draws a memory plan, which %s does not make: use graphmem plan",
                            o->cmd, o->cmd);
    if (o->output && strcmp(o->cmd, "plan") != 0)
        return gm_error_set(err, GM_ERR_USAGE, "%s: -o writes a plan: use graphmem plan", o->cmd);
    if (o->plan_only && strcmp(o->cmd, "plan") != 0)
        return gm_error_set(err, GM_ERR_USAGE, "%s: %s chooses how to plan, and %s does not plan: use graphmem plan",
                            o->cmd, o->plan_only, o->cmd);
    return GM_OK;
}

static size_t total_inserted(const gm_pass_report *r)
{
    size_t n = 0;
    for (int i = 0; i < GM_PASS_COUNT; i++) n += r->inserted[i];
    return n;
}

/* "a, b, c" of the passes in `set`, or "none". */
static void pass_list(gm_pass_set set, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < GM_PASS_COUNT; i++) {
        if (!(set & (1u << i))) continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", gm_pass_name((gm_pass_id)i));
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
    if (!len) snprintf(buf, cap, "none");
}

/* `check` lists every insertion and warning: what would change in the graph, and why. */
static void print_findings(const plan_result *r)
{
    const gm_pass_report *rep = &r->report;
    if (rep->n_nodes) printf("inserted:\n");
    for (size_t i = 0; i < rep->n_nodes; i++) {
        const gm_inserted_node *x = &rep->nodes[i];
        printf("  %-40s %-16s %s %s", x->node, x->type, x->before ? "before" : "after", x->anchor_node);
        if (x->index >= 0) printf(":%s%d", x->before ? "in" : "out", x->index);
        printf("  [%s] graph %s%s%s\n", gm_pass_name(x->pass), x->graph, x->reason[0] ? ": " : "", x->reason);
    }
    if (rep->n_edges) printf("ordered:\n");
    for (size_t i = 0; i < rep->n_edges; i++) {
        const gm_inserted_edge *x = &rep->edges[i];
        printf("  control edge %s -> %s  [%s] graph %s: %s\n", x->from, x->to, gm_pass_name(x->pass), x->graph,
               x->reason);
    }
    if (rep->n_warnings) printf("warnings:\n");
    for (size_t i = 0; i < rep->n_warnings; i++) printf("  %s %s\n", rep->warnings[i].code, rep->warnings[i].message);
}

/* The winner, how many ran, and GE's best beside it (graphmem's own packers have names
 * without dashes, GE's are binary-block, max-block, range-...); -v lists every one. */
static void print_strategies(const gm_plan *p, bool all)
{
    const gm_plan_strategy *ge = NULL;
    for (size_t i = 0; i < p->n_strategies; i++)
        if (strchr(p->strategies[i].name, '-') && (!ge || p->strategies[i].bytes < ge->bytes)) ge = &p->strategies[i];
    printf("  %-26s %s, of %zu side by side", "strategy", p->strategy ? p->strategy : "-", p->n_strategies);
    if (ge && ge->bytes > 0)
        printf(" (GE's best: %s, %lld bytes, %+.2f%%)", ge->name, (long long)ge->bytes,
               100.0 * ((double)ge->bytes - (double)p->feature_map_bytes) / (double)p->feature_map_bytes);
    else if (p->n_strategies_skipped && p->feature_map_bytes <= p->lower_bound_bytes)
        printf(" (at the lower bound: GE's %zu not run; --strategy all runs them)", p->n_strategies_skipped);
    else if (p->n_strategies_skipped)
        printf(" (GE's %zu not run on a plan this large: they beat graphmem's packers on none of the models "
               "measured; --strategy all runs them)",
               p->n_strategies_skipped);
    if (p->n_strategies_out_of_budget)
        printf(" (%zu of GE's not run: the --budget was spent first)", p->n_strategies_out_of_budget);
    printf("\n");
    for (size_t i = 0; all && i < p->n_strategies; i++)
        printf("    %-34s %14lld bytes %10.1f ms\n", p->strategies[i].name, (long long)p->strategies[i].bytes,
               p->strategies[i].ms);
}

/* -v: where the passes' time went, each pass that ran in GE's order with the re-sort after it,
 * then the re-sorts on their own; wrapped at 100 columns like the rest of the summary. */
static void print_pass_times(const plan_result *r)
{
    enum { VALUE_COL = 29, WIDTH = 100 };
    int col = printf("  %-26s", "pass times (ms)");
    bool first = true;
    for (int i = 0; i <= GM_PASS_COUNT; i++) {
        if (i < GM_PASS_COUNT && !r->report.ran[i]) continue;
        char item[64];
        int len = i < GM_PASS_COUNT ? snprintf(item, sizeof item, "%s %.1f", gm_pass_name((gm_pass_id)i), r->report.ms[i])
                                    : snprintf(item, sizeof item, "the re-sorts among them %.1f", r->report.sort_ms);
        const char *sep = first ? "" : i < GM_PASS_COUNT ? "," : ";";
        if (!first && col + 2 + len > WIDTH) { /* the separator ends the line; the item starts the next */
            printf("%s\n%*s", sep, VALUE_COL - 1, "");
            col = VALUE_COL - 1;
        } else {
            col += printf("%s", sep);
        }
        col += printf(" %s", item);
        first = false;
    }
    printf("\n");
}

static void print_text(const gm_cli_opts *o, const plan_result *r)
{
    const gm_model_stats *s = &r->stats;
    char ran[512], missing[512];
    pass_list(r->requested & r->available, ran, sizeof ran);
    pass_list(r->requested & ~r->available, missing, sizeof missing);
    printf("graphmem %s: %s (%s)\n", o->cmd, gm_model_name(r->m), gm_model_source(r->m));
    printf("  %-26s %zu (%zu subgraph%s)\n", "graphs", s->graphs, s->graphs - 1, s->graphs == 2 ? "" : "s");
    printf("  %-26s %zu / %zu\n", "nodes before / after", r->nodes_before, r->nodes_after);
    printf("  %-26s %zu, %zu data / %zu control edges\n", "streams, edges", s->streams, s->data_edges, s->control_edges);
    if ((r->requested & r->available) == GM_PASS_SET_ALL) printf("  %-26s all %d, in GE's order\n", "passes run", GM_PASS_COUNT);
    /* The access-order pass's edges: races GE would only warn about (W18888), removed. */
    else printf("  %-26s %s\n", "passes run", ran);
    if (r->requested & ~r->available) printf("  %-26s %s\n", "passes not in this version", missing);
    /* Each inserted node resolves one conflict: the breakdown by pass is the conflicts by type. */
    printf("  %-26s %zu\n", "inserted nodes", total_inserted(&r->report));
    for (int i = 0; i < GM_PASS_COUNT; i++) {
        if (r->report.inserted[i]) printf("    %-24s %zu\n", gm_pass_name((gm_pass_id)i), r->report.inserted[i]);
    }
    printf("  %-26s %zu\n", "lint warnings", r->report.n_warnings);
    if (r->report.n_edges || (r->requested & (1u << GM_PASS_ACCESS_ORDER)))
        printf("  %-26s %zu (accesses of one buffer that only the given order ordered)\n", "ordered edges",
               r->report.n_edges);
    gm_cli_print_tensors(2, 27, "tensors before / after", &r->stats_before, s);
    printf("  %-26s %lld\n", "bytes without reuse", (long long)s->tensor_bytes);
    printf("  %-26s %lld\n", "fixed bytes", (long long)s->fixed_bytes);
    printf("  %-26s %lld\n", "zero-copy bytes (inputs)", (long long)s->user_input_bytes);
    printf("  %-26s", "bytes by memory type");
    for (int t = 0; t < GM_MEM_COUNT; t++) {
        printf(" %s %lld%s", gm_mem_type_name((gm_mem_type)t), (long long)s->bytes_by_mem_type[t],
               t + 1 < GM_MEM_COUNT ? "," : "\n");
    }
    if (r->plan) {
        const gm_plan *p = r->plan;
        printf("  %-26s %lld\n", "feature-map bytes", (long long)p->feature_map_bytes);
        printf("  %-26s %lld, ratio %.4f\n", "lower bound", (long long)p->lower_bound_bytes,
               p->lower_bound_bytes ? (double)p->feature_map_bytes / (double)p->lower_bound_bytes : 1.0);
        printf("  %-26s %lld zero-copy, %lld fixed, %zu dynamic symbols\n", "other regions",
               (long long)p->zero_copy_bytes, (long long)p->fixed_bytes, p->dynamic_symbols);
        print_strategies(p, o->verbosity > 0);
        printf("  %-26s yes (%zu symbols; the lower bound witnessed by %zu)\n", "verified", p->n_symbols,
               p->n_witness);
    }
    printf("  %-26s %.2f ms\n", "time", r->ms);
    const gm_plan *pl = r->plan;
    if (o->verbosity > 0)
        printf("  %-26s reading %.1f, passes %.1f, planning %.1f, outputs %.1f ms\n", "stages", r->ms_read,
               r->ms_passes, r->ms_plan, r->ms_outputs);
    if (o->verbosity > 0) print_pass_times(r);
    if (pl && o->verbosity > 0)
        printf("  %-26s lifetimes %.1f, packing %.1f, verifying %.1f ms (the plan's text written and\n"
               "  %-26s read back by the verifier)\n", "planning stages",
               pl->stage_ms[GM_PLAN_STAGE_LIFETIMES], pl->stage_ms[GM_PLAN_STAGE_PACK],
               pl->stage_ms[GM_PLAN_STAGE_VERIFY], "");
    if (!strcmp(o->cmd, "check") || o->verbosity > 0) print_findings(r);
}

static int print_json(const gm_cli_opts *o, const plan_result *r, const gm_cli_outputs *outs)
{
    const gm_model_stats *s = &r->stats;
    cJSON *j = cJSON_CreateObject();
    cJSON *by_pass = cJSON_CreateObject(), *by_mem = cJSON_CreateObject();
    cJSON *ran = cJSON_CreateArray(), *missing = cJSON_CreateArray();
    cJSON_AddStringToObject(j, "command", o->cmd);
    cJSON_AddStringToObject(j, "model", gm_model_name(r->m));
    cJSON_AddStringToObject(j, "source", gm_model_source(r->m));
    cJSON_AddNumberToObject(j, "graphs", (double)s->graphs);
    cJSON_AddNumberToObject(j, "nodes_before", (double)r->nodes_before);
    cJSON_AddNumberToObject(j, "nodes_after", (double)r->nodes_after);
    cJSON_AddNumberToObject(j, "streams", (double)s->streams);
    for (int i = 0; i < GM_PASS_COUNT; i++) {
        if (!(r->requested & (1u << i))) continue;
        cJSON_AddItemToArray((r->available & (1u << i)) ? ran : missing, cJSON_CreateString(gm_pass_name((gm_pass_id)i)));
        if (r->available & (1u << i))
            cJSON_AddNumberToObject(by_pass, gm_pass_name((gm_pass_id)i), (double)r->report.inserted[i]);
    }
    cJSON_AddItemToObject(j, "passes_run", ran);
    cJSON_AddItemToObject(j, "passes_not_in_this_version", missing);
    cJSON_AddNumberToObject(j, "inserted_nodes", (double)total_inserted(&r->report));
    cJSON_AddItemToObject(j, "inserted_by_pass", by_pass);
    cJSON_AddNumberToObject(j, "lint_warnings", (double)r->report.n_warnings);
    cJSON_AddNumberToObject(j, "ordered_edges", (double)r->report.n_edges);
    cJSON *ins = cJSON_AddArrayToObject(j, "inserted"), *warn = cJSON_AddArrayToObject(j, "warnings");
    for (size_t i = 0; i < r->report.n_nodes; i++) {
        const gm_inserted_node *x = &r->report.nodes[i];
        cJSON *e = cJSON_CreateObject(), *at = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "node", x->node);
        cJSON_AddStringToObject(e, "type", x->type);
        cJSON_AddStringToObject(e, "graph", x->graph);
        cJSON_AddStringToObject(e, "pass", gm_pass_name(x->pass));
        cJSON_AddStringToObject(at, "node", x->anchor_node);
        if (x->index >= 0) cJSON_AddNumberToObject(at, x->before ? "in" : "out", x->index);
        cJSON_AddItemToObject(e, x->before ? "before" : "after", at);
        cJSON_AddStringToObject(e, "reason", x->reason);
        cJSON_AddItemToArray(ins, e);
    }
    for (size_t i = 0; i < r->report.n_edges; i++) {
        const gm_inserted_edge *x = &r->report.edges[i];
        cJSON *e = cJSON_CreateObject(), *edge = cJSON_CreateObject();
        cJSON_AddStringToObject(edge, "from", x->from);
        cJSON_AddStringToObject(edge, "to", x->to);
        cJSON_AddItemToObject(e, "edge", edge);
        cJSON_AddStringToObject(e, "type", "control");
        cJSON_AddStringToObject(e, "graph", x->graph);
        cJSON_AddStringToObject(e, "pass", gm_pass_name(x->pass));
        cJSON_AddStringToObject(e, "reason", x->reason);
        cJSON_AddItemToArray(ins, e);
    }
    for (size_t i = 0; i < r->report.n_warnings; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "code", r->report.warnings[i].code);
        cJSON_AddStringToObject(e, "message", r->report.warnings[i].message);
        cJSON_AddItemToArray(warn, e);
    }
    gm_cli_json_tensors(j, &r->stats_before, s);
    cJSON_AddNumberToObject(j, "no_reuse_bytes", (double)s->tensor_bytes);
    cJSON_AddNumberToObject(j, "fixed_bytes", (double)s->fixed_bytes);
    cJSON_AddNumberToObject(j, "zero_copy_bytes", (double)s->user_input_bytes);
    for (int t = 0; t < GM_MEM_COUNT; t++)
        cJSON_AddNumberToObject(by_mem, gm_mem_type_name((gm_mem_type)t), (double)s->bytes_by_mem_type[t]);
    cJSON_AddItemToObject(j, "by_memory_type", by_mem);
    if (r->plan) {
        cJSON_AddNumberToObject(j, "feature_map_bytes", (double)r->plan->feature_map_bytes);
        cJSON_AddNumberToObject(j, "lower_bound_bytes", (double)r->plan->lower_bound_bytes);
        cJSON_AddNumberToObject(j, "plan_zero_copy_bytes", (double)r->plan->zero_copy_bytes);
        cJSON_AddNumberToObject(j, "plan_fixed_bytes", (double)r->plan->fixed_bytes);
        cJSON_AddStringToObject(j, "strategy", r->plan->strategy ? r->plan->strategy : "");
        cJSON_AddBoolToObject(j, "verified", true);
    }
    cJSON_AddNumberToObject(j, "ms", r->ms);
    /* the -v stage table, here without -v's log lines (whose writing the passes would pay) */
    cJSON *stage = cJSON_AddObjectToObject(j, "stage_ms"), *pass_ms = cJSON_AddObjectToObject(j, "pass_ms");
    cJSON_AddNumberToObject(stage, "reading", r->ms_read);
    cJSON_AddNumberToObject(stage, "passes", r->ms_passes);
    cJSON_AddNumberToObject(stage, "planning", r->ms_plan);
    cJSON_AddNumberToObject(stage, "outputs", r->ms_outputs);
    if (r->plan) {
        cJSON_AddNumberToObject(stage, "lifetimes", r->plan->stage_ms[GM_PLAN_STAGE_LIFETIMES]);
        cJSON_AddNumberToObject(stage, "packing", r->plan->stage_ms[GM_PLAN_STAGE_PACK]);
        cJSON_AddNumberToObject(stage, "verifying", r->plan->stage_ms[GM_PLAN_STAGE_VERIFY]);
    }
    for (int i = 0; i < GM_PASS_COUNT; i++)
        if (r->report.ran[i]) cJSON_AddNumberToObject(pass_ms, gm_pass_name((gm_pass_id)i), r->report.ms[i]);
    cJSON_AddNumberToObject(stage, "re_sorts", r->report.sort_ms);
    gm_cli_outputs_json(outs, j);
    return gm_cli_print_json(j);
}

/* Plans the model and writes it with -o. The planner has already proven the plan with the
 * independent verifier (its last self-check verified exactly p->text). A big text is staged
 * while it is verified (plan_stager.c); a plan that does not verify has its staged file removed,
 * so nothing unverified is printed or written. Returns an exit status (0 ok). */
static int make_plan(const gm_cli_opts *o, const gm_model *m, const gm_pass_report *report, gm_symbols *symbols,
                     gm_cli_outputs *outs, gm_plan **out, gm_error *err)
{
    gm_plan_options po;
    gm_plan_options_init(&po);
    po.align = o->align;
    po.report = report;
    po.reproducible = o->reproducible;
    /* the search's node limit keeps plans the same run to run; a clock budget is the user's call */
    if (o->budget_given) po.search_budget_s = o->budget_s;
    po.threads = (unsigned)o->threads;
    po.strategy = o->strategy;
    po.no_reuse_ops = getenv("OP_NO_REUSE_MEM"); /* GE reads the same variable */
    po.ge_padded_sizes = o->ge_sizes;
    po.on_stage = planning_stage;
    gm_cli_plan_stager stager;
    gm_cli_plan_stager_init(&stager, outs, o->output);
    po.on_text = gm_cli_plan_stager_on_text;
    po.text_ctx = &stager;
    gm_plan *p = NULL;
    gm_status st = gm_plan_build_symbols(m, &po, symbols, &p, err);
    if (st != GM_OK) {
        gm_cli_plan_stager_discard(&stager); /* the planner withdrew its text: already empty */
        return gm_cli_fail(err);
    }
    if (p->unresolved || !p->text) {
        gm_cli_plan_stager_discard(&stager); /* an unverified plan is never written */
        /* say what is wrong: the verifier again, on the text it rejected */
        gm_plan_verdict v;
        memset(&v, 0, sizeof v);
        gm_cli_progress_stop();
        fprintf(stderr, "graphmem: the plan did not verify (%zu problem(s)); it is not written:\n", p->unresolved);
        if (p->text && gm_plan_verify_json(m, p->text, p->text_len, "<the plan>", &v, err) == GM_OK)
            for (size_t i = 0; i < v.n_problems && i < 10; i++) fprintf(stderr, "  %s\n", v.problems[i].message);
        gm_plan_verdict_free(&v);
        gm_plan_free(p);
        return 1;
    }
    if ((st = gm_cli_plan_stager_finish(&stager, p->text, p->text_len, err)) != GM_OK) {
        gm_plan_free(p);
        return gm_cli_fail(err);
    }
    *out = p;
    return 0;
}

/* The graph after the passes (--dump-graph, format from the name, JSON when it says none) and
 * the pictures, staged with the plan: written together once everything has succeeded. */
static gm_status stage_outputs(const gm_cli_opts *o, const plan_result *r, gm_cli_outputs *outs, gm_error *err)
{
    gm_status st = GM_OK;
    if (o->dump_graph) {
        gm_format fmt = gm_format_from_path(o->dump_graph);
        void *bytes = NULL;
        size_t n = 0;
        st = gm_model_write_buffer(r->m, fmt, &bytes, &n, err);
        if (st == GM_OK)
            st = gm_cli_outputs_add(outs, o->dump_graph,
                                    fmt == GM_FORMAT_ONNX      ? "graph, onnx"
                                    : fmt == GM_FORMAT_GE_TEXT ? "graph, GE text"
                                                               : "graph, json",
                                    bytes, n, err);
        free(bytes);
    }
    if (st != GM_OK) return st;
    gm_cli_progress_stage("drawing");
    char *text = NULL;
    size_t n = 0;
    if (o->dot) {
        st = gm_report_dot_graph(r->m, &r->report, &text, &n, err);
        if (st == GM_OK) st = gm_cli_outputs_add(outs, o->dot, "graph, dot", text, n, err);
        gm_report_free(text);
        text = NULL;
    }
    if (st == GM_OK && o->svg && r->plan) {
        st = gm_report_svg_timeline(r->m, r->plan->text, r->plan->text_len, "<the plan>", NULL, &text, &n, err);
        if (st == GM_OK) st = gm_cli_outputs_add(outs, o->svg, "memory timeline, svg", text, n, err);
        gm_report_free(text);
    }
    return st;
}

/* A big model and its plan are left to the process's end, which follows: the system takes
 * the memory back at once, where freeing them took ~0.4 s at a million nodes (the model's
 * millions of small blocks). They stay reachable from g_kept, so a leak checker counts nothing
 * lost. A sanitizer build frees them, so that the freeing code is checked on big models too. */
enum { KEEP_FROM = 65536 }; /* symbols */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
enum { KEEP_AT_EXIT = 0 };
#else
enum { KEEP_AT_EXIT = 1 };
#endif
static struct {
    gm_model *m;
    gm_plan *plan;
} g_kept;

int gm_cmd_plan(const gm_cli_opts *o)
{
    if (o->dsa && !strcmp(o->cmd, "plan")) return gm_cmd_plan_dsa(o);
    gm_error err;
    gm_error_clear(&err);
    gm_cli_outputs outs;
    if (check_supported(o, &err) != GM_OK || gm_cli_outputs_begin(&outs, o, &err) != GM_OK) return gm_cli_fail(&err);
    double t0 = gm_clock_ms();
    gm_model *m = NULL;
    gm_cli_progress_start(o, "reading the model");
    /* check needs a MODEL; plan falls back to the embedded example. */
    if (gm_cli_load(o, strcmp(o->cmd, "plan") == 0, &m, &err) != GM_OK) {
        gm_cli_outputs_end(&outs);
        return gm_cli_fail(&err);
    }
    plan_result r = {.m = m, .nodes_before = gm_model_node_count(m), .requested = o->passes};
    r.ms_read = gm_clock_ms() - t0;
    /* The counts walk every desc (0.1 s a walk at a million nodes): only for a summary printed. */
    const bool summary = o->json || o->verbosity >= 0;
    if (summary) gm_model_get_stats(m, &r.stats_before);
    gm_cli_progress_stage("running the passes");
    const bool planning = !strcmp(o->cmd, "plan");
    gm_symbols *symbols = NULL; /* the passes' table, for the planner */
    int rc = 0;
    double t_stage = gm_clock_ms();
    gm_status st = gm_passes_run_symbols(m, o->passes, &r.report, &r.available, planning ? &symbols : NULL, &err);
    r.ms_passes = gm_clock_ms() - t_stage;
    t_stage = gm_clock_ms();
    if (st != GM_OK) {
        gm_symbols_free(symbols);
        rc = gm_cli_fail(&err);
    } else {
        r.nodes_after = gm_model_node_count(m);
        if (summary) gm_model_get_stats(m, &r.stats);
        if (planning) rc = make_plan(o, m, &r.report, symbols, &outs, &r.plan, &err);
    }
    r.ms_plan = gm_clock_ms() - t_stage;
    t_stage = gm_clock_ms();
    /* The pictures (graphmem/report.h): the graph after the passes, and the plan as verified. */
    if (!rc && ((st = stage_outputs(o, &r, &outs, &err)) != GM_OK || (st = gm_cli_outputs_commit(&outs, &err)) != GM_OK))
        rc = gm_cli_fail(&err);
    r.ms_outputs = gm_clock_ms() - t_stage;
    r.ms = gm_clock_ms() - t0;
    gm_cli_progress_stop();
    if (!rc) {
        if (o->json) rc = print_json(o, &r, &outs);
        else if (o->verbosity >= 0) print_text(o, &r), gm_cli_outputs_print(&outs, o);
        if (rc == 0 && o->strict && r.report.n_warnings) rc = 1;
    }
    gm_cli_outputs_end(&outs);
    gm_pass_report_free(&r.report);
    if (KEEP_AT_EXIT && r.plan && r.plan->n_symbols >= KEEP_FROM) {
        g_kept.m = m;
        g_kept.plan = r.plan;
        return rc;
    }
    gm_plan_free(r.plan);
    gm_model_free(m);
    return rc;
}
