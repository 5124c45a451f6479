/*
 * inplace.c — GE's ProcessInplace (reference §4.1): let an output take over the buffer of one
 * of its node's inputs when the node offers it (`_output_inplace_ability` = [[out, in], ...])
 * and it is safe:
 *
 *  - the node is the last reader of the producer P of that input (largest topological id
 *    among all of P's data consumers), every consumer of P runs on P's stream (P without a
 *    stream, -1, takes its first consumer's), and no consumer of P is a `reference` op — so
 *    nobody can read the old value after the node overwrites it;
 *  - then, in GE's order: equal byte sizes; the input's symbol exists and is not read-only
 *    (an output of a Data, Variable or Const: memory that is not the graph's to overwrite); the
 *    node has no continuous outputs (they are placed as one block) and the output does not
 *    write a variable (ref_var_src_var_name); the two symbols differ and merging them breaks
 *    no layout rule (the what-if table of ConstructSingleNodeSymbolTable, §2.10: the input
 *    symbol's anchors followed by the output symbol's, checked by the layout optimizer);
 *  - graphmem, not GE: every other reader of the input's buffer (any input anchor of its
 *    symbol: readers through a view, a pass-through or a subgraph too, not only the producer's
 *    own consumers) runs before the node — on its stream earlier in the model order, or with a
 *    path of edges to it. GE asks it of the producer's consumers only, so a reader of a Reshape
 *    of the input, later in the order or on another stream, read the overwritten value
 *    (`graphmem run` found it; scenario inplace_reader_through_view);
 *  - each output, ascending, takes the first input still free.
 *
 * Every pair is judged on the symbol table as it stood when the pass began; the pairs kept
 * are applied together and taken back together (GE's all-or-nothing, §9.4-10) when an If/Case
 * branch or a While body would then need an Identity (§2.8).
 *
 * GE then merges the output's symbol into the input's in its table. graphmem keeps no table
 * between passes: whoever needs symbols next builds them from the descs, and reuse_input is
 * one of GetRefMapping's rules (§2.2 rule 4), so setting reuse_input / reuse_input_index IS
 * the merge.
 *
 * Cost: each producer's consumers are scanned once (cached by topological id); the layout
 * what-if runs per candidate pair on two symbols only, and only for pairs that could still be
 * chosen; one symbol table is built before and, when something was kept, one after.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/readers_before.h"
#include "analysis/ref.h"
#include "analysis/symbols.h"
#include "conflict/anchor_attrs.h"
#include "conflict/inplace.h"
#include "conflict/layout_conflict.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"

#define ABILITY_ATTR "_output_inplace_ability"

/* What the producer rules say about P, decided once per producer on the first question. */
enum { FACTS_UNKNOWN = 0, FACTS_OK, FACTS_STREAMS, FACTS_REFERENCE };

typedef struct producer_facts {
    int64_t last_reader; /* largest topological id among P's data consumers */
    uint8_t verdict;
} producer_facts;

typedef struct cand {
    uint32_t out, in;
    uint32_t pos; /* position in the attribute: the order among one output's inputs */
} cand;

/* A pair applied to a desc, with what the desc held before (to take it back). */
typedef struct kept {
    gm_node *n;
    uint32_t out, in;
    bool old_reuse;
    int64_t old_index;
} kept;

typedef struct run {
    gm_pass_ctx *c;
    gm_model *m;
    gm_graph *root;
    gm_symbols *s;
    producer_facts *facts; /* by topological id */
    int32_t *read_only;    /* sorted symbol ids */
    size_t n_read_only;
    cand *cand;
    size_t cap_cand;
    int32_t *used_sym; /* input symbols taken by the current node's chosen outputs */
    size_t cap_used_sym;
    gm_anchor *what_if;
    size_t cap_what_if;
    kept *kept;
    size_t n_kept, cap_kept;
    gm_layout_checker *checker; /* the layout what-if, its graph flags worked out once */
    gm_reach *reach;            /* paths between readers and writers, built on first need */
} run;

