/*
 * graphmem/executor.h — runs a graph on the streams of a device backend and proves that no
 * tensor's memory was reused too early.
 *
 * Every node becomes a task on its stream: it checks that each tensor it reads still holds the
 * data pattern its writer left (a pattern derived from the writer and the iteration), then
 * writes its own outputs' patterns. Tasks on different streams are ordered with events exactly
 * where the graph orders them (data and control edges, subgraph entry and exit), nowhere else.
 * So a memory plan that lets two unordered tensors share an address, or an allocator that hands
 * memory out before its last reader is done, shows up as a pattern mismatch ("corruption").
 *
 * Static mode: the memory comes from a plan (graphmem/plan.h) made for the same stream
 * assignment: one allocation per region, each tensor at its planned offset.
 */
#ifndef GRAPHMEM_EXECUTOR_H
#define GRAPHMEM_EXECUTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "graphmem/graph.h"
#include "graphmem/plan.h"
#include "graphmem/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gm_run_options {
    gm_backend_kind backend;
    int device_id;
    unsigned streams;    /* 1..64; the model's nodes are spread over them (gm_run_assign_streams) */
    unsigned iterations; /* >= 1 */
} gm_run_options;

void gm_run_options_init(gm_run_options *o);

typedef struct gm_run_stats {
    uint64_t tasks;            /* node tasks run, all iterations */
    uint64_t reads_checked;    /* tensor reads whose pattern was verified */
    uint64_t bytes_checked;
    uint64_t corrupted_reads;  /* reads that found another pattern: memory reused too early */
    uint64_t corrupted_bytes;
    uint64_t events;           /* cross-stream waits */
    uint64_t device_bytes;     /* memory allocated on the device for the plan's regions */
    uint64_t skipped_dynamic;  /* tensors of run-time size: not checked in static mode */
    char first_corruption[256]; /* "node 'x' read 'y_out_0' (iteration k): n bytes differ" */
} gm_run_stats;

/* Spreads m's nodes over `streams` streams, deterministically: nodes keep their stream's
 * relative order; streams = 1 puts everything on stream 0. Subgraph nodes go with their own
 * position. Plan after this, so the plan's happens-before is the execution's. */
void gm_run_assign_streams(gm_model *m, unsigned streams);

/* Runs m (finalized, sorted, planned with p for this stream assignment) o->iterations times
 * and fills *stats. GM_OK means it ran; corruption is reported in stats, not as an error. */
gm_status gm_run_static(const gm_model *m, const gm_plan *p, const gm_run_options *o, gm_run_stats *stats,
                        gm_error *err);

#ifdef __cplusplus
}
#endif
#endif
