/*
 * plan_chains.c — continuous groups joined into chains. GE accepts two groups that share
 * members when they overlap head to tail (a split's outputs [a b c] feeding a concat's inputs
 * [b c d]: IsSameOrPartialSame, reference §2.6): one block [a b c d] satisfies both. So each
 * group contributes "member k is followed by member k+1" links; a group whose links agree with
 * those already taken (every symbol at most one successor and one predecessor, no cycle) joins
 * them, one that does not is left unusable (the verifier then names it). Each maximal chain of
 * links is laid out as one item.
 */
#include <stdlib.h>
#include <string.h>

#include "plan/planner_internal.h"
#include "util/alloc.h"

static int32_t root(int32_t *uf, int32_t a)
{
    while (uf[a] != a) a = uf[a] = uf[uf[a]];
    return a;
}

/* The group's members are known, distinct, in one reusable region, memory type and label.
 * mark: one byte per symbol, all 0 on entry and on return (a group can hold most of a graph:
 * the atomic outputs of a central clean node, so no pairwise check). */
static bool well_formed(const gm_plan_items *it, const gm_plan *p, const gm_plan_group *c, unsigned char *mark)
{
    if (c->n == 0 || c->members[0] < 0) return false;
    const gm_plan_symbol *s0 = &p->symbols[c->members[0]];
    bool ok = true;
    size_t j = 0;
    for (; j < c->n && ok; j++) {
        int32_t y = c->members[j];
        if (y < 0) {
            ok = false;
            break;
        }
        const gm_plan_symbol *s = &p->symbols[y];
        if ((s->region != GM_PLAN_R_FEATURE_MAP && s->region != GM_PLAN_R_ZERO_COPY) || s->region != s0->region ||
            s->mem_type != s0->mem_type || it->sym_label[y] != it->sym_label[c->members[0]] || mark[y])
            ok = false;
        mark[y] = 1;
    }
    for (size_t i = 0; i < j; i++)
        if (c->members[i] >= 0) mark[c->members[i]] = 0;
    return ok;
}

/* Would the group's links agree with those taken? Each new link must join a tail to a head
 * (next/prev: -1 none), and the walk along the group must never come back into a chain it has
 * left: the links taken are disjoint paths, so entering one of them twice would close a cycle
 * that no layout satisfies (an atomic group [a b c] after a concat's chain c -> a). mark holds
 * the chains entered, by root: all 0 on entry and on return. */
static bool agrees(const gm_plan_group *c, const int32_t *next, const int32_t *prev, int32_t *uf, unsigned char *mark)
{
    bool ok = true;
    size_t j = 0;
    mark[root(uf, c->members[0])] = 1;
    for (; j + 1 < c->n && ok; j++) {
        int32_t a = c->members[j], b = c->members[j + 1];
        if (next[a] == b) continue; /* already linked so: the walk stays in its chain */
        int32_t rb = root(uf, b);
        if (next[a] >= 0 || prev[b] >= 0 || mark[rb]) ok = false;
        else mark[rb] = 1;
    }
    for (size_t i = 0; i <= j && i < c->n; i++) mark[root(uf, c->members[i])] = 0;
    return ok;
}

gm_status gm_plan_chain_groups(gm_plan_items *it, const gm_plan *p)
{
    size_t ns = p->n_symbols ? p->n_symbols : 1;
    int32_t *next = gm_malloc(ns * sizeof *next), *prev = gm_malloc(ns * sizeof *prev), *uf = gm_malloc(ns * sizeof *uf);
    unsigned char *mark = gm_calloc(ns, 1);
    gm_plan_group *chains = NULL;
    size_t n_chains = 0;
    gm_status st = GM_ERR_NOMEM;
    if (!next || !prev || !uf || !mark) goto out;
    for (size_t s = 0; s < p->n_symbols; s++) next[s] = prev[s] = -1, uf[s] = (int32_t)s, it->sym_group[s] = -1;
    /* a tentative union on a copy would be dearer than checking first: agrees() only reads
     * the links (and path-halves the union-find, which keeps its sets) */
    for (size_t g = 0; g < it->n_groups; g++) {
        gm_plan_group *c = &it->groups[g];
        c->usable = well_formed(it, p, c, mark) && agrees(c, next, prev, uf, mark);
        for (size_t j = 0; c->usable && j + 1 < c->n; j++) {
            int32_t a = c->members[j], b = c->members[j + 1];
            if (next[a] == b) continue;
            next[a] = b, prev[b] = a;
            uf[root(uf, a)] = root(uf, b);
        }
        if (c->usable && c->n == 1) it->sym_group[c->members[0]] = -2; /* a chain of one */
    }
    /* the chains, each from its head */
    chains = gm_calloc(ns, sizeof *chains);
    if (!chains) goto out;
    for (size_t s = 0; s < p->n_symbols; s++) {
        if (prev[s] >= 0 || (next[s] < 0 && it->sym_group[s] != -2)) continue;
        size_t len = 0;
        for (int32_t y = (int32_t)s; y >= 0; y = next[y]) len++;
        gm_plan_group *c = &chains[n_chains];
        *c = (gm_plan_group){NULL, false, len, gm_malloc(len * sizeof(int32_t)), true};
        if (!c->members) goto out;
        len = 0;
        for (int32_t y = (int32_t)s; y >= 0; y = next[y]) c->members[len++] = y, it->sym_group[y] = (int32_t)n_chains;
        n_chains++;
    }
    for (size_t g = 0; g < it->n_groups; g++) gm_free(it->groups[g].members);
    gm_free(it->groups);
    it->groups = chains, it->n_groups = n_chains, chains = NULL;
    st = GM_OK;
out:
    for (size_t g = 0; chains && g < n_chains; g++) gm_free(chains[g].members);
    gm_free(chains);
    gm_free(next);
    gm_free(prev);
    gm_free(uf);
    gm_free(mark);
    return st;
}
