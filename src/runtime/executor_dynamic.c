/*
 * executor_dynamic.c — a graph run on device streams with no plan: every buffer comes from
 * GE's runtime v2 allocator while the graph runs (see graphmem/executor.h).
 *
 * The allocator, bottom up: the device (gm_device_malloc) as a memory source; the caching L1
 * over it, whose "synchronize" is the device's; one MultiStreamL2Allocator per stream over L1,
 * whose "synchronize" is its stream's. All allocator calls come from this (the host) thread,
 * as GE serializes them under its kKernelUseMemory section.
 *
 * The host walks the tasks exactly as the static executor does (executor_tasks.c), and for
 * each launched task: allocates the symbols it is the first user of (executor_dyn_index.c),
 * enqueues the pattern checks of its reads and the pattern fills of its writes, then frees the
 * symbols whose last use on this stream it was. A free is stream-ordered: the stream may hand
 * the memory out again at once (its next work runs after this task), and other streams hear of
 * it only through events. So an allocator that recycles too early makes a later task overwrite
 * memory a reader has not checked yet — a pattern mismatch.
 *
 * Events. Where the static executor records an event for another stream, the producer's
 * allocator first builds a payload for each waiting stream (gm_ms_send_event: its
 * local-recycle news, borrowed blocks going home); the consumer, after its device wait, applies
 * every payload of that stream pair up to the task it waited for (gm_ms_wait_event). At the
 * end of an iteration every stream joins stream 0 (LastSendEvents / LastWaitEvents) and the
 * allocators settle everything still pending (gm_ms_last_wait_events).
 *
 * Placement. With two devices each has its own stack (L1 over the device, an L2 per stream of
 * that device); a block comes from its home device's stack, payloads go only between streams of
 * one device, and each device's streams join that device's first stream at the end. Reads
 * across places go through the static executor's copies (gm_place_read: H2D, D2H after
 * SyncStream, P2P); see executor_dyn_place.c for host tensors and the late frees that keep a
 * block alive for the other device's readers. Continuous groups share a block
 * (executor_dyn_layout.c), checked for adjacency before each grouped node runs.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/symbols.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "runtime/caching_allocator.h"
#include "runtime/executor_internal.h"
#include "runtime/executor_placement.h"
#include "runtime/ms_events.h"
#include "runtime/ms_fast_path.h"
#include "util/alloc.h"

/* ---- the allocators over the devices --------------------------------------------------------- */

static int device_alloc(void *ctx, size_t bytes, void **ptr)
{
    const struct gm_dyn_device *v = ctx;
    return gm_device_malloc(v->dev, bytes, ptr, NULL) == GM_OK ? 0 : -1;
}

static void device_free(void *ctx, void *ptr)
{
    const struct gm_dyn_device *v = ctx;
    gm_device_free(v->dev, ptr, NULL);
}

/* The device's virtual memory, for the expandable L1 (memory_first). The backend unmaps exactly
 * what one map backed and the allocator unmaps any part of what it mapped, so both go piece by
 * piece, one allocator page (or one granule, when coarser) each. */
static int device_reserve(void *ctx, size_t bytes, void **base)
{
    const struct gm_dyn_device *v = ctx;
    return gm_device_reserve(v->dev, bytes, base, NULL) == GM_OK ? 0 : -1;
}

static void device_unmap(void *ctx, void *addr, size_t bytes)
{
    const struct gm_dyn_device *v = ctx;
    for (size_t off = 0; off < bytes; off += v->piece) gm_device_unmap(v->dev, (char *)addr + off, v->piece, NULL);
}

static int device_map(void *ctx, void *addr, size_t bytes)
{
    const struct gm_dyn_device *v = ctx;
    for (size_t off = 0; off < bytes; off += v->piece) {
        if (gm_device_map(v->dev, (char *)addr + off, v->piece, NULL) != GM_OK) {
            device_unmap(ctx, addr, off);
            return -1;
        }
    }
    return 0;
}

