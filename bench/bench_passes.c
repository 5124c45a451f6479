/*
 * bench_passes.c — times the compiler side's core on a big model: building GE's symbol table
 * (gm_symbols_build), the read/write conflict pass and the layout conflict pass (each through
 * gm_passes_run with just that pass, which includes its re-sort).
 *
 *   bench_passes FILE [--runs N]
 *
 * Each run loads the model afresh (the pass edits it), resets the kernel's peak-RSS mark
 * (/proc/self/clear_refs), then times the stages; it prints per-run times, the medians,
 * the process peak RSS, and the peak reached during the stages alone (VmHWM after the reset:
 * the IR itself plus what the stages add).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "analysis/symbols.h"
#include "bench_util.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_passes FILE [--runs N]\n");
        return 2;
    }
    long runs = argc >= 4 && !strcmp(argv[2], "--runs") ? strtol(argv[3], NULL, 10) : 5;
    if (runs < 1 || runs > 100) runs = 5;
    double sym_ms[100], rw_ms[100], lay_ms[100], total_ms[100];
    long stage_peak_kb = 0, inserted = 0;
    size_t nodes = 0;
    printf("run      symbols (ms)   rw_conflict (ms)   layout_conflict (ms)   all (ms)   inserted\n");
    for (long r = 0; r < runs; r++) {
        gm_model *m = NULL;
        gm_error err;
        if (gm_model_read_file(argv[1], &m, &err) != GM_OK) {
            fprintf(stderr, "bench_passes: %s\n", err.message);
            return 2;
        }
        nodes = gm_model_node_count(m);
        bench_reset_peak();
        double t0 = gm_clock_ms();
        gm_symbols *s = NULL;
        if (gm_symbols_build(m, &s, &err) != GM_OK) {
            fprintf(stderr, "bench_passes: %s\n", err.message);
            return 2;
        }
        double t1 = gm_clock_ms();
        gm_pass_report rep;
        gm_pass_set avail;
        if (gm_passes_run(m, 1u << GM_PASS_RW_CONFLICT, &rep, &avail, &err) != GM_OK) {
            fprintf(stderr, "bench_passes: %s\n", err.message);
            return 2;
        }
        double t2 = gm_clock_ms();
        gm_pass_report rep2;
        if (gm_passes_run(m, 1u << GM_PASS_LAYOUT_CONFLICT, &rep2, &avail, &err) != GM_OK) {
            fprintf(stderr, "bench_passes: %s\n", err.message);
            return 2;
        }
        double t3 = gm_clock_ms();
        long hwm = bench_status_kb("VmHWM:");
        if (hwm > stage_peak_kb) stage_peak_kb = hwm;
        sym_ms[r] = t1 - t0;
        rw_ms[r] = t2 - t1;
        lay_ms[r] = t3 - t2;
        total_ms[r] = t3 - t0;
        inserted = (long)(rep.n_nodes + rep2.n_nodes);
        printf("%-8ld %12.1f %18.1f %22.1f %10.1f %10ld\n", r + 1, sym_ms[r], rw_ms[r], lay_ms[r], total_ms[r],
               inserted);
        gm_pass_report_free(&rep);
        gm_pass_report_free(&rep2);
        gm_symbols_free(s);
        gm_model_free(m);
    }
    printf("median   %12.1f %18.1f %22.1f %10.1f\n", bench_median(sym_ms, (size_t)runs),
           bench_median(rw_ms, (size_t)runs), bench_median(lay_ms, (size_t)runs), bench_median(total_ms, (size_t)runs));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("file: %s; nodes: %zu; peak RSS during the stages (model + symbols + passes): %.1f MB; "
           "process peak (incl. loading): %.1f MB\n",
           argv[1], nodes, stage_peak_kb / 1024.0, ru.ru_maxrss / 1024.0);
    return 0;
}
