/*
 * bench_load.c — times loading a model: reading the file, then parsing it, building the IR,
 * validating and topologically sorting it (gm_model_read_buffer, which ends in
 * gm_model_finalize), and separately one more full gm_model_toposort on the loaded model (marked
 * stale first, as an edit would leave it).
 *
 *   bench_load FILE [--runs N]
 *
 * Prints one row per run and the median of each column (the median, not the mean, so that one
 * run disturbed by the machine does not move the figure), then the node count and the peak
 * resident set size. Exits 2 with the library's message when the model does not load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "graphmem/graph.h"
#include "bench_util.h"
#include "graphmem/io.h"
#include "ir/ir.h"

enum { COL_READ, COL_PARSE, COL_LOAD, COL_TOPO, COL_FREE, NCOLS };
static const char *const col_names[NCOLS] = {"read file", "parse+build+validate+topo",
                                             "load total", "toposort again", "free"};


static void usage(FILE *f) { fprintf(f, "usage: bench_load FILE [--runs N]   (N in 1..1000, default 5)\n"); }

int main(int argc, char **argv)
{
    const char *path = NULL;
    long runs = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            char *end;
            errno = 0;
            runs = strtol(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || runs < 1 || runs > 1000) {
                fprintf(stderr, "bench_load: --runs wants 1..1000, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }

    double *t = calloc((size_t)runs * NCOLS, sizeof *t);
    if (!t) {
        fprintf(stderr, "bench_load: out of memory\n");
        return 2;
    }
    size_t nodes = 0, graphs = 0, bytes = 0;
    gm_error err;
    gm_error_clear(&err);

    printf("%-5s", "run");
    for (int c = 0; c < NCOLS; c++)
        printf(" %*s", c == COL_PARSE ? 26 : 14, col_names[c]);
    printf("   (ms)\n");
    for (long r = 0; r < runs; r++) {
        double *row = t + r * NCOLS;
        char *data = NULL;
        size_t len = 0;
        gm_model *m = NULL;

        double t0 = gm_clock_ms();
        gm_status st = gm_read_file(path, &data, &len, &err);
        double t1 = gm_clock_ms();
        if (st == GM_OK)
            st = gm_model_read_buffer(data, len, GM_FORMAT_UNKNOWN, path, &m, &err);
        double t2 = gm_clock_ms();
        /* The text is no longer needed once the IR is built; freeing it here keeps it out of
         * the toposort timing's memory picture, as a real caller would. */
        free(data);
        if (st != GM_OK) {
            fprintf(stderr, "bench_load: %s: %s\n", gm_status_name(st),
                    err.message[0] ? err.message : "(no message)");
            free(t);
            return gm_status_exit_code(st) ? gm_status_exit_code(st) : 2;
        }
        double t3 = gm_clock_ms();
        gm_model_touch(m); /* a sorted model would return at once */
        st = gm_model_toposort(m, &err);
        double t4 = gm_clock_ms();
        if (st != GM_OK) {
            fprintf(stderr, "bench_load: toposort: %s: %s\n", gm_status_name(st), err.message);
            gm_model_free(m);
            free(t);
            return 2;
        }
        nodes = gm_model_node_count(m);
        graphs = gm_model_graph_count(m);
        bytes = len;
        double t5 = gm_clock_ms();
        gm_model_free(m);
        double t6 = gm_clock_ms();

        row[COL_READ] = t1 - t0;
        row[COL_PARSE] = t2 - t1;
        row[COL_LOAD] = t2 - t0;
        row[COL_TOPO] = t4 - t3;
        row[COL_FREE] = t6 - t5;
        printf("%-5ld", r + 1);
        for (int c = 0; c < NCOLS; c++)
            printf(" %*.1f", c == COL_PARSE ? 26 : 14, row[c]);
        printf("\n");
    }

    printf("%-5s", "med");
    double col[1000];
    double med[NCOLS];
    for (int c = 0; c < NCOLS; c++) {
        for (long r = 0; r < runs; r++)
            col[r] = t[r * NCOLS + c];
        med[c] = bench_median(col, (size_t)runs);
        printf(" %*.1f", c == COL_PARSE ? 26 : 14, med[c]);
    }
    printf("\n");

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* Linux reports ru_maxrss in kilobytes. */
    printf("file: %s, %.1f MB; nodes: %zu in %zu graphs; load %.0f nodes/s, %.0f MB/s; "
           "peak RSS: %.1f MB\n",
           path, (double)bytes / 1e6, nodes, graphs,
           med[COL_LOAD] > 0 ? (double)nodes / (med[COL_LOAD] / 1e3) : 0.0,
           med[COL_LOAD] > 0 ? (double)bytes / 1e6 / (med[COL_LOAD] / 1e3) : 0.0,
           (double)ru.ru_maxrss / 1024.0);
    free(t);
    return 0;
}
