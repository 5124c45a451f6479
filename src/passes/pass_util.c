/* pass_util.c — inserting protected copy nodes and recording what the passes did. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graphmem/log.h"
#include "passes/pass_util.h"
#include "util/alloc.h"

const gm_copy_opts gm_copy_default = {.keep_desc_attrs = false, .cannot_be_deleted = true,
                                      .no_const_fold = -1, .copy_batch_label = true};

const char *gm_anchor_key(const gm_node *n, bool out, uint32_t index, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s_%s_%u", n->name, out ? "out" : "in", index);
    return buf;
}

const char *gm_pass_unique_name(const gm_model *m, const char *base, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", base);
    for (unsigned k = 1; gm_model_find_node(m, buf); k++) snprintf(buf, cap, "%s_%u", base, k);
    return buf;
}

void gm_pass_report_free(gm_pass_report *r)
{
    for (size_t i = 0; i < r->n_nodes; i++) {
        gm_inserted_node *x = &r->nodes[i];
        gm_free(x->node);
        gm_free(x->type);
        gm_free(x->graph);
        gm_free(x->anchor_node);
        gm_free(x->reason);
    }
    gm_free(r->nodes);
    for (size_t i = 0; i < r->n_edges; i++) {
        gm_inserted_edge *x = &r->edges[i];
        gm_free(x->from);
        gm_free(x->to);
        gm_free(x->graph);
        gm_free(x->reason);
    }
    gm_free(r->edges);
    for (size_t i = 0; i < r->n_warnings; i++) gm_free(r->warnings[i].message);
    gm_free(r->warnings);
    memset(r, 0, sizeof *r);
}

gm_status gm_pass_record(gm_pass_ctx *c, const gm_node *n, const gm_node *anchor, bool before, int32_t index,
                        const char *reason)
{
    gm_pass_report *r = c->report;
    if (gm_grow((void **)&r->nodes, sizeof *r->nodes, r->n_nodes + 1, &r->cap_nodes)) goto oom;
    gm_inserted_node x = {.node = gm_strdup(n->name), .type = gm_strdup(n->type), .graph = gm_strdup(n->graph->name),
                          .pass = c->pass, .anchor_node = gm_strdup(anchor->name), .before = before, .index = index,
                          .reason = gm_strdup(reason ? reason : "")};
    if (!x.node || !x.type || !x.graph || !x.anchor_node || !x.reason) {
        gm_free(x.node);
        gm_free(x.type);
        gm_free(x.graph);
        gm_free(x.anchor_node);
        gm_free(x.reason);
        goto oom;
    }
    r->nodes[r->n_nodes++] = x;
    r->inserted[c->pass]++;
    return GM_OK;
oom:
    return gm_error_set(c->err, GM_ERR_NOMEM, "%s: out of memory", c->m->source);
}

gm_status gm_pass_record_edge(gm_pass_ctx *c, const gm_node *from, const gm_node *to, const char *reason)
{
    gm_pass_report *r = c->report;
    if (!r) return GM_OK;
    if (gm_grow((void **)&r->edges, sizeof *r->edges, r->n_edges + 1, &r->cap_edges)) goto oom;
    gm_inserted_edge x = {.from = gm_strdup(from->name), .to = gm_strdup(to->name), .graph = gm_strdup(from->graph->name),
                          .pass = c->pass, .reason = gm_strdup(reason ? reason : "")};
    if (!x.from || !x.to || !x.graph || !x.reason) {
        gm_free(x.from);
        gm_free(x.to);
        gm_free(x.graph);
        gm_free(x.reason);
        goto oom;
    }
    r->edges[r->n_edges++] = x;
    return GM_OK;
oom:
    return gm_error_set(c->err, GM_ERR_NOMEM, "%s: out of memory", c->m->source);
}

/* GE's protection and desc rules for a freshly inserted copy node. */
static gm_status dress(gm_pass_ctx *c, gm_node *n, const gm_node *producer, const gm_copy_opts *o)
{
    gm_status st = GM_OK;
    for (uint32_t i = 0; i < n->n_in && n->in_desc_owned; i++) { /* shared defaults need nothing */
        n->in_desc[i].reuse_input = false;
        n->in_desc[i].reuse_input_index = 0;
        if (o->keep_desc_attrs) continue;
        gm_attr_list_free(n->in_desc[i].attrs);
        n->in_desc[i].attrs = NULL;
    }
    for (uint32_t k = 0; k < n->n_out; k++) {
        gm_tensor_desc *d = &n->out[k].desc;
        d->reuse_input = false;
        d->reuse_input_index = 0;
        if (!o->keep_desc_attrs) {
            gm_attr_list_free(d->attrs);
            d->attrs = NULL;
        }
    }
    if (o->cannot_be_deleted) st = gm_attr_set_bool(&n->attrs, "_cannot_be_deleted", true);
    if (st == GM_OK && o->no_const_fold >= 0) st = gm_attr_set_bool(&n->attrs, "no_need_constant_folding", o->no_const_fold);
    if (st == GM_OK && o->copy_batch_label && producer) {
        const char *label = gm_attrs_get_string(producer->attrs, "_batch_label");
        if (label) st = gm_attr_set_string(&n->attrs, "_batch_label", label);
    }
    if (st != GM_OK) return gm_error_set(c->err, GM_ERR_NOMEM, "%s: out of memory", c->m->source);
    return GM_OK;
}

