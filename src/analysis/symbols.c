/*
 * symbols.c — GE's symbol table (reference §2.2).
 *
 * Anchors are numbered densely: node t's outputs from out_base[t - lo], its inputs from
 * in_base[t - lo] (t = topological id). The table covers the topological ids [lo, hi): the
 * whole model, or one graph and the graphs below it, which GetAllNodes order keeps together
 * (a node's subgraphs follow it), so a graph's table costs its own size, not the model's.
 * Each symbol keeps its anchors as a linked list (head, tail, next[]) in the order they
 * joined; a union re-points the smaller list's anchors and appends it to the larger, so every
 * anchor moves O(log n) times: near-linear overall.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ref.h"
#include "analysis/symbols.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"
#include "util/parallel.h"
#include "util/radix.h"

typedef struct sym {
    int32_t head, tail, size;
    int32_t name_anchor; /* the anchor that created it names it */
    bool dead;           /* absorbed by a union */
} sym;

struct gm_symbols {
    const gm_model *m;
    uint64_t edits;               /* m->edits when built */
    const gm_graph *top;          /* the graph built as its own model (the root for a model) */
    size_t lo, hi;                /* the topological ids covered */
    uint32_t *out_base, *in_base; /* by topo id - lo */
    uint32_t *anchor_node;        /* anchor -> topo id */
    uint32_t *anchor_index;       /* anchor -> index << 1 | out */
    int32_t *sym_of, *next;       /* by anchor */
    uint32_t n_anchors;
    sym *syms;
    size_t n_syms, cap_syms;
    int32_t *sorted; /* live symbols by name */
    int32_t *rank;   /* symbol id -> its place in sorted, -1 for none */
    size_t n_sorted;
};

static uint32_t anchor_id(const gm_symbols *s, const gm_node *n, bool out, uint32_t index)
{
    return (out ? s->out_base : s->in_base)[(size_t)n->topo_id - s->lo] + index;
}

gm_anchor gm_symbols_anchor(const gm_symbols *s, int32_t a)
{
    gm_anchor x = {gm_model_node_at(s->m, s->anchor_node[a]), s->anchor_index[a] >> 1, (s->anchor_index[a] & 1) != 0};
    return x;
}

/* ---- building ---- */

/* Is n one of the table's nodes (a current node of top or below)? */
static bool covered(const gm_symbols *s, const gm_node *n)
{
    return n->topo_id >= 0 && (size_t)n->topo_id >= s->lo && (size_t)n->topo_id < s->hi &&
           gm_model_node_at(s->m, (size_t)n->topo_id) == n;
}

static int32_t new_symbol(gm_symbols *s, uint32_t a)
{
    if (gm_grow((void **)&s->syms, sizeof *s->syms, s->n_syms + 1, &s->cap_syms)) return -1;
    int32_t id = (int32_t)s->n_syms++;
    s->syms[id] = (sym){(int32_t)a, (int32_t)a, 1, (int32_t)a, false};
    s->sym_of[a] = id;
    s->next[a] = -1;
    return id;
}

static void append_anchor(gm_symbols *s, int32_t id, uint32_t a)
{
    sym *y = &s->syms[id];
    s->next[y->tail] = (int32_t)a;
    s->next[a] = -1;
    y->tail = (int32_t)a;
    y->size++;
    s->sym_of[a] = id;
}

/* GE's UnionSymbolMapping: the larger list absorbs the smaller; on a tie b's symbol survives. */
static int32_t unite(gm_symbols *s, int32_t a, int32_t b)
{
    if (a == b) return a;
    int32_t keep = s->syms[a].size > s->syms[b].size ? a : b, gone = keep == a ? b : a;
    sym *k = &s->syms[keep], *g = &s->syms[gone];
    for (int32_t x = g->head; x >= 0; x = s->next[x]) s->sym_of[x] = keep;
    s->next[k->tail] = g->head;
    k->tail = g->tail;
    k->size += g->size;
    g->dead = true;
    g->size = 0;
    g->head = g->tail = -1;
    return keep;
}

/* Joins anchor a to symbol id (creating one when id < 0). */
static int join(gm_symbols *s, int32_t id, uint32_t a)
{
    if (id < 0) return new_symbol(s, a) < 0 ? -1 : 0;
    append_anchor(s, id, a);
    return 0;
}

