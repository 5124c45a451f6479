/*
 * rw_conflict.c — GE's HandleMemoryRWConflict and CheckRWConflict (reference §1.7, §1.8): walk
 * every node, and wherever a producer output and a consumer input that share one buffer
 * disagree about who may write it (the decision matrix of rw_types.c), put an Identity
 * between them so the writer gets its own copy. Identity nodes the user wrote are first split
 * (readers go straight to the producer, writers get their own copy) and dropped when they
 * isolate nothing.
 *
 * GE's own log lines for this pass are not part of the reference; the `[MemConflict][RW]`
 * lines below say the same things in our words, with GE's shifted output-type names (§9.4-1).
 */
#include <stdio.h>
#include <string.h>

#include "conflict/rw_conflict.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"

/* The op type of the copies this pass makes (a node to create, not a class to test). */
#define RW_IDENTITY_TYPE "Identity"

/* Protected like every copy GE's conflict passes insert (§0, §3.9), descs cleaned through
 * GE's TensorDesc round trip, the producer's _batch_label kept. */
static const gm_copy_opts k_rw_copy = {.keep_desc_attrs = false, .cannot_be_deleted = true, .no_const_fold = 0,
                                       .copy_batch_label = true};

typedef struct rw_pass {
    gm_pass_ctx *c;
    gm_rw_state *st;
    unsigned counter; /* GE's Identity counter: per run of the pass, from 0 */
    /* Scratch for one out-anchor's consumers: the list changes under the insertions. */
    gm_use *uses;
    uint8_t *in_type, *result;
    size_t cap_uses, cap_in, cap_res;
} rw_pass;

static bool rw_log_on(void) { return gm_log_get_level() >= GM_LOG_INFO; }

static void rw_log_pair(const char *what, const gm_node *src, uint32_t k, gm_rw_out_type out, const gm_node *dst,
                        uint32_t i, gm_rw_in_type in)
{
    if (!rw_log_on()) return;
    gm_log(GM_LOG_INFO, "[MemConflict][RW] %s: %s_out_%u [%s] -> %s_in_%u [%s]", what, src->name, k,
           gm_rw_out_type_log_name(out), dst->name, i, gm_rw_in_type_name(in));
}

static gm_status rw_fail(rw_pass *p)
{
    return p->c->err && p->c->err->code != GM_OK ? p->c->err->code : GM_ERR_INTERNAL;
}

static void rw_clean_desc(gm_tensor_desc *d)
{
    gm_attr_list_free(d->attrs);
    d->attrs = NULL;
    d->reuse_input = false;
    d->reuse_input_index = 0;
}

/* Inserts an Identity before dst:in, described like output src_idx of desc_src (the producer
 * of the edge, or in SplitIdentity the producer of the Identity being split). */
static gm_node *rw_insert_identity(rw_pass *p, gm_node *dst, uint32_t in, const gm_node *desc_src, int32_t src_idx,
                                   const char *reason)
{
    gm_pass_ctx *c = p->c;
    size_t len = strlen(desc_src->name) + 32;
    char *base = gm_malloc(len);
    if (!base) {
        gm_error_set(c->err, GM_ERR_NOMEM, "%s: out of memory", c->m->source);
        return NULL;
    }
    snprintf(base, len, "%s_Identity%u", desc_src->name, p->counter++);
    gm_node *id = gm_pass_insert_before(c, dst, in, base, RW_IDENTITY_TYPE, &k_rw_copy, reason);
    gm_free(base);
    if (!id) return NULL;
    gm_status st = GM_OK;
    if (id->in[0].src != desc_src || id->in[0].src_index != src_idx) {
        const gm_tensor_desc *d = &desc_src->out[src_idx].desc;
        const char *label = gm_attrs_get_string(desc_src->attrs, "_batch_label");
        gm_tensor_desc *in_d = gm_node_input_desc(id, 0);
        st = in_d ? gm_desc_copy(in_d, d) : GM_ERR_NOMEM;
        if (st == GM_OK) st = gm_desc_copy(&id->out[0].desc, d);
        if (st == GM_OK && label) st = gm_attr_set_string(&id->attrs, "_batch_label", label);
        if (st == GM_OK && !label) gm_attr_remove(&id->attrs, "_batch_label");
    }
    /* GE builds both descs from the producer's output desc through a TensorDesc round trip:
     * private desc attrs (ref_var_src_var_name ...) are lost and reuse_input is cleared. */
    if (id->in_desc_owned) rw_clean_desc(&id->in_desc[0]);
    rw_clean_desc(&id->out[0].desc);
    if (st == GM_OK) st = gm_node_set_input_name(id, 0, "x");
    if (st == GM_OK) st = gm_node_set_output_name(id, 0, "y");
    /* Whatever had to run before the consumer runs before its copy too: the copy reads the
     * buffer where the consumer would have (GE keeps these edges, §1.9 RW2). */
    if (st == GM_OK) st = gm_edit_copy_control_inputs(dst, id);
    if (st != GM_OK) {
        gm_error_set(c->err, st, "%s: graph '%s': node '%s': cannot finish inserted identity '%s'", c->m->source,
                     dst->graph->name, dst->name, id->name);
        return NULL;
    }
    return id;
}

