/*
 * executor_tasks.c — the executor's index (anchors to planned addresses, tasks in the
 * planner's order with their streams), the device memory of the plan's regions, and one
 * iteration's launch: waits, pattern checks of what each task reads, pattern writes of what it
 * writes, event records. See executor.c for the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/op_table.h"
#include "runtime/executor_internal.h"
#include "runtime/executor_placement.h"
#include "util/alloc.h"

/* ---- index ------------------------------------------------------------------------------ */

static gm_status index_slots(gm_exec *x)
{
    size_t nn = gm_model_node_count(x->m), cnt[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        if (!(x->base[k] = gm_malloc((nn + 1) * sizeof *x->base[k]))) return GM_ERR_NOMEM;
    for (size_t t = 0; t < nn; t++) {
        const gm_node *n = gm_model_node_at(x->m, t);
        x->base[0][t] = cnt[0], x->base[1][t] = cnt[1];
        cnt[0] += n->n_in, cnt[1] += n->n_out;
    }
    for (int k = 0; k < 2; k++) {
        if (!(x->slot[k] = gm_malloc((cnt[k] ? cnt[k] : 1) * sizeof *x->slot[k]))) return GM_ERR_NOMEM;
        for (size_t i = 0; i < cnt[k]; i++) x->slot[k][i] = (gm_exec_slot){-1, 0, false};
    }
    for (size_t s = 0; s < x->p->n_symbols; s++) {
        const gm_plan_symbol *y = &x->p->symbols[s];
        for (size_t j = 0; j < y->n_anchors; j++) {
            const gm_plan_anchor *a = &y->anchors[j];
            gm_exec_slot *sl = &x->slot[a->out][x->base[a->out][a->node->topo_id] + a->index];
            *sl = (gm_exec_slot){(int32_t)s, y->offset + (a->offset > 0 ? a->offset : 0), a->offset > 0};
        }
    }
    return GM_OK;
}

static void add_task(gm_exec *x, const gm_node *n, bool exit, int64_t *per_stream)
{
    size_t t = x->n_tasks++;
    x->task_node[t] = n;
    x->task_exit[t] = exit;
    /* start writers all go on stream 0, which every stream waits for first; the streams of
     * device d follow those of device d - 1 */
    unsigned dev = x->place && !gm_node_at_start(n) ? gm_place_node_device(x, n) : 0;
    x->task_stream[t] = gm_node_at_start(n) ? 0
                                            : (int32_t)(dev * x->n_streams +
                                                        (unsigned)(((n->stream % (int64_t)x->n_streams) + x->n_streams) %
                                                                   x->n_streams));
    x->task_seq[t] = per_stream[x->task_stream[t]]++;
    x->task_of[exit][n->topo_id] = (int32_t)t;
    if (!exit) x->task_of[1][n->topo_id] = (int32_t)t; /* until an exit task replaces it */
}

/* Tasks in the planner's order: every node, then for a node with subgraphs an exit after the
 * last node of its bodies (innermost first). */
static gm_status index_tasks(gm_exec *x)
{
    size_t nn = gm_model_node_count(x->m), max = 0;
    for (size_t t = 0; t < nn; t++) max += gm_model_node_at(x->m, t)->n_sub ? 2 : 1;
    size_t cap = max ? max : 1;
    x->task_node = gm_malloc(cap * sizeof *x->task_node);
    x->task_exit = gm_malloc(cap * sizeof *x->task_exit);
    x->task_stream = gm_malloc(cap * sizeof *x->task_stream);
    x->task_seq = gm_malloc(cap * sizeof *x->task_seq);
    x->task_event = gm_calloc(cap, sizeof *x->task_event);
    x->task_of[0] = gm_malloc((nn ? nn : 1) * sizeof(int32_t));
    x->task_of[1] = gm_malloc((nn ? nn : 1) * sizeof(int32_t));
    int64_t *end = gm_malloc((nn ? nn : 1) * sizeof *end);
    size_t *open = gm_malloc((nn ? nn : 1) * sizeof *open);
    int64_t per_stream[GM_EXEC_MAX_STREAMS] = {0};
    gm_status st = GM_ERR_NOMEM;
    if (!x->task_node || !x->task_exit || !x->task_stream || !x->task_seq || !x->task_event || !x->task_of[0] ||
        !x->task_of[1] || !end || !open)
        goto out;
    for (size_t t = 0; t < nn; t++) end[t] = (int64_t)t;
    for (size_t t = nn; t-- > 0;) {
        const gm_node *n = gm_model_node_at(x->m, t);
        if (n->graph->parent && end[t] > end[n->graph->parent->topo_id]) end[n->graph->parent->topo_id] = end[t];
    }
    size_t depth = 0;
    for (size_t t = 0; t <= nn; t++) {
        while (depth && (t == nn || end[open[depth - 1]] < (int64_t)t))
            add_task(x, gm_model_node_at(x->m, open[--depth]), true, per_stream);
        if (t == nn) break;
        const gm_node *n = gm_model_node_at(x->m, t);
        add_task(x, n, false, per_stream);
        if (n->n_sub) open[depth++] = t;
    }
    st = GM_OK;
out:
    gm_free(end);
    gm_free(open);
    return st;
}

/* Calls fn(x, task, dep) for every task `task` waits for. */
gm_status gm_exec_for_each_dep(gm_exec *x, size_t t, gm_status (*fn)(gm_exec *, size_t, size_t))
{
    const gm_node *n = x->task_node[t];
    gm_status st = GM_OK;
    if (x->task_exit[t]) {
        st = fn(x, t, (size_t)x->task_of[0][n->topo_id]);
        for (uint32_t g = 0; g < n->n_sub && st == GM_OK; g++)
            for (uint32_t k = 0; k < n->sub[g]->nodes.n && st == GM_OK; k++)
                st = fn(x, t, (size_t)x->task_of[1][n->sub[g]->nodes.v[k]->topo_id]);
        return st;
    }
    bool source = n->ctrl_in.n == 0;
    for (uint32_t i = 0; i < n->n_in && st == GM_OK; i++)
        if (n->in[i].src) st = fn(x, t, (size_t)x->task_of[1][n->in[i].src->topo_id]), source = false;
    for (uint32_t i = 0; i < n->ctrl_in.n && st == GM_OK; i++)
        st = fn(x, t, (size_t)x->task_of[1][n->ctrl_in.v[i]->topo_id]);
    const gm_node *p = n->graph->parent;
    if (p && st == GM_OK) st = fn(x, t, (size_t)x->task_of[0][p->topo_id]);
    /* A While runs its cond, then its body (docs/plan-format.md): the body's sources wait for
     * every node of the cond, and every other body node follows a source. The access-order
     * pass and the verifier leave a cond/body pair to this order (they cannot edge across
     * graphs). */
    if (p && source && gm_node_ctrl_kind(p) == GM_CTRL_WHILE && p->n_sub >= 2 && n->graph == p->sub[1])
        for (uint32_t k = 0; k < p->sub[0]->nodes.n && st == GM_OK; k++)
            st = fn(x, t, (size_t)x->task_of[1][p->sub[0]->nodes.v[k]->topo_id]);
    return st;
}

/* A task another stream waits for records an event after itself. */
static gm_status need_event(gm_exec *x, size_t t, size_t dep)
{
    if (x->task_stream[dep] == x->task_stream[t] || x->task_event[dep]) return GM_OK;
    /* on the producer's device (events work across the devices of one backend) */
    return gm_event_create(gm_stream_device(x->streams[x->task_stream[dep]]), &x->task_event[dep], x->err);
}

gm_status gm_exec_index(gm_exec *x)
{
    x->n_streams = x->n_streams ? x->n_streams : 1;
    x->seed = gm_calloc(x->p->n_symbols ? x->p->n_symbols : 1, sizeof *x->seed);
    if (!x->seed || index_slots(x) != GM_OK) return GM_ERR_NOMEM;
    return GM_OK;
}

void gm_exec_free_index(gm_exec *x)
{
    for (int k = 0; k < 2; k++) gm_free(x->base[k]), gm_free(x->slot[k]), gm_free(x->task_of[k]);
    gm_free(x->task_node);
    gm_free(x->task_exit);
    gm_free(x->task_stream);
    gm_free(x->task_seq);
    gm_free(x->task_event);
    gm_free(x->seed);
    gm_free(x->checks);
    gm_free(x->mismatches);
}

void gm_exec_free_events(gm_exec *x)
{
    gm_error ignore;
    gm_event_destroy(x->start_event, &ignore);
    for (size_t t = 0; t < x->n_tasks && x->task_event; t++) gm_event_destroy(x->task_event[t], &ignore);
}

/* Tasks need the streams (their count), events the device: built once both are open. */
gm_status gm_exec_init_constants(gm_exec *x)
{
    gm_status st = index_tasks(x);
    for (size_t t = 0; t < x->n_tasks && st == GM_OK; t++) st = gm_exec_for_each_dep(x, t, need_event);
    if (st == GM_OK && x->place) st = gm_place_index(x);
    return st;
}

/* ---- device memory ---------------------------------------------------------------------- */

unsigned gm_exec_total_streams(const gm_exec *x) { return x->n_streams * (x->n_devices > 1 ? x->n_devices : 1); }

gm_status gm_exec_alloc_regions(gm_exec *x)
{
    if (x->place) return gm_place_alloc_regions(x);
    for (int r = 0; r < GM_PLAN_R_DYNAMIC; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
            int64_t bytes = x->p->region_bytes[r][mt];
            if (bytes <= 0) continue;
            gm_status st = gm_device_malloc(x->dev, (size_t)bytes, &x->region[r][mt], x->err);
            if (st != GM_OK) return st;
            x->stats->device_bytes += (uint64_t)bytes;
        }
    return GM_OK;
}

void gm_exec_free_regions(gm_exec *x)
{
    gm_error ignore;
    if (x->place) {
        gm_place_free_regions(x);
        return;
    }
    for (int r = 0; r < GM_PLAN_R_COUNT; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++)
            if (x->region[r][mt]) gm_device_free(x->dev, x->region[r][mt], &ignore);
}

/* ---- one iteration ---------------------------------------------------------------------- */

uint64_t gm_exec_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) | 1; /* never 0: 0 means "unknown" */
}