static void device_release(void *ctx, void *base, size_t bytes)
{
    (void)bytes;
    const struct gm_dyn_device *v = ctx;
    gm_device_release(v->dev, base, NULL);
}

/* Device dv as L1's memory source; given a granularity (virtual memory wanted and there), its
 * reserve/map too. */
static gm_mem_source device_source(gm_dyn *d, unsigned dv, gm_device *dev, size_t g, size_t page)
{
    struct gm_dyn_device *v = &d->source[dv];
    *v = (struct gm_dyn_device){dev, g && page % g == 0 ? page : g};
    gm_mem_source src = {.ctx = v, .alloc = device_alloc, .free = device_free};
    if (v->piece) {
        src.reserve = device_reserve;
        src.map = device_map;
        src.unmap = device_unmap;
        src.release = device_release;
        src.granularity = v->piece;
    }
    return src;
}

/* Both levels' "synchronize", per device: stream -1 is the whole device (L1), else one of the
 * device's streams (L2). */
static void sync_streams(void *ctx, int stream)
{
    const struct gm_dyn_sync *c = ctx;
    gm_exec *x = &c->d->x;
    if (stream < 0) gm_device_synchronize(gm_place_device(x, c->dev), NULL);
    else if ((unsigned)stream < x->n_streams)
        gm_stream_synchronize(x->streams[c->dev * x->n_streams + (unsigned)stream], NULL);
}

/* The allocator's internal dependency (not GE's, gm_ms_config.order): device dv's stream `to`
 * waits for everything enqueued on stream `from` so far. One event per source stream does: a wait
 * captures the record it follows, so the next record may reuse the event. */
static int order_streams(void *ctx, uint32_t from, uint32_t to)
{
    const struct gm_dyn_sync *c = ctx;
    gm_dyn *d = c->d;
    gm_exec *x = &d->x;
    const unsigned f = c->dev * x->n_streams + from, t = c->dev * x->n_streams + to;
    gm_error err;
    if (!d->order_event[f] && gm_event_create(gm_place_device(x, c->dev), &d->order_event[f], &err) != GM_OK) return -1;
    if (gm_event_record(d->order_event[f], x->streams[f], &err) != GM_OK ||
        gm_stream_wait_event(x->streams[t], d->order_event[f], &err) != GM_OK)
        return -1;
    x->stats->events_recorded++;
    return 0;
}

/* Device dv's stack: caching L1 over the device, a MultiStreamL2Allocator per stream. */
static gm_status open_allocator(gm_dyn *d, unsigned dv, bool memory_first, bool learn_plan)
{
    gm_exec *x = &d->x;
    gm_device *dev = gm_place_device(x, dv);
    gm_device_props props;
    gm_status st = gm_device_get_props(dev, &props, x->err);
    if (st != GM_OK) return st;
    gm_scalable_config cfg;
    gm_scalable_config_default(&cfg, (size_t)props.total_memory);
    if (memory_first) gm_scalable_config_memory_first(&cfg);
    gm_scalable_config l1cfg = cfg;
    l1cfg.expandable = memory_first;
    const size_t vm = memory_first && props.virtual_memory ? props.vm_granularity : 0;
    gm_mem_source src = device_source(d, dv, dev, vm, (size_t)1 << cfg.page_shift);
    d->sync_ctx[dv] = (struct gm_dyn_sync){d, dv};
    if (!(d->l1[dv] = gm_caching_create(&src, &l1cfg, sync_streams, &d->sync_ctx[dv]))) return GM_ERR_NOMEM;
    gm_mem_source l1 = gm_caching_as_source(d->l1[dv]);
    gm_ms_config ms = {.streams = x->n_streams, .l2 = cfg, .sync = sync_streams, .sync_ctx = &d->sync_ctx[dv],
                       .order = order_streams, .order_ctx = &d->sync_ctx[dv], .recycle_before_growth = memory_first,
                       .l1_maps_granules = vm > ((size_t)1 << cfg.page_shift), .learn_plan = learn_plan};
    return gm_ms_group_create(&ms, &l1, &d->g[dv], x->err);
}