/* The marking's callback: an Identity between a Writeable producer and a subgraph NetOutput. */
static gm_status rw_netoutput_insert(void *ctx, gm_node *no, uint32_t in)
{
    rw_pass *p = ctx;
    gm_node *src = no->in[in].src;
    int32_t k = no->in[in].src_index;
    if (rw_log_on())
        gm_log(GM_LOG_INFO,
               "[MemConflict][RW] output %s_out_%d [%s] of subgraph %s cannot be written through parent %s: "
               "insert identity before %s_in_%u",
               src->name, (int)k, gm_rw_out_type_log_name(GM_RW_OUT_WRITEABLE), no->graph->name,
               no->graph->parent->name, no->name, in);
    return rw_insert_identity(p, no, in, src, k, "Writeable -> subgraph NetOutput") ? GM_OK : rw_fail(p);
}

static gm_status rw_grow_scratch(rw_pass *p, size_t n)
{
    if (gm_grow((void **)&p->uses, sizeof *p->uses, n, &p->cap_uses) ||
        gm_grow((void **)&p->in_type, 1, n, &p->cap_in) || gm_grow((void **)&p->result, 1, n, &p->cap_res))
        return gm_error_set(p->c->err, GM_ERR_NOMEM, "%s: out of memory", p->c->m->source);
    return GM_OK;
}

/* ---- Identity nodes the graph already has ------------------------------------------------------ */

/* SplitIdentity: an Identity read by several inputs. Writers keep a private copy (a new
 * Identity after the old one); readers are fed by the Identity's producer directly, inheriting
 * its control edges so the order it imposed stays. */
static gm_status rw_split_identity(rw_pass *p, gm_node *id)
{
    if (id->n_out == 0 || id->out[0].n_uses <= 1 || id->n_in == 0 || !id->in[0].src) return GM_OK;
    gm_node *src = id->in[0].src;
    int32_t sidx = id->in[0].src_index;
    uint32_t n = id->out[0].n_uses;
    gm_status rc = rw_grow_scratch(p, n);
    if (rc != GM_OK) return rc;
    memcpy(p->uses, id->out[0].uses, n * sizeof *p->uses);
    for (uint32_t j = 0; j < n; j++) {
        gm_node *dst = p->uses[j].node;
        uint32_t in = (uint32_t)p->uses[j].index;
        gm_rw_in_type t = gm_rw_input_type(p->st, dst, in);
        if (t == GM_RW_IN_WRITEABLE || t == GM_RW_IN_SCOPE_WRITEABLE) {
            char reason[64];
            snprintf(reason, sizeof reason, "SplitIdentity -> %s", gm_rw_in_type_name(t));
            if (rw_log_on())
                gm_log(GM_LOG_INFO, "[MemConflict][RW] split identity %s: %s_in_%u [%s] gets its own copy", id->name,
                       dst->name, in, gm_rw_in_type_name(t));
            if (!rw_insert_identity(p, dst, in, src, sidx, reason)) return rw_fail(p);
            continue;
        }
        if (rw_log_on())
            gm_log(GM_LOG_INFO, "[MemConflict][RW] split identity %s: %s_in_%u [%s] now reads %s_out_%d", id->name,
                   dst->name, in, gm_rw_in_type_name(t), src->name, (int)sidx);
        if ((rc = gm_edit_set_input(dst, in, src, sidx)) != GM_OK || (rc = gm_edit_copy_control_inputs(id, dst)) != GM_OK ||
            (rc = gm_edit_copy_control_outputs(id, src)) != GM_OK)
            return gm_error_set(p->c->err, rc, "%s: graph '%s': cannot relink '%s' input %u past identity '%s'",
                                p->c->m->source, id->graph->name, dst->name, in, id->name);
    }
    if (id->out[0].n_uses == 0) {
        if (rw_log_on()) gm_log(GM_LOG_INFO, "[MemConflict][RW] remove identity %s: no reader left", id->name);
        return gm_edit_isolate_and_remove(id, p->c->err);
    }
    return GM_OK;
}