static int32_t producer_symbol(const gm_symbols *s, const gm_node *n, uint32_t i)
{
    const gm_in_slot *slot = &n->in[i];
    return slot->src ? s->sym_of[anchor_id(s, slot->src, true, (uint32_t)slot->src_index)] : -1;
}

/* Subgraph NetOutput: an input with _parent_node_index p joins its producer and parent:out p —
 * unless the parent stacks it (gm_body_output_is_stacked): then parent:out p is a tensor of
 * its own, which the parent fills from this one. */
static int map_subgraph_output(gm_symbols *s, const gm_node *n, uint32_t i)
{
    const gm_node *parent = n->graph->parent;
    const gm_attr *pa = gm_attr_find(n->in_desc[i].attrs, "_parent_node_index");
    int32_t mine = producer_symbol(s, n, i);
    if (!pa || pa->kind != GM_ATTR_INT || pa->u.i < 0 || pa->u.i >= (int64_t)parent->n_out ||
        gm_body_output_is_stacked(n, i))
        return join(s, mine, anchor_id(s, n, false, i));
    int32_t theirs = s->sym_of[anchor_id(s, parent, true, (uint32_t)pa->u.i)];
    int32_t u = mine < 0 ? theirs : theirs < 0 ? mine : unite(s, mine, theirs);
    return join(s, u, anchor_id(s, n, false, i));
}

/* Merge / StreamMerge: every connected producer's symbol joins into one, then every input,
 * and the NextIteration named by _next_iteration_node closes the loop edge. */
static int map_merge_inputs(gm_symbols *s, const gm_node *n)
{
    int32_t u = -1;
    for (uint32_t i = 0; i < n->n_in; i++) {
        int32_t p = producer_symbol(s, n, i);
        if (p >= 0) u = u < 0 ? p : unite(s, u, p);
    }
    for (uint32_t i = 0; i < n->n_in; i++) {
        if (join(s, u, anchor_id(s, n, false, i))) return -1;
        if (u < 0) u = s->sym_of[anchor_id(s, n, false, i)];
    }
    const char *ni = gm_attrs_get_string(n->attrs, "_next_iteration_node");
    const gm_node *nx = ni ? gm_model_find_node(s->m, ni) : NULL;
    if (nx && !covered(s, nx)) nx = NULL;
    if (nx && nx->n_out > 0 && u >= 0) {
        uint32_t a = anchor_id(s, nx, true, 0);
        if (s->sym_of[a] < 0) return join(s, u, a);
        unite(s, u, s->sym_of[a]);
    }
    return 0;
}

static int map_inputs(gm_symbols *s, const gm_node *n)
{
    /* Only NetOutputs below the top graph stand for their parent's outputs: the top graph's
     * own NetOutput is an ordinary node (GE's GetRefMapping run on that graph). */
    bool in_subgraph = n->graph != s->top && n->graph->parent != NULL;
    if (n->op->flags & GM_OP_MERGE) return map_merge_inputs(s, n);
    for (uint32_t i = 0; i < n->n_in; i++) {
        int rc = in_subgraph && (n->op->flags & GM_OP_NETOUTPUT)
                     ? map_subgraph_output(s, n, i)
                     : join(s, producer_symbol(s, n, i), anchor_id(s, n, false, i));
        if (rc) return -1;
    }
    return 0;
}

/* GE's "ref from other": a RefData named by ref_var_src_var_name, or a subgraph RefData
 * ordered after a subgraph Data by a control edge. */
static int32_t ref_from_other(const gm_symbols *s, const gm_node *n, uint32_t k)
{
    const char *var = gm_attrs_get_string(n->out[k].desc.attrs, "ref_var_src_var_name");
    if (var) {
        const gm_node *x = gm_model_find_node(s->m, var);
        if (x && x->graph == n->graph && covered(s, x) && !strcmp(x->type, "RefData") && x->n_out > 0)
            return s->sym_of[anchor_id(s, x, true, 0)];
    }
    if (n->graph->parent && (n->op->flags & GM_OP_VAR_LIKE) && (n->op->flags & GM_OP_DATA)) {
        for (uint32_t i = 0; i < n->ctrl_in.n; i++) {
            const gm_node *d = n->ctrl_in.v[i];
            if (gm_subgraph_data_parent_index(d) >= 0 && d->n_out > 0) return s->sym_of[anchor_id(s, d, true, 0)];
        }
    }
    return -1;
}

