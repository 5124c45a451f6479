/*
 * executor.c — a graph run on device streams with a static plan, checking every read (see
 * graphmem/executor.h).
 *
 * Tasks. Walking the model order (subgraph bodies after their parent, as the planner saw it),
 * each node gets an enter task, and a node with subgraphs also an exit task after its bodies —
 * the planner's execution model (docs/plan-format.md). An If or Case runs one branch per
 * iteration (iteration k: branch k mod count, so all of them run over the iterations; the
 * others' tasks do nothing but keep the order), and a While body runs once per iteration,
 * after its cond (the body's first tasks wait for every cond task).
 *
 * Patterns. The host walks the tasks in order and keeps, per symbol (one buffer), the seed of
 * its last writer; a task verifies what it reads against the seed current when it was
 * launched, and writes its outputs with a fresh seed. The plan orders every pair of symbols
 * sharing memory, and events order the tasks as the graph does, so a correct run finds every
 * pattern intact; anything else is reported.
 *
 * Who writes: compute ops write their outputs; ref ops (Assign, in-place ability, input-mutable
 * collectives) write the memory they share with an input; views, Phony ops, pass-through ops,
 * Data and NetOutput inside subgraphs and control-flow parents write nothing (their outputs
 * are their inputs' memory or their bodies' results). Root Data is written by the user before
 * each iteration, Const and Variable once before the first.
 *
 * Ordering. A task waits, on its stream, for each predecessor on another stream — but only
 * once per (producer stream, point): a stream that already waited for a later task of the
 * producer's stream needs no second event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/executor.h"
#include "ops/op_table.h"
#include "runtime/executor_internal.h"
#include "runtime/executor_placement.h"
#include "util/alloc.h"

void gm_run_options_init(gm_run_options *o)
{
    o->backend = GM_BACKEND_HOST;
    o->device_id = 0;
    o->streams = 1;
    o->iterations = 1;
    o->memory_limit = 0;
    o->vm_granularity = 0;
    o->devices = 1;
    o->memory_first = false;
    o->learn_plan = false;
}

void gm_run_assign_streams(gm_model *m, unsigned streams)
{
    size_t n = gm_model_node_count(m);
    if (streams == 0) streams = 1;
    int64_t first = n ? gm_node_stream(gm_model_node_at(m, 0)) : 0;
    bool one = true;
    for (size_t t = 0; t < n && one; t++) one = gm_node_stream(gm_model_node_at(m, t)) == first;
    for (size_t t = 0; t < n; t++) {
        gm_node *x = gm_model_node_at(m, t);
        /* one model stream: round robin over positions, the most cross-stream traffic there is;
         * several: the model's streams folded onto the ones there are */
        int64_t s = one ? (int64_t)(t % streams) : gm_node_stream(x) % (int64_t)streams;
        if (s < 0) s += streams;
        gm_node_set_stream(x, s);
    }
}

/* ---- one run ---------------------------------------------------------------------------- */

static gm_status fail(gm_exec *x, gm_status st)
{
    if (x->err && x->err->code == GM_OK && st != GM_OK) gm_error_set(x->err, st, "run: out of memory");
    return st;
}

gm_status gm_exec_open_streams(gm_exec *x, const gm_run_options *o, gm_place_fault fault, size_t n_symbols)
{
    x->n_streams = o->streams ? o->streams : 1;
    x->n_devices = o->devices ? o->devices : 1;
    if (x->n_devices > 2) return gm_error_set(x->err, GM_ERR_INPUT, "run: %u devices (at most 2)", x->n_devices);
    if (x->n_streams * x->n_devices > GM_EXEC_MAX_STREAMS)
        return gm_error_set(x->err, GM_ERR_INPUT, "run: %u streams on %u devices (at most %d in all)", x->n_streams,
                            x->n_devices, GM_EXEC_MAX_STREAMS);
    gm_status st = gm_device_open(o->backend, o->device_id, &x->dev, x->err);
    if (st != GM_OK) return st;
    gm_device_set_memory_limit(x->dev, o->memory_limit);
    if (o->vm_granularity && (st = gm_device_set_vm_granularity(x->dev, o->vm_granularity, x->err)) != GM_OK) return st;
    if ((st = gm_place_open(x, o, fault, n_symbols)) != GM_OK) return st; /* opens device 1 */
    for (unsigned s = 0; s < gm_exec_total_streams(x); s++)
        if ((st = gm_stream_create(gm_place_device(x, s / x->n_streams), &x->streams[s], x->err)) != GM_OK) return st;
    return GM_OK;
}