/* NodeUtils::IsIdentityUsefulForRWControl. The reference does not spell it out; we keep any
 * Identity that orders other nodes through control edges, which keeps at least every one GE
 * keeps (an Identity reading a buffer before a control-ordered writer changes it). */
static bool rw_identity_orders_others(const gm_node *id) { return id->ctrl_out.n > 0; }

/* RemoveNoUseIdentity: an Identity whose producer/consumer pair needs no isolation is removed. */
static gm_status rw_remove_no_use_identity(rw_pass *p, gm_node *id)
{
    if (id->n_in == 0 || !id->in[0].src) return GM_OK;
    gm_node *src = id->in[0].src;
    int32_t sidx = id->in[0].src_index;
    const gm_out_slot *o = id->n_out ? &id->out[0] : NULL;
    if (o && o->n_uses > 1) {
        for (uint32_t j = 1; j < o->n_uses; j++)
            if (o->uses[j].node != o->uses[0].node) return GM_OK; /* several readers */
    }
    const gm_node *dst = o && o->n_uses ? o->uses[0].node : NULL;
    uint32_t din = dst ? (uint32_t)o->uses[0].index : 0;
    /* StreamMerge needs a node of its own in front. */
    if (dst && gm_node_is(dst, GM_OP_STREAM_MERGE)) return GM_OK;
    /* CheckIdentityIsNearSubgraph: next to a subgraph boundary the Identity separates buffers
     * the subgraph pass relies on. */
    if (gm_rw_is_subgraph_data(src, NULL) || src->n_sub > 0) return GM_OK;
    if (dst && (gm_rw_is_subgraph_netoutput(dst) || dst->n_sub > 0)) return GM_OK;
    if (rw_identity_orders_others(id)) return GM_OK;
    gm_rw_result r = GM_RW_DO_NOTHING;
    if (dst) {
        gm_rw_out_type out = gm_rw_output_type(p->st, src, (uint32_t)sidx);
        gm_rw_in_type in = gm_rw_input_type(p->st, dst, din);
        r = gm_rw_conflict_result(out, in);
        rw_log_pair(r == GM_RW_DO_NOTHING ? "identity isolates nothing" : "identity kept", src, (uint32_t)sidx, out,
                    dst, din, in);
    }
    if (r != GM_RW_DO_NOTHING) return GM_OK;
    if (rw_log_on()) gm_log(GM_LOG_INFO, "[MemConflict][RW] remove identity %s", id->name);
    gm_status rc = gm_edit_copy_control_outputs(id, src);
    if (rc != GM_OK)
        return gm_error_set(p->c->err, rc, "%s: graph '%s': cannot move control edges of identity '%s'",
                            p->c->m->source, id->graph->name, id->name);
    return gm_edit_isolate_and_remove(id, p->c->err);
}

/* ---- InsertIdentityAsNeeded ---------------------------------------------------------------------- */