static unsigned n_devices(const gm_exec *x) { return x->n_devices > 1 ? x->n_devices : 1; }

static gm_status open_resources(gm_dyn *d, const gm_run_options *o, gm_place_fault place_fault)
{
    gm_exec *x = &d->x;
    gm_status st = gm_exec_open_streams(x, o, place_fault, 0);
    unsigned total = gm_exec_total_streams(x);
    for (unsigned s = 0; s < total && st == GM_OK; s++)
        if (s % x->n_streams) st = gm_event_create(gm_place_device(x, s / x->n_streams), &d->end_event[s], x->err);
    for (unsigned dv = 0; dv < n_devices(x) && st == GM_OK; dv++) st = open_allocator(d, dv, o->memory_first, o->learn_plan);
    return st;
}

/* GE's release order: streams idle, then the allocators give their memory back, then the device
 * closes. What the allocators still held then is the leak report. */
static void close_resources(gm_dyn *d)
{
    gm_exec *x = &d->x;
    gm_error ignore;
    unsigned total = gm_exec_total_streams(x);
    for (unsigned s = 0; s < total; s++)
        if (x->streams[s]) gm_stream_synchronize(x->streams[s], &ignore);
    for (unsigned dv = 0; dv < 2; dv++) {
        if (d->g[dv]) {
            gm_ms_stats ms;
            gm_ms_group_stats(d->g[dv], &ms, NULL);
            x->stats->alloc.live_bytes += ms.allocated;
            x->stats->alloc.leaked_blocks += gm_ms_group_destroy(d->g[dv]);
        }
        if (d->l1[dv]) gm_caching_destroy(d->l1[dv]);
    }
    gm_exec_free_events(x);
    for (unsigned s = 0; s < GM_EXEC_MAX_STREAMS; s++) {
        gm_event_destroy(d->end_event[s], &ignore);
        gm_event_destroy(d->order_event[s], &ignore);
    }
    for (unsigned s = 0; s < total; s++) gm_stream_destroy(x->streams[s], &ignore);
    if (x->place) gm_place_free_staging(x);
    if (x->dev) gm_exec_note_device_peak(x);
    x->stats->alloc.device_peak_bytes = x->stats->device_peak_bytes;
    gm_device_close(x->dev);
    gm_place_close(x);
}

/* ---- one task ------------------------------------------------------------------------------ */

/* Root y's block, from its home device's allocator of task t's stream (the same device). */
static gm_status allocate(gm_dyn *d, size_t t, int32_t y)
{
    gm_exec *x = &d->x;
    uint32_t s = (uint32_t)x->task_stream[t], n = x->n_streams, base = s / n * n;
    gm_ms_block *b = gm_ms_fast_malloc(gm_ms_group_allocator(d->g[d->home[y]], s % n), d->unit_bytes[y]);
    if (!b) {
        char name[160];
        return gm_error_set(x->err, GM_ERR_NOMEM, "run: the allocator of stream %u has no %zu bytes for '%s'", s,
                            d->unit_bytes[y], gm_symbol_name(d->sy, y, name, sizeof name));
    }
    d->block[y] = b, d->addr[y] = gm_ms_block_addr(b);
    for (size_t i = d->unit_base[y]; i < d->unit_base[y + 1]; i++) d->seed[d->unit_members[i]] = 0;
    x->stats->alloc.allocated_bytes += d->unit_bytes[y];
    /* every other user's reference now, before this stream's own free could recycle it */
    for (uint32_t o = base; o < base + n; o++) {
        if (o == s || !(d->touch[y] >> o & 1)) continue;
        gm_status st = gm_ms_fast_access(b, s % n, o % n, x->err);
        if (st != GM_OK) return st;
        x->stats->alloc.cross_stream_accesses++;
    }
    return GM_OK;
}

/* Bytes a task reads or writes through an anchor declaring `declared`: unknown is the whole
 * buffer. */
static uint64_t span_of(const gm_dyn *d, int32_t y, int64_t declared)
{
    return declared > 0 && (size_t)declared < d->bytes[y] ? (uint64_t)declared : d->bytes[y];
}