static gm_status oom(run *r) { return gm_error_set(r->c->err, GM_ERR_NOMEM, "%s: out of memory", r->m->source); }

/* ---- read-only symbols (step 1) ---- */

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static bool read_only_node(const gm_node *n)
{
    return gm_node_is(n, GM_OP_DATA) || gm_node_is(n, GM_OP_VARIABLE) || gm_node_is(n, GM_OP_VAR_LIKE) ||
           gm_node_is(n, GM_OP_CONST);
}

static gm_status collect_read_only(run *r)
{
    size_t cap = 0;
    for (size_t t = 0; t < gm_model_node_count(r->m); t++) {
        const gm_node *n = gm_model_node_at(r->m, t);
        if (!read_only_node(n)) continue;
        for (uint32_t k = 0; k < n->n_out; k++) {
            int32_t sym = gm_symbols_find(r->s, n, true, k);
            if (sym < 0) continue;
            if (gm_grow((void **)&r->read_only, sizeof *r->read_only, r->n_read_only + 1, &cap)) return oom(r);
            r->read_only[r->n_read_only++] = sym;
        }
    }
    if (r->n_read_only) qsort(r->read_only, r->n_read_only, sizeof *r->read_only, cmp_i32);
    return GM_OK;
}

static bool is_read_only(const run *r, int32_t sym)
{
    return r->n_read_only && bsearch(&sym, r->read_only, r->n_read_only, sizeof sym, cmp_i32) != NULL;
}

/* ---- the producer rules (step 2) ---- */

static const producer_facts *facts_of(run *r, const gm_node *p)
{
    producer_facts *f = &r->facts[p->topo_id];
    if (f->verdict != FACTS_UNKNOWN) return f;
    int64_t stream = p->stream;
    bool first = true;
    f->last_reader = -1;
    f->verdict = FACTS_OK;
    for (uint32_t k = 0; k < p->n_out; k++) {
        for (uint32_t j = 0; j < p->out[k].n_uses; j++) {
            const gm_node *u = p->out[k].uses[j].node;
            if (u->topo_id > f->last_reader) f->last_reader = u->topo_id;
            if (first && stream == -1) stream = u->stream;
            first = false;
            if (u->stream != stream && f->verdict == FACTS_OK) f->verdict = FACTS_STREAMS;
            if (gm_node_is(u, GM_OP_REFERENCE)) f->verdict = FACTS_REFERENCE;
        }
    }
    return f;
}

/* ---- one pair (steps 2 and 3) ---- */

/* Logs why a pair is not taken (debug level); GM_OK, so the rules can `return dropped(...)`. */
static gm_status dropped(const gm_node *n, const cand *x, const char *why)
{
    gm_log(GM_LOG_DEBUG, "Node %s cannot inplace output[%u] on input[%u]: %s", n->name, x->out, x->in, why);
    return GM_OK;
}

/* The layout what-if: the input symbol's anchors, then the output symbol's, as one symbol. */
static gm_status what_if_conflict(run *r, int32_t sym_in, int32_t sym_out, bool *conflict)
{
    size_t need = gm_symbol_size(r->s, sym_in) + gm_symbol_size(r->s, sym_out), k = 0;
    if (gm_grow((void **)&r->what_if, sizeof *r->what_if, need, &r->cap_what_if)) return oom(r);
    for (int32_t a = gm_symbol_first(r->s, sym_in); a >= 0; a = gm_symbols_next(r->s, a))
        r->what_if[k++] = gm_symbols_anchor(r->s, a);
    for (int32_t a = gm_symbol_first(r->s, sym_out); a >= 0; a = gm_symbols_next(r->s, a))
        r->what_if[k++] = gm_symbols_anchor(r->s, a);
    gm_layout_symbol merged = {r->what_if, k};
    gm_error e;
    gm_error_clear(&e);
    if (!r->checker) {
        gm_status st = gm_layout_checker_new(r->root, &r->checker, r->c->err);
        if (st != GM_OK) return st;
    }
    *conflict = gm_layout_checker_conflict(r->checker, &merged, 1, &e);
    if (e.code != GM_OK) return gm_error_set(r->c->err, e.code, "%s", e.message);
    return GM_OK;
}

