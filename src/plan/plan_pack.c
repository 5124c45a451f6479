/*
 * plan_pack.c — every packing strategy run on the same items, side by side, in threads.
 *
 * The items (src/plan/planner.c builds them) are grouped into units — one per region, memory
 * type and batch label — and are read-only here: each strategy copies what it packs into its
 * own scratch and writes only its own result, so strategies can run in parallel without a lock
 * (seed constraint 1: planning never edits the graph; here it does not even see it). Which
 * thread runs which strategy changes nothing: every strategy is deterministic, and the winner
 * is the smallest feature map, ties to the strategy listed first.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/dsa_internal.h"
#include "plan/ge_strategy.h"
#include "plan/planner_internal.h"
#include "util/alloc.h"
#include "util/clock.h"

static const char *const k_names[GM_PACK_GE_FIRST] = {"best_fit", "dsa_search"};

const char *gm_pack_strategy_name(gm_pack_strategy s)
{
    if ((unsigned)s < GM_PACK_GE_FIRST) return k_names[s];
    if ((unsigned)s < GM_PACK_COUNT) return gm_ge_strategy_name((gm_ge_strategy)(s - GM_PACK_GE_FIRST));
    return "?";
}

/* Every item at its own address, in item order. */
static int64_t stack(gm_dsa_buffer *b, size_t n)
{
    int64_t top = 0;
    for (size_t j = 0; j < n; j++) {
        top = (top + b[j].align - 1) / b[j].align * b[j].align;
        b[j].offset = top;
        top += b[j].size;
    }
    return top;
}

/* Packs one unit's items (a copy in b) with strategy s; returns the height, -1 on error. */
static int64_t pack_unit(const gm_pack_job *job, gm_pack_strategy s, const gm_pack_unit *u, gm_dsa_buffer *b,
                         gm_error *err)
{
    if (u->n == 0) return 0;
    if (u->no_reuse) return stack(b, u->n);
    int64_t h = 0;
    /* GE's strategies are measured on the feature map; elsewhere they pack as best fit does */
    if (s >= GM_PACK_GE_FIRST) s = GM_PACK_BEST_FIT;
    switch (s) {
    case GM_PACK_BEST_FIT:
        if (gm_dsa_best_fit(b, u->n, &h, err) != GM_OK) return -1;
        return h;
    case GM_PACK_DSA_SEARCH: {
        gm_dsa_search_opts so = {job->search_budget_s, job->search_node_limit};
        const gm_pack_result *bf = job->best_fit && job->best_fit->st == GM_OK ? job->best_fit : NULL;
        if (job->deadline_ms > 0) {
            /* One budget for every region: what is left of it, and none at all once spent (the
             * region keeps best fit's answer, the search's first order). */
            double left_s = (job->deadline_ms - gm_clock_ms()) / 1e3;
            if (left_s <= 0) {
                if (!bf) return gm_dsa_best_fit(b, u->n, &h, err) == GM_OK ? h : -1;
                for (size_t j = 0; j < u->n; j++) b[j].offset = bf->offsets[u->first + j];
                return bf->heights[u - job->units];
            }
            if (left_s < so.budget_s) so.budget_s = left_s;
        }
        bool optimal = false;
        if (gm_dsa_search_from(b, u->n, &so, bf ? bf->offsets + u->first : NULL,
                               bf ? bf->heights[u - job->units] : 0, &h, &optimal, err) != GM_OK)
            return -1;
        return h;
    }
    default: break;
    }
    return gm_error_set(err, GM_ERR_INTERNAL, "unknown packing strategy %d", (int)s), -1;
}

/* The feature map of a result: per memory type the highest unit (a labelled unit's height
 * includes the unlabelled items it was packed around). */
static int64_t feature_map_bytes(const gm_pack_job *job, const int64_t *heights)
{
    int64_t total = 0;
    for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
        int64_t top = 0;
        for (size_t i = 0; i < job->n_units; i++) {
            const gm_pack_unit *u = &job->units[i];
            if (u->region == GM_PLAN_R_FEATURE_MAP && (int)u->mem_type == mt && heights[i] > top) top = heights[i];
        }
        total += top;
    }
    return total;
}

