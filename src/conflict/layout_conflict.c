/*
 * layout_conflict.c — GE's MemLayoutConflictOptimizer (reference §2.1, §2.7): which graphs
 * are processed, the per-graph Process loop over symbols, and the solving — an Identity
 * before each conflicting input, or after each conflicting output feeding all its readers —
 * named and dressed as GE's CreateIdentityOpDesc does. Also the check-only questions the
 * in-place pass asks (§2.10).
 *
 * Within one Process the symbol table is built once and not rebuilt after insertions (§9.3):
 * a later symbol may list anchors that an Identity now separates; IsSkipInsert keeps that
 * from inserting a second copy next to the first. After every Process, the continuous groups
 * of a graph whose symbols two groups share are checked as a whole (layout_groups.c), on a
 * table of the graph as the solves left it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conflict/layout_checkers.h"
#include "conflict/layout_conflict.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"
#include "util/parallel.h"

/* The op type of the copies this pass makes (a node to create, not a class to test). */
#define LAYOUT_IDENTITY_TYPE "Identity"

/* GE builds the copy's descs from the producer's output desc: desc attributes stay (all but
 * ref_var_src_var_name, dropped below), reuse_input is cleared; the node is protected, not
 * constant-folded, and carries the producer's _batch_label. */
static const gm_copy_opts k_layout_copy = {.keep_desc_attrs = true, .cannot_be_deleted = true, .no_const_fold = 0,
                                           .copy_batch_label = true};

static bool log_on(void) { return gm_log_get_level() >= GM_LOG_INFO; }

static gm_status run_fail(gm_pass_ctx *c)
{
    return c->err && c->err->code != GM_OK ? c->err->code : GM_ERR_INTERNAL;
}

/* ---- the Identity (CreateIdentityOpDesc) ---- */

/* Copies one attribute (any kind) onto a list. */
static gm_status copy_attr(gm_attr **to, const gm_attr *a)
{
    switch (a->kind) {
    case GM_ATTR_BOOL: return gm_attr_set_bool(to, a->name, a->u.b);
    case GM_ATTR_INT: return gm_attr_set_int(to, a->name, a->u.i);
    case GM_ATTR_FLOAT: return gm_attr_set_float(to, a->name, a->u.f);
    case GM_ATTR_STRING: return gm_attr_set_string(to, a->name, a->u.s.data);
    case GM_ATTR_BYTES: return gm_attr_set_bytes(to, a->name, a->u.s.data, a->u.s.len);
    case GM_ATTR_LIST_INT: return gm_attr_set_list_int(to, a->name, a->u.li.v, a->u.li.n);
    case GM_ATTR_LIST_FLOAT: return gm_attr_set_list_float(to, a->name, a->u.lf.v, a->u.lf.n);
    case GM_ATTR_LIST_STRING: return gm_attr_set_list_string(to, a->name, (const char *const *)a->u.ls.v, a->u.ls.n);
    case GM_ATTR_LIST_BOOL: return gm_attr_set_list_bool(to, a->name, a->u.lb.v, a->u.lb.n);
    case GM_ATTR_LIST_LIST_INT:
        return gm_attr_set_list_list_int(to, a->name, (const int64_t *const *)a->u.lli.rows, a->u.lli.lens, a->u.lli.n);
    case GM_ATTR_TENSOR_DESC: return gm_attr_set_tensor_desc(to, a->name, a->u.td);
    default: return GM_ERR_INTERNAL;
    }
}

static gm_status copy_named(gm_attr **to, const gm_attr *from, const char *name)
{
    const gm_attr *a = gm_attr_find(from, name);
    return a ? copy_attr(to, a) : GM_OK;
}

static gm_status move_named(gm_attr **to, gm_attr **from, const char *name)
{
    gm_status st = copy_named(to, *from, name);
    if (st == GM_OK) gm_attr_remove(from, name);
    return st;
}

/* Names, descs and the attributes GE's copy takes from the node it feeds (dst) and the node
 * it reads (src). */
