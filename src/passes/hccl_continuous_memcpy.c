/*
 * hccl_continuous_memcpy.c — GE's HcclContinuousMemcpyPass (reference §3.2). A node that needs
 * its inputs in one continuous block (`continuous_input`) gets them copied into that block;
 * the block cannot be the fixed address of a constant, a user's Data or a variable, nor a
 * buffer that a second continuous consumer also wants placed in its own block. Inputs that
 * must live in peer-to-peer memory (`_input_memory_type` = RT_MEMORY_P2P_DDR) cannot be a
 * constant, Data or variable either. Each such input gets an Identity named after its
 * producer, and a broadcast into a variable's copy is written back (as in §3.1).
 */
#include <stdio.h>

#include "ops/op_table.h"
#include "passes/dedicated.h"
#include "ops/attr_table.h"
#include "ops/op_table.h"
#include "passes/pass_util2.h"
#include "util/alloc.h"

static const gm_copy_opts k_opts = {.keep_desc_attrs = false, .cannot_be_deleted = true, .no_const_fold = 0,
                                    .copy_batch_label = false};

/* Const, Data-type or variable-like: an address the copy must not alias. */
static bool fixed_source(const gm_node *p)
{
    return gm_node_is(p, GM_OP_CONST) || gm_node_is(p, GM_OP_DATA) || gm_node_is(p, GM_OP_VAR_LIKE);
}

/* Consumer anchors of p:k whose node wants continuous inputs. */
static size_t continuous_readers(const gm_node *p, int32_t k)
{
    size_t cnt = 0;
    for (uint32_t j = 0; j < p->out[k].n_uses; j++)
        if (gm_attrs_get_bool(p->out[k].uses[j].node->attrs, "continuous_input", false)) cnt++;
    return cnt;
}

/* Input i must be peer-to-peer memory: `_input_memory_type`[i] (GE's rtMemType) or graphmem's
 * input desc memory type. */
static bool p2p_input(const gm_node *n, size_t i)
{
    int64_t t;
    if (gm_pass_attr_list_at(n->attrs, "_input_memory_type", i, &t) && t == GM_RT_MEMORY_P2P_DDR) return true;
    return n->in_desc[i].mem_type_given && n->in_desc[i].mem_type == GM_MEM_P2P;
}

static gm_status insert(gm_pass_ctx *c, gm_node *n, size_t i, const char *why)
{
    gm_node *src = n->in[i].src;
    int32_t k = n->in[i].src_index;
    char name[512], reason[600];
    snprintf(name, sizeof name, "%s_HcclContinuousMemcpyPass_Identity", src->name);
    snprintf(reason, sizeof reason, "%s input %zu: %s", n->name, i, why);
    if (!gm_pass_insert_before(c, n, i, name, "Identity", &k_opts, reason))
        return c->err->code ? c->err->code : GM_ERR_INTERNAL;
    return gm_pass_assign_after_broadcast(c, n, i, src, k);
}

static gm_status handle_node(gm_pass_ctx *c, gm_node *n)
{
    gm_status st = GM_OK;
    if (gm_attrs_get_bool(n->attrs, "continuous_input", false)) {
        for (size_t i = 0; i < n->n_in && st == GM_OK; i++) {
            const gm_node *p = n->in[i].src;
            if (!p) continue;
            if (fixed_source(p))
                st = insert(c, n, i, "continuous input fed by a constant, Data or variable");
            else if (continuous_readers(p, n->in[i].src_index) > 1)
                st = insert(c, n, i, "continuous input shared with another continuous consumer");
        }
    }
    for (size_t i = 0; i < n->n_in && st == GM_OK; i++) {
        const gm_node *p = n->in[i].src;
        if (p && p2p_input(n, i) && fixed_source(p))
            st = insert(c, n, i, "p2p input fed by a constant, Data or variable");
    }
    return st;
}

gm_status gm_pass_hccl_continuous_memcpy(gm_pass_ctx *c)
{
    gm_status st = GM_OK;
    for (size_t gi = 0; gi < c->m->n_graphs && st == GM_OK; gi++) {
        size_t n = 0;
        gm_node **nodes = gm_pass_snapshot(c, c->m->graphs[gi], &n);
        if (!nodes && n == 0 && c->m->graphs[gi]->nodes.n) return GM_ERR_NOMEM;
        for (size_t x = 0; x < n && st == GM_OK; x++) st = handle_node(c, nodes[x]);
        gm_free(nodes);
    }
    return st;
}