/* The check of task t's use u, input i of n (t's node, or at a loop's exit its body
 * NetOutput), through the placement copies when it is read elsewhere. */
static gm_status check_read(gm_dyn *d, size_t t, size_t u, const gm_node *n, uint32_t i)
{
    int32_t y = d->uses[d->use_base[t] + u];
    if (y < 0 || !d->seed[y]) return GM_OK; /* no buffer, or nothing written yet */
    uint64_t bytes = span_of(d, y, gm_desc_size(&n->in[i].src->out[n->in[i].src_index].desc));
    if (bytes > d->seed_bytes[y]) bytes = d->seed_bytes[y]; /* a smaller writer wrote a prefix */
    int32_t r = d->root[y];
    return gm_place_read(&d->x, t, y, d->host_mem[r], (unsigned)d->home[r], gm_dyn_addr(d, y), bytes, d->seed[y]);
}

/* A write of y makes the pattern of every other symbol sharing those bytes (a no-padding whole
 * and its members) unknown. */
static void forget_overlaps(gm_dyn *d, int32_t y, uint64_t bytes)
{
    int32_t r = d->root[y];
    for (size_t i = d->unit_base[r]; i < d->unit_base[r + 1]; i++) {
        int32_t z = d->unit_members[i];
        if (z != y && d->off[z] < d->off[y] + bytes && d->off[y] < d->off[z] + d->bytes[z]) d->seed[z] = 0;
    }
}

static gm_status write_sym(gm_dyn *d, size_t t, int32_t y, int64_t declared, uint64_t salt)
{
    gm_exec *x = &d->x;
    if (y < 0) return GM_OK;
    uint64_t bytes = span_of(d, y, declared);
    uint64_t seed = gm_exec_mix(((uint64_t)x->iteration << 40) ^ ((uint64_t)t << 8) ^ salt);
    forget_overlaps(d, y, bytes);
    d->seed[y] = seed, d->seed_bytes[y] = bytes;
    return gm_place_fill(x, t, d->host_mem[d->root[y]], gm_dyn_addr(d, y), bytes, seed);
}

/* The checks and fills of the static executor's run_enter, on the dynamic buffers. */
static gm_status run_enter(gm_dyn *d, size_t t)
{
    gm_exec *x = &d->x;
    const gm_node *n = x->task_node[t];
    const int32_t *u = d->uses + d->use_base[t];
    gm_status st = GM_OK;
    if (!gm_exec_branch_taken(x, n)) return GM_OK;
    gm_dyn_check_groups(d, t);
    for (uint32_t i = 0; i < n->n_in && st == GM_OK; i++)
        if (n->in[i].src && gm_node_reads_input_data(n, i)) st = check_read(d, t, i, n, i);
    if (st == GM_OK) st = gm_place_after_reads(x, t);
    if (gm_node_is(n, GM_OP_INPUT_MUTABLE)) /* collectives that write their inputs in place */
        for (uint32_t i = 0; i < n->n_in && st == GM_OK; i++)
            if (n->in[i].src)
                st = write_sym(d, t, u[i], gm_desc_size(&n->in[i].src->out[n->in[i].src_index].desc), 0x100 + i);
    for (uint32_t k = 0; k < n->n_out && st == GM_OK; k++)
        if (gm_node_writes_output(n, k)) st = write_sym(d, t, u[n->n_in + k], gm_desc_size(&n->out[k].desc), k);
    x->stats->tasks++;
    return st;
}

/* A loop's exit reads the body outputs it stacks (its uses, in gm_exec_next_stacked's order). */
static gm_status run_exit(gm_dyn *d, size_t t)
{
    const gm_node *n = d->x.task_node[t], *o;
    gm_status st = GM_OK;
    if (!gm_exec_branch_taken(&d->x, n)) return GM_OK;
    uint32_t i;
    size_t u = 0;
    for (gm_exec_stacked c = {0}; st == GM_OK && gm_exec_next_stacked(n, &c, &o, &i); u++) st = check_read(d, t, u, o, i);
    return st;
}