static gm_status dress(gm_node *id, gm_node *dst, gm_node *src)
{
    gm_status st = GM_OK;
    char name[32];
    for (uint32_t j = 0; j < id->n_in && st == GM_OK; j++) {
        gm_attr_remove(&id->in_desc[j].attrs, "ref_var_src_var_name");
        if (id->n_in == 1) snprintf(name, sizeof name, "x");
        else snprintf(name, sizeof name, "x%u", j);
        st = gm_node_set_input_name(id, j, name);
    }
    for (uint32_t k = 0; k < id->n_out && st == GM_OK; k++) {
        gm_attr_remove(&id->out[k].desc.attrs, "ref_var_src_var_name");
        if (id->n_out == 1) snprintf(name, sizeof name, "y");
        else snprintf(name, sizeof name, "y%u", k);
        st = gm_node_set_output_name(id, k, name);
    }
    if (st == GM_OK) st = copy_named(&id->attrs, dst->attrs, "_stream_label");
    if (st == GM_OK) st = copy_named(&id->attrs, dst->attrs, "_rts_label_node");
    if (st == GM_OK) st = move_named(&id->attrs, &dst->attrs, "_is_connected_to_data");
    if (st == GM_OK && src) st = move_named(&id->attrs, &src->attrs, "_is_connected_to_netoutput");
    return st;
}

static gm_status dress_or_fail(gm_layout_run *r, gm_node *id, gm_node *dst, gm_node *src)
{
    gm_status st = dress(id, dst, src);
    if (st != GM_OK)
        return gm_error_set(r->c->err, st, "%s: graph '%s': cannot finish inserted identity '%s'", r->c->m->source,
                            id->graph->name, id->name);
    return GM_OK;
}

/* identity_<input index>_<node fed>_MemLayoutConflict_<n> */
static char *identity_name(gm_layout_run *r, uint32_t in, const gm_node *dst)
{
    size_t len = strlen(dst->name) + 64;
    char *s = gm_malloc(len);
    if (s) snprintf(s, len, "identity_%u_%s_MemLayoutConflict_%u", in, dst->name, r->counter++);
    else gm_error_set(r->c->err, GM_ERR_NOMEM, "%s: out of memory", r->c->m->source);
    return s;
}

gm_node *gm_layout_insert_before(gm_layout_run *r, gm_node *const *dsts, const size_t *in, size_t k,
                                 const char *reason)
{
    gm_node *src = dsts[0]->in[in[0]].src;
    char *name = identity_name(r, (uint32_t)in[0], dsts[0]);
    if (!name) return NULL;
    gm_node *id = gm_pass_insert_before_many(r->c, dsts, in, k, name, LAYOUT_IDENTITY_TYPE, &k_layout_copy, reason);
    gm_free(name);
    if (id && dress_or_fail(r, id, dsts[0], src) != GM_OK) return NULL;
    return id;
}

gm_node *gm_layout_insert_after(gm_layout_run *r, gm_node *src, uint32_t out, const char *reason)
{
    gm_use first = src->out[out].uses[0];
    char *name = identity_name(r, (uint32_t)first.index, first.node);
    if (!name) return NULL;
    gm_node *id = gm_pass_insert_after(r->c, src, out, name, LAYOUT_IDENTITY_TYPE, &k_layout_copy, reason);
    gm_free(name);
    if (id && dress_or_fail(r, id, first.node, src) != GM_OK) return NULL;
    return id;
}

/* ---- SolveConflict ---- */

static bool unknown_dims(const gm_tensor_desc *d)
{
    for (int32_t i = 0; i < d->ndims; i++)
        if (d->dims[i] < 0) return true;
    return false;
}

bool gm_layout_skip_insert(gm_anchor x, gm_log_level level)
{
    bool say = gm_log_get_level() >= level;
    const gm_node *n = x.node;
    bool unknown;
    if (x.out) {
        unknown = unknown_dims(&n->out[x.index].desc);
    } else {
        const gm_node *p = n->in[x.index].src;
        unknown = unknown_dims(&n->in_desc[x.index]) || (p && unknown_dims(&p->out[n->in[x.index].src_index].desc));
    }
    if (unknown) {
        if (say)
            gm_log(level, "[MemConflict] unknown shape, skip insert identity, node[%s], %s[%u].", n->name,
                   x.out ? "output" : "input", x.index);
        return true;
    }
    /* A copy already stands next to the anchor, serving it alone. */
    const gm_node *peer = NULL;
    if (!x.out) {
        const gm_node *p = n->in[x.index].src;
        if (p && gm_node_is(p, GM_OP_MEMCPY_LIKE) && p->out[n->in[x.index].src_index].n_uses == 1) peer = p;
    } else if (n->out[x.index].n_uses == 1 && gm_node_is(n->out[x.index].uses[0].node, GM_OP_MEMCPY_LIKE)) {
        peer = n->out[x.index].uses[0].node;
    }
    if (peer && say)
        gm_log(level, "[MemConflict] peer out is already %s(%s), skip insert identity.", peer->type, peer->name);
    return peer != NULL;
}

typedef struct keyed {
    char *key;
    const gm_lc_conflict *c;
} keyed;