static gm_status rw_insert_as_needed(rw_pass *p, gm_node *nd)
{
    for (uint32_t k = 0; k < nd->n_out; k++) {
        uint32_t n = nd->out[k].n_uses;
        if (n == 0) continue;
        gm_status rc = rw_grow_scratch(p, n);
        if (rc != GM_OK) return rc;
        memcpy(p->uses, nd->out[k].uses, n * sizeof *p->uses);
        gm_rw_out_type out = gm_rw_output_type(p->st, nd, k);

        /* The decisions first, on the graph as it is: the insertions below do not change an
         * input's type. `skip` follows GE's IsLastLinkCanSkipIdentity: it survives only while
         * every consumer so far is one node reading through ScopeWriteable inputs that each
         * need an Identity; then the last of those edges may use the buffer itself. */
        bool skip = out == GM_RW_OUT_READ_ONLY || out == GM_RW_OUT_WRITEABLE;
        const gm_node *last = NULL;
        for (uint32_t j = 0; j < n; j++) {
            gm_node *dst = p->uses[j].node;
            p->result[j] = 0xff; /* marked: skipped by _skip_rw_conflict */
            if (gm_attrs_get_bool(dst->attrs, "_skip_rw_conflict", false)) continue;
            gm_rw_in_type in = gm_rw_input_type(p->st, dst, (uint32_t)p->uses[j].index);
            gm_rw_result r = gm_rw_conflict_result(out, in);
            p->in_type[j] = (uint8_t)in;
            p->result[j] = (uint8_t)r;
            if (skip) {
                skip = (!last || last == dst) && in == GM_RW_IN_SCOPE_WRITEABLE;
                last = dst;
            }
            if (r != GM_RW_INSERT_IDENTITY) skip = false;
        }
        bool skip_last = skip && p->result[n - 1] == GM_RW_INSERT_IDENTITY;
        /* A Writeable buffer may be reused only if its ref chain ends at a root input or a
         * non-ref owner that nobody else reads (NeedCheckSkipIdentiy); walked only when it
         * matters, before any insertion changes the consumer lists. */
        if (skip_last && out == GM_RW_OUT_WRITEABLE) skip_last = gm_rw_need_check_skip(p->st, out, nd, k);

        for (uint32_t j = 0; j < n; j++) {
            gm_node *dst = p->uses[j].node;
            uint32_t in = (uint32_t)p->uses[j].index;
            if (p->result[j] == 0xff) {
                if (rw_log_on())
                    gm_log(GM_LOG_INFO, "[MemConflict][RW] %s has _skip_rw_conflict, skip %s_out_%u -> %s_in_%u",
                           dst->name, nd->name, k, dst->name, in);
                continue;
            }
            gm_rw_in_type it = (gm_rw_in_type)p->in_type[j];
            if (p->result[j] == GM_RW_WRONG_GRAPH) {
                rw_log_pair("wrong graph, nothing inserted", nd, k, out, dst, in, it);
                continue;
            }
            if (p->result[j] != GM_RW_INSERT_IDENTITY) continue;
            if (j == n - 1 && skip_last) {
                rw_log_pair("last link may use the buffer in place, skip identity", nd, k, out, dst, in, it);
                continue;
            }
            rw_log_pair("insert identity", nd, k, out, dst, in, it);
            char reason[64];
            snprintf(reason, sizeof reason, "%s -> %s", gm_rw_out_type_name(out), gm_rw_in_type_name(it));
            if (!rw_insert_identity(p, dst, in, nd, (int32_t)k, reason)) return rw_fail(p);
        }
    }
    return GM_OK;
}

/* ---- the pass ------------------------------------------------------------------------------------ */

static gm_status rw_main_loop(rw_pass *p)
{
    gm_status rc = GM_OK;
    size_t n = gm_rw_state_node_count(p->st);
    /* GetAllNodes as it was before the pass: the Identities inserted here are not visited. */
    for (size_t i = 0; i < n && rc == GM_OK; i++) {
        gm_node *nd = gm_rw_state_node(p->st, i);
        if (nd->dead || gm_rw_in_while_subgraph(nd)) continue;
        if (gm_rw_is_subgraph_data(nd, NULL) || gm_rw_is_subgraph_netoutput(nd)) continue;
        if (gm_attrs_get_bool(nd->attrs, "_cannot_be_deleted", false)) continue;
        if (gm_node_is(nd, GM_OP_IDENTITY_LIKE)) {
            if ((rc = rw_split_identity(p, nd)) != GM_OK) break;
            if (!nd->dead && (rc = rw_remove_no_use_identity(p, nd)) != GM_OK) break;
            if (nd->dead) continue;
        }
        rc = rw_insert_as_needed(p, nd);
    }
    return rc;
}