static void *addr_of(gm_exec *x, const gm_exec_slot *sl)
{
    const gm_plan_symbol *y = &x->p->symbols[sl->sym];
    char *base = x->region[y->region][y->mem_type];
    return base ? base + sl->offset : NULL;
}

/* Task t reads input i of n: its own node's, or at a loop's exit its body NetOutput's. */
static gm_status check_read(gm_exec *x, size_t t, const gm_node *n, uint32_t i)
{
    const gm_exec_slot *sl = &x->slot[0][x->base[0][n->topo_id] + i];
    int32_t src_index = n->in[i].src_index;
    int64_t bytes = gm_desc_size(&n->in[i].src->out[src_index].desc);
    if (sl->sym < 0 || bytes == 0) return GM_OK; /* no buffer, or an empty tensor */
    const gm_plan_symbol *y = &x->p->symbols[sl->sym];
    void *at = addr_of(x, sl);
    /* the plan's dynamic region holds no bytes: a read of run-time size, counted, not checked */
    if (y->region == GM_PLAN_R_DYNAMIC || !at || bytes < 0) {
        x->stats->skipped_dynamic++;
        return GM_OK;
    }
    uint64_t seed = x->seed[sl->sym];
    if (!seed || sl->view) return GM_OK; /* never written yet, or a member of a no-padding whole */
    if (x->place) return gm_place_check_read(x, t, sl, bytes, seed); /* copies it where it is read */
    uint64_t *mm = gm_exec_add_check(x, x->task_node[t], sl->sym, (uint64_t)bytes);
    if (!mm) return GM_ERR_INTERNAL;
    return gm_verify_pattern_async(x->streams[x->task_stream[t]], at, (size_t)bytes, seed, mm, x->err);
}

