/*
 * bench_access_order.c — what the access-order pass costs on a big model, as the pipeline runs
 * it: every other pass first (so the buffers are final, and the symbol table the in-place pass
 * leaves is handed over), then the pass alone, timed.
 *
 *   bench_access_order FILE [--runs N]
 *
 * Each run loads the model afresh (the passes edit it). Prints per run the time of the other
 * passes, of the access-order pass, its accesses, pairs asked and edges added, and the medians.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/symbols.h"
#include "bench_util.h"
#include "conflict/access_order.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_access_order FILE [--runs N]\n");
        return 2;
    }
    long runs = argc >= 4 && !strcmp(argv[2], "--runs") ? strtol(argv[3], NULL, 10) : 5;
    if (runs < 1 || runs > 100) runs = 5;
    double other_ms[100], order_ms[100];
    gm_access_order_stats st = {0};
    size_t nodes = 0;
    printf("run   other passes (ms)   access_order (ms)   accesses   pairs asked   by an edge   edges\n");
    for (long r = 0; r < runs; r++) {
        gm_model *m = NULL;
        gm_error err;
        if (gm_model_read_file(argv[1], &m, &err) != GM_OK) {
            fprintf(stderr, "bench_access_order: %s\n", err.message);
            return 2;
        }
        nodes = gm_model_node_count(m);
        gm_pass_report rep = {0};
        gm_symbols *s = NULL;
        double t0 = gm_clock_ms();
        if (gm_passes_run_symbols(m, GM_PASS_SET_ALL & ~(1u << GM_PASS_ACCESS_ORDER), &rep, NULL, &s, &err) != GM_OK) {
            fprintf(stderr, "bench_access_order: %s\n", err.message);
            return 2;
        }
        double t1 = gm_clock_ms();
        gm_pass_ctx c = {m, &rep, GM_PASS_ACCESS_ORDER, &err, &s};
        if (gm_access_order_run(&c, &st) != GM_OK) {
            fprintf(stderr, "bench_access_order: %s\n", err.message);
            return 2;
        }
        double t2 = gm_clock_ms();
        other_ms[r] = t1 - t0;
        order_ms[r] = t2 - t1;
        printf("%-5ld %17.1f %19.1f %10zu %13zu %12zu %7zu\n", r + 1, other_ms[r], order_ms[r], st.accesses, st.pairs,
               st.direct, st.edges);
        gm_symbols_free(s);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
    printf("median %16.1f %19.1f\n", bench_median(other_ms, (size_t)runs), bench_median(order_ms, (size_t)runs));
    printf("file: %s; nodes: %zu\n", argv[1], nodes);
    return 0;
}