static gm_status open_resources(gm_exec *x, const gm_run_options *o, gm_place_fault fault)
{
    gm_status st = gm_exec_open_streams(x, o, fault, x->p->n_symbols);
    return st == GM_OK ? gm_exec_alloc_regions(x) : st;
}

void gm_exec_note_device_peak(gm_exec *x)
{
    for (unsigned d = 0; d < (x->n_devices > 1 ? x->n_devices : 1); d++) {
        gm_device *dev = x->place ? gm_place_device(x, d) : x->dev;
        if (!dev) continue;
        gm_device_counters c;
        gm_device_get_counters(dev, &c);
        x->stats->device_peak_bytes += c.peak_bytes;
        x->stats->driver_peak_bytes += c.driver_peak_bytes;
    }
}

static void close_resources(gm_exec *x)
{
    gm_error ignore;
    unsigned total = gm_exec_total_streams(x);
    for (unsigned s = 0; s < total; s++)
        if (x->streams[s]) gm_stream_synchronize(x->streams[s], &ignore);
    gm_exec_free_events(x);
    for (unsigned s = 0; s < total; s++) gm_stream_destroy(x->streams[s], &ignore);
    if (x->dev) gm_exec_note_device_peak(x);
    if (x->place) gm_exec_free_regions(x);
    gm_device_close(x->dev);
    gm_place_close(x);
}

static gm_status sync_all(gm_exec *x)
{
    for (unsigned s = 0; s < gm_exec_total_streams(x); s++) {
        gm_status st = gm_stream_synchronize(x->streams[s], x->err);
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

static const char *plan_sym_name(const gm_exec *x, int32_t sym, char *buf, size_t cap)
{
    (void)buf, (void)cap;
    return x->p->symbols[sym].id;
}

gm_status gm_run_static(const gm_model *m, const gm_plan *p, const gm_run_options *o, gm_run_stats *stats,
                        gm_error *err)
{
    return gm_run_static_fault(m, p, o, GM_PLACE_FAULT_NONE, stats, err);
}

gm_status gm_run_static_fault(const gm_model *m, const gm_plan *p, const gm_run_options *o, gm_place_fault fault,
                              gm_run_stats *stats, gm_error *err)
{
    gm_error local;
    if (!err) err = &local;
    gm_error_clear(err);
    memset(stats, 0, sizeof *stats);
    if (!o->iterations) return gm_error_set(err, GM_ERR_INPUT, "run: iterations must be at least 1");
    if (p->unresolved) return gm_error_set(err, GM_ERR_INPUT, "run: the plan did not verify; it cannot be run");
    gm_exec *x = gm_calloc(1, sizeof *x); /* large: the wait table */
    if (!x) return gm_error_set(err, GM_ERR_NOMEM, "run: out of memory");
    x->m = m, x->p = p, x->err = err, x->stats = stats;
    x->sym_name = plan_sym_name;
    gm_status st = gm_exec_index(x);
    if (st == GM_OK) st = open_resources(x, o, fault);
    if (st == GM_OK) st = gm_exec_init_constants(x);
    for (unsigned k = 0; st == GM_OK && k < o->iterations; k++) {
        x->iteration = k;
        gm_exec_clock_start(&x->clock);
        st = gm_exec_launch_iteration(x);
        if (st == GM_OK) st = sync_all(x);
        if (st == GM_OK) gm_exec_clock_stop(&x->clock), gm_exec_collect(x);
    }
    gm_exec_clock_report(&x->clock, stats);
    if (st == GM_OK) st = sync_all(x);
    close_resources(x);
    gm_exec_free_index(x);
    st = fail(x, st);
    gm_free(x);
    return st;
}