typedef struct by_size {
    int64_t size, lower;
    size_t i;
} by_size;

static int cmp_by_size(const void *a, const void *b)
{
    const by_size *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    if (x->lower != y->lower) return x->lower < y->lower ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* A batch label's items, packed by best fit around the unlabelled items of its region, which
 * stay where they are: batches run one at a time, so every label gets the whole space the
 * unlabelled items leave free, and the labels overlay each other. b holds the unlabelled unit
 * (already packed) at base and the label's items at lb. Returns the height, -1 on error. */
static int64_t pack_label(const gm_pack_unit *base_u, gm_dsa_buffer *base, const gm_pack_unit *u, gm_dsa_buffer *lb,
                          int64_t base_height, gm_error *err)
{
    if (u->no_reuse) { /* no reuse: the label's items on top of everything */
        int64_t h = stack(lb, u->n);
        for (size_t j = 0; j < u->n; j++) lb[j].offset += base_height;
        return base_height + h;
    }
    size_t nb = base_u ? base_u->n : 0, n = nb + u->n;
    gm_dsa_buffer *c = gm_malloc(n * sizeof *c);
    unsigned char *fixed = gm_calloc(n, 1);
    by_size *k = gm_malloc(u->n * sizeof *k);
    size_t *order = gm_malloc(u->n * sizeof *order);
    int64_t h = -1;
    if (!c || !fixed || !k || !order) {
        gm_error_set(err, GM_ERR_NOMEM, "out of memory packing batch labels");
        goto out;
    }
    if (nb) memcpy(c, base, nb * sizeof *c);
    memcpy(c + nb, lb, u->n * sizeof *c);
    memset(fixed, 1, nb);
    for (size_t j = 0; j < u->n; j++) k[j] = (by_size){lb[j].size, lb[j].lower, nb + j};
    qsort(k, u->n, sizeof *k, cmp_by_size);
    for (size_t j = 0; j < u->n; j++) order[j] = k[j].i;
    if (gm_dsa_best_fit_seq(c, n, order, u->n, fixed, &h, err) != GM_OK) {
        h = -1;
        goto out;
    }
    if (h < base_height) h = base_height;
    for (size_t j = 0; j < u->n; j++) lb[j].offset = c[nb + j].offset;
out:
    gm_free(c);
    gm_free(fixed);
    gm_free(k);
    gm_free(order);
    return h;
}

/* GE's strategy s on a feature-map region: its units [u0, u1) (the unlabelled one and its
 * labels) go to GE's assigner together, which overlays the batch labels its own way
 * (DynamicBatchMemAssigner). Every unit of the span gets the region's height. */
static gm_status pack_ge(const gm_pack_job *job, gm_pack_strategy s, size_t u0, size_t u1, gm_dsa_buffer *b,
                         int64_t *heights, gm_error *err)
{
    size_t first = job->units[u0].first, n = 0;
    for (size_t u = u0; u < u1; u++) n += job->units[u].n;
    int64_t h = 0;
    if (job->units[u0].no_reuse) {
        h = stack(b + first, n);
    } else if (n) {
        gm_ge_item *g = gm_malloc(n * sizeof *g);
        if (!g) return gm_error_set(err, GM_ERR_NOMEM, "out of memory packing");
        for (size_t u = u0; u < u1; u++)
            for (size_t j = job->units[u].first; j < job->units[u].first + job->units[u].n; j++) {
                const gm_pack_meta *mt = &job->meta[j];
                g[j - first] = (gm_ge_item){b[j].lower, b[j].upper, mt->real_size, mt->stream,
                                            (int32_t)job->units[u].label - 1, mt->nodes, mt->no_reuse,
                                            mt->no_reuse, mt->continuous, -1};
            }
        gm_status st = gm_ge_assign(g, n, (gm_ge_strategy)(s - GM_PACK_GE_FIRST), b[first].align,
                                    job->memory_priority, &h, err);
        for (size_t j = 0; j < n && st == GM_OK; j++) b[first + j].offset = g[j].offset;
        gm_free(g);
        if (st != GM_OK) return st;
    }
    for (size_t u = u0; u < u1; u++) heights[u] = h;
    return GM_OK;
}

/* The end of the span of units sharing unit u0's region and memory type. */
static size_t span_end(const gm_pack_job *job, size_t u0)
{
    size_t u = u0 + 1;
    while (u < job->n_units && job->units[u].region == job->units[u0].region &&
           job->units[u].mem_type == job->units[u0].mem_type)
        u++;
    return u;
}

static void run_one(const gm_pack_job *job, gm_pack_strategy s, gm_pack_result *r)
{
    double t0 = gm_clock_ms();
    gm_error_clear(&r->err);
    r->st = GM_OK;
    gm_dsa_buffer *b = gm_malloc((job->n_items ? job->n_items : 1) * sizeof *b);
    if (!b) {
        r->st = gm_error_set(&r->err, GM_ERR_NOMEM, "out of memory packing");
        return;
    }
    memcpy(b, job->items, job->n_items * sizeof *b);
    /* units of one region and memory type are consecutive, the unlabelled one first */
    const gm_pack_unit *base_u = NULL;
    int64_t base_h = 0;
    for (size_t i = 0; i < job->n_units && r->st == GM_OK; i++) {
        const gm_pack_unit *u = &job->units[i];
        int64_t h;
        if (s >= GM_PACK_GE_FIRST && u->region == GM_PLAN_R_FEATURE_MAP) {
            size_t end = span_end(job, i);
            r->st = pack_ge(job, s, i, end, b, r->heights, &r->err);
            i = end - 1;
            continue;
        }
        if (u->label == 0) {
            h = pack_unit(job, s, u, b + u->first, &r->err);
            base_u = u, base_h = h;
        } else {
            h = pack_label(base_u, base_u ? b + base_u->first : NULL, u, b + u->first, base_h, &r->err);
        }
        if (h < 0) r->st = r->err.code ? r->err.code : GM_ERR_INTERNAL;
        r->heights[i] = h;
    }
    for (size_t j = 0; j < job->n_items; j++) r->offsets[j] = b[j].offset;
    gm_free(b);
    if (r->st == GM_OK) r->feature_map_bytes = feature_map_bytes(job, r->heights);
    r->ms = gm_clock_ms() - t0;
}

typedef struct worker {
    const gm_pack_job *job;
    gm_pack_result *res;
    unsigned from, step, end; /* strategies from, from + step, ... below end */
} worker;

static bool selected(const gm_pack_job *job, unsigned s) { return job->only < 0 || (unsigned)job->only == s; }

static void *work(void *arg)
{
    worker *w = arg;
    for (unsigned s = w->from; s < w->end; s += w->step) {
        if (!selected(w->job, s)) continue;
        /* GE's strategies run to their end once started (each is near-linear); one whose
         * start the budget does not reach is not run. graphmem's own always run: best fit is
         * the answer, the search stops at the budget. */
        if (s >= GM_PACK_GE_FIRST && w->job->deadline_ms > 0 && gm_clock_ms() >= w->job->deadline_ms) {
            w->res[s].skipped = w->res[s].out_of_budget = true;
            continue;
        }
        run_one(w->job, (gm_pack_strategy)s, &w->res[s]);
    }
    return NULL;
}

/* Runs strategies [first, end) on `threads` threads (the calling one among them). */
static void run_range(const gm_pack_job *job, unsigned first, unsigned end, unsigned threads,
                      gm_pack_result res[GM_PACK_COUNT])
{
    if (threads > end - first) threads = end - first;
    worker w[GM_PACK_COUNT];
    pthread_t tid[GM_PACK_COUNT];
    bool started[GM_PACK_COUNT] = {false};
    for (unsigned t = 0; t < threads; t++) w[t] = (worker){job, res, first + t, threads, end};
    /* thread 0's share runs here; if a thread cannot start, its share runs here too */
    for (unsigned t = 1; t < threads; t++) started[t] = pthread_create(&tid[t], NULL, work, &w[t]) == 0;
    work(&w[0]);
    for (unsigned t = 1; t < threads; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else work(&w[t]);
    }
}

/* Strategies [0, end): best fit first, alone, then the others side by side knowing its result:
 * the search's first order is best fit's, the same offsets, so they are computed once (on a
 * million-node plan the search reaches the bound right there, and the two threads did the same
 * work twice). The results are those of running each on its own. */
static void run_from_best_fit(const gm_pack_job *job, unsigned end, unsigned threads,
                              gm_pack_result res[GM_PACK_COUNT])
{
    gm_pack_job j = *job;
    if (selected(job, GM_PACK_BEST_FIT)) {
        run_range(job, GM_PACK_BEST_FIT, GM_PACK_BEST_FIT + 1, 1, res);
        j.best_fit = &res[GM_PACK_BEST_FIT];
    }
    run_range(&j, GM_PACK_BEST_FIT + 1, end, threads, res);
}

bool gm_plan_strategy_known(const char *name)
{
    gm_pack_strategy s;
    return name && (!strcmp(name, "auto") || !strcmp(name, "all") || gm_pack_strategy_from_name(name, &s));
}

void gm_plan_strategy_names(char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "auto, all");
    for (int s = 0; s < GM_PACK_COUNT && n < cap; s++)
        n += (size_t)snprintf(buf + n, cap - n, ", %s", gm_pack_strategy_name((gm_pack_strategy)s));
}