uint64_t *gm_exec_add_check(gm_exec *x, const gm_node *n, int32_t sym, uint64_t bytes)
{
    if (x->n_checks == x->cap_checks) {
        gm_error_set(x->err, GM_ERR_INTERNAL, "run: check capacity");
        return NULL;
    }
    size_t c = x->n_checks++;
    x->checks[c] = (gm_exec_check){n, sym, bytes};
    x->mismatches[c] = 0;
    x->stats->reads_checked++;
    x->stats->bytes_checked += bytes;
    return &x->mismatches[c];
}

/* Writes bytes of a fresh pattern where slot sl lies, and makes it the symbol's current one. */
static gm_status write_slot(gm_exec *x, size_t t, const gm_exec_slot *sl, int64_t bytes, uint64_t salt)
{
    if (sl->sym < 0 || bytes <= 0) return GM_OK;
    void *at = addr_of(x, sl);
    if (x->p->symbols[sl->sym].region == GM_PLAN_R_DYNAMIC || !at) return GM_OK;
    uint64_t seed = gm_exec_mix(((uint64_t)x->iteration << 40) ^ ((uint64_t)t << 8) ^ salt);
    /* a member of a no-padding whole writes part of it: the whole's pattern is then unknown */
    x->seed[sl->sym] = sl->view ? 0 : seed;
    if (x->place) return gm_place_write(x, t, sl, bytes, seed);
    return gm_fill_pattern_async(x->streams[x->task_stream[t]], at, (size_t)bytes, seed, x->err);
}