static int map_outputs(gm_symbols *s, const gm_node *n)
{
    /* The top graph's own Data nodes are ordinary nodes: their parent is outside the table. */
    int64_t parent_in = n->graph == s->top ? -1 : gm_subgraph_data_parent_index(n);
    for (uint32_t k = 0; k < n->n_out; k++) {
        uint32_t a = anchor_id(s, n, true, k), in;
        if (s->sym_of[a] >= 0) continue; /* already joined (a parent output, a NextIteration) */
        int32_t target = ref_from_other(s, n, k);
        if (target < 0 && gm_ref_input_of_output(n, k, &in)) {
            if (parent_in >= 0) {
                /* Subgraph Data: GE's Data in 0 stands for the parent's input. */
                const gm_node *p = n->graph->parent;
                if (parent_in < (int64_t)p->n_in) target = s->sym_of[anchor_id(s, p, false, (uint32_t)parent_in)];
            } else if (in < n->n_in) {
                target = s->sym_of[anchor_id(s, n, false, in)];
            }
        }
        if (join(s, target, a)) return -1;
    }
    return 0;
}

/* A name and its first 8 bytes as a big-endian number (zeros past its end): comparing the
 * numbers orders as strcmp does on those bytes, so strcmp runs only on equal prefixes. */
typedef struct named {
    uint64_t prefix;
    const char *name;
    int32_t id;
} named;

static uint64_t name_prefix(const char *s)
{
    uint64_t p = 0;
    int i = 0;
    for (; i < 8 && s[i]; i++) p = p << 8 | (unsigned char)s[i];
    for (; i < 8; i++) p <<= 8;
    return p;
}

/* Names of one prefix, past it (a prefix ending in a zero byte holds the whole name: equal). */
static int by_rest(const void *pa, const void *pb)
{
    const named *a = pa, *b = pb;
    return (a->prefix & 0xff) ? strcmp(a->name + 8, b->name + 8) : 0;
}

static int by_name(const void *pa, const void *pb)
{
    const named *a = pa, *b = pb;
    if (a->prefix != b->prefix) return a->prefix < b->prefix ? -1 : 1;
    return by_rest(a, b);
}

static uint64_t prefix_of(const void *e) { return ((const named *)e)->prefix; }

/* The runs of one prefix in v[from, to) (after the radix sort), each qsorted by the rest. */
static void sort_runs(named *v, size_t from, size_t to)
{
    for (size_t i = from, j; i < to; i = j) {
        for (j = i + 1; j < to && v[j].prefix == v[i].prefix;) j++;
        if (j - i > 1) qsort(v + i, j - i, sizeof *v, by_rest);
    }
}

/* Big tables (past 65,536 names) name their symbols and sort the runs of one prefix in parts
 * side by side: each part reads its own share of the model (a million names read from memory,
 * not cache). The radix passes stay on one thread; the order is the same on any number. */
enum { NAMES_APART = 65536 };

typedef struct runs_job {
    named *v;
    size_t cut[GM_PARALLEL_MAX + 1]; /* part p sorts the runs in [cut[p], cut[p + 1]) */
} runs_job;

static void runs_part(void *ctx, unsigned part, unsigned parts)
{
    (void)parts;
    runs_job *j = ctx;
    sort_runs(j->v, j->cut[part], j->cut[part + 1]);
}

/* v[0, n) in name order: past 65,536 names a radix sort on the prefixes (util/radix.h), then
 * qsort within each run of one prefix; a short list (or no memory for the passes) is qsorted at
 * once. A million names: a tenth of qsort's time on names that share long prefixes (a block's
 * nodes). */
static void sort_by_name(named *v, size_t n, unsigned parts)
{
    static const gm_radix_key keys[] = {prefix_of};
    if (n < NAMES_APART || !gm_radix_sort(v, n, sizeof *v, keys, 1)) {
        qsort(v, n, sizeof *v, by_name);
        return;
    }
    runs_job j = {.v = v};
    for (unsigned p = 1; p < parts; p++) {
        size_t c = n / parts * p < j.cut[p - 1] ? j.cut[p - 1] : n / parts * p;
        while (c < n && v[c].prefix == v[c - 1].prefix) c++; /* cut where a run begins */
        j.cut[p] = c;
    }
    j.cut[parts] = n;
    gm_parallel_run(parts, runs_part, &j);
}