/* Does the pair pass every rule of steps 2 and 3? */
static gm_status pair_ok(run *r, const gm_node *n, const cand *x, bool *ok)
{
    *ok = false;
    const gm_node *p = n->in[x->in].src;
    int32_t po = n->in[x->in].src_index;
    if (!p) return dropped(n, x, "the input is not connected");
    const producer_facts *f = facts_of(r, p);
    if (f->last_reader != n->topo_id) return dropped(n, x, "not the last reader of the producer");
    if (f->verdict == FACTS_STREAMS) return dropped(n, x, "the producer's readers run on other streams");
    if (f->verdict == FACTS_REFERENCE) return dropped(n, x, "a reader of the producer is a reference op");

    /* GetTensorSizeInBytes of the tensor the input reads: graphmem's input descs seldom carry
     * a shape, so the producer's output desc stands for it. An unknown size never matches. */
    int64_t in_size = gm_desc_size(&p->out[po].desc), out_size = gm_desc_size(&n->out[x->out].desc);
    if (in_size < 0 || out_size < 0 || in_size != out_size) return dropped(n, x, "sizes differ");

    int32_t sym_in = gm_symbols_find(r->s, n, false, x->in);
    if (sym_in < 0) return dropped(n, x, "the input has no symbol");
    if (is_read_only(r, sym_in)) return dropped(n, x, "the input's memory is read-only");
    bool before = false;
    if (gm_readers_before(r->m, &r->reach, n, x->in, &before) != GM_OK) return oom(r);
    if (!before) return dropped(n, x, "another reader of the input's buffer may run after the node");

    if (gm_attrs_get_string(n->out[x->out].desc.attrs, "ref_var_src_var_name"))
        return dropped(n, x, "the output writes a variable");

    int32_t sym_out = gm_symbols_find(r->s, n, true, x->out);
    if (sym_out < 0) return dropped(n, x, "the output has no symbol");
    if (sym_out == sym_in) return dropped(n, x, "already one symbol");
    /* graphmem: an output that is already another input (reference, pass-through, view,
     * reuse_input ...) cannot be given a second one — GetRefMapping takes the first rule that
     * holds, so reuse_input would be ignored or would replace the first. GE would union all
     * three buffers in its table; graphmem leaves the output as it is. */
    uint32_t already;
    if (gm_ref_input_of_output(n, x->out, &already)) return dropped(n, x, "the output already refers to an input");

    bool conflict = true;
    gm_status st = what_if_conflict(r, sym_in, sym_out, &conflict);
    if (st != GM_OK) return st;
    if (conflict) return dropped(n, x, "merging the symbols makes a memory-layout conflict");
    *ok = true;
    return GM_OK;
}

/* ---- one node ---- */

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->out != y->out) return x->out < y->out ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The pairs of `_output_inplace_ability` whose indices name a real output and input, in
 * output order, each output's inputs in attribute order. */
