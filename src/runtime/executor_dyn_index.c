/*
 * executor_dyn_index.c — the dynamic executor's fixed bookkeeping (see gm_dyn in
 * executor_internal.h): what each task allocates, uses and frees, and which allocator payloads
 * its event carries to which stream. An iteration launches the same tasks in the same order,
 * so all of it is computed once, before the first iteration.
 *
 * Launch order: the start writers (root Data, Const, Variable) first, then every other enter
 * task in task order — the order executor_dynamic.c launches them in. A symbol is allocated by
 * the first task of that order that uses it (normally its first writer), on that task's stream;
 * every other stream that uses it takes a reference at the same moment (AccessMemCrossStream),
 * before the birth stream could free it, and each stream frees its reference after its own
 * last use. Taking the references any later would let the birth stream recycle the block
 * while a reader on another stream is still to come.
 *
 * The unit of allocation is a root symbol (executor_dyn_layout.c): a continuous chain or a
 * no-padding whole is one block, so a use of any member is a use of its root. With two
 * devices, a root lives on its allocating task's device; streams of the other device that read
 * it take no reference (it is not their allocator's) — the birth stream's free waits for them
 * instead (executor_dyn_place.c). Payloads go only between streams of one device.
 *
 * Joins. A block of several symbols is allocated by the first user of any of them, but its
 * other members' first users may be on other streams that the graph does not order after that
 * task (two producers of one concat's inputs). The block was free only from the allocating
 * stream's point of view, at that point: so each other stream's first user of such a block
 * waits for the allocating task first.
 */
#include <string.h>

#include "analysis/symbols.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "runtime/executor_internal.h"
#include "runtime/ms_events.h"
#include "util/alloc.h"

/* Is task t launched in phase 0 (the start writers) or 1 (the rest, a loop's exit among them:
 * it reads the body outputs it stacks)? */
static bool launched_in(const gm_exec *x, size_t t, int phase)
{
    if (x->task_exit[t]) return phase == 1;
    return gm_node_at_start(x->task_node[t]) == (phase == 0);
}

/* The body outputs an exit task reads (executor_internal.h, gm_exec_next_stacked). */
static size_t exit_reads(const gm_node *n)
{
    const gm_node *o;
    uint32_t i;
    size_t k = 0;
    for (gm_exec_stacked c = {0}; gm_exec_next_stacked(n, &c, &o, &i);) k++;
    return k;
}

static gm_status index_symbols(gm_dyn *d)
{
    const gm_exec *x = &d->x;
    gm_status st = gm_symbols_build(x->m, &d->sy, x->err);
    if (st != GM_OK) return st;
    size_t nn = gm_model_node_count(x->m);
    for (size_t t = 0; t < nn; t++) {
        const gm_node *n = gm_model_node_at(x->m, t);
        for (uint32_t k = 0; k < n->n_out; k++) {
            int32_t y = gm_symbols_find(d->sy, n, true, k);
            if (y >= 0 && (size_t)y >= d->n_sym) d->n_sym = (size_t)y + 1;
        }
        for (uint32_t i = 0; i < n->n_in; i++) {
            int32_t y = gm_symbols_find(d->sy, n, false, i);
            if (y >= 0 && (size_t)y >= d->n_sym) d->n_sym = (size_t)y + 1;
        }
    }
    size_t ns = d->n_sym ? d->n_sym : 1;
    d->bytes = gm_calloc(ns, sizeof *d->bytes);
    d->touch = gm_calloc(ns, sizeof *d->touch);
    d->block = gm_calloc(ns, sizeof *d->block);
    d->addr = gm_calloc(ns, sizeof *d->addr);
    d->seed = gm_calloc(ns, sizeof *d->seed);
    d->seed_bytes = gm_calloc(ns, sizeof *d->seed_bytes);
    if (!d->bytes || !d->touch || !d->block || !d->addr || !d->seed || !d->seed_bytes) return GM_ERR_NOMEM;
    /* the largest size any anchor declares; inputs declare through their producers' outputs */
    for (size_t t = 0; t < nn; t++) {
        const gm_node *n = gm_model_node_at(x->m, t);
        for (uint32_t k = 0; k < n->n_out; k++) {
            int32_t y = gm_symbols_find(d->sy, n, true, k);
            int64_t b = gm_desc_size(&n->out[k].desc);
            if (y >= 0 && b > 0 && (size_t)b > d->bytes[y]) d->bytes[y] = (size_t)b;
        }
    }
    return GM_OK;
}

