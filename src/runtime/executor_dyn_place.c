/*
 * executor_dyn_place.c — the dynamic executor's places (see "Placement" in
 * graphmem/executor.h): host tensors in host buffers, no writes across devices, and the late
 * frees that keep a block alive for its readers on the other device. The copies themselves
 * are the static executor's (gm_place_read / gm_place_fill in executor_placement.c).
 *
 * Why late frees. A block belongs to its home device's allocator group, whose streams hold
 * references to it and learn of each other's frees through events. A reader on the other
 * device copies the block (P2P) on its own stream, which is in no such group: it can take no
 * reference, and nothing orders the home streams' next use of the memory after its copy. So
 * the birth stream keeps its reference until the last read on the other device has been
 * launched, then waits, on its stream, for the event of the last such read on each stream of
 * that device, and only then frees: whatever it (or, through its recycle news, any stream of
 * its group) allocates there next runs after those copies.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/symbols.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "runtime/executor_internal.h"
#include "runtime/ms_fast_path.h"
#include "util/alloc.h"

/* No node writes a tensor that lives on the other device (it would need a copy back). */
static gm_status check_writes(gm_dyn *d)
{
    gm_exec *x = &d->x;
    for (size_t t = 0; t < x->n_tasks; t++) {
        if (x->task_exit[t]) continue;
        const gm_node *n = x->task_node[t];
        const int32_t *u = d->uses + d->use_base[t];
        for (uint32_t a = 0; a < n->n_in + n->n_out; a++) {
            bool writes = a < n->n_in ? gm_node_is(n, GM_OP_INPUT_MUTABLE) && n->in[a].src
                                      : gm_node_writes_output(n, a - n->n_in);
            if (!writes || u[a] < 0) continue;
            int32_t r = d->root[u[a]];
            if (d->host_mem[r] || (unsigned)d->home[r] == gm_exec_task_device(x, t)) continue;
            char name[160];
            return gm_error_set(x->err, GM_ERR_INPUT,
                                "run: node '%s' on device %u writes '%s', which lives on device %d (dynamic mode "
                                "keeps a tensor on the device that allocates it)",
                                gm_node_name(n), gm_exec_task_device(x, t),
                                gm_symbol_name(d->sy, u[a], name, sizeof name), d->home[r]);
        }
    }
    return GM_OK;
}

/* One buffer per host root, for the whole run. */
static gm_status host_buffers(gm_dyn *d, const int32_t *first)
{
    if (!(d->host_buf = gm_calloc(d->n_sym ? d->n_sym : 1, sizeof *d->host_buf))) return GM_ERR_NOMEM;
    for (size_t r = 0; r < d->n_sym; r++) {
        if (!d->host_mem[r] || first[r] < 0 || d->root[r] != (int32_t)r) continue;
        if (!(d->host_buf[r] = malloc(d->unit_bytes[r] ? d->unit_bytes[r] : 1)))
            return gm_error_set(d->x.err, GM_ERR_NOMEM, "run: out of host memory");
        d->addr[r] = d->host_buf[r];
    }
    return GM_OK;
}

/* The late frees: for each root read on the other device, after the later (in launch order) of
 * its birth stream's last use and its last remote read. */
static gm_status late_frees(gm_dyn *d, const int32_t *first, const int32_t *last, const bool *remote,
                            const int32_t *rank)
{
    gm_exec *x = &d->x;
    size_t nstr = gm_exec_total_streams(x), n = 0, nw = 0;
    for (size_t r = 0; r < d->n_sym; r++)
        if (remote[r]) n++, nw += nstr;
    d->late_base = gm_calloc(x->n_tasks + 1, sizeof *d->late_base);
    d->late = gm_malloc((n ? n : 1) * sizeof *d->late);
    d->late_wait = gm_malloc((nw ? nw : 1) * sizeof *d->late_wait);
    int32_t *at = gm_malloc((n ? n : 1) * sizeof *at);
    if (!d->late_base || !d->late || !d->late_wait || !at) return gm_free(at), GM_ERR_NOMEM;
    size_t k = 0;
    nw = 0;
    for (size_t r = 0; r < d->n_sym; r++) {
        if (!remote[r]) continue;
        uint32_t birth = (uint32_t)x->task_stream[first[r]];
        int32_t when = last[r * nstr + birth];
        gm_dyn_late_free *lf = &d->late[k];
        *lf = (gm_dyn_late_free){(int32_t)r, birth, nw, 0};
        for (size_t s = 0; s < nstr; s++) {
            int32_t u = last[r * nstr + s];
            if (u < 0 || gm_exec_task_device(x, (size_t)u) == (unsigned)d->home[r]) continue;
            d->late_wait[nw++] = u, lf->wait_n++;
            if (when < 0 || rank[u] > rank[when]) when = u;
            /* the read's stream records an event after it, for the birth stream to wait on */
            if (!x->task_event[u]) {
                gm_status st = gm_event_create(gm_stream_device(x->streams[s]), &x->task_event[u], x->err);
                if (st != GM_OK) return gm_free(at), st;
            }
        }
        at[k++] = when;
        d->late_base[when + 1]++;
    }
    for (size_t t = 0; t < x->n_tasks; t++) d->late_base[t + 1] += d->late_base[t];
    /* sort the entries into CSR order by their task (stable, through a copy) */
    gm_dyn_late_free *sorted = gm_malloc((n ? n : 1) * sizeof *sorted);
    size_t *fill = gm_malloc((x->n_tasks + 1) * sizeof *fill);
    if (!sorted || !fill) return gm_free(at), gm_free(sorted), gm_free(fill), GM_ERR_NOMEM;
    memcpy(fill, d->late_base, (x->n_tasks + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++) sorted[fill[at[i]]++] = d->late[i];
    gm_free(d->late);
    d->late = sorted;
    gm_free(fill), gm_free(at);
    return GM_OK;
}

gm_status gm_dyn_place_index(gm_dyn *d, const int32_t *first, const int32_t *last, const bool *remote,
                             const int32_t *rank)
{
    gm_status st = check_writes(d);
    if (st == GM_OK) st = host_buffers(d, first);
    if (st == GM_OK) st = late_frees(d, first, last, remote, rank);
    return st;
}

gm_status gm_dyn_late_frees(gm_dyn *d, size_t t)
{
    gm_exec *x = &d->x;
    for (size_t i = d->late_base[t]; i < d->late_base[t + 1]; i++) {
        const gm_dyn_late_free *lf = &d->late[i];
        for (size_t w = lf->wait_first; w < lf->wait_first + lf->wait_n; w++) {
            int32_t u = d->late_wait[w], src = x->task_stream[u];
            if (x->task_seq[u] <= x->waited[lf->stream][src]) continue;
            x->waited[lf->stream][src] = x->task_seq[u];
            x->stats->events++;
            gm_status st = gm_stream_wait_event(x->streams[lf->stream], x->task_event[u], x->err);
            if (st != GM_OK) return st;
        }
        gm_ms_fast_free(d->block[lf->y], lf->stream % x->n_streams);
    }
    return GM_OK;
}

void gm_dyn_place_free(gm_dyn *d)
{
    for (size_t r = 0; d->host_buf && r < d->n_sym; r++) free(d->host_buf[r]);
    gm_free(d->host_buf), gm_free(d->late_base), gm_free(d->late), gm_free(d->late_wait);
}
