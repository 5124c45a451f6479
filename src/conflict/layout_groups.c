/*
 * layout_groups.c — the continuous groups of a graph checked as a whole (graphmem, not GE).
 *
 * GE checks continuous-memory demands pair by pair within one symbol (reference §2.6). Groups
 * that pass every pairwise check can still ask for no layout at all: split A [a0 a1] and split
 * B [b0 b1] feeding concats [a1 b0] and [b1 a0] agree pair by pair (IsSameOrPartialSame) and
 * close the cycle a0 a1 b0 b1 a0 together; one concat reading a buffer twice, once through a
 * view, is a pair within one node, which GE's IsSkip never looks at; a split whose output is,
 * through a view and a ref, another split's member gets two predecessors. The planner would
 * then say that no plan exists, for a graph that one copy makes plannable. So after the
 * symbol checks each group adds "member j+1 lies right after member j" constraints, by
 * symbol: every symbol has at most one required successor and one predecessor, and the
 * constraints form paths, never a cycle (union-find over the paths; the planner's chains,
 * plan_chains.c, accept exactly such a set). A member whose constraint would break that gets
 * an Identity — before the continuous node's input, as GE resolves a pairwise conflict — so
 * its buffer is a fresh symbol with no constraints yet; the copy is logged and recorded like
 * the pass's others. Continuous outputs are taken first: their members can only be copied
 * through the node's ref input or after the output, so continuous inputs yield to them.
 *
 * Cost: nothing where no symbol holds two members (Process notes it while marking anchors);
 * else a walk of the graph's nodes, the Process's own table or (after its solves) one more,
 * and O(α) union-find work per member. Near-linear, no pairwise matrix.
 */
#include <stdio.h>
#include <string.h>

#include "conflict/layout_checkers.h"
#include "conflict/layout_conflict.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "util/alloc.h"

typedef struct group {
    gm_node *node;
    bool out;   /* continuous outputs (else inputs) */
} group;

typedef struct groups {
    gm_layout_run *r;
    const gm_symbols *s;
    int32_t *next, *prev, *uf; /* by symbol id; the copies' fresh ids follow the table's */
    unsigned char *mark;       /* chain roots the group under evaluation entered */
    unsigned char *by_out;     /* bit 0: the successor, bit 1: the predecessor, set by outputs */
    size_t n_ids;
    int32_t *m, *f;            /* a group's members: their symbols, and as laid out (-1: a copy) */
    unsigned char *why;        /* per member: 0 kept, else why it gets a copy (enum below) */
    int64_t *at;               /* per member: where its copy goes (copy_point) */
    int32_t *entered;
} groups;

enum { KEPT, HAS_SUCCESSOR, BEFORE_COPY, HAS_PREDECESSOR, CYCLE };

static const char *const k_why[] = {
    "", "its buffer already lies before another one", "the member before it lies before another buffer",
    "its buffer already lies after another one", "the group would close a cycle or hold one buffer twice"};

static gm_status oom(groups *x)
{
    return gm_error_set(x->r->c->err, GM_ERR_NOMEM, "%s: out of memory", x->r->c->m->source);
}

static int32_t find(int32_t *uf, int32_t a)
{
    while (uf[a] != a) a = uf[a] = uf[uf[a]];
    return a;
}

/* A symbol id with no constraints: a copy's buffer (the arrays are sized for one per member). */
static int32_t fresh(groups *x)
{
    int32_t id = (int32_t)x->n_ids++;
    x->next[id] = x->prev[id] = -1;
    x->uf[id] = id;
    x->mark[id] = x->by_out[id] = 0;
    return id;
}

static uint32_t group_size(const group *g) { return g->out ? g->node->n_out : g->node->n_in; }

/* The members' symbols into x->m; false when some member has none (an unconnected input:
 * nothing to lay out). */
static bool members(groups *x, const group *g)
{
    for (uint32_t j = 0; j < group_size(g); j++) {
        if (!g->out && !g->node->in[j].src) return false;
        int32_t y = gm_symbols_find(x->s, g->node, g->out, j);
        if (y < 0) return false;
        x->m[j] = y;
    }
    return true;
}

/* The successor of laid-out member y, -1 for a copy (which has none yet). */
static int32_t next_of(const groups *x, int32_t y) { return y < 0 ? -1 : x->next[y]; }

/* Which members keep their buffer so that the group's constraints agree with those taken (the
 * others get a copy, a fresh symbol with no constraints): a member whose buffer already has
 * another successor cannot be followed by the next member, nor can a member whose successor
 * is fixed be followed by a copy; a member whose buffer has a fixed predecessor, or whose path
 * the group has entered already (a cycle, or one buffer twice), cannot follow the one before.
 * Returns how many members get a copy. */