/* The symbols each enter task uses: its inputs (that have a source), then its outputs; an
 * exit task, the body outputs its loop stacks. */
static gm_status index_uses(gm_dyn *d)
{
    const gm_exec *x = &d->x;
    size_t total = 0;
    if (!(d->use_base = gm_malloc((x->n_tasks + 1) * sizeof *d->use_base))) return GM_ERR_NOMEM;
    for (size_t t = 0; t < x->n_tasks; t++) {
        d->use_base[t] = total;
        total += x->task_exit[t] ? exit_reads(x->task_node[t]) : x->task_node[t]->n_in + x->task_node[t]->n_out;
    }
    d->use_base[x->n_tasks] = total;
    if (!(d->uses = gm_malloc((total ? total : 1) * sizeof *d->uses))) return GM_ERR_NOMEM;
    for (size_t t = 0; t < x->n_tasks; t++) {
        const gm_node *n = x->task_node[t];
        int32_t *u = d->uses + d->use_base[t];
        if (x->task_exit[t]) {
            const gm_node *o;
            uint32_t i;
            for (gm_exec_stacked c = {0}; gm_exec_next_stacked(n, &c, &o, &i);) *u++ = gm_symbols_find(d->sy, o, false, i);
            continue;
        }
        for (uint32_t i = 0; i < n->n_in; i++) u[i] = n->in[i].src ? gm_symbols_find(d->sy, n, false, i) : -1;
        for (uint32_t k = 0; k < n->n_out; k++) u[n->n_in + k] = gm_symbols_find(d->sy, n, true, k);
    }
    return GM_OK;
}

/* Turns (task, symbol) pairs into a CSR list by task. */
static gm_status csr(size_t n_tasks, const int32_t *task_of, const int32_t *sym_of, size_t n, size_t **base,
                     int32_t **list)
{
    *base = gm_calloc(n_tasks + 1, sizeof **base);
    *list = gm_malloc((n ? n : 1) * sizeof **list);
    if (!*base || !*list) return GM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) (*base)[task_of[i] + 1]++;
    for (size_t t = 0; t < n_tasks; t++) (*base)[t + 1] += (*base)[t];
    size_t *fill = gm_malloc((n_tasks + 1) * sizeof *fill);
    if (!fill) return GM_ERR_NOMEM;
    memcpy(fill, *base, (n_tasks + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++) (*list)[fill[task_of[i]]++] = sym_of[i];
    gm_free(fill);
    return GM_OK;
}

/* The joins (see above): for each root of several symbols, each stream's first user other than
 * the allocating stream's waits for the allocating task. */
static gm_status index_joins(gm_dyn *d, const int32_t *first, const int32_t *first_on)
{
    gm_exec *x = &d->x;
    size_t nstr = gm_exec_total_streams(x), n = 0;
    int32_t *j_task = gm_malloc((d->n_sym * nstr + 1) * sizeof *j_task);
    int32_t *j_wait = gm_malloc((d->n_sym * nstr + 1) * sizeof *j_wait);
    gm_status st = GM_ERR_NOMEM;
    if (!j_task || !j_wait) goto out;
    for (size_t y = 0; y < d->n_sym; y++) {
        if (first[y] < 0 || d->unit_base[y + 1] - d->unit_base[y] < 2) continue;
        int32_t a = first[y];
        for (size_t s = 0; s < nstr; s++) {
            int32_t u = first_on[y * nstr + s];
            if (u < 0 || (int32_t)s == x->task_stream[a]) continue;
            j_task[n] = u, j_wait[n++] = a;
            if (!x->task_event[a] &&
                (st = gm_event_create(gm_stream_device(x->streams[x->task_stream[a]]), &x->task_event[a], x->err)) !=
                    GM_OK)
                goto out;
        }
    }
    st = csr(x->n_tasks, j_task, j_wait, n, &d->join_base, &d->join_task);
out:
    gm_free(j_task), gm_free(j_wait);
    return st;
}

