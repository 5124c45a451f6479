/*
 * bench_passes.c — times the compiler side's near-linear core on a big model: building GE's
 * symbol table (gm_symbols_build) and the read/write conflict pass (gm_passes_run with just
 * rw_conflict, which includes its re-sort).
 *
 *   bench_passes FILE [--runs N]
 *
 * Each run loads the model afresh (the pass edits it), resets the kernel's peak-RSS mark
 * (/proc/self/clear_refs), then times the two stages; it prints per-run times, the medians,
 * the process peak RSS, and the peak reached during the stages alone (VmHWM after the reset:
 * the IR itself plus what the stages add).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "analysis/symbols.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A /proc/self/status field in kB, or -1. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, field, n)) kb = strtol(line + n + 1, NULL, 10);
    }
    if (f) fclose(f);
    return kb;
}

/* Resets VmHWM to the current RSS, so the next reading is the peak of what follows. */
static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_passes FILE [--runs N]\n");
        return 2;
    }
    long runs = argc >= 4 && !strcmp(argv[2], "--runs") ? strtol(argv[3], NULL, 10) : 5;
    if (runs < 1 || runs > 100) runs = 5;
    double sym_ms[100], rw_ms[100], total_ms[100];
    long stage_peak_kb = 0, inserted = 0;
    size_t nodes = 0;
    printf("run      symbols (ms)   rw_conflict (ms)   both (ms)   inserted\n");
    for (long r = 0; r < runs; r++) {
        gm_model *m = NULL;
        gm_error err;
        if (gm_model_read_file(argv[1], &m, &err) != GM_OK) {
            fprintf(stderr, "bench_passes: %s\n", err.message);
            return 2;
        }
        nodes = gm_model_node_count(m);
        reset_peak();
        double t0 = now_ms();
        gm_symbols *s = NULL;
        if (gm_symbols_build(m, &s, &err) != GM_OK) {
            fprintf(stderr, "bench_passes: %s\n", err.message);
            return 2;
        }
        double t1 = now_ms();
        gm_pass_report rep;
        gm_pass_set avail;
        if (gm_passes_run(m, 1u << GM_PASS_RW_CONFLICT, &rep, &avail, &err) != GM_OK) {
            fprintf(stderr, "bench_passes: %s\n", err.message);
            return 2;
        }
        double t2 = now_ms();
        long hwm = status_kb("VmHWM:");
        if (hwm > stage_peak_kb) stage_peak_kb = hwm;
        sym_ms[r] = t1 - t0;
        rw_ms[r] = t2 - t1;
        total_ms[r] = t2 - t0;
        inserted = (long)rep.n_nodes;
        printf("%-8ld %12.1f %18.1f %11.1f %10ld\n", r + 1, sym_ms[r], rw_ms[r], total_ms[r], inserted);
        gm_pass_report_free(&rep);
        gm_symbols_free(s);
        gm_model_free(m);
    }
    printf("median   %12.1f %18.1f %11.1f\n", median(sym_ms, (size_t)runs), median(rw_ms, (size_t)runs),
           median(total_ms, (size_t)runs));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("file: %s; nodes: %zu; peak RSS during the stages (model + symbols + pass): %.1f MB; "
           "process peak (incl. loading): %.1f MB\n",
           argv[1], nodes, stage_peak_kb / 1024.0, ru.ru_maxrss / 1024.0);
    return 0;
}