static size_t decide(groups *x, uint32_t k)
{
    const int32_t *m = x->m;
    for (uint32_t j = 0; j < k; j++)
        x->why[j] = j + 1 == k || x->next[m[j]] < 0 || x->next[m[j]] == m[j + 1] ? KEPT : HAS_SUCCESSOR;
    for (uint32_t j = k - 1; j-- > 0;)
        if (x->why[j + 1] != KEPT && x->why[j] == KEPT && x->next[m[j]] >= 0) x->why[j] = BEFORE_COPY;
    size_t n_entered = 0, copies = 0;
    for (uint32_t j = 0; j < k; j++) {
        /* linked so already: the walk stays on the path it is on */
        bool linked = j > 0 && next_of(x, x->f[j - 1]) == m[j];
        if (x->why[j] == KEPT && j > 0 && !linked) {
            if (x->prev[m[j]] >= 0) x->why[j] = HAS_PREDECESSOR;
            else if (x->mark[find(x->uf, m[j])]) x->why[j] = CYCLE;
        }
        x->f[j] = x->why[j] == KEPT ? m[j] : -1;
        if (x->why[j] != KEPT) {
            copies++;
        } else if (!linked) {
            int32_t root = find(x->uf, m[j]);
            x->mark[root] = 1;
            x->entered[n_entered++] = root;
        }
    }
    for (size_t i = 0; i < n_entered; i++) x->mark[x->entered[i]] = 0;
    return copies;
}

/* Where a copy gives member j of g a buffer of its own: before the continuous input itself;
 * for an output, before the input it refers to (its buffer is that input's), else after it.
 * *in receives the input, or -1 for "after the output". False when there is no such place. */
static bool copy_point(const groups *x, const group *g, uint32_t j, int64_t *in)
{
    *in = -1;
    gm_anchor at = {g->node, j, g->out};
    if (!g->out) {
        *in = j;
        return !gm_layout_skip_insert(at, GM_LOG_INFO);
    }
    for (uint32_t i = 0; i < g->node->n_in; i++)
        if (g->node->in[i].src && gm_symbols_find(x->s, g->node, false, i) == x->m[j]) {
            *in = i;
            return !gm_layout_skip_insert((gm_anchor){g->node, i, false}, GM_LOG_INFO);
        }
    return g->node->out[j].n_uses > 0 && !gm_layout_skip_insert(at, GM_LOG_INFO);
}

/* Every copy has a place, and no input is copied twice. */
static bool placeable(groups *x, const group *g, uint32_t k)
{
    for (uint32_t j = 0; j < k; j++) {
        if (x->why[j] == KEPT) continue;
        if (!copy_point(x, g, j, &x->at[j])) return false;
        for (uint32_t i = 0; i < j; i++)
            if (x->why[i] != KEPT && x->at[i] == x->at[j] && x->at[j] >= 0) return false;
    }
    return true;
}

static gm_status insert_copy(groups *x, const group *g, uint32_t j)
{
    gm_layout_run *r = x->r;
    int64_t at = x->at[j];
    if (gm_log_get_level() >= GM_LOG_INFO) {
        char a[320];
        gm_log(GM_LOG_INFO,
               "[MemConflict][Conflict] continuous group of %s: member %u (%s) cannot lie where the group needs it "
               "(%s), will insert %s %s_%s_%lld",
               g->node->name, j, gm_lc_anchor_str((gm_anchor){g->node, j, g->out}, a, sizeof a), k_why[x->why[j]],
               at < 0 ? "after" : "before", g->node->name, at < 0 ? "out" : "in", (long long)(at < 0 ? j : at));
    }
    /* GE's pair of types: this group's, and that of the group whose demand it cannot meet */
    bool other_out = g->out;
    if (x->why[j] == HAS_SUCCESSOR || x->why[j] == BEFORE_COPY) other_out = x->by_out[x->m[j]] & 1;
    if (x->why[j] == HAS_PREDECESSOR) other_out = x->by_out[x->m[j]] & 2;
    char reason[160];
    snprintf(reason, sizeof reason, "[%s, %s] continuous groups with no common layout",
             gm_lt_name(g->out ? GM_LT_CONT_OUT : GM_LT_CONT_IN), gm_lt_name(other_out ? GM_LT_CONT_OUT : GM_LT_CONT_IN));
    gm_node *id;
    if (at < 0) {
        id = gm_layout_insert_after(r, g->node, j, reason);
    } else {
        gm_node *dst = g->node;
        size_t in = (size_t)at;
        id = gm_layout_insert_before(r, &dst, &in, 1, reason);
    }
    if (!id) return r->c->err->code != GM_OK ? r->c->err->code : GM_ERR_INTERNAL;
    x->f[j] = fresh(x);
    return GM_OK;
}