/* Who allocates each root, which streams use it, and after which task each stream frees it. */
static gm_status index_lifetimes(gm_dyn *d)
{
    gm_exec *x = &d->x;
    size_t ns = d->n_sym, nstr = gm_exec_total_streams(x), cells = ns * nstr + 1;
    int32_t *first = gm_malloc((ns ? ns : 1) * sizeof *first);
    int32_t *last = gm_malloc(cells * sizeof *last), *first_on = gm_malloc(cells * sizeof *first_on);
    int32_t *rank = gm_malloc((x->n_tasks ? x->n_tasks : 1) * sizeof *rank);
    bool *remote = gm_calloc(ns ? ns : 1, sizeof *remote);
    int32_t *a_task = gm_malloc((ns ? ns : 1) * sizeof *a_task), *a_sym = gm_malloc((ns ? ns : 1) * sizeof *a_sym);
    int32_t *f_task = gm_malloc(cells * sizeof *f_task);
    int32_t *f_sym = gm_malloc(cells * sizeof *f_sym);
    d->home = gm_calloc(ns ? ns : 1, sizeof *d->home);
    gm_status st = GM_ERR_NOMEM;
    if (!first || !last || !first_on || !rank || !remote || !a_task || !a_sym || !f_task || !f_sym || !d->home)
        goto out;
    for (size_t y = 0; y < ns; y++) first[y] = -1;
    for (size_t i = 0; i < cells; i++) last[i] = first_on[i] = -1;
    for (size_t t = 0; t < x->n_tasks; t++) rank[t] = -1;
    size_t na = 0, nf = 0;
    int32_t launched = 0;
    for (int phase = 0; phase < 2; phase++) {
        for (size_t t = 0; t < x->n_tasks; t++) {
            if (!launched_in(x, t, phase)) continue;
            rank[t] = launched++;
            uint32_t s = (uint32_t)x->task_stream[t];
            for (size_t u = d->use_base[t]; u < d->use_base[t + 1]; u++) {
                if (d->uses[u] < 0) continue;
                int32_t y = d->root[d->uses[u]];
                if (first[y] < 0) {
                    first[y] = (int32_t)t;
                    d->home[y] = (int8_t)gm_exec_task_device(x, t);
                    if (!d->host_mem[y]) a_task[na] = (int32_t)t, a_sym[na++] = y;
                }
                if (d->host_mem[y]) continue; /* a host buffer for the run: nothing to give back */
                if (first_on[(size_t)y * nstr + s] < 0) first_on[(size_t)y * nstr + s] = (int32_t)t;
                if (gm_exec_task_device(x, t) != (unsigned)d->home[y]) { /* read on the other device */
                    remote[y] = true;
                    last[(size_t)y * nstr + s] = (int32_t)t;
                    continue;
                }
                if (d->fault == GM_RUN_FAULT_EARLY_FREE && (uint32_t)x->task_stream[first[y]] != s) continue;
                d->touch[y] |= 1ull << s;
                last[(size_t)y * nstr + s] = (int32_t)t;
            }
        }
    }
    for (size_t y = 0; y < ns; y++)
        for (size_t s = 0; s < nstr; s++) {
            int32_t t = last[y * nstr + s];
            if (t < 0 || !(d->touch[y] >> s & 1)) continue;
            /* read on the other device: the birth stream's free comes late (executor_dyn_place.c) */
            if (remote[y] && (int32_t)s == x->task_stream[first[y]]) continue;
            /* the fault: the producer's stream lets go right after the first use */
            if (d->fault == GM_RUN_FAULT_EARLY_FREE) t = first[y];
            f_task[nf] = t, f_sym[nf++] = (int32_t)y;
        }
    st = csr(x->n_tasks, a_task, a_sym, na, &d->alloc_base, &d->allocs);
    if (st == GM_OK) st = csr(x->n_tasks, f_task, f_sym, nf, &d->free_base, &d->frees);
    if (st == GM_OK) st = index_joins(d, first, first_on);
    if (st == GM_OK) st = gm_dyn_place_index(d, first, last, remote, rank);
out:
    gm_free(first_on);
    gm_free(first), gm_free(last), gm_free(rank), gm_free(remote), gm_free(a_task), gm_free(a_sym), gm_free(f_task),
        gm_free(f_sym);
    return st;
}

/* Payloads carry one allocator group's news: only between streams of one device. */
static gm_status mark_dst(gm_exec *x, size_t t, size_t dep)
{
    gm_dyn *d = (gm_dyn *)x;
    if (x->task_stream[dep] != x->task_stream[t] && gm_exec_task_device(x, dep) == gm_exec_task_device(x, t))
        d->dst_mask[dep] |= 1ull << x->task_stream[t];
    return GM_OK;
}