gm_status gm_pass_rw_conflict(gm_pass_ctx *c)
{
    rw_pass p = {.c = c};
    /* The per-node arrays are indexed by topological id: start from a fresh order whatever the
     * passes before left behind. */
    gm_status rc = gm_model_toposort(c->m, c->err);
    if (rc != GM_OK) return rc;
    rc = gm_rw_state_new(c->m, true, &p.st, c->err);
    if (rc == GM_OK) {
        if (rw_log_on())
            gm_log(GM_LOG_INFO, "[MemConflict][RW] Start to handle memory read/write conflict of root graph %s.",
                   gm_graph_name(gm_model_root(c->m)));
        rc = gm_rw_mark_subgraphs(p.st, rw_netoutput_insert, &p, c->err);
    }
    if (rc == GM_OK) rc = rw_main_loop(&p);
    gm_rw_state_free(p.st);
    gm_free(p.uses);
    gm_free(p.in_type);
    gm_free(p.result);
    if (rc == GM_ERR_INPUT) {
        /* GE only warns when HandleMemoryRWConflict fails, and compiles on (§0). */
        gm_log(GM_LOG_WARN, "[MemConflict][RW] read/write conflict handling stopped: %s", c->err->message);
        gm_error_clear(c->err);
        rc = GM_OK;
    }
    if (rc != GM_OK) return rc;
    return gm_model_toposort(c->m, c->err);
}

/* ---- the check ----------------------------------------------------------------------------------- */

gm_status gm_rw_check_conflict(const gm_model *m, bool *has_conflict, gm_error *err)
{
    if (gm_model_graph_count(m) <= 1) return GM_OK; /* GE: no subgraph, nothing to check */
    gm_rw_state *st = NULL;
    /* The state takes a mutable model for the pass; with mutate=false and no insert callback
     * nothing is written. */
    gm_status rc = gm_rw_state_new((gm_model *)m, false, &st, err);
    if (rc == GM_OK) rc = gm_rw_mark_subgraphs(st, NULL, NULL, err);
    size_t n = rc == GM_OK ? gm_rw_state_node_count(st) : 0;
    /* GE's scan returns, rather than skips, at the first node without data consumers and at
     * the first While node or While consumer: nodes after it are never checked (§9.4-2). We
     * reproduce that so the answer matches GE's. */
    for (size_t i = 0; i < n; i++) {
        const gm_node *nd = gm_rw_state_node(st, i);
        if (gm_rw_is_while(nd)) break;
        bool consumed = false;
        for (uint32_t k = 0; k < nd->n_out && !consumed; k++) consumed = nd->out[k].n_uses > 0;
        if (!consumed) break;
        bool stop = false;
        for (uint32_t k = 0; k < nd->n_out && !stop; k++) {
            const gm_out_slot *o = &nd->out[k];
            gm_rw_out_type out = gm_rw_output_type(st, nd, k);
            for (uint32_t j = 0; j < o->n_uses && !stop; j++) {
                const gm_node *dst = o->uses[j].node;
                if (gm_rw_is_while(dst)) {
                    stop = true;
                    break;
                }
                gm_rw_in_type in = gm_rw_input_type(st, dst, (uint32_t)o->uses[j].index);
                if (gm_rw_conflict_result(out, in) == GM_RW_WRONG_GRAPH) {
                    rw_log_pair("check: wrong graph", nd, k, out, dst, (uint32_t)o->uses[j].index, in);
                    *has_conflict = true;
                    stop = true;
                }
            }
        }
        if (stop) break;
    }
    gm_rw_state_free(st);
    return rc;
}