static int by_key(const void *pa, const void *pb) { return strcmp(((const keyed *)pa)->key, ((const keyed *)pb)->key); }

static gm_status solve_one(gm_layout_run *r, const gm_lc_conflict *cf)
{
    gm_anchor x = cf->at;
    if (gm_layout_skip_insert(x, GM_LOG_INFO)) return GM_OK;
    char reason[160];
    snprintf(reason, sizeof reason, "[%s, %s]", gm_lt_name(cf->ta), gm_lt_name(cf->tb));
    if (!x.out) {
        gm_node *dst = x.node;
        size_t in = x.index;
        if (!dst->in[in].src) return GM_OK; /* nothing feeds it: nothing to separate */
        return gm_layout_insert_before(r, &dst, &in, 1, reason) ? GM_OK : run_fail(r->c);
    }
    if (x.node->out[x.index].n_uses == 0) {
        if (log_on()) gm_log(GM_LOG_INFO, "[MemConflict] %s_out_%u has no reader, skip insert identity.", x.node->name, x.index);
        return GM_OK;
    }
    return gm_layout_insert_after(r, x.node, x.index, reason) ? GM_OK : run_fail(r->c);
}

/* The conflicting anchors in the order of their key strings, GE's AnchorSet order. */
static gm_status solve(gm_layout_run *r, const gm_lc *lc)
{
    size_t n = lc->n_conf;
    keyed *v = gm_calloc(n, sizeof *v);
    gm_status st = v ? GM_OK : gm_error_set(r->c->err, GM_ERR_NOMEM, "%s: out of memory", r->c->m->source);
    for (size_t i = 0; st == GM_OK && i < n; i++) {
        gm_anchor x = lc->conf[i].at;
        size_t len = strlen(x.node->name) + 24;
        v[i].c = &lc->conf[i];
        if (!(v[i].key = gm_malloc(len))) st = gm_error_set(r->c->err, GM_ERR_NOMEM, "%s: out of memory", r->c->m->source);
        else snprintf(v[i].key, len, "%s_%s_%u", x.node->name, x.out ? "out" : "in", x.index);
    }
    if (st == GM_OK) qsort(v, n, sizeof *v, by_key);
    for (size_t i = 0; st == GM_OK && i < n; i++) st = solve_one(r, v[i].c);
    for (size_t i = 0; v && i < n; i++) gm_free(v[i].key);
    gm_free(v);
    return st;
}

/* ---- Process ---- */

/* The anchors of symbol sym into *v. */
static gm_status symbol_anchors(const gm_symbols *s, int32_t sym, gm_anchor **v, size_t *cap, size_t *n,
                                gm_error *err, const gm_model *m)
{
    *n = 0;
    if (gm_grow((void **)v, sizeof **v, gm_symbol_size(s, sym) ? gm_symbol_size(s, sym) : 1, cap))
        return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
    for (int32_t a = gm_symbol_first(s, sym); a >= 0; a = gm_symbols_next(s, a)) (*v)[(*n)++] = gm_symbols_anchor(s, a);
    return GM_OK;
}

/* ---- the symbols before the first conflict, evaluated side by side ---- */

/* A symbol whose evaluation finds no conflict changes nothing (only a solve edits the graph,
 * and nothing is logged below the info level), so the symbols before the first conflict can
 * be evaluated in parts on threads, each part with its own checker, and the loop in order
 * starts at the first that conflicts. A million-symbol root usually has none. The parts take
 * the symbols by id, which follows the model's order, not by name: each part then reads the
 * model's memory in order (a million nodes are far from the cache), and the first conflict
 * in name order is the least rank among those found. */
enum { EVAL_APART = 65536 };

typedef struct eval_part {
    const gm_symbols *s;
    const gm_model *m;
    gm_lc lc;
    gm_error err;
    size_t begin, end;   /* ids */
    size_t stop;         /* the least rank with a conflict or a failure; SIZE_MAX when none */
} eval_part;

static void eval_range(void *ctx, unsigned part, unsigned parts)
{
    (void)parts;
    eval_part *p = &((eval_part *)ctx)[part];
    gm_anchor *v = NULL;
    size_t cap = 0, n = 0;
    p->stop = SIZE_MAX;
    for (size_t id = p->begin; id < p->end; id++) {
        const int32_t r = gm_symbols_rank(p->s, id);
        if (r < 0 || (size_t)r >= p->stop) continue; /* not listed, or past a conflict found */
        if (symbol_anchors(p->s, (int32_t)id, &v, &cap, &n, &p->err, p->m) != GM_OK ||
            gm_lc_eval_symbol(&p->lc, v, n) != GM_OK || p->lc.n_conf) {
            p->stop = (size_t)r; /* the loop in order evaluates it again, and fails or solves there */
        }
    }
    gm_free(v);
}