/* Allocate what it is first to use, run it, free what it was last to use on its stream. A task
 * in an If branch not taken still allocates and frees: the bookkeeping is the graph's, the
 * same every iteration. */
static gm_status launch(gm_dyn *d, size_t t)
{
    gm_status st = GM_OK;
    for (size_t i = d->alloc_base[t]; i < d->alloc_base[t + 1] && st == GM_OK; i++) st = allocate(d, t, d->allocs[i]);
    if (st == GM_OK) st = d->x.task_exit[t] ? run_exit(d, t) : run_enter(d, t);
    uint32_t s = (uint32_t)d->x.task_stream[t] % d->x.n_streams; /* the group's stream number */
    for (size_t i = d->free_base[t]; i < d->free_base[t + 1] && st == GM_OK; i++)
        gm_ms_fast_free(d->block[d->frees[i]], s);
    return st;
}

/* ---- events -------------------------------------------------------------------------------- */

/* SendEvents: a payload for each stream that waits for task t, then the device record. */
static gm_status send(gm_dyn *d, size_t t)
{
    gm_exec *x = &d->x;
    gm_status st = GM_OK;
    gm_ms_group *g = d->g[gm_exec_task_device(x, t)];
    for (size_t p = d->pay_base[t]; p < d->pay_base[t + 1] && st == GM_OK; p++)
        st = gm_ms_fast_send(g, &d->pay[p], x->err);
    if (st == GM_OK) st = gm_event_record(x->task_event[t], x->streams[x->task_stream[t]], x->err);
    x->stats->events_recorded++;
    return st;
}

/* WaitEvents, after stream dst's device wait for task `upto` of stream src: every payload
 * src sent dst up to that task (the wait covers them all; earlier ones may have had no wait of
 * their own). */
static void apply(gm_dyn *d, uint32_t src, uint32_t dst, int64_t upto_seq)
{
    gm_exec *x = &d->x;
    size_t pair = (size_t)src * gm_exec_total_streams(x) + dst;
    size_t *cur = &d->pair_cursor[pair];
    gm_ms_group *g = d->g[dst / x->n_streams];
    for (; d->pair_base[pair] + *cur < d->pair_base[pair + 1]; (*cur)++) {
        int32_t t = d->pair_task[d->pair_base[pair] + *cur];
        if (x->task_seq[t] > upto_seq) break;
        uint64_t below = d->dst_mask[t] & ((1ull << dst) - 1);
        gm_ms_fast_wait(g, &d->pay[d->pay_base[t] + (size_t)__builtin_popcountll(below)]);
    }
}

/* The static executor's wait (a device wait, or a host node's SyncStream); once stream s is
 * ordered after the producer, the producer's payloads for s apply. */
static gm_status wait_dep(gm_exec *x, size_t t, size_t dep)
{
    int32_t s = x->task_stream[t], src = x->task_stream[dep];
    if (s == src || x->task_seq[dep] <= x->waited[s][src]) return GM_OK;
    gm_status st = gm_place_wait_dep(x, t, dep);
    if (st == GM_OK && x->task_seq[dep] <= x->waited[s][src])
        apply((gm_dyn *)x, (uint32_t)src, (uint32_t)s, x->task_seq[dep]);
    return st;
}

/* kFirstSyncStage: after the start writers, stream 0 tells every stream what it freed. */
static gm_status first_sync(gm_dyn *d)
{
    gm_exec *x = &d->x;
    gm_status st = GM_OK;
    unsigned total = gm_exec_total_streams(x);
    if (total < 2) return GM_OK;
    if (!x->start_event) st = gm_event_create(x->dev, &x->start_event, x->err);
    for (unsigned s = 1; s < x->n_streams && st == GM_OK; s++) st = gm_ms_send_event(d->g[0], &d->start_pay[s], x->err);
    if (st == GM_OK) st = gm_event_record(x->start_event, x->streams[0], x->err);
    x->stats->events_recorded++;
    for (unsigned s = 1; s < total && st == GM_OK; s++) {
        st = gm_stream_wait_event(x->streams[s], x->start_event, x->err);
        if (st == GM_OK && s < x->n_streams) gm_ms_wait_event(d->g[0], &d->start_pay[s]);
    }
    return st;
}

