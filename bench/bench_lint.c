/*
 * bench_lint.c — times GraphLint (W18888, src/conflict/lint.c) on a big model, and the cost of
 * the reachability labels it builds (src/analysis/reach.c) on their own.
 *
 *   bench_lint FILE [--runs N]
 *
 * The model is loaded once (the lint only reads it). Each run times gm_lint_verify on the root
 * and, separately, one gm_reach_new; it prints per-run times, the medians, what the lint asked
 * (outputs with a writer among two or more consumers, pairs ordered, how the queries were
 * answered, nodes the searches visited) and the process peak RSS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/reach.h"
#include "conflict/lint.h"
#include "bench_util.h"
#include "graphmem/io.h"
#include "graphmem/log.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_lint FILE [--runs N]\n");
        return 2;
    }
    long runs = argc >= 4 && !strcmp(argv[2], "--runs") ? strtol(argv[3], NULL, 10) : 5;
    if (runs < 1 || runs > 100) runs = 5;
    gm_log_set_level(GM_LOG_ERROR); /* the warnings are counted, not printed */

    gm_model *m = NULL;
    gm_error err;
    double t0 = gm_clock_ms();
    if (gm_model_read_file(argv[1], &m, &err) != GM_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    double load_ms = gm_clock_ms() - t0;
    printf("model %s: %zu nodes, %zu graphs, loaded in %.0f ms\n", argv[1], gm_model_node_count(m),
           gm_model_graph_count(m), load_ms);

    double lint_ms[100], reach_ms[100];
    gm_lint_stats st = {0};
    printf("run      lint (ms)   reach labels alone (ms)\n");
    for (long r = 0; r < runs; r++) {
        gm_pass_report rep;
        memset(&rep, 0, sizeof rep);
        gm_error_clear(&err);
        gm_pass_ctx c = {m, &rep, GM_PASS_LINT, &err, NULL};
        double a = gm_clock_ms();
        gm_status s = gm_lint_verify(&c, gm_model_root(m), 0, &st);
        lint_ms[r] = gm_clock_ms() - a;
        gm_pass_report_free(&rep);
        if (s != GM_OK && s != GM_ERR_PROBLEM) {
            fprintf(stderr, "lint: %s\n", err.message);
            gm_model_free(m);
            return 1;
        }
        gm_reach *reach = NULL;
        a = gm_clock_ms();
        if (gm_reach_new(m, &reach) != GM_OK) {
            fprintf(stderr, "reach: out of memory\n");
            gm_model_free(m);
            return 1;
        }
        reach_ms[r] = gm_clock_ms() - a;
        gm_reach_free(reach);
        printf("%3ld   %12.1f   %12.1f\n", r + 1, lint_ms[r], reach_ms[r]);
    }
    printf("median %10.1f   %12.1f\n", bench_median(lint_ms, (size_t)runs), bench_median(reach_ms, (size_t)runs));
    printf("outputs checked %zu, pairs %zu, violations %zu\n", st.outputs_checked, st.pairs, st.violations);
    printf("queries %llu: by filter %llu, by label %llu, searched %llu (visited %llu nodes)\n",
           (unsigned long long)st.reach.queries, (unsigned long long)st.reach.by_filter,
           (unsigned long long)st.reach.by_label, (unsigned long long)st.reach.searched,
           (unsigned long long)st.reach.visited);
    printf("peak RSS %ld MB\n", bench_status_kb("VmHWM:") / 1024);
    gm_model_free(m);
    return 0;
}