/* If and Case run one branch: iteration k takes branch k mod count, so every branch runs over
 * the iterations. A node in a branch not taken does nothing (its task still orders). */
bool gm_exec_branch_taken(const gm_exec *x, const gm_node *n)
{
    for (const gm_graph *g = n->graph; g->parent; g = g->parent->graph) {
        const gm_node *p = g->parent;
        gm_ctrl_kind k = gm_node_ctrl_kind(p);
        if ((k != GM_CTRL_IF && k != GM_CTRL_CASE) || !p->n_sub) continue;
        uint32_t taken = x->iteration % p->n_sub;
        if (p->sub[taken] != g) return false;
    }
    return true;
}

static gm_status run_enter(gm_exec *x, size_t t)
{
    const gm_node *n = x->task_node[t];
    gm_status st = GM_OK;
    if (!gm_exec_branch_taken(x, n)) return GM_OK;
    for (uint32_t i = 0; i < n->n_in && st == GM_OK; i++)
        if (n->in[i].src && gm_node_reads_input_data(n, i)) st = check_read(x, t, n, i);
    if (st == GM_OK && x->place) st = gm_place_after_reads(x, t);
    /* collectives that write their inputs in place */
    if (gm_node_is(n, GM_OP_INPUT_MUTABLE))
        for (uint32_t i = 0; i < n->n_in && st == GM_OK; i++)
            if (n->in[i].src)
                st = write_slot(x, t, &x->slot[0][x->base[0][n->topo_id] + i],
                                gm_desc_size(&n->in[i].src->out[n->in[i].src_index].desc), 0x100 + i);
    for (uint32_t k = 0; k < n->n_out && st == GM_OK; k++)
        if (gm_node_writes_output(n, k))
            st = write_slot(x, t, &x->slot[1][x->base[1][n->topo_id] + k], gm_desc_size(&n->out[k].desc), k);
    x->stats->tasks++;
    return st;
}

size_t gm_exec_max_reads(const gm_model *m)
{
    size_t reads = 0;
    for (size_t t = 0; t < gm_model_node_count(m); t++) {
        const gm_node *n = gm_model_node_at(m, t);
        reads += n->n_in;
        if (n->graph->parent && gm_node_is(n, GM_OP_NETOUTPUT)) reads += n->n_in; /* again at a loop's exit */
    }
    return reads;
}

bool gm_exec_next_stacked(const gm_node *n, gm_exec_stacked *c, const gm_node **o, uint32_t *in)
{
    /* the stacked outputs are the last ones: a node whose last output is carried stacks none */
    if (!n->n_out || !gm_subgraph_output_is_stacked(n, n->n_out - 1)) return false;
    for (; c->g < n->n_sub; c->g++, c->j = 0)
        for (; c->j < n->sub[c->g]->nodes.n; c->j++, c->i = 0) {
            const gm_node *x = n->sub[c->g]->nodes.v[c->j];
            while (c->i < x->n_in) {
                uint32_t i = c->i++;
                if (x->in[i].src && gm_body_output_is_stacked(x, i)) {
                    *o = x, *in = i;
                    return true;
                }
            }
        }
    return false;
}