/* kLastSyncStage and kLastResourceCleanStage: every stream joins stream 0 (plain events), the
 * payloads nobody waited for are applied (stream 0 now waits for all of them, and every stream
 * waits for stream 0 before its next work), and the allocators settle everything pending. */
static gm_status last_sync(gm_dyn *d)
{
    gm_exec *x = &d->x;
    gm_status st = GM_OK;
    unsigned total = gm_exec_total_streams(x);
    for (unsigned s = 0; s < total && st == GM_OK; s++) { /* each device's streams join its first */
        if (!(s % x->n_streams)) continue;
        st = gm_event_record(d->end_event[s], x->streams[s], x->err);
        gm_stream *first = x->streams[s / x->n_streams * x->n_streams];
        if (st == GM_OK) st = gm_stream_wait_event(first, d->end_event[s], x->err);
    }
    if (st != GM_OK) return st;
    for (uint32_t src = 0; src < total; src++)
        for (uint32_t dst = 0; dst < total; dst++) apply(d, src, dst, INT64_MAX);
    size_t reserved_all = 0;
    for (unsigned dv = 0; dv < n_devices(x); dv++) {
        reserved_all += gm_ms_group_reserved(d->g[dv]);
        gm_ms_last_wait_events(d->g[dv]);
    }
    if (reserved_all > x->stats->alloc.reserved_bytes) x->stats->alloc.reserved_bytes = reserved_all;
    return GM_OK;
}

/* ---- one iteration --------------------------------------------------------------------------- */

static gm_status iterate(gm_dyn *d)
{
    gm_exec *x = &d->x;
    x->n_checks = 0;
    for (unsigned a = 0; a < GM_EXEC_MAX_STREAMS; a++)
        for (unsigned b = 0; b < GM_EXEC_MAX_STREAMS; b++) x->waited[a][b] = -1;
    unsigned total = gm_exec_total_streams(x);
    memset(d->pair_cursor, 0, (size_t)total * total * sizeof *d->pair_cursor);
    gm_place_begin_iteration(x);
    gm_status st = GM_OK;
    for (size_t t = 0; t < x->n_tasks && st == GM_OK; t++)
        if (!x->task_exit[t] && gm_node_at_start(x->task_node[t])) st = launch(d, t);
    if (st == GM_OK) st = first_sync(d);
    for (size_t t = 0; t < x->n_tasks && st == GM_OK; t++) {
        st = gm_exec_for_each_dep(x, t, wait_dep);
        for (size_t j = d->join_base[t]; j < d->join_base[t + 1] && st == GM_OK; j++)
            st = wait_dep(x, t, (size_t)d->join_task[j]);
        if (st == GM_OK && (x->task_exit[t] || !gm_node_at_start(x->task_node[t]))) st = launch(d, t);
        if (st == GM_OK && x->task_event[t]) st = send(d, t);
        if (st == GM_OK) st = gm_dyn_late_frees(d, t);
    }
    if (st == GM_OK) st = last_sync(d);
    for (unsigned s = 0; s < total && st == GM_OK; s++) st = gm_stream_synchronize(x->streams[s], x->err);
    return st;
}

static const char *dyn_sym_name(const gm_exec *x, int32_t sym, char *buf, size_t cap)
{
    return gm_symbol_name(((const gm_dyn *)x)->sy, sym, buf, cap);
}