gm_node *gm_pass_insert_before(gm_pass_ctx *c, gm_node *dst, size_t in, const char *name, const char *type,
                               const gm_copy_opts *opts, const char *reason)
{
    gm_node *const dsts[1] = {dst};
    const size_t idx[1] = {in};
    return gm_pass_insert_before_many(c, dsts, idx, 1, name, type, opts, reason);
}

gm_node *gm_pass_insert_before_many(gm_pass_ctx *c, gm_node *const *dsts, const size_t *in, size_t k,
                                    const char *name, const char *type, const gm_copy_opts *opts,
                                    const char *reason)
{
    char uname[512], key[512];
    gm_pass_unique_name(c->m, name, uname, sizeof uname);
    const gm_node *producer = k && in[0] < dsts[0]->n_in ? dsts[0]->in[in[0]].src : NULL;
    gm_node *n = gm_edit_insert_before_many(dsts, in, k, uname, type, c->err);
    if (!n || dress(c, n, producer, opts ? opts : &gm_copy_default) != GM_OK) return NULL;
    if (gm_pass_record(c, n, dsts[0], true, k == 1 ? (int32_t)in[0] : -1, reason) != GM_OK) return NULL;
    gm_log(GM_LOG_INFO, "[MemConflict][INSERT][NODE] %s before %s", uname,
           gm_anchor_key(dsts[0], false, (uint32_t)in[0], key, sizeof key));
    return n;
}

gm_node *gm_pass_insert_after(gm_pass_ctx *c, gm_node *src, size_t out, const char *name, const char *type,
                              const gm_copy_opts *opts, const char *reason)
{
    char uname[512], key[512];
    gm_pass_unique_name(c->m, name, uname, sizeof uname);
    gm_node *n = gm_edit_insert_after(src, out, uname, type, c->err);
    if (!n || dress(c, n, src, opts ? opts : &gm_copy_default) != GM_OK) return NULL;
    if (gm_pass_record(c, n, src, false, (int32_t)out, reason) != GM_OK) return NULL;
    gm_log(GM_LOG_INFO, "[MemConflict][INSERT][NODE] %s after %s, index: %u", uname,
           gm_anchor_key(src, true, (uint32_t)out, key, sizeof key), (unsigned)out);
    return n;
}

gm_status gm_pass_warn(gm_pass_ctx *c, const char *code, const char *fmt, ...)
{
    gm_pass_report *r = c->report;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (gm_grow((void **)&r->warnings, sizeof *r->warnings, r->n_warnings + 1, &r->cap_warnings))
        return gm_error_set(c->err, GM_ERR_NOMEM, "%s: out of memory", c->m->source);
    gm_lint_warning *w = &r->warnings[r->n_warnings];
    snprintf(w->code, sizeof w->code, "%s", code);
    if (!(w->message = gm_strdup(msg))) return gm_error_set(c->err, GM_ERR_NOMEM, "%s: out of memory", c->m->source);
    r->n_warnings++;
    gm_log(GM_LOG_WARN, "%s: %s", code, msg);
    return GM_OK;
}