static gm_status read_candidates(run *r, const gm_node *n, const gm_attr *a, size_t *count)
{
    *count = 0;
    if (a->kind != GM_ATTR_LIST_LIST_INT) {
        bool empty_list = (a->kind == GM_ATTR_LIST_INT || a->kind == GM_ATTR_LIST_FLOAT ||
                           a->kind == GM_ATTR_LIST_STRING || a->kind == GM_ATTR_LIST_BOOL) &&
                          gm_attr_list_len(a) == 0;
        if (empty_list) return GM_OK;
        return gm_error_set(r->c->err, GM_ERR_INPUT,
                            "%s: graph '%s': node '%s': " ABILITY_ATTR " must be a list of [output, input] pairs, "
                            "not %s",
                            r->m->source, n->graph->name, n->name, gm_attr_kind_name(a->kind));
    }
    size_t rows = a->u.lli.n;
    /* Every entry is checked before any is used: a malformed attribute fails the pass. */
    for (size_t e = 0; e < rows; e++) {
        if (a->u.lli.lens[e] != 2)
            return gm_error_set(r->c->err, GM_ERR_INPUT,
                                "%s: graph '%s': node '%s': " ABILITY_ATTR " entry %zu has %zu values, wanted 2 "
                                "[output, input]",
                                r->m->source, n->graph->name, n->name, e, a->u.lli.lens[e]);
    }
    if (gm_grow((void **)&r->cand, sizeof *r->cand, rows ? rows : 1, &r->cap_cand)) return oom(r);
    size_t k = 0;
    for (size_t e = 0; e < rows; e++) {
        int64_t o = a->u.lli.rows[e][0], i = a->u.lli.rows[e][1];
        if (o < 0 || o >= (int64_t)n->n_out || i < 0 || i >= (int64_t)n->n_in) {
            gm_log(GM_LOG_DEBUG, "Node %s cannot inplace output[%lld] on input[%lld]: no such output or input", n->name,
                   (long long)o, (long long)i);
            continue;
        }
        r->cand[k++] = (cand){(uint32_t)o, (uint32_t)i, (uint32_t)e};
    }
    if (k > 1) qsort(r->cand, k, sizeof *r->cand, cmp_cand);
    *count = k;
    return GM_OK;
}

static gm_status keep(run *r, gm_node *n, uint32_t out, uint32_t in)
{
    if (gm_grow((void **)&r->kept, sizeof *r->kept, r->n_kept + 1, &r->cap_kept)) return oom(r);
    const gm_tensor_desc *d = &n->out[out].desc;
    r->kept[r->n_kept++] = (kept){n, out, in, d->reuse_input, d->reuse_input_index};
    return GM_OK;
}

static gm_status process_node(run *r, gm_node *n)
{
    const gm_attr *a = gm_attr_find(n->attrs, ABILITY_ATTR);
    if (!a) return GM_OK;
    size_t k = 0;
    gm_status st = read_candidates(r, n, a, &k);
    if (st != GM_OK || k == 0) return st;
    /* Continuous outputs are laid out as one block: none of them can live in an input. */
    if (gm_layout_needs_cont_out(n) || gm_layout_needs_nopad_out(n)) {
        gm_log(GM_LOG_DEBUG, "Node %s cannot inplace: its outputs are continuous", n->name);
        return GM_OK;
    }
    if (gm_grow((void **)&r->used_sym, sizeof *r->used_sym, k, &r->cap_used_sym)) return oom(r);
    size_t n_used = 0;
    /* Choose: each output, ascending, takes its first input that passes and that no earlier
     * output of this node took. GE compares input indices; graphmem compares the inputs'
     * symbols, which refuses the same input and also an input whose buffer is already another
     * output's of this node — taken through another input (the same tensor fed twice), or
     * before this pass (reuse_input, a reference, an earlier run): GE would let two outputs of
     * one node be written into one buffer. The rules are pure, so a pair is only judged when
     * it could still be chosen, and the cheap question comes first. */
    for (size_t x = 0; x < k && st == GM_OK;) {
        uint32_t out = r->cand[x].out;
        bool chosen = false;
        for (; x < k && r->cand[x].out == out && st == GM_OK; x++) {
            if (chosen) continue;
            int32_t sym_in = gm_symbols_find(r->s, n, false, r->cand[x].in);
            bool ok = false, taken = false;
            for (size_t u = 0; u < n_used && !taken; u++) taken = r->used_sym[u] == sym_in;
            for (uint32_t o = 0; o < n->n_out && !taken && sym_in >= 0; o++)
                taken = o != out && gm_symbols_find(r->s, n, true, o) == sym_in;
            if (taken) {
                dropped(n, &r->cand[x], "another output of the node took that input's buffer");
                continue;
            }
            st = pair_ok(r, n, &r->cand[x], &ok);
            if (st != GM_OK || !ok) continue;
            r->used_sym[n_used++] = sym_in;
            st = keep(r, n, out, r->cand[x].in);
            chosen = true;
        }
    }
    return st;
}

