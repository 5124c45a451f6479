/*
 * bg_guarders.c — CalcSubgraphGuardersPolicy and EnsureResourceLifeCycleExtended (reference
 * §6.9): a branch's returned resources must outlive the branch, so their guarders (the nodes
 * that free them) move from inside the branch onto the If/Case outputs, and every branch whose
 * returned tensor is not its own to free takes one more reference (IdentityAddr) for the outer
 * guarder to drop.
 */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/pass_util.h"
#include "runtime/bg_condition.h"
#include "util/alloc.h"

#define PLACE_FMT "%s: graph '%s': node '%s'"
#define PLACE(n) (n)->graph->model->source, (n)->graph->name, (n)->name

static gm_status oom(const gm_node *n, gm_error *err)
{
    return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", n->graph->model->source);
}

/* The input a guarder frees, or -1 when n is no guarder. */
static int64_t release_index(const gm_node *n)
{
    if (n->dead) return -1;
    const gm_attr *a = gm_attr_find(n->attrs, GM_ATTR_RELEASE_RESOURCE_INDEX);
    if (a && a->kind == GM_ATTR_INT) return a->u.i;
    return strcmp(n->type, GM_BG_FREE_MEMORY_TYPE) == 0 ? 0 : -1;
}

gm_node *gm_bg_guarder_of(const gm_node *n, uint32_t out_idx)
{
    if (out_idx >= n->n_out) return NULL;
    const gm_out_slot *o = &n->out[out_idx];
    for (uint32_t j = 0; j < o->n_uses; j++) {
        if (release_index(o->uses[j].node) == o->uses[j].index) return o->uses[j].node;
    }
    return NULL;
}

/* The type of the guarder that frees, outside the If/Case, the parent input `feed` that branch
 * input node f reads: GE's kNodeWithGuarderOutside on f, else found on the parent input's
 * producer. NULL when there is none. */
static const char *outside_guarder_type(const gm_bg_cond *c, const gm_node *f, int64_t feed)
{
    const char *t = gm_attrs_get_string(f->attrs, GM_ATTR_NODE_WITH_GUARDER_OUTSIDE);
    if (t && *t) return t;
    const gm_node *parent = c->node;
    if ((uint64_t)feed >= parent->n_in || !parent->in[feed].src) return NULL;
    const gm_node *g = gm_bg_guarder_of(parent->in[feed].src, (uint32_t)parent->in[feed].src_index);
    return g ? g->type : NULL;
}

void gm_bg_guarder_policy_free(gm_bg_guarder_policy *p)
{
    for (size_t i = 0; p->guarder_type && i < p->n_outputs; i++) gm_free(p->guarder_type[i]);
    gm_free(p->guarder_type);
    gm_free(p->plus_ref);
    gm_free(p->moved);
    memset(p, 0, sizeof *p);
}

static gm_status set_type(const gm_bg_cond *c, gm_bg_guarder_policy *p, size_t i, const char *type,
                          const gm_node *where, gm_error *err)
{
    if (p->guarder_type[i]) {
        if (strcmp(p->guarder_type[i], type) == 0) return GM_OK;
        return gm_error_set(err, GM_ERR_INPUT,
                            PLACE_FMT ": output %zu of '%s' is guarded by a %s here and by a %s in another branch; "
                            "one guarder outside cannot free both", PLACE(where), i, c->node->name, type,
                            p->guarder_type[i]);
    }
    p->guarder_type[i] = gm_strdup(type);
    return p->guarder_type[i] ? GM_OK : oom(c->node, err);
}

static bool moved_already(const gm_bg_guarder_policy *p, const gm_node *g)
{
    for (size_t j = 0; j < p->n_moved; j++)
        if (p->moved[j] == g) return true;
    return false;
}