static gm_status solve_group(groups *x, const group *g)
{
    uint32_t k = group_size(g);
    if (!members(x, g)) return GM_OK;
    if (decide(x, k)) {
        if (!placeable(x, g, k)) {
            gm_log(GM_LOG_INFO,
                   "[MemConflict] continuous group of %s cannot be laid out with the groups before it, and no copy "
                   "can give it buffers of its own.",
                   g->node->name);
            return GM_OK; /* the planner then names the group it cannot honour */
        }
        for (uint32_t j = 0; j < k; j++) {
            gm_status st = x->why[j] == KEPT ? GM_OK : insert_copy(x, g, j);
            if (st != GM_OK) return st;
        }
    }
    /* the group's constraints, taken */
    for (uint32_t j = 0; j + 1 < k; j++) {
        int32_t a = x->f[j], b = x->f[j + 1];
        if (x->next[a] == b) continue;
        x->next[a] = b, x->prev[b] = a;
        if (g->out) x->by_out[a] |= 1, x->by_out[b] |= 2;
        x->uf[find(x->uf, a)] = find(x->uf, b);
    }
    return GM_OK;
}

/* The continuous groups of g and the graphs below it, in the model's order: g's range of the
 * order holds exactly those nodes (GetAllNodes puts a node's subgraphs right after it), and a
 * node is below g when its graph is g or its graph's parent lies earlier in the range. */
static gm_status collect(gm_layout_run *r, const gm_graph *g, group **v, size_t *n)
{
    const gm_model *m = r->c->m;
    size_t cap = 0, lo = 0, nn = gm_model_node_count(m);
    *n = 0;
    if (!gm_graph_is_root(g)) {
        lo = nn;
        for (uint32_t i = 0; i < g->nodes.n; i++)
            if (!g->nodes.v[i]->dead && g->nodes.v[i]->topo_id >= 0 && (size_t)g->nodes.v[i]->topo_id < lo)
                lo = (size_t)g->nodes.v[i]->topo_id;
    }
    for (size_t t = lo; t < nn; t++) {
        gm_node *x = gm_model_node_at(m, t);
        if (x->graph != g) {
            const gm_node *p = x->graph->parent;
            if (!p || p->topo_id < (int64_t)lo || p->topo_id >= (int64_t)t) break;
        }
        for (int out = 0; out < 2; out++) {
            bool wants = out ? gm_layout_needs_cont_out(x) && x->n_out > 1 : gm_layout_needs_cont_in(x) && x->n_in > 1;
            if (!wants) continue;
            if (gm_grow((void **)v, sizeof **v, *n + 1, &cap))
                return gm_error_set(r->c->err, GM_ERR_NOMEM, "%s: out of memory", m->source);
            (*v)[(*n)++] = (group){x, out != 0};
        }
    }
    return GM_OK;
}

gm_status gm_layout_groups_solve(gm_layout_run *r, gm_graph *g, gm_symbols **table)
{
    group *v = NULL;
    size_t n = 0;
    gm_status st = collect(r, g, &v, &n);
    if (st != GM_OK || n == 0) {
        gm_free(v);
        return st;
    }
    groups x = {.r = r};
    gm_symbols *s = *table;
    *table = NULL;
    if (!s) st = gm_graph_is_root(g) ? gm_symbols_build(r->c->m, &s, r->c->err) : gm_symbols_build_graph(r->c->m, g, &s, r->c->err);
    x.s = s;
    size_t most = 0, all = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = group_size(&v[i]);
        all += k;
        if (k > most) most = k;
    }
    size_t ids = st == GM_OK ? gm_symbols_id_bound(s) + all : 1;
    x.next = gm_malloc(ids * sizeof *x.next), x.prev = gm_malloc(ids * sizeof *x.prev);
    x.uf = gm_malloc(ids * sizeof *x.uf), x.mark = gm_malloc(ids), x.by_out = gm_malloc(ids);
    x.m = gm_malloc(most * sizeof *x.m), x.f = gm_malloc(most * sizeof *x.f), x.why = gm_malloc(most);
    x.at = gm_malloc(most * sizeof *x.at), x.entered = gm_malloc(most * sizeof *x.entered);
    if (st == GM_OK && (!x.next || !x.prev || !x.uf || !x.mark || !x.by_out || !x.m || !x.f || !x.why || !x.at || !x.entered))
        st = oom(&x);
    for (size_t i = 0; st == GM_OK && i < gm_symbols_id_bound(s); i++) fresh(&x);
    unsigned before = r->counter;
    /* outputs first: a continuous input can always be given a copy, an output not always */
    for (int pass = 0; pass < 2 && st == GM_OK; pass++)
        for (size_t i = 0; i < n && st == GM_OK; i++)
            if (v[i].out == (pass == 0)) st = solve_group(&x, &v[i]);
    if (st == GM_OK && r->counter == before) *table = s; /* still the model's */
    else gm_symbols_free(s);
    gm_free(x.next), gm_free(x.prev), gm_free(x.uf), gm_free(x.mark), gm_free(x.by_out);
    gm_free(x.m), gm_free(x.f), gm_free(x.why), gm_free(x.at), gm_free(x.entered);
    gm_free(v);
    return st;
}