bool gm_pack_strategy_from_name(const char *name, gm_pack_strategy *out)
{
    for (int s = 0; s < GM_PACK_COUNT; s++)
        if (!strcmp(name, gm_pack_strategy_name((gm_pack_strategy)s))) return *out = (gm_pack_strategy)s, true;
    return false;
}

gm_status gm_pack_results_alloc(const gm_pack_job *job, gm_pack_result res[GM_PACK_COUNT])
{
    for (int s = 0; s < GM_PACK_COUNT; s++) {
        res[s].offsets = gm_malloc((job->n_items ? job->n_items : 1) * sizeof *res[s].offsets);
        res[s].heights = gm_malloc((job->n_units ? job->n_units : 1) * sizeof *res[s].heights);
        if (!res[s].offsets || !res[s].heights) return GM_ERR_NOMEM;
    }
    return GM_OK;
}

void gm_pack_results_free(gm_pack_result res[GM_PACK_COUNT])
{
    for (int s = 0; s < GM_PACK_COUNT; s++) {
        gm_free(res[s].offsets);
        gm_free(res[s].heights);
        res[s].offsets = NULL, res[s].heights = NULL;
    }
}

int gm_pack_run(const gm_pack_job *job, unsigned threads, gm_pack_result res[GM_PACK_COUNT], gm_error *err)
{
    if (threads == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    if (job->only >= 0) threads = 1;
    if (threads > GM_PACK_COUNT) threads = GM_PACK_COUNT;
    for (unsigned s = 0; s < GM_PACK_COUNT; s++) res[s].skipped = !selected(job, s), res[s].out_of_budget = false;
    if (job->only >= 0 || job->compare_all || job->n_items <= job->compare_items) {
        run_from_best_fit(job, GM_PACK_COUNT, threads, res);
    } else {
        /* A large plan runs graphmem's own packers only. GE's six never packed a feature map
         * smaller than theirs on any of the 1,369 models measured (bench/run_ge_wins.sh,
         * BENCHMARKS.md), bound reached or not, and on a million nodes they cost seconds; where
         * best fit misses the bound the search, which starts from its answer, is what can close
         * the gap. --strategy all, and plans up to compare_items, still run them beside. Which
         * strategies run depends on the plan's size, never on timing: deterministic. */
        run_from_best_fit(job, GM_PACK_GE_FIRST, threads, res);
        for (unsigned s = GM_PACK_GE_FIRST; s < GM_PACK_COUNT; s++) res[s].skipped = true;
    }
    /* any strategy that could not finish fails the plan: a result must not depend on which ran */
    int best = -1;
    for (unsigned s = 0; s < GM_PACK_COUNT; s++) {
        if (res[s].skipped) continue;
        if (res[s].st != GM_OK) {
            if (err) *err = res[s].err;
            return -1;
        }
        if (best < 0 || res[s].feature_map_bytes < res[best].feature_map_bytes) best = (int)s;
    }
    return best;
}
