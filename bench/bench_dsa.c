/*
 * bench_dsa.c — the offset-problem packers on public instances (MiniMalloc's and idealloc's CSV).
 *
 *   bench_dsa [--budget SECONDS] [--nodes N] PATH...
 *
 * Each PATH is a .csv file or a folder searched recursively for .csv files (sorted by path, so the
 * table's order is stable). One row per instance: buffers, LOAD (lower bound), size-descending
 * best fit (height / LOAD, ms), the search (height / LOAD, ms, proven optimal), and whether the
 * independent checker accepts both answers. Default budget 10 s per instance.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_util.h"
#include "graphmem/dsa.h"

typedef struct paths {
    char **v;
    size_t n, cap;
} paths;

static void add_path(paths *p, const char *s)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->v = realloc(p->v, p->cap * sizeof *p->v);
        if (!p->v) exit(3);
    }
    p->v[p->n++] = strdup(s);
}

static void walk(paths *p, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *full = malloc(len);
        if (!full) exit(3);
        snprintf(full, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (!stat(full, &st)) {
            if (S_ISDIR(st.st_mode)) walk(p, full);
            else if (len > 5 && !strcmp(full + strlen(full) - 4, ".csv")) add_path(p, full);
        }
        free(full);
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    gm_dsa_search_opts opts = {10.0, 0};
    paths p = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--budget") && i + 1 < argc) opts.budget_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) opts.node_limit = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: bench_dsa [--budget SECONDS] [--nodes N] PATH...\n");
            return 0;
        } else {
            struct stat st;
            if (!stat(argv[i], &st) && S_ISDIR(st.st_mode)) walk(&p, argv[i]);
            else add_path(&p, argv[i]);
        }
    }
    if (p.n == 0) {
        fprintf(stderr, "usage: bench_dsa [--budget SECONDS] [--nodes N] PATH...\n");
        return 2;
    }
    qsort(p.v, p.n, sizeof *p.v, cmp_str);
    printf("%-48s %7s %14s | %14s %7s %9s | %14s %7s %9s %4s | %s\n", "instance", "buffers", "LOAD",
           "best fit", "ratio", "ms", "search", "ratio", "ms", "opt", "verified");
    int rc = 0;
    for (size_t k = 0; k < p.n; k++) {
        gm_dsa_buffer *b = NULL;
        size_t n = 0;
        gm_error err;
        if (gm_dsa_read_csv(p.v[k], &b, &n, &err) != GM_OK) {
            fprintf(stderr, "%s\n", err.message);
            rc = 2;
            continue;
        }
        int64_t lb = gm_dsa_lower_bound(b, n);
        int64_t hb = 0, hs = 0;
        bool opt = false;
        char why[512];
        double t = gm_clock_ms();
        gm_status st = gm_dsa_best_fit(b, n, &hb, &err);
        double ms_bf = gm_clock_ms() - t;
        bool ok_bf = st == GM_OK && gm_dsa_check(b, n, hb, why, sizeof why);
        if (!ok_bf) fprintf(stderr, "%s: best fit: %s\n", p.v[k], st == GM_OK ? why : err.message);
        t = gm_clock_ms();
        st = gm_dsa_search(b, n, &opts, &hs, &opt, &err);
        double ms_s = gm_clock_ms() - t;
        bool ok_s = st == GM_OK && gm_dsa_check(b, n, hs, why, sizeof why);
        if (!ok_s) fprintf(stderr, "%s: search: %s\n", p.v[k], st == GM_OK ? why : err.message);
        const char *name = p.v[k];
        size_t len = strlen(name);
        if (len > 48) name += len - 48;
        printf("%-48s %7zu %14" PRId64 " | %14" PRId64 " %7.4f %9.1f | %14" PRId64 " %7.4f %9.1f %4s | %s\n",
               name, n, lb, hb, lb ? (double)hb / (double)lb : 1.0, ms_bf, hs,
               lb ? (double)hs / (double)lb : 1.0, ms_s, opt ? "yes" : "no",
               ok_bf && ok_s ? "yes" : "NO");
        fflush(stdout);
        if (!ok_bf || !ok_s) rc = 1;
        gm_dsa_free(b);
    }
    for (size_t k = 0; k < p.n; k++) free(p.v[k]);
    free(p.v);
    return rc;
}