/* A loop's exit: it has stacked each iteration's body outputs into its stacked outputs, so it
 * reads them now that the body has run (gm_body_output_is_stacked). */
static gm_status run_exit(gm_exec *x, size_t t)
{
    const gm_node *n = x->task_node[t], *o;
    gm_status st = GM_OK;
    if (!gm_exec_branch_taken(x, n)) return GM_OK;
    uint32_t i;
    for (gm_exec_stacked c = {0}; st == GM_OK && gm_exec_next_stacked(n, &c, &o, &i);) st = check_read(x, t, o, i);
    return st;
}

gm_status gm_exec_wait_dep(gm_exec *x, size_t t, size_t dep)
{
    int32_t s = x->task_stream[t], d = x->task_stream[dep];
    if (s == d || x->task_seq[dep] <= x->waited[s][d]) return GM_OK;
    x->waited[s][d] = x->task_seq[dep];
    x->stats->events++;
    return gm_stream_wait_event(x->streams[s], x->task_event[dep], x->err);
}

gm_status gm_exec_launch_iteration(gm_exec *x)
{
    /* every read of an iteration gets a mismatch counter the streams write into */
    size_t reads = gm_exec_max_reads(x->m);
    if (reads > x->cap_checks) {
        gm_free(x->checks);
        gm_free(x->mismatches);
        x->checks = gm_malloc(reads * sizeof *x->checks);
        x->mismatches = gm_malloc(reads * sizeof *x->mismatches);
        if (!x->checks || !x->mismatches) return GM_ERR_NOMEM;
        x->cap_checks = reads;
    }
    x->n_checks = 0;
    if (x->place) gm_place_begin_iteration(x);
    for (unsigned a = 0; a < GM_EXEC_MAX_STREAMS; a++)
        for (unsigned b = 0; b < GM_EXEC_MAX_STREAMS; b++) x->waited[a][b] = -1;
    gm_status st = GM_OK;
    /* START: the inputs, constants and variables are written before anything else runs */
    for (size_t t = 0; t < x->n_tasks && st == GM_OK; t++)
        if (gm_node_at_start(x->task_node[t])) st = run_enter(x, t);
    unsigned total = gm_exec_total_streams(x);
    if (st == GM_OK && total > 1) {
        if (!x->start_event) st = gm_event_create(x->dev, &x->start_event, x->err);
        if (st == GM_OK) st = gm_event_record(x->start_event, x->streams[0], x->err);
        x->stats->events_recorded++;
        for (unsigned s = 1; s < total && st == GM_OK; s++) {
            st = gm_stream_wait_event(x->streams[s], x->start_event, x->err);
        }
    }
    for (size_t t = 0; t < x->n_tasks && st == GM_OK; t++) {
        st = gm_exec_for_each_dep(x, t, x->place ? gm_place_wait_dep : gm_exec_wait_dep);
        if (st == GM_OK && !x->task_exit[t] && !gm_node_at_start(x->task_node[t])) st = run_enter(x, t);
        else if (st == GM_OK && x->task_exit[t]) st = run_exit(x, t);
        if (st == GM_OK && x->task_event[t]) {
            st = gm_event_record(x->task_event[t], x->streams[x->task_stream[t]], x->err);
            x->stats->events_recorded++;
        }
    }
    return st;
}

void gm_exec_collect(gm_exec *x)
{
    for (size_t c = 0; c < x->n_checks; c++) {
        if (!x->mismatches[c]) continue;
        gm_run_stats *s = x->stats;
        if (!s->corrupted_reads) {
            char name[160];
            snprintf(s->first_corruption, sizeof s->first_corruption,
                     "node '%s' read '%s' (iteration %u): %llu of %llu bytes differ", gm_node_name(x->checks[c].node),
                     x->sym_name(x, x->checks[c].sym, name, sizeof name), x->iteration,
                     (unsigned long long)x->mismatches[c], (unsigned long long)x->checks[c].bytes);
        }
        s->corrupted_reads++;
        s->corrupted_bytes += x->mismatches[c];
    }
}
