/*
 * happens_before.c — events, vector clocks and stream-safe lifetimes (see happens_before.h).
 *
 * Events: one per node at its position in the model order; a node with subgraphs has a second,
 * its exit, placed after the last node of its bodies. Edges: a data or control input's exit
 * -> the consumer's enter; a parent's enter -> each node of its bodies -> the parent's exit;
 * each event -> the next event of its stream. The sequence of events is a topological order of
 * that DAG, so one walk gives every event its vector clock: vc[e][s] = the stream-s index of
 * the last stream-s event that reaches e (or e itself), -1 for none. "a reaches b" is then
 * vc[b][stream(a)] >= index(a), and along one stream the clocks only grow, which is what lets
 * gm_hb_life_span find each stream's first event after a symbol by search.
 */
#include "analysis/happens_before.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"
#include "util/distinct.h"

struct gm_hb {
    const gm_model *m;
    size_t n;            /* nodes */
    size_t n_ev, S;      /* events, streams */
    int64_t *end;        /* node topo id -> last position it covers */
    int32_t *ev_enter, *ev_exit; /* node topo id -> event */
    int64_t *ev_pos;     /* event -> model-order position (an exit: its parent's span end) */
    int32_t *ev_stream;  /* event -> dense stream */
    int32_t *ev_sidx;    /* event -> index among its stream's events */
    int32_t *vc;         /* n_ev x S */
    size_t *s_off;       /* stream -> first slot in s_ev (S + 1 entries) */
    int32_t *s_ev;       /* events grouped by stream, in order */
    int64_t *stream_ids; /* dense stream -> id, ascending */
    int32_t *while_up;   /* node topo id -> nearest enclosing While's topo id, -1 none */
};