gm_status gm_bg_calc_subgraph_guarders_policy(const gm_bg_cond *c, gm_bg_guarder_policy *p, gm_error *err)
{
    memset(p, 0, sizeof *p);
    size_t n = c->n_outputs, nb = c->n_branches, cap_moved = 0;
    p->n_outputs = n;
    p->n_branches = nb;
    p->guarder_type = gm_calloc(n + 1, sizeof *p->guarder_type);
    p->plus_ref = gm_calloc(nb * n + 1, sizeof *p->plus_ref);
    bool *handled = gm_calloc(nb * n + 1, sizeof *handled); /* moved out or plus-ref'd */
    size_t *pos = gm_calloc(n + 1, sizeof *pos);
    gm_status st = GM_OK;
    if (!p->guarder_type || !p->plus_ref || !handled || !pos) {
        st = oom(c->node, err);
        goto out;
    }
    for (size_t b = 0; b < nb; b++) {
        if ((st = gm_bg_output_positions(c, b, pos, err)) != GM_OK) goto out;
        const gm_node *o = gm_bg_output_node(gm_bg_branch(c, b));
        for (size_t i = 0; i < n; i++) {
            const gm_node *src = o->in[pos[i]].src;
            gm_node *g = gm_bg_guarder_of(src, (uint32_t)o->in[pos[i]].src_index);
            if (g) {
                if ((st = set_type(c, p, i, g->type, g, err)) != GM_OK) goto out;
                handled[b * n + i] = true;
                /* The tensor is returned again: its first output took the guarder, this one
                 * needs a reference of its own for the second outer free. */
                if (moved_already(p, g)) {
                    p->plus_ref[b * n + i] = true;
                    continue;
                }
                if (gm_grow((void **)&p->moved, sizeof *p->moved, p->n_moved + 1, &cap_moved)) {
                    st = oom(c->node, err);
                    goto out;
                }
                p->moved[p->n_moved++] = g;
                continue;
            }
            int64_t feed = gm_bg_feed_index(src);
            const char *t = feed >= 0 ? outside_guarder_type(c, src, feed) : NULL;
            if (t) {
                /* Freed outside already: the parent output gets a guarder of the same kind and
                 * the branch the reference that guarder will drop. */
                if ((st = set_type(c, p, i, t, src, err)) != GM_OK) goto out;
                handled[b * n + i] = true;
                p->plus_ref[b * n + i] = true;
            }
        }
    }
    /* The outer guarder frees whatever branch ran: a branch with nothing to give up at that
     * index adds a reference for it to drop. */
    for (size_t i = 0; i < n; i++) {
        if (!p->guarder_type[i]) continue;
        for (size_t b = 0; b < nb; b++)
            if (!handled[b * n + i]) p->plus_ref[b * n + i] = true;
    }
out:
    gm_free(handled);
    gm_free(pos);
    if (st != GM_OK) gm_bg_guarder_policy_free(p);
    return st;
}

/* A guarder of `type` on parent output i, releasing its input 0. */
static gm_status add_outer_guarder(const gm_bg_cond *c, size_t i, const char *type, gm_error *err)
{
    gm_node *n = c->node;
    char base[512], name[512];
    snprintf(base, sizeof base, "%s_%s_%zu", n->name, type, i);
    gm_pass_unique_name(n->graph->model, base, name, sizeof name);
    gm_node *g = gm_ir_node_create(n->graph, name, type, n, +1, err);
    if (!g) return err ? err->code : GM_ERR_INTERNAL;
    g->stream = n->stream;
    if (gm_edit_add_input(g, n, (int32_t)i) != GM_OK || gm_attr_set_int(&g->attrs, GM_ATTR_RELEASE_RESOURCE_INDEX, 0))
        return oom(n, err);
    return GM_OK;
}

/* Removes an in-branch guarder; its control edges pass on (gm_edit_isolate_and_remove). */
static gm_status remove_guarder(gm_node *g, gm_error *err)
{
    for (uint32_t q = 1; q < g->n_in; q++) gm_edit_set_input(g, q, NULL, 0);
    return gm_edit_isolate_and_remove(g, err);
}

gm_status gm_bg_ensure_resource_life_cycle_extended(const gm_bg_cond *c, const gm_bg_guarder_policy *p,
                                                    gm_error *err)
{
    size_t n = p->n_outputs;
    gm_status st = GM_OK;
    for (size_t i = 0; i < n && st == GM_OK; i++)
        if (p->guarder_type[i]) st = add_outer_guarder(c, i, p->guarder_type[i], err);
    if (st != GM_OK) return st;
    size_t *idx = gm_calloc(n + 1, sizeof *idx);
    if (!idx) return oom(c->node, err);
    for (size_t b = 0; b < p->n_branches && st == GM_OK; b++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (p->plus_ref[b * n + i]) idx[k++] = i;
        char name[512];
        snprintf(name, sizeof name, "%s_Subgraph_%zu_AddResRef_", c->node->name, c->first_branch + b);
        st = gm_bg_insert_before_output(c, b, idx, k, name, GM_BG_IDENTITY_ADDR_TYPE, err);
    }
    gm_free(idx);
    for (size_t j = 0; j < p->n_moved && st == GM_OK; j++) st = remove_guarder(p->moved[j], err);
    return st;
}
