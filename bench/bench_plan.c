/*
 * bench_plan.c — the planner against GE's own strategies, side by side in one run: for each
 * model, the whole compiler pipeline, then every strategy on the same symbols (the planner runs
 * them all), each one's feature map ÷ the lower bound, and whether graphmem's plan is ever above
 * the best of GE's. Ends with the geometric mean of the ratios.
 *
 *   bench_plan MODEL...        (bench/run_plan_bench.sh runs it on the shared models and on
 *                               generated graphs; see BENCHMARKS.md)
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_plan MODEL...\n");
        return 2;
    }
    double log_ours = 0, log_ge = 0;
    int counted = 0, above_ge = 0, unverified = 0;
    bool header = false;
    for (int i = 1; i < argc; i++) {
        gm_model *m = NULL;
        gm_error err;
        gm_pass_report rep = {0};
        gm_pass_set avail = 0;
        gm_plan *p = NULL;
        if (gm_model_read_file(argv[i], &m, &err) != GM_OK || gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, &err) != GM_OK) {
            fprintf(stderr, "bench_plan: %s\n", err.message);
            gm_pass_report_free(&rep);
            gm_model_free(m);
            return 2;
        }
        double t0 = gm_clock_ms();
        /* every strategy, also where graphmem's reach the bound (the default then skips GE's) */
        gm_plan_options o;
        gm_plan_options_init(&o);
        o.strategy = "all";
        gm_status st = gm_plan_build(m, &o, &p, &err);
        double ms = gm_clock_ms() - t0;
        if (st != GM_OK) {
            fprintf(stderr, "bench_plan: %s: %s\n", argv[i], err.message);
            gm_pass_report_free(&rep);
            gm_model_free(m);
            return 2;
        }
        if (!header) {
            printf("| model | symbols | lower bound | graphmem | best GE | GE's best strategy |");
            for (size_t s = 0; s < p->n_strategies; s++) printf(" %s |", p->strategies[s].name);
            printf(" plan ms |\n|---|---|---|---|---|---|");
            for (size_t s = 0; s < p->n_strategies; s++) printf("---|");
            printf("---|\n");
            header = true;
        }
        double lb = p->lower_bound_bytes > 0 ? (double)p->lower_bound_bytes : 1.0;
        size_t ge_best = 0;
        bool have_ge = false;
        for (size_t s = 0; s < p->n_strategies; s++) {
            /* GE's strategies are the ones named with dashes (binary-block ...) */
            if (!strchr(p->strategies[s].name, '-')) continue;
            if (!have_ge || p->strategies[s].bytes < p->strategies[ge_best].bytes) ge_best = s;
            have_ge = true;
        }
        double ours = (double)p->feature_map_bytes / lb;
        double ge = have_ge ? (double)p->strategies[ge_best].bytes / lb : NAN;
        printf("| %s | %zu | %lld | %.4f | %.4f | %s |", base_name(argv[i]), p->n_symbols,
               (long long)p->lower_bound_bytes, ours, ge, have_ge ? p->strategies[ge_best].name : "-");
        for (size_t s = 0; s < p->n_strategies; s++)
            printf(" %.4f (%.1f ms) |", (double)p->strategies[s].bytes / lb, p->strategies[s].ms);
        printf(" %.0f |\n", ms);
        if (p->lower_bound_bytes > 0 && have_ge) {
            log_ours += log(ours), log_ge += log(ge), counted++;
            if (p->feature_map_bytes > p->strategies[ge_best].bytes) above_ge++;
        }
        if (p->unresolved) unverified++;
        gm_plan_free(p);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
    if (counted)
        printf("\ngeometric mean of feature map / lower bound over %d models: graphmem %.4f, best of GE's %.4f; "
               "graphmem above GE's best on %d; plans failing verification: %d\n",
               counted, exp(log_ours / counted), exp(log_ge / counted), above_ge, unverified);
    return unverified ? 1 : 0;
}