/* ---- applying (step 4) ---- */

static void apply(run *r)
{
    for (size_t i = 0; i < r->n_kept; i++)
        gm_desc_set_reuse_input(&r->kept[i].n->out[r->kept[i].out].desc, true, r->kept[i].in);
}

static void take_back(run *r)
{
    for (size_t i = 0; i < r->n_kept; i++)
        gm_desc_set_reuse_input(&r->kept[i].n->out[r->kept[i].out].desc, r->kept[i].old_reuse, r->kept[i].old_index);
}

/* ---- output_reuse_input_mem_indexes ---- */

typedef struct io_row {
    int64_t v[2]; /* model input index, model output index */
} io_row;

/* By output, then input. */
static int cmp_row(const void *a, const void *b)
{
    const io_row *x = a, *y = b;
    if (x->v[1] != y->v[1]) return x->v[1] < y->v[1] ? -1 : 1;
    return (x->v[0] > y->v[0]) - (x->v[0] < y->v[0]);
}

/* Rows [model input, model output] for every root NetOutput input whose symbol holds a root
 * Data's output, written to the root graph (or the attribute removed when there are none). */
static gm_status record_io_reuse(run *r, const gm_symbols *s)
{
    const gm_node *no = NULL;
    for (uint32_t i = 0; i < r->root->nodes.n && !no; i++)
        if (gm_node_is(r->root->nodes.v[i], GM_OP_NETOUTPUT)) no = r->root->nodes.v[i];
    io_row *rows = NULL;
    size_t n_rows = 0, cap = 0;
    int64_t ordinal = 0;
    gm_status st = GM_OK;
    for (uint32_t i = 0; no && i < r->root->nodes.n && st == GM_OK; i++) {
        const gm_node *d = r->root->nodes.v[i];
        if (!gm_node_is(d, GM_OP_DATA)) continue;
        int64_t index = gm_attrs_get_int(d->attrs, "index", ordinal);
        ordinal++;
        for (uint32_t k = 0; k < d->n_out && st == GM_OK; k++) {
            int32_t sym = gm_symbols_find(s, d, true, k);
            for (int32_t a = sym >= 0 ? gm_symbol_first(s, sym) : -1; a >= 0 && st == GM_OK; a = gm_symbols_next(s, a)) {
                gm_anchor y = gm_symbols_anchor(s, a);
                if (y.out || y.node != no) continue;
                if (gm_grow((void **)&rows, sizeof *rows, n_rows + 1, &cap)) st = oom(r);
                else rows[n_rows++] = (io_row){{index, y.index}};
            }
        }
    }
    if (st == GM_OK && n_rows == 0) {
        gm_attr_remove(&r->root->attrs, GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES);
    } else if (st == GM_OK) {
        qsort(rows, n_rows, sizeof *rows, cmp_row);
        const int64_t **ptr = gm_malloc(n_rows * sizeof *ptr);
        size_t *lens = gm_malloc(n_rows * sizeof *lens);
        if (!ptr || !lens) st = oom(r);
        for (size_t i = 0; st == GM_OK && i < n_rows; i++) {
            ptr[i] = rows[i].v;
            lens[i] = 2;
        }
        if (st == GM_OK)
            st = gm_attr_set_list_list_int(&r->root->attrs, GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES,
                                           (const int64_t *const *)ptr, lens, n_rows);
        if (st == GM_ERR_NOMEM) st = oom(r);
        gm_free(ptr);
        gm_free(lens);
        for (size_t i = 0; i < n_rows && st == GM_OK && gm_log_get_level() >= GM_LOG_INFO; i++)
            gm_log(GM_LOG_INFO, "Model output[%lld] reuses the memory of model input[%lld]", (long long)rows[i].v[1],
                   (long long)rows[i].v[0]);
    }
    gm_free(rows);
    return st;
}