/* Writes "<node>_out_<i>" / "<node>_in_<i>" at p (NUL-terminated); returns its length.
 * snprintf would cost as much as the whole sort at a million symbols. */
static size_t put_name(char *p, const gm_anchor *x)
{
    size_t len = strlen(x->node->name);
    memcpy(p, x->node->name, len);
    memcpy(p + len, x->out ? "_out_" : "_in_", x->out ? 5 : 4);
    len += x->out ? 5 : 4;
    char digits[12];
    size_t d = 0;
    uint32_t v = x->index;
    do digits[d++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (d) p[len++] = digits[--d];
    p[len] = '\0';
    return len;
}

/* Bytes put_name writes for x, NUL included. */
static size_t name_size(const gm_anchor *x)
{
    size_t digits = 1;
    for (uint32_t v = x->index; v >= 10; v /= 10) digits++;
    return strlen(x->node->name) + (x->out ? 5 : 4) + digits + 1;
}

/* GE iterates symbols in name order: format each live symbol's name once and sort (formatting
 * inside the comparison would cost a format per comparison). In parts on a big table: each part
 * counts, then formats into its own buffer, its share of the symbols, in index order. */
typedef struct names_job {
    const gm_symbols *s;
    named *v;
    size_t live[GM_PARALLEL_MAX], bytes[GM_PARALLEL_MAX], first[GM_PARALLEL_MAX];
    char *buf[GM_PARALLEL_MAX]; /* NULL after format_part: no memory */
} names_job;

static void count_part(void *ctx, unsigned part, unsigned parts)
{
    names_job *j = ctx;
    size_t b, e, live = 0, bytes = 0;
    gm_parallel_share(j->s->n_syms, part, parts, &b, &e);
    for (size_t i = b; i < e; i++) {
        if (j->s->syms[i].dead) continue;
        gm_anchor x = gm_symbols_anchor(j->s, j->s->syms[i].name_anchor);
        live++;
        bytes += name_size(&x);
    }
    j->live[part] = live;
    j->bytes[part] = bytes;
}

static void format_part(void *ctx, unsigned part, unsigned parts)
{
    names_job *j = ctx;
    size_t b, e;
    gm_parallel_share(j->s->n_syms, part, parts, &b, &e);
    char *p = j->buf[part] = gm_malloc(j->bytes[part] ? j->bytes[part] : 1);
    if (!p) return;
    named *v = j->v + j->first[part];
    for (size_t i = b; i < e; i++) {
        if (j->s->syms[i].dead) continue;
        gm_anchor x = gm_symbols_anchor(j->s, j->s->syms[i].name_anchor);
        size_t len = put_name(p, &x);
        *v++ = (named){name_prefix(p), p, (int32_t)i};
        p += len + 1;
    }
}

static gm_status sort_symbols(gm_symbols *s, gm_error *err)
{
    const unsigned parts = s->n_syms >= NAMES_APART ? gm_parallel_parts(0, 2) : 1;
    names_job j = {.s = s};
    gm_parallel_run(parts, count_part, &j);
    size_t live = 0;
    for (unsigned p = 0; p < parts; p++) {
        j.first[p] = live;
        live += j.live[p];
    }
    j.v = gm_malloc((live ? live : 1) * sizeof *j.v);
    s->sorted = gm_malloc((live ? live : 1) * sizeof *s->sorted);
    s->rank = gm_malloc((s->n_syms ? s->n_syms : 1) * sizeof *s->rank);
    bool ok = j.v && s->sorted && s->rank;
    if (ok) gm_parallel_run(parts, format_part, &j);
    for (unsigned p = 0; ok && p < parts; p++) ok = j.buf[p] != NULL;
    gm_status st = GM_OK;
    if (!ok) {
        st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", s->m->source);
    } else {
        s->n_sorted = live;
        sort_by_name(j.v, live, parts);
        for (size_t id = 0; id < s->n_syms; id++) s->rank[id] = -1;
        for (size_t i = 0; i < live; i++) s->sorted[i] = j.v[i].id, s->rank[j.v[i].id] = (int32_t)i;
    }
    gm_free(j.v);
    for (unsigned p = 0; p < parts; p++) gm_free(j.buf[p]);
    return st;
}

static gm_status index_anchors(gm_symbols *s, gm_error *err)
{
    size_t nn = s->hi - s->lo;
    uint64_t total = 0;
    s->out_base = gm_malloc((nn + 1) * sizeof *s->out_base);
    s->in_base = gm_malloc((nn + 1) * sizeof *s->in_base);
    if (!s->out_base || !s->in_base) goto oom;
    for (size_t t = 0; t < nn; t++) {
        const gm_node *n = gm_model_node_at(s->m, s->lo + t);
        s->out_base[t] = (uint32_t)total;
        s->in_base[t] = (uint32_t)(total + n->n_out);
        total += (uint64_t)n->n_out + n->n_in;
        if (total > INT32_MAX) return gm_error_set(err, GM_ERR_INPUT, "%s: too many anchors", s->m->source);
    }
    s->n_anchors = (uint32_t)total;
    size_t na = total ? (size_t)total : 1;
    s->anchor_node = gm_malloc(na * sizeof *s->anchor_node);
    s->anchor_index = gm_malloc(na * sizeof *s->anchor_index);
    s->sym_of = gm_malloc(na * sizeof *s->sym_of);
    s->next = gm_malloc(na * sizeof *s->next);
    if (!s->anchor_node || !s->anchor_index || !s->sym_of || !s->next) goto oom;
    for (size_t t = 0; t < nn; t++) {
        const gm_node *n = gm_model_node_at(s->m, s->lo + t);
        for (uint32_t k = 0; k < n->n_out; k++) {
            s->anchor_node[s->out_base[t] + k] = (uint32_t)(s->lo + t);
            s->anchor_index[s->out_base[t] + k] = k << 1 | 1u;
        }
        for (uint32_t i = 0; i < n->n_in; i++) {
            s->anchor_node[s->in_base[t] + i] = (uint32_t)(s->lo + t);
            s->anchor_index[s->in_base[t] + i] = i << 1;
        }
    }
    memset(s->sym_of, 0xff, na * sizeof *s->sym_of);
    return GM_OK;
oom:
    return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", s->m->source);
}

static bool below_top(const gm_symbols *s, const gm_node *n)
{
    const gm_graph *g = n->graph;
    /* Each step moves one graph up; a model has finitely many levels. */
    for (size_t guard = 0; g && g != s->top && guard <= s->m->n_graphs; guard++) g = g->parent ? g->parent->graph : NULL;
    return g == s->top;
}

/* The run of topological ids that holds top and the graphs below it. GetAllNodes order makes
 * it one run; a model that is not sorted breaks that, and is refused. */
static gm_status find_range(gm_symbols *s, gm_error *err)
{
    size_t nn = gm_model_node_count(s->m), own = 0, lo = nn;
    if (s->top == gm_model_root(s->m)) {
        s->lo = 0;
        s->hi = nn;
        return GM_OK;
    }
    for (uint32_t i = 0; i < s->top->nodes.n; i++) {
        const gm_node *n = s->top->nodes.v[i];
        if (n->dead) continue;
        own++;
        if (n->topo_id >= 0 && (size_t)n->topo_id < lo) lo = (size_t)n->topo_id;
    }
    size_t hi = own ? lo : 0, seen = 0;
    if (!own) lo = 0;
    for (; hi < nn && below_top(s, gm_model_node_at(s->m, hi)); hi++) seen += gm_model_node_at(s->m, hi)->graph == s->top;
    if (seen != own)
        return gm_error_set(err, GM_ERR_INTERNAL, "%s: graph '%s': symbols need a sorted model", s->m->source, s->top->name);
    s->lo = lo;
    s->hi = hi;
    return GM_OK;
}

static gm_status build(const gm_model *m, const gm_graph *top, gm_symbols **out, gm_error *err)
{
    *out = NULL;
    gm_symbols *s = gm_calloc(1, sizeof *s);
    if (!s) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
    s->m = m;
    s->edits = m->edits;
    s->top = top;
    gm_status st = find_range(s, err);
    if (st == GM_OK) st = index_anchors(s, err);
    for (size_t t = s->lo; st == GM_OK && t < s->hi; t++) {
        const gm_node *n = gm_model_node_at(m, t);
        if (map_inputs(s, n) || map_outputs(s, n)) st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
    }
    if (st == GM_OK) st = sort_symbols(s, err);
    if (st != GM_OK) {
        gm_symbols_free(s);
        return st;
    }
    *out = s;
    return GM_OK;
}

gm_status gm_symbols_build(const gm_model *m, gm_symbols **out, gm_error *err)
{
    return build(m, gm_model_root(m), out, err);
}

gm_status gm_symbols_build_graph(const gm_model *m, const gm_graph *g, gm_symbols **out, gm_error *err)
{
    if (!g || gm_graph_model(g) != m) {
        *out = NULL;
        return gm_error_set(err, GM_ERR_INTERNAL, "%s: symbols of a graph that is not the model's", m->source);
    }
    return build(m, g, out, err);
}

bool gm_symbols_current(const gm_symbols *s, const gm_model *m)
{
    return s && s->m == m && s->top == gm_model_root(m) && s->edits == m->edits && m->sorted;
}

void gm_symbols_restamp(gm_symbols *s, const gm_model *m)
{
    assert(s->m == m && m->sorted);
    s->edits = m->edits;
}

void gm_symbols_free(gm_symbols *s)
{
    if (!s) return;
    gm_free(s->out_base);
    gm_free(s->in_base);
    gm_free(s->anchor_node);
    gm_free(s->anchor_index);
    gm_free(s->sym_of);
    gm_free(s->next);
    gm_free(s->syms);
    gm_free(s->sorted);
    gm_free(s->rank);
    gm_free(s);
}

/* ---- queries ---- */

int32_t gm_symbols_find(const gm_symbols *s, const gm_node *n, bool out, uint32_t index)
{
    if (!covered(s, n)) return -1;
    if (index >= (out ? n->n_out : n->n_in)) return -1;
    return s->sym_of[anchor_id(s, n, out, index)];
}

size_t gm_symbols_count(const gm_symbols *s) { return s->n_sorted; }
size_t gm_symbols_id_bound(const gm_symbols *s) { return s->n_syms; }
enum { PF_SYM = 20, PF_ANCHOR = 14, PF_SLOT = 9, PF_NODE = 4 };

void gm_symbols_prefetch(const gm_symbols *s, size_t i)
{
    const size_t n = s->n_sorted;
    if (i + PF_SYM < n) __builtin_prefetch(&s->syms[s->sorted[i + PF_SYM]]);
    if (i + PF_ANCHOR < n) {
        int32_t h = s->syms[s->sorted[i + PF_ANCHOR]].head;
        __builtin_prefetch(&s->anchor_node[h]);
        __builtin_prefetch(&s->anchor_index[h]);
    }
    if (i + PF_SLOT < n) __builtin_prefetch(&s->m->order.v[s->anchor_node[s->syms[s->sorted[i + PF_SLOT]].head]]);
    if (i + PF_NODE < n) __builtin_prefetch(s->m->order.v[s->anchor_node[s->syms[s->sorted[i + PF_NODE]].head]]);
}

int32_t gm_symbols_rank(const gm_symbols *s, size_t id) { return id < s->n_syms ? s->rank[id] : -1; }
int32_t gm_symbols_at(const gm_symbols *s, size_t i) { return i < s->n_sorted ? s->sorted[i] : -1; }
size_t gm_symbol_size(const gm_symbols *s, int32_t id) { return (size_t)s->syms[id].size; }
int32_t gm_symbol_first(const gm_symbols *s, int32_t id) { return s->syms[id].head; }
int32_t gm_symbols_next(const gm_symbols *s, int32_t a) { return s->next[a]; }

const char *gm_symbol_name(const gm_symbols *s, int32_t id, char *buf, size_t cap)
{
    gm_anchor x = gm_symbols_anchor(s, s->syms[id].name_anchor);
    snprintf(buf, cap, "%s_%s_%u", x.node->name, x.out ? "out" : "in", x.index);
    return buf;
}
