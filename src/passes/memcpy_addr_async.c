/*
 * memcpy_addr_async.c — GE's MemcpyAddrAsyncPass (reference §3.6). Some readers cannot take a
 * tensor whose address the user supplies per run (zero copy) or that must stay fixed; a
 * MemcpyAddrAsync node copies it into graph-owned memory first:
 *  - StreamMerge fed by user input (a root Data, or a subgraph Data that leads up to one, then
 *    copied where the user Data enters, at the outermost parent input);
 *  - the root NetOutput fed directly by a constant, or by a Data when addresses cannot be
 *    patched at load time (build mode "offline" or graph attr `_single_op_scene`); empty
 *    tensors need no copy;
 *  - an HCCL op that cannot refresh addresses, in a graph whose feature map is not
 *    refreshable, fed by a RefData (so the RefData stays updatable by the user).
 * Unknown-shape graphs are skipped.
 *
 * graphmem deviations: the device capability check (rtGetRtCapability zero-copy) is taken as
 * supported; there are no heterogeneous deployments; data offsets are not moved (graphmem has
 * no offsets before planning); the copies are named `<reader>_input_<i>_MemcpyAddrAsync`.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/ref.h"
#include "ops/op_table.h"
#include "passes/dedicated.h"
#include "ops/attr_table.h"
#include "ops/op_table.h"
#include "passes/pass_util2.h"
#include "util/alloc.h"

static gm_status insert(gm_pass_ctx *c, gm_node *dst, size_t i, const char *why)
{
    char name[512];
    snprintf(name, sizeof name, "%s_input_%zu_MemcpyAddrAsync", dst->name, i);
    if (gm_pass_insert_before(c, dst, i, name, "MemcpyAddrAsync", &gm_copy_default, why)) return GM_OK;
    return c->err->code ? c->err->code : GM_ERR_INTERNAL;
}

static bool is_user_data(const gm_node *n)
{
    return n && !n->graph->parent && gm_node_is(n, GM_OP_DATA);
}

static gm_status stream_merge_input(gm_pass_ctx *c, gm_node *sm, size_t i)
{
    gm_node *p = sm->in[i].src;
    if (!p || !gm_node_is(p, GM_OP_DATA)) return GM_OK;
    if (is_user_data(p)) return insert(c, sm, i, "StreamMerge reads user input");
    if (gm_subgraph_data_parent_index(p) < 0) return GM_OK;
    /* FindUserData: up through the parents' inputs to the user's Data. */
    int32_t idx = 0, top_in = -1;
    gm_node *top = NULL;
    gm_node *u = gm_pass_real_producer(p, &idx, GM_CTRL_NONE, &top, &top_in);
    if (!is_user_data(u) || top_in < 0 || gm_attr_find(u->out[idx].desc.attrs, "ref_var_src_var_name")) return GM_OK;
    return insert(c, top, (size_t)top_in, "StreamMerge in a subgraph reads user input");
}

static gm_status root_netoutput(gm_pass_ctx *c, gm_node *o, bool data_needs_copy)
{
    for (size_t i = 0; i < o->n_in; i++) {
        const gm_node *p = o->in[i].src;
        if (!p || gm_pass_out_empty(p, (size_t)o->in[i].src_index)) continue;
        gm_status st = GM_OK;
        if (gm_node_is(p, GM_OP_CONST))
            st = insert(c, o, i, "model output is a constant");
        else if (gm_node_is(p, GM_OP_DATA) && data_needs_copy)
            st = insert(c, o, i, "model output is a user input whose address cannot be patched at load");
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

static gm_status hccl_refdata_inputs(gm_pass_ctx *c, gm_node *h)
{
    for (size_t i = 0; i < h->n_in; i++) {
        const gm_node *p = h->in[i].src;
        if (!p || !gm_node_is(p, GM_OP_DATA) || !gm_node_is(p, GM_OP_VAR_LIKE)) continue;
        gm_status st = insert(c, h, i, "HCCL op without address refresh reads a RefData");
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

gm_status gm_pass_memcpy_addr_async(gm_pass_ctx *c)
{
    gm_status st = gm_model_toposort(c->m, c->err);
    if (st != GM_OK) return st;
    const char *mode = gm_model_option(c->m, "ge.buildGraphMode");
    const char *fm = gm_model_option(c->m, "ge.featureBaseRefreshable");
    gm_graph *root = gm_model_root(c->m);
    bool data_needs_copy = (mode && strcmp(mode, "offline") == 0) ||
                           gm_attrs_get_bool(root->attrs, "_single_op_scene", false);
    bool root_unknown = gm_pass_root_unknown(c->m);
    for (size_t gi = 0; gi < c->m->n_graphs && st == GM_OK; gi++) {
        gm_graph *g = c->m->graphs[gi];
        if (!gm_pass_graph_known_shape(g)) continue;
        /* GE's is_feature_map_refreshable (reference §2.4). */
        bool refreshable = (fm && strcmp(fm, "1") == 0) || (root_unknown && g != root);
        size_t n = 0;
        gm_node **nodes = gm_pass_snapshot(c, g, &n);
        if (!nodes && g->nodes.n) return GM_ERR_NOMEM;
        for (size_t x = 0; x < n && st == GM_OK; x++) {
            gm_node *nd = nodes[x];
            if (gm_node_is(nd, GM_OP_STREAM_MERGE)) {
                for (size_t i = 0; i < nd->n_in && st == GM_OK; i++) st = stream_merge_input(c, nd, i);
            } else if (g == root && gm_node_is(nd, GM_OP_NETOUTPUT)) {
                st = root_netoutput(c, nd, data_needs_copy);
            }
            if (st == GM_OK && !refreshable && gm_node_is(nd, GM_OP_HCCL_NO_ADDR_REFRESH)) st = hccl_refdata_inputs(c, nd);
        }
        gm_free(nodes);
    }
    return st;
}
