/*
 * verify_bound.c — checks the plan's claimed lower bound against its witness
 * (summary.lower_bound_witness, spec/plan-format.md): the witness names feature-map symbols no
 * two of which are ordered by happens-before, so no valid plan can overlay any two of them, and
 * their sizes must add up to at least lower_bound_bytes. A plan without a witness claims
 * nothing to check.
 *
 * Unordered, cheaply: if the symbols' access intervals on the event sequence (a linear
 * extension of happens-before) share one point, no two are ordered — if A happened before B,
 * A's last access would precede B's first on every such sequence. Failing that, the pairs are
 * tested one by one (up to a cap, then the bound is reported as unconfirmed).
 */
#include <stdlib.h>
#include <string.h>

#include "plan/verify_internal.h"
#include "util/alloc.h"

enum { PAIRWISE_CAP = 2048 };

static _Thread_local const gm_vfy *g_ctx;

static int by_id(const void *p, const void *q)
{
    return strcmp(g_ctx->syms[*(const int32_t *)p].id, g_ctx->syms[*(const int32_t *)q].id);
}

/* The symbol named id, -1 for none (ids: symbol numbers sorted by id). */
static int32_t find(const gm_vfy *c, const int32_t *ids, const char *id)
{
    size_t lo = 0, hi = c->n_syms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = strcmp(c->syms[ids[mid]].id, id);
        if (r == 0) return ids[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

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

gm_status gm_vfy_check_bound(gm_vfy *c, const cJSON *summary)
{
    const cJSON *wit = summary ? cJSON_GetObjectItemCaseSensitive(summary, "lower_bound_witness") : NULL;
    const cJSON *lb = summary ? cJSON_GetObjectItemCaseSensitive(summary, "lower_bound_bytes") : NULL;
    if (!wit || !cJSON_IsNumber(lb)) return GM_OK;
    int32_t *ids = gm_malloc((c->n_syms ? c->n_syms : 1) * sizeof *ids);
    size_t n = (size_t)cJSON_GetArraySize(wit);
    int32_t *w = gm_malloc((n ? n : 1) * sizeof *w);
    if (!ids || !w) goto nomem;
    for (size_t i = 0; i < c->n_syms; i++) ids[i] = (int32_t)i;
    g_ctx = c;
    qsort(ids, c->n_syms, sizeof *ids, by_id);
    size_t k = 0;
    int64_t sum = 0;
    const char *label = NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, wit) {
        int32_t s = cJSON_IsString(it) ? find(c, ids, it->valuestring) : -1;
        if (s < 0) {
            BOUND(-1, -1, NULL, -1, false, "lower_bound_witness names no symbol of the plan: %s",
                  cJSON_IsString(it) ? it->valuestring : "(not a string)");
            continue;
        }
        const gm_vfy_sym *y = &c->syms[s];
        if (y->region < 0 || c->regs[y->region].kind != GM_VFY_R_FM) {
            BOUND(s, -1, NULL, -1, false, "lower_bound_witness: symbol '%s' is not in a feature map", y->id);
            continue;
        }
        if (y->label && *y->label) {
            if (label && strcmp(label, y->label))
                BOUND(s, -1, NULL, -1, false,
                      "lower_bound_witness: batch labels '%s' and '%s' run exclusively and may share memory",
                      label, y->label);
            label = y->label;
        }
        sum += y->size;
        w[k++] = s;
    }
    bool confirmed = true;
    if (k && !unordered(c, w, k, &confirmed))
        BOUND(-1, -1, NULL, -1, false, "lower_bound_witness: %s", confirmed ? "two of its symbols are ordered by "
              "happens-before, so they may share memory" : "too large to confirm pair by pair");
    if ((double)sum < lb->valuedouble)
        BOUND(-1, -1, NULL, -1, false, "lower_bound_bytes %.0f is more than its witness holds (%lld bytes)",
              lb->valuedouble, (long long)sum);
    gm_free(ids);
    gm_free(w);
    return GM_OK;
nomem:
    gm_free(ids);
    gm_free(w);
    return GM_ERR_NOMEM;
}
