/*
 * bench_pipeline.c — the whole pipeline of `graphmem plan` on one model, stage by stage, in one
 * process: time and peak memory of each stage.
 *
 *   read       gm_model_read_file (parse, validate, sort)
 *   lint       GraphLint (the first of the passes, run alone)
 *   passes     the other eleven passes, in GE's order; the layout pass builds GE's symbol
 *              table, and the passes leave it to the planner when it still describes the graph
 *   symbols    GE's symbol table of the graph after the passes: the one they left (taking it
 *              costs nothing), else built here, as `graphmem plan` would in "lifetimes"
 *   lifetimes  the planner: happens-before (and the symbol table, when none was handed over),
 *              lifetimes, the lower bound
 *   packing    the planner: the packers (GE's strategies skipped where they cannot win)
 *   verify     the planner: the independent in-process verification of the plan
 *   free       releasing the plan and the model
 *
 * Peak memory: before each stage the kernel's high-water mark is reset to the current RSS
 * (/proc/self/clear_refs), so a stage's figure is the most resident memory while it ran (the
 * planner's three stages share one reading). Prints one line, key=value, for
 * bench/run_pipeline_bench.sh to take medians of.
 *
 *   bench_pipeline MODEL
 */
#include <stdio.h>
#include <string.h>

#include "analysis/symbols.h"
#include "bench_util.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"

typedef struct stage {
    const char *name;
    double ms;
    long peak_kb;
} stage;

static stage stages[8];
static size_t n_stages;
static double t0;

static void begin(void)
{
    bench_reset_peak();
    t0 = gm_clock_ms();
}

static void end(const char *name)
{
    stages[n_stages++] = (stage){name, gm_clock_ms() - t0, bench_status_kb("VmHWM:")};
}

static int fail(const char *what, const gm_error *err)
{
    fprintf(stderr, "bench_pipeline: %s: %s\n", what, err->message);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_pipeline MODEL\n");
        return 2;
    }
    gm_error err;
    gm_model *m = NULL;
    begin();
    if (gm_model_read_file(argv[1], &m, &err) != GM_OK) return fail("read", &err);
    end("read");

    gm_pass_report rep = {0};
    begin();
    if (gm_passes_run(m, (gm_pass_set)1u << GM_PASS_LINT, &rep, NULL, &err) != GM_OK) return fail("lint", &err);
    end("lint");
    size_t warnings = rep.n_warnings;
    gm_pass_report_free(&rep);

    gm_symbols *sy = NULL;
    begin();
    if (gm_passes_run_symbols(m, GM_PASS_SET_ALL & ~((gm_pass_set)1u << GM_PASS_LINT), &rep, NULL, &sy, &err) !=
        GM_OK)
        return fail("passes", &err);
    end("passes");

    begin();
    if (!sy && gm_symbols_build(m, &sy, &err) != GM_OK) return fail("symbols", &err);
    end("symbols");

    gm_plan *p = NULL;
    begin();
    if (gm_plan_build_symbols(m, NULL, sy, &p, &err) != GM_OK) return fail("plan", &err);
    const double plan_ms = gm_clock_ms() - t0;
    const long plan_peak = bench_status_kb("VmHWM:");
    stages[n_stages++] = (stage){"lifetimes", p->stage_ms[GM_PLAN_STAGE_LIFETIMES], plan_peak};
    stages[n_stages++] = (stage){"packing", p->stage_ms[GM_PLAN_STAGE_PACK], plan_peak};
    /* what the stages do not cover (writing the plan's text, the bookkeeping) goes with verify */
    stages[n_stages++] = (stage){"verify", plan_ms - p->stage_ms[GM_PLAN_STAGE_LIFETIMES] - p->stage_ms[GM_PLAN_STAGE_PACK],
                                 plan_peak};
    const bool ok = p->unresolved == 0;
    const size_t nodes = gm_model_node_count(m), symbols = p->n_symbols;

    begin();
    gm_plan_free(p);
    gm_pass_report_free(&rep);
    gm_model_free(m);
    end("free");

    double total = 0;
    long peak = 0;
    for (size_t i = 0; i < n_stages; i++) {
        total += stages[i].ms;
        if (stages[i].peak_kb > peak) peak = stages[i].peak_kb;
    }
    printf("nodes=%zu symbols=%zu lint_warnings=%zu verified=%s", nodes, symbols, warnings, ok ? "yes" : "no");
    for (size_t i = 0; i < n_stages; i++) printf(" %s_ms=%.1f %s_kb=%ld", stages[i].name, stages[i].ms, stages[i].name, stages[i].peak_kb);
    printf(" total_ms=%.1f peak_kb=%ld\n", total, peak);
    return ok ? 0 : 1;
}