/* How many of g's first symbols (in s's order) find no conflict; 0 when not worth threads.
 * *groups_shared: whether one of the symbols evaluated holds two continuous-group members. */
static size_t clean_prefix(const gm_graph *g, const gm_symbols *s, const gm_model *m, bool *groups_shared)
{
    size_t count = gm_symbols_count(s), bound = gm_symbols_id_bound(s);
    if (count < EVAL_APART || log_on() || gm_parallel_parts(0, 2) < 2) return 0;
    eval_part p[2];
    for (unsigned k = 0; k < 2; k++) {
        p[k] = (eval_part){.s = s, .m = m};
        gm_error_clear(&p[k].err);
        gm_lc_init(&p[k].lc, g, &p[k].err, false); /* here: it fills the graphs' shape caches */
        gm_parallel_share(bound, k, 2, &p[k].begin, &p[k].end);
    }
    gm_parallel_run(2, eval_range, p);
    size_t clean = p[0].stop < p[1].stop ? p[0].stop : p[1].stop;
    for (unsigned k = 0; k < 2; k++) {
        *groups_shared = *groups_shared || p[k].lc.groups_shared;
        gm_lc_fini(&p[k].lc);
    }
    return clean < count ? clean : count;
}

/* Checks g's symbols in name order, solving each one's conflicts before the next. The root's
 * table is kept in *keep (when keep is given) for a hand-off: valid only while nothing is
 * inserted after it was built (see gm_pass_layout_conflict). *groups_shared: whether the
 * continuous groups need checking as a whole afterwards (gm_lc.groups_shared). */
static gm_status process(gm_layout_run *r, gm_graph *g, gm_symbols **keep, bool *groups_shared)
{
    gm_pass_ctx *c = r->c;
    gm_lc lc;
    gm_lc_init(&lc, g, c->err, false);
    if (log_on())
        gm_log(GM_LOG_INFO,
               "[MemConflict] Start to check memory of static graph %s, is_root_graph_static: %d, "
               "is_feature_map_refreshable: %d, support_user_input_nopadding_continuous_output: %d, "
               "is_physical_memory_refreshable: %d",
               g->name, lc.fl.root_static, lc.fl.fm_refreshable, lc.fl.user_in_nopad_cont_out,
               lc.fl.physical_refreshable);
    gm_symbols *s = NULL;
    gm_status st = gm_graph_is_root(g) ? gm_symbols_build(c->m, &s, c->err) : gm_symbols_build_graph(c->m, g, &s, c->err);
    gm_anchor *v = NULL;
    size_t cap = 0, n = 0;
    /* Symbols in name order; each one's conflicts solved before the next is looked at. */
    bool prefix_shared = false;
    size_t from = st == GM_OK ? clean_prefix(g, s, c->m, &prefix_shared) : 0;
    for (size_t i = from; st == GM_OK && i < gm_symbols_count(s); i++) {
        st = symbol_anchors(s, gm_symbols_at(s, i), &v, &cap, &n, c->err, c->m);
        if (st == GM_OK) st = gm_lc_eval_symbol(&lc, v, n);
        if (st == GM_OK && lc.n_conf) st = solve(r, &lc);
    }
    gm_free(v);
    *groups_shared = prefix_shared || lc.groups_shared;
    if (keep && st == GM_OK && gm_graph_is_root(g)) *keep = s;
    else gm_symbols_free(s);
    gm_lc_fini(&lc);
    return st;
}