/* One payload per (task, stream waiting for it), and per stream pair the tasks sending that way. */
static gm_status index_payloads(gm_dyn *d)
{
    gm_exec *x = &d->x;
    size_t nstr = gm_exec_total_streams(x), pairs = nstr * nstr;
    d->dst_mask = gm_calloc(x->n_tasks ? x->n_tasks : 1, sizeof *d->dst_mask);
    d->pay_base = gm_malloc((x->n_tasks + 1) * sizeof *d->pay_base);
    d->pair_base = gm_calloc(pairs + 1, sizeof *d->pair_base);
    d->pair_cursor = gm_calloc(pairs, sizeof *d->pair_cursor);
    d->start_pay = gm_calloc(nstr, sizeof *d->start_pay);
    if (!d->dst_mask || !d->pay_base || !d->pair_base || !d->pair_cursor || !d->start_pay) return GM_ERR_NOMEM;
    for (size_t t = 0; t < x->n_tasks; t++) gm_exec_for_each_dep(x, t, mark_dst);
    for (size_t t = 0; t < x->n_tasks; t++) {
        d->pay_base[t] = d->n_pay;
        d->n_pay += (size_t)__builtin_popcountll(d->dst_mask[t]);
        for (size_t s = 0; s < nstr; s++)
            if (d->dst_mask[t] >> s & 1) d->pair_base[(size_t)x->task_stream[t] * nstr + s + 1]++;
    }
    d->pay_base[x->n_tasks] = d->n_pay;
    for (size_t p = 0; p < pairs; p++) d->pair_base[p + 1] += d->pair_base[p];
    d->pay = gm_calloc(d->n_pay ? d->n_pay : 1, sizeof *d->pay);
    d->pair_task = gm_malloc((d->n_pay ? d->n_pay : 1) * sizeof *d->pair_task);
    size_t *fill = gm_malloc((pairs + 1) * sizeof *fill);
    if (!d->pay || !d->pair_task || !fill) return gm_free(fill), GM_ERR_NOMEM;
    memcpy(fill, d->pair_base, (pairs + 1) * sizeof *fill);
    for (size_t t = 0; t < x->n_tasks; t++) {
        uint32_t src = (uint32_t)x->task_stream[t];
        size_t k = d->pay_base[t];
        for (uint32_t s = 0; s < nstr; s++)
            if (d->dst_mask[t] >> s & 1) { /* the group's own stream numbers */
                gm_ms_event_payload_init(&d->pay[k++], src % x->n_streams, s % x->n_streams);
                d->pair_task[fill[src * nstr + s]++] = (int32_t)t;
            }
    }
    /* the start event's payloads: device 0's group only (the start writers run there) */
    for (uint32_t s = 0; s < x->n_streams; s++) gm_ms_event_payload_init(&d->start_pay[s], 0, s);
    gm_free(fill);
    return GM_OK;
}

gm_status gm_dyn_index(gm_dyn *d)
{
    gm_status st = index_symbols(d);
    if (st == GM_OK) st = index_uses(d);
    if (st == GM_OK) st = gm_dyn_layout(d);
    if (st == GM_OK) st = index_lifetimes(d);
    if (st == GM_OK) st = index_payloads(d);
    return st;
}

void gm_dyn_free_index(gm_dyn *d)
{
    for (size_t p = 0; p < d->n_pay && d->pay; p++) gm_ms_event_payload_fini(&d->pay[p]);
    for (size_t s = 0; s < d->x.n_streams && d->start_pay; s++) gm_ms_event_payload_fini(&d->start_pay[s]);
    gm_dyn_place_free(d);
    gm_symbols_free(d->sy);
    gm_free(d->bytes), gm_free(d->touch), gm_free(d->block), gm_free(d->addr), gm_free(d->seed);
    gm_free(d->seed_bytes);
    gm_free(d->alloc_base), gm_free(d->use_base), gm_free(d->free_base);
    gm_free(d->allocs), gm_free(d->uses), gm_free(d->frees);
    gm_free(d->dst_mask), gm_free(d->pay_base), gm_free(d->pay), gm_free(d->pair_base), gm_free(d->pair_cursor);
    gm_free(d->pair_task), gm_free(d->start_pay);
    gm_free(d->root), gm_free(d->off), gm_free(d->unit_bytes), gm_free(d->unit_base), gm_free(d->unit_members);
    gm_free(d->host_mem), gm_free(d->home), gm_free(d->group_base), gm_free(d->groups);
    gm_free(d->join_base), gm_free(d->join_task);
}