/* The groups' counters, both devices summed. */
static void copy_alloc_stats(gm_dyn *d)
{
    gm_run_alloc_stats *a = &d->x.stats->alloc;
    for (unsigned dv = 0; dv < 2; dv++) {
        if (!d->g[dv]) continue;
        gm_ms_stats ms;
        gm_ms_group_stats(d->g[dv], &ms, NULL);
        a->mallocs += ms.mallocs, a->peak_bytes += ms.peak_allocated, a->borrow_hits += ms.borrow_hits;
        a->birth_recycles += ms.birth_recycles, a->borrow_recycles += ms.borrow_recycles;
        a->local_recycles += ms.local_recycles;
        a->events_sent += ms.events_sent, a->events_waited += ms.events_waited;
        a->messages_sent += ms.messages_sent, a->stale_messages += ms.stale_messages;
        a->returned_home += ms.returned_home, a->sync_violations += ms.sync_violations;
        a->internal_events += ms.internal_events, a->growth_recycles += ms.growth_ladders;
        a->settles += ms.settles;
        gm_ms_plan_stats ps;
        gm_ms_group_plan_stats(d->g[dv], &ps);
        a->plans_learned += ps.learned, a->plan_iterations += ps.iterations_on, a->plan_departures += ps.departures;
        a->planned_mallocs += ps.planned_mallocs, a->plan_orders += ps.orders;
        a->mallocs += ps.planned_mallocs; /* handed out by the group as well */
        if (ps.region_bytes > a->plan_region_bytes) a->plan_region_bytes = ps.region_bytes;
    }
}

/* Every read of an iteration gets a mismatch counter the streams write into. */
static gm_status alloc_checks(gm_exec *x)
{
    size_t reads = 1 + gm_exec_max_reads(x->m);
    x->checks = gm_malloc(reads * sizeof *x->checks);
    x->mismatches = gm_malloc(reads * sizeof *x->mismatches);
    if (!x->checks || !x->mismatches) return GM_ERR_NOMEM;
    x->cap_checks = reads;
    return GM_OK;
}

gm_status gm_run_dynamic_fault(const gm_model *m, const gm_run_options *o, gm_run_fault fault, gm_run_stats *stats,
                               gm_error *err)
{
    return gm_run_dynamic_faults(m, o, fault, GM_PLACE_FAULT_NONE, stats, err);
}

gm_status gm_run_dynamic_faults(const gm_model *m, const gm_run_options *o, gm_run_fault fault,
                                gm_place_fault place_fault, gm_run_stats *stats, gm_error *err)
{
    gm_error local;
    if (!err) err = &local;
    gm_error_clear(err);
    memset(stats, 0, sizeof *stats);
    stats->dynamic = true;
    if (!o->iterations) return gm_error_set(err, GM_ERR_INPUT, "run: iterations must be at least 1");
    gm_dyn *d = gm_calloc(1, sizeof *d); /* large: the wait table */
    if (!d) return gm_error_set(err, GM_ERR_NOMEM, "run: out of memory");
    gm_exec *x = &d->x;
    x->m = m, x->err = err, x->stats = stats;
    x->sym_name = dyn_sym_name;
    d->fault = fault;
    gm_status st = open_resources(d, o, place_fault);
    if (st == GM_OK) st = gm_exec_init_constants(x); /* the static executor's tasks and events */
    if (st == GM_OK) st = alloc_checks(x);
    if (st == GM_OK) st = gm_dyn_index(d);
    for (unsigned k = 0; st == GM_OK && k < o->iterations; k++) {
        x->iteration = k;
        gm_exec_clock_start(&x->clock);
        st = iterate(d); /* every stream synchronized at its end */
        if (st == GM_OK) gm_exec_clock_stop(&x->clock), gm_exec_collect(x);
    }
    gm_exec_clock_report(&x->clock, stats);
    copy_alloc_stats(d);
    close_resources(d);
    gm_dyn_free_index(d);
    gm_exec_free_index(x);
    if (st != GM_OK && err->code == GM_OK) gm_error_set(err, st, "run: out of memory");
    gm_free(d);
    return st;
}

gm_status gm_run_dynamic(const gm_model *m, const gm_run_options *o, gm_run_stats *stats, gm_error *err)
{
    return gm_run_dynamic_fault(m, o, GM_RUN_FAULT_NONE, stats, err);
}