gm_status gm_pass_layout_conflict(gm_pass_ctx *c)
{
    if (!c || !c->m || !gm_model_root(c->m))
        return gm_error_set(c ? c->err : NULL, GM_ERR_INPUT, "layout conflict: no model to check");
    gm_layout_run r = {.c = c, .counter = 0};
    const char *root = gm_graph_name(gm_model_root(c->m));
    if (log_on()) gm_log(GM_LOG_INFO, "[MemConflict] Start to check memory of root graph %s.", root);
    gm_graph **tops = NULL;
    size_t n = 0;
    gm_status st = gm_layout_top_static_graphs(c->m, &tops, &n, c->err);
    if (st != GM_OK) return st;
    if (n == 0) {
        if (log_on()) gm_log(GM_LOG_INFO, "[MemConflict] Graph %s does not have any static subgraph, skip memory check pass.", root);
        gm_free(tops);
        return GM_OK;
    }
    st = gm_model_toposort(c->m, c->err);
    for (size_t i = 0; st == GM_OK && i < n; i++) st = gm_layout_ctrl_solve(&r, tops[i]);
    /* Topological ids decide some pairs: sort again after the control-node copies. */
    if (st == GM_OK) st = gm_model_toposort(c->m, c->err);
    gm_symbols *root_table = NULL;
    unsigned root_from = 0;
    bool root_shared = false;
    bool *shared = gm_calloc(n, sizeof *shared);
    if (st == GM_OK && !shared) st = gm_error_set(c->err, GM_ERR_NOMEM, "%s: out of memory", c->m->source);
    for (size_t i = 0; st == GM_OK && i < n; i++) {
        if (gm_graph_is_root(tops[i])) root_from = r.counter;
        st = process(&r, tops[i], &root_table, &shared[i]);
        if (gm_graph_is_root(tops[i])) root_shared = shared[i];
    }
    /* the root's table still describes the model when nothing was inserted since it was built
     * (a solve inserts a copy; nothing else here edits); kept for the groups and the hand-off */
    if (root_table && (st != GM_OK || r.counter != root_from || !c->m->sorted || (!c->handoff && !root_shared))) {
        gm_symbols_free(root_table);
        root_table = NULL;
    }
    if (st == GM_OK) st = gm_model_toposort(c->m, c->err);
    /* the continuous groups as a whole, on the graph the symbol checks left (layout_groups.c),
     * where a symbol is in two of them */
    for (size_t i = 0; st == GM_OK && i < n; i++) {
        if (!shared[i]) continue;
        bool is_root = gm_graph_is_root(tops[i]);
        gm_symbols *t = is_root ? root_table : NULL;
        if (is_root) root_table = NULL;
        unsigned before = r.counter;
        st = gm_layout_groups_solve(&r, tops[i], &t);
        if (st == GM_OK && r.counter != before) st = gm_model_toposort(c->m, c->err);
        if (is_root) root_table = t;
        else gm_symbols_free(t);
    }
    gm_free(shared);
    gm_free(tops);
    /* a table that is still the model's: the inplace pass takes it */
    if (st == GM_OK && root_table && c->handoff) {
        gm_symbols_free(*c->handoff);
        *c->handoff = root_table;
    } else {
        gm_symbols_free(root_table);
    }
    return st;
}

/* ---- questions without insertion ---- */

struct gm_layout_checker {
    gm_lc lc;
};

gm_status gm_layout_checker_new(const gm_graph *g, gm_layout_checker **out, gm_error *err)
{
    *out = gm_calloc(1, sizeof **out);
    if (!*out) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", g->model->source);
    gm_lc_init(&(*out)->lc, g, err, true);
    return GM_OK;
}

void gm_layout_checker_free(gm_layout_checker *c)
{
    if (!c) return;
    gm_lc_fini(&c->lc);
    gm_free(c);
}

bool gm_layout_checker_conflict(gm_layout_checker *c, const gm_layout_symbol *syms, size_t n_syms, gm_error *err)
{
    gm_error local;
    c->lc.err = err ? err : &local;
    c->lc.found = false;
    gm_status st = GM_OK;
    for (size_t i = 0; st == GM_OK && !c->lc.found && i < n_syms; i++)
        st = gm_lc_eval_symbol(&c->lc, syms[i].anchors, syms[i].n);
    return c->lc.found || st != GM_OK;
}

bool gm_layout_symbols_have_conflict(const gm_graph *g, const gm_layout_symbol *syms, size_t n_syms, gm_error *err)
{
    gm_layout_checker *c = NULL;
    if (gm_layout_checker_new(g, &c, err) != GM_OK) return true;
    bool found = gm_layout_checker_conflict(c, syms, n_syms, err);
    gm_layout_checker_free(c);
    return found;
}

bool gm_layout_graph_has_conflict(const gm_graph *g, const gm_symbols *s, gm_error *err)
{
    gm_error local;
    if (!err) err = &local;
    gm_lc lc;
    gm_lc_init(&lc, g, err, true);
    gm_anchor *v = NULL;
    size_t cap = 0, n = 0;
    gm_status st = GM_OK;
    for (size_t i = 0; st == GM_OK && !lc.found && i < gm_symbols_count(s); i++) {
        st = symbol_anchors(s, gm_symbols_at(s, i), &v, &cap, &n, err, g->model);
        if (st == GM_OK) st = gm_lc_eval_symbol(&lc, v, n);
    }
    bool found = lc.found || st != GM_OK;
    gm_free(v);
    gm_lc_fini(&lc);
    return found;
}
