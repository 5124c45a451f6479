/*
 * verify_bound.c — checks the plan's claimed lower bound against its witness
 * (summary.lower_bound_witness, docs/plan-format.md): the witness names feature-map symbols no
 * two of which are ordered by happens-before, so no valid plan can overlay any two of them, and
 * their sizes must add up to at least lower_bound_bytes. A plan without a witness claims
 * nothing to check.
 *
 * Unordered, cheaply: if the symbols' access intervals on the event sequence (a linear
 * extension of happens-before) share one point, no two are ordered — if A happened before B,
 * A's last access would precede B's first on every such sequence. Failing that, the pairs are
 * tested one by one (up to a cap, then the bound is reported as unconfirmed).
 *
 * The witness names symbols by id: looked up in the verifier's id index (verify_read.c), one
 * hash probe each.
 */
#include <stdlib.h>
#include <string.h>

#include "plan/verify_internal.h"
#include "util/alloc.h"

enum { PAIRWISE_CAP = 2048 };

#define BOUND(...)                                                                  \
    do {                                                                            \
        if (gm_vfy_problem(c, GM_PLAN_P_BOUND, __VA_ARGS__) != GM_OK) goto nomem;   \
    } while (0)

/* Are the witness symbols w[0..n) pairwise unordered? */
static bool unordered(gm_vfy *c, const int32_t *w, size_t n, bool *confirmed)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX; /* the common point of the access intervals */
    for (size_t i = 0; i < n; i++) {
        const gm_vfy_sym *y = &c->syms[w[i]];
        int64_t first = y->at_start || !y->n_acc ? -1 : y->min_ev;
        int64_t last = y->at_end ? INT64_MAX : (y->n_acc ? y->max_ev : -1);
        if (first > lo) lo = first;
        if (last < hi) hi = last;
    }
    *confirmed = true;
    if (lo <= hi) return true;
    if (n > PAIRWISE_CAP) return *confirmed = false, false;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (gm_vfy_happens_before(c, &c->syms[w[i]], &c->syms[w[j]]) ||
                gm_vfy_happens_before(c, &c->syms[w[j]], &c->syms[w[i]]))
                return false;
    return true;
}

typedef struct witness_walk {
    int32_t *w;
    size_t k;
    int64_t sum;
    const char *label;
} witness_walk;

/* One witness entry: its symbol into ww->w, or a problem. */
static gm_status witness_entry(gm_vfy *c, const cJSON *it, size_t i, void *ctx)
{
    witness_walk *ww = ctx;
    (void)i;
    int32_t s = cJSON_IsString(it) ? gm_vfy_find_sym(c, it->valuestring) : -1;
    if (s < 0) {
        BOUND(-1, -1, NULL, -1, false, "lower_bound_witness names no symbol of the plan: %s",
              cJSON_IsString(it) ? it->valuestring : "(not a string)");
        return GM_OK;
    }
    const gm_vfy_sym *y = &c->syms[s];
    if (y->region < 0 || c->regs[y->region].kind != GM_VFY_R_FM) {
        BOUND(s, -1, NULL, -1, false, "lower_bound_witness: symbol '%s' is not in a feature map", y->id);
        return GM_OK;
    }
    if (y->label && *y->label) {
        if (ww->label && strcmp(ww->label, y->label))
            BOUND(s, -1, NULL, -1, false,
                  "lower_bound_witness: batch labels '%s' and '%s' run exclusively and may share memory", ww->label,
                  y->label);
        ww->label = y->label;
    }
    ww->sum += y->size;
    ww->w[ww->k++] = s;
    return GM_OK;
nomem:
    return GM_ERR_NOMEM;
}

gm_status gm_vfy_check_bound(gm_vfy *c, gm_error *err)
{
    const cJSON *lb = c->summary ? cJSON_GetObjectItemCaseSensitive(c->summary, "lower_bound_bytes") : NULL;
    if (!c->witness.item || !cJSON_IsNumber(lb)) return GM_OK;
    size_t n = gm_vfy_count(&c->witness);
    witness_walk ww = {gm_malloc((n ? n : 1) * sizeof *ww.w), 0, 0, NULL};
    if (!ww.w) goto nomem;
    gm_status st = gm_vfy_each(c, &c->witness, witness_entry, &ww, err);
    if (st == GM_ERR_NOMEM) goto nomem;
    if (st != GM_OK) {
        gm_free(ww.w);
        return st;
    }
    bool confirmed = true;
    if (ww.k && !unordered(c, ww.w, ww.k, &confirmed))
        BOUND(-1, -1, NULL, -1, false, "lower_bound_witness: %s", confirmed ? "two of its symbols are ordered by "
              "happens-before, so they may share memory" : "too large to confirm pair by pair");
    if ((double)ww.sum < lb->valuedouble)
        BOUND(-1, -1, NULL, -1, false, "lower_bound_bytes %.0f is more than its witness holds (%lld bytes)",
              lb->valuedouble, (long long)ww.sum);
    gm_free(ww.w);
    return GM_OK;
nomem:
    gm_free(ww.w);
    return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
}