/* ---- the pass ---- */

static void run_free(run *r)
{
    gm_symbols_free(r->s);
    gm_free(r->facts);
    gm_free(r->read_only);
    gm_free(r->cand);
    gm_free(r->used_sym);
    gm_free(r->what_if);
    gm_free(r->kept);
    gm_layout_checker_free(r->checker);
    gm_reach_free(r->reach);
}

/* Applies the kept pairs unless a control-node subgraph would then conflict; *kept_any says
 * whether they stayed. */
static gm_status merge(run *r, bool *kept_any)
{
    *kept_any = false;
    if (r->n_kept == 0) return GM_OK;
    apply(r);
    gm_error e;
    gm_error_clear(&e);
    bool conflict = gm_layout_ctrl_has_conflict(r->root, &e);
    if (e.code != GM_OK) {
        take_back(r);
        return gm_error_set(r->c->err, e.code, "%s", e.message);
    }
    if (conflict) {
        take_back(r);
        gm_log(GM_LOG_INFO,
               "Inplace of %zu output(s) undone: a control node's subgraph would have a memory conflict", r->n_kept);
        return GM_OK;
    }
    *kept_any = true;
    return GM_OK;
}

gm_status gm_pass_inplace(gm_pass_ctx *c)
{
    if (!c || !c->m || !gm_model_root(c->m))
        return gm_error_set(c ? c->err : NULL, GM_ERR_INPUT, "inplace: no model to process");
    run r = {.c = c, .m = c->m, .root = gm_model_root(c->m)};
    gm_status st = c->m->sorted ? GM_OK : gm_model_toposort(c->m, c->err);
    size_t n_nodes = gm_model_node_count(c->m);
    if (st == GM_OK && c->handoff && gm_symbols_current(*c->handoff, c->m)) {
        r.s = *c->handoff; /* the layout pass's table: nothing changed since it was built */
        *c->handoff = NULL;
    } else if (st == GM_OK) {
        st = gm_symbols_build(c->m, &r.s, c->err);
    }
    if (st == GM_OK && !(r.facts = gm_calloc(n_nodes ? n_nodes : 1, sizeof *r.facts))) st = oom(&r);
    if (st == GM_OK) st = collect_read_only(&r);
    for (size_t t = 0; st == GM_OK && t < n_nodes; t++) st = process_node(&r, gm_model_node_at(c->m, t));

    bool kept_any = false;
    if (st == GM_OK) st = merge(&r, &kept_any);
    if (st == GM_OK && kept_any) {
        /* The symbols as they are now, for the model outputs that landed in model inputs. */
        gm_symbols_free(r.s);
        r.s = NULL;
        st = gm_symbols_build(c->m, &r.s, c->err);
    }
    if (st == GM_OK) st = record_io_reuse(&r, r.s);
    if (st != GM_OK && kept_any) take_back(&r); /* a failure leaves the model as it was */
    if (st == GM_OK && kept_any) {
        for (size_t i = 0; i < r.n_kept; i++)
            gm_log(GM_LOG_INFO, "Node %s can inplace, output[%u] can reuse input[%u]", r.kept[i].n->name, r.kept[i].out,
                   r.kept[i].in);
    }
    if (st == GM_OK && c->handoff) { /* built after the merge's writes: current for the planner */
        gm_symbols_free(*c->handoff);
        *c->handoff = r.s;
        r.s = NULL;
    }
    run_free(&r);
    return st;
}