static int32_t dense_stream(const gm_hb *hb, int64_t id)
{
    size_t lo = 0, hi = hb->S;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (hb->stream_ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return (int32_t)lo;
}

void gm_hb_free(gm_hb *hb)
{
    if (!hb) return;
    gm_free(hb->end);
    gm_free(hb->ev_enter);
    gm_free(hb->ev_exit);
    gm_free(hb->ev_pos);
    gm_free(hb->ev_stream);
    gm_free(hb->ev_sidx);
    gm_free(hb->vc);
    gm_free(hb->s_off);
    gm_free(hb->s_ev);
    gm_free(hb->stream_ids);
    gm_free(hb->while_up);
    gm_free(hb);
}

size_t gm_hb_stream_count(const gm_hb *hb) { return hb->S; }

int64_t gm_hb_span_end(const gm_hb *hb, const gm_node *n) { return hb->end[n->topo_id]; }

/* The nearest While around each node, so that an access climbs only the loops around it, not
 * every level of nesting (a value threaded through thousands of nested calls). Parents come
 * before their bodies in the model order. */
static void compute_while_up(gm_hb *hb)
{
    for (size_t t = 0; t < hb->n; t++) {
        const gm_node *p = gm_model_node_at(hb->m, t)->graph->parent;
        if (!p) hb->while_up[t] = -1;
        else if (gm_node_ctrl_kind(p) == GM_CTRL_WHILE) hb->while_up[t] = (int32_t)p->topo_id;
        else hb->while_up[t] = hb->while_up[p->topo_id];
    }
}

/* Span ends: children come after their parent, so walking backwards finishes a body before
 * its parent is looked at. */
static void compute_ends(gm_hb *hb)
{
    for (size_t t = 0; t < hb->n; t++) hb->end[t] = (int64_t)t;
    for (size_t t = hb->n; t-- > 0;) {
        const gm_node *x = gm_model_node_at(hb->m, t);
        const gm_node *parent = x->graph->parent;
        if (parent && hb->end[t] > hb->end[parent->topo_id]) hb->end[parent->topo_id] = hb->end[t];
    }
}

static gm_status collect_streams(gm_hb *hb)
{
    size_t n = hb->n;
    hb->stream_ids = gm_malloc((n ? n : 1) * sizeof *hb->stream_ids);
    if (!hb->stream_ids) return GM_ERR_NOMEM;
    for (size_t t = 0; t < n; t++) hb->stream_ids[t] = gm_model_node_at(hb->m, t)->stream;
    size_t S = gm_distinct_i64(hb->stream_ids, n);
    hb->S = S ? S : 1;
    if (!S) hb->stream_ids[0] = 0;
    return GM_OK;
}

static void vc_merge(gm_hb *hb, int32_t e, int32_t pred)
{
    if (pred < 0 || pred >= e) return;
    int32_t *row = hb->vc + (size_t)e * hb->S;
    const int32_t *p = hb->vc + (size_t)pred * hb->S;
    for (size_t s = 0; s < hb->S; s++)
        if (p[s] > row[s]) row[s] = p[s];
}

typedef struct walk {
    gm_hb *hb;
    int32_t *last_of_stream, *count_of_stream;
} walk;

/* Appends the enter (or exit) event of n and gives it its clock. */
static int32_t emit(walk *w, const gm_node *n, bool exit)
{
    gm_hb *hb = w->hb;
    int32_t e = (int32_t)hb->n_ev++;
    int32_t s = dense_stream(hb, n->stream);
    int32_t *row = hb->vc + (size_t)e * hb->S;
    for (size_t k = 0; k < hb->S; k++) row[k] = -1;
    hb->ev_stream[e] = s;
    hb->ev_pos[e] = exit ? hb->end[n->topo_id] : n->topo_id;
    if (exit) {
        vc_merge(hb, e, hb->ev_enter[n->topo_id]);
        for (uint32_t g = 0; g < n->n_sub; g++) {
            const gm_graph *sg = n->sub[g];
            for (uint32_t k = 0; k < sg->nodes.n; k++) vc_merge(hb, e, hb->ev_exit[sg->nodes.v[k]->topo_id]);
        }
    } else {
        /* an edge from a start writer orders nothing: it ran before every node, not where the
         * order has it (a Const on stream 3 after a reader there made that reader look ordered
         * before the Const's consumers on other streams; `graphmem run --plan` found the race) */
        for (uint32_t k = 0; k < n->n_in; k++)
            if (n->in[k].src && !gm_node_at_start(n->in[k].src)) vc_merge(hb, e, hb->ev_exit[n->in[k].src->topo_id]);
        for (uint32_t k = 0; k < n->ctrl_in.n; k++)
            if (!gm_node_at_start(n->ctrl_in.v[k])) vc_merge(hb, e, hb->ev_exit[n->ctrl_in.v[k]->topo_id]);
        if (n->graph->parent) vc_merge(hb, e, hb->ev_enter[n->graph->parent->topo_id]);
    }
    vc_merge(hb, e, w->last_of_stream[s]);
    w->last_of_stream[s] = e;
    hb->ev_sidx[e] = w->count_of_stream[s]++;
    row[s] = hb->ev_sidx[e];
    return e;
}

/* Walks the model order once; parents still open sit on a stack and are closed (their exit
 * emitted) before the first node past their span — innermost first. */
static gm_status emit_all(gm_hb *hb)
{
    walk w = {hb, gm_malloc(hb->S * sizeof(int32_t)), gm_calloc(hb->S, sizeof(int32_t))};
    int32_t *open = gm_malloc((hb->n ? hb->n : 1) * sizeof *open);
    gm_status st = GM_OK;
    if (!w.last_of_stream || !w.count_of_stream || !open) {
        st = GM_ERR_NOMEM;
        goto out;
    }
    for (size_t s = 0; s < hb->S; s++) w.last_of_stream[s] = -1;
    size_t depth = 0;
    for (size_t t = 0; t <= hb->n; t++) {
        while (depth && (t == hb->n || hb->end[open[depth - 1]] < (int64_t)t)) {
            int32_t p = open[--depth];
            hb->ev_exit[p] = emit(&w, gm_model_node_at(hb->m, (size_t)p), true);
        }
        if (t == hb->n) break;
        const gm_node *x = gm_model_node_at(hb->m, t);
        hb->ev_enter[t] = hb->ev_exit[t] = emit(&w, x, false);
        if (x->n_sub) open[depth++] = (int32_t)t;
    }
    /* events by stream, for the binary searches */
    for (size_t s = 0; s <= hb->S; s++) hb->s_off[s] = 0;
    for (size_t e = 0; e < hb->n_ev; e++) hb->s_off[hb->ev_stream[e] + 1]++;
    for (size_t s = 0; s < hb->S; s++) hb->s_off[s + 1] += hb->s_off[s];
    for (size_t e = 0; e < hb->n_ev; e++)
        hb->s_ev[hb->s_off[hb->ev_stream[e]] + (size_t)hb->ev_sidx[e]] = (int32_t)e;
out:
    gm_free(w.last_of_stream);
    gm_free(w.count_of_stream);
    gm_free(open);
    return st;
}

gm_status gm_hb_build(const gm_model *m, gm_hb **out, gm_error *err)
{
    *out = NULL;
    gm_hb *hb = gm_calloc(1, sizeof *hb);
    if (!hb) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    hb->m = m;
    hb->n = gm_model_node_count(m);
    size_t n = hb->n ? hb->n : 1, n_ev = 0;
    for (size_t t = 0; t < hb->n; t++) n_ev += gm_model_node_at(m, t)->n_sub ? 2 : 1;
    if (collect_streams(hb) != GM_OK) goto nomem;
    if (n_ev > INT32_MAX || (n_ev && hb->S > SIZE_MAX / sizeof(int32_t) / n_ev)) {
        gm_hb_free(hb);
        return gm_error_set(err, GM_ERR_NOMEM, "'%s': %zu events x %zu streams is too many for happens-before clocks",
                            gm_model_name(m), n_ev, hb->S);
    }
    size_t ne = n_ev ? n_ev : 1;
    hb->end = gm_malloc(n * sizeof *hb->end);
    hb->ev_enter = gm_malloc(n * sizeof *hb->ev_enter);
    hb->ev_exit = gm_malloc(n * sizeof *hb->ev_exit);
    hb->ev_pos = gm_malloc(ne * sizeof *hb->ev_pos);
    hb->ev_stream = gm_malloc(ne * sizeof *hb->ev_stream);
    hb->ev_sidx = gm_malloc(ne * sizeof *hb->ev_sidx);
    hb->vc = gm_malloc(ne * hb->S * sizeof *hb->vc);
    hb->s_off = gm_malloc((hb->S + 1) * sizeof *hb->s_off);
    hb->s_ev = gm_malloc(ne * sizeof *hb->s_ev);
    hb->while_up = gm_malloc(n * sizeof *hb->while_up);
    if (!hb->end || !hb->ev_enter || !hb->ev_exit || !hb->ev_pos || !hb->ev_stream || !hb->ev_sidx || !hb->vc ||
        !hb->s_off || !hb->s_ev || !hb->while_up)
        goto nomem;
    compute_ends(hb);
    compute_while_up(hb);
    if (emit_all(hb) != GM_OK) goto nomem;
    *out = hb;
    return GM_OK;
nomem:
    gm_hb_free(hb);
    return gm_error_set(err, GM_ERR_NOMEM, "out of memory building happens-before for '%s'", gm_model_name(m));
}

/* ---- one symbol's lifetime ------------------------------------------------------------ */

typedef struct loop_count {
    const gm_node *w; /* a While enclosing some access */
    size_t inside;    /* accesses inside it (any depth) */
} loop_count;

struct gm_hb_life {
    const gm_hb *hb;
    int32_t *last;     /* per dense stream: highest stream index accessed, -1 none */
    int32_t *touched;  /* streams with last >= 0 */
    size_t n_touched;
    int64_t first, last_pos;
    bool at_start, at_end;
    size_t accesses;
    loop_count *loops;
    size_t n_loops, cap_loops;
};

gm_status gm_hb_life_new(const gm_hb *hb, gm_hb_life **out)
{
    gm_hb_life *l = gm_calloc(1, sizeof *l);
    *out = NULL;
    if (!l) return GM_ERR_NOMEM;
    l->hb = hb;
    l->last = gm_malloc(hb->S * sizeof *l->last);
    l->touched = gm_malloc(hb->S * sizeof *l->touched);
    if (!l->last || !l->touched) {
        gm_hb_life_free(l);
        return GM_ERR_NOMEM;
    }
    for (size_t s = 0; s < hb->S; s++) l->last[s] = -1;
    gm_hb_life_reset(l);
    *out = l;
    return GM_OK;
}

void gm_hb_life_free(gm_hb_life *l)
{
    if (!l) return;
    gm_free(l->last);
    gm_free(l->touched);
    gm_free(l->loops);
    gm_free(l);
}

void gm_hb_life_reset(gm_hb_life *l)
{
    for (size_t i = 0; i < l->n_touched; i++) l->last[l->touched[i]] = -1;
    l->n_touched = 0;
    l->first = INT64_MAX, l->last_pos = -1;
    l->at_start = l->at_end = false;
    l->accesses = 0;
    l->n_loops = 0;
}

static void touch_event(gm_hb_life *l, int32_t e)
{
    const gm_hb *hb = l->hb;
    int32_t s = hb->ev_stream[e];
    if (l->last[s] < 0) l->touched[l->n_touched++] = s;
    if (hb->ev_sidx[e] > l->last[s]) l->last[s] = hb->ev_sidx[e];
    if (hb->ev_pos[e] < l->first) l->first = hb->ev_pos[e];
    if (hb->ev_pos[e] > l->last_pos) l->last_pos = hb->ev_pos[e];
}

gm_status gm_hb_life_add(gm_hb_life *l, const gm_node *n)
{
    const gm_hb *hb = l->hb;
    touch_event(l, hb->ev_enter[n->topo_id]);
    touch_event(l, hb->ev_exit[n->topo_id]);
    l->accesses++;
    /* count the access in every While around it: one used both inside and outside a loop lives
     * through the whole loop (the body runs again after the inside access) */
    for (int32_t up = hb->while_up[n->topo_id]; up >= 0; up = hb->while_up[up]) {
        const gm_node *w = gm_model_node_at(hb->m, (size_t)up);
        size_t j = 0;
        while (j < l->n_loops && l->loops[j].w != w) j++;
        if (j == l->n_loops) {
            if (l->n_loops == l->cap_loops && gm_grow((void **)&l->loops, sizeof *l->loops, l->n_loops + 1, &l->cap_loops))
                return GM_ERR_NOMEM;
            l->loops[l->n_loops++] = (loop_count){w, 0};
        }
        l->loops[j].inside++;
    }
    return GM_OK;
}

void gm_hb_life_at_start(gm_hb_life *l)
{
    l->at_start = true;
    l->accesses++;
}

void gm_hb_life_at_end(gm_hb_life *l)
{
    l->at_end = true;
    l->accesses++;
}

/* Does event e happen after every access gathered in l? (e is not one of them: callers
 * search strictly past each stream's last access.) */
static bool after_all(const gm_hb_life *l, int32_t e)
{
    const int32_t *row = l->hb->vc + (size_t)e * l->hb->S;
    for (size_t i = 0; i < l->n_touched; i++)
        if (row[l->touched[i]] < l->last[l->touched[i]]) return false;
    return true;
}

/* The first of ev[lo, hi) that comes after every access (hi: none). Clocks only grow along a
 * stream, so the answer splits the range in two; it is mostly a few events past the accesses,
 * so the search gallops from lo (1, 2, 4 ... events on) before it halves: a few reads near each
 * other instead of ~20 spread over the stream's events, which on a million nodes come from
 * memory rather than cache. The same answer as halving [lo, hi) from the start. */
static size_t first_after_all(const gm_hb_life *l, const int32_t *ev, size_t lo, size_t hi)
{
    for (size_t step = 1; lo < hi; step *= 2) {
        size_t probe = hi - lo > step ? lo + step - 1 : hi - 1;
        if (after_all(l, ev[probe])) {
            hi = probe; /* the answer is in [lo, probe] */
            break;
        }
        lo = probe + 1;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (after_all(l, ev[mid])) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

gm_hb_span gm_hb_life_span(gm_hb_life *l)
{
    const gm_hb *hb = l->hb;
    for (size_t j = 0; j < l->n_loops; j++)
        if (l->loops[j].inside < l->accesses) {
            touch_event(l, hb->ev_enter[l->loops[j].w->topo_id]);
            touch_event(l, hb->ev_exit[l->loops[j].w->topo_id]);
        }
    gm_hb_span sp = {l->first, l->last_pos, l->last_pos};
    const int64_t end_pos = hb->n ? (int64_t)hb->n - 1 : 0;
    if (l->at_start || sp.first == INT64_MAX) sp.first = 0;
    if (l->at_end) sp.last = end_pos;
    if (sp.last < sp.first) sp.last = sp.first;
    sp.release = sp.last;
    if (l->at_end || hb->S == 1 || l->n_touched == 0) return sp;
    for (size_t s = 0; s < hb->S; s++) {
        const int32_t *ev = hb->s_ev + hb->s_off[s];
        size_t cnt = hb->s_off[s + 1] - hb->s_off[s];
        if (!cnt || hb->ev_pos[ev[cnt - 1]] <= sp.release) continue; /* nothing on s could extend it */
        size_t from = l->last[s] >= 0 ? (size_t)l->last[s] + 1 : 0;
        size_t lo = first_after_all(l, ev, from, cnt);
        if (lo > from && hb->ev_pos[ev[lo - 1]] > sp.release) sp.release = hb->ev_pos[ev[lo - 1]];
    }
    return sp;
}
