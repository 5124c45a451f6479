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
 *
 * Placement (both modes). A tensor whose memory type is host (GM_MEM_HOST) lives in host
 * memory (malloc), written and checked by host functions in stream order. Every node runs on a
 * device unless its attribute "_placement" is the string "host"; with devices = 2 a node whose
 * attribute "_device" is 1 runs on the second device (other values, or one device: device 0);
 * Data, Const and Variable of the root graph always run first, on device 0. A read across
 * places gets a copy into a per-run staging buffer, and the check reads the copy:
 *   device node reads a host tensor:            H2D on the node's stream;
 *   host node reads a device tensor:            the launching thread first waits for the
 *                                               producers' events (SyncStream), then D2H on the
 *                                               node's stream (the tensor must be on the node's
 *                                               device);
 *   device node reads the other device's tensor: P2P (gm_memcpy_peer_async) on the node's
 *                                               stream, after its wait for the producer's event.
 * Static mode: device regions are allocated on each device; a tensor lives where its last
 * writer ran. Dynamic mode: each device has its own allocator stack (caching L1, per-stream
 * L2); a tensor lives on the device of the task that allocates it (its first user), a node on
 * another device may read it (P2P) but not write it, and the tensor's birth stream gives its
 * block back only after waiting for the last such remote read. Host tensors come from host
 * memory (one buffer per tensor for the run).
 *
 * Continuous groups (both modes). The members of a node's continuous_input / continuous_output
 * lie end to end, each at its size rounded up to the planner's alignment (512 bytes); groups
 * that overlap head to tail form one chain (as the planner's plan_chains.c). No-padding groups
 * (_no_padding_continuous_input / _output) are views at their real sizes inside the whole (the
 * node's output 0 / input 0). The dynamic executor gives a chain (or a whole) one block, alive
 * from its first member's first use to its last member's last use on every stream, and before
 * each node with such an attribute runs it checks on the host that the members' addresses are
 * adjacent in order (stats->contiguity_violations).
 *
 * Dynamic mode: no plan. GE's runtime v2 allocator (caching L1 over the device, a
 * MultiStreamL2Allocator per stream, cross-stream borrowing) hands each buffer (a symbol: the
 * anchors that share one address) out when its first writer is launched and takes it back on
 * each stream after that stream's last use; the events at cross-stream edges carry the
 * allocators' recycle news.
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
    uint64_t memory_limit; /* device bytes the run may hold (gm_device_set_memory_limit); 0 = no limit */
    size_t vm_granularity; /* the devices map virtual memory in granules of this many bytes
                              (gm_device_set_vm_granularity: a host device as a GPU, 2 MiB); 0 = their own */
    unsigned devices;    /* 1 (default) or 2; with 2, nodes whose attribute "_device" is 1 run on a
                            second device (id device_id + 1) with streams (and, in dynamic mode, an
                            allocator stack) of its own; streams * devices must not exceed 64 */
    bool memory_first;   /* dynamic mode, not GE's default: 4 KiB allocator pages instead of GE's
                            64 KiB, the L1 in expandable mode (the device's virtual memory, where it
                            has it), and before L1 grows the pools recycling and the releases still
                            waiting for events settled (stream synchronizes for less device
                            memory); where the device maps granules coarser than the pages (a
                            GPU's 2 MiB), the pools also give their idle memory back at the end of
                            each iteration (gm_ms_config.l1_maps_granules); false by default */
    bool learn_plan;     /* dynamic mode, not GE's: the allocator records the first iteration and
                            serves the next ones from a packed plan of it while they repeat it
                            (src/runtime/ms_learned_plan.h); false by default */
} gm_run_options;

void gm_run_options_init(gm_run_options *o);

/* What the runtime allocator did in a dynamic run (all iterations); zero in static mode. */
typedef struct gm_run_alloc_stats {
    uint64_t mallocs;           /* blocks handed out by the per-stream L2 allocators (a learned plan's too) */
    uint64_t allocated_bytes;   /* bytes of those blocks, summed */
    uint64_t peak_bytes;        /* most bytes in blocks at one time (whole 64 KiB pages) */
    uint64_t reserved_bytes;    /* most bytes the L2 pools held from L1 (in use + cached) */
    uint64_t device_peak_bytes; /* most device memory L1 held */
    uint64_t live_bytes;        /* bytes still in blocks after the run: 0 unless a leak */
    uint64_t borrow_hits;       /* mallocs served by a block another stream lent */
    uint64_t birth_recycles, borrow_recycles, local_recycles; /* frees, by recycle mode */
    uint64_t cross_stream_accesses; /* references taken by readers on other streams */
    uint64_t events_sent, events_waited; /* allocator payloads at cross-stream edges */
    uint64_t messages_sent, stale_messages; /* local-recycle news applied / found stale */
    uint64_t returned_home;     /* borrowed blocks sent back to their birth stream */
    uint64_t internal_events;   /* dependencies the allocator added to reuse released memory
                                 * sooner (cudaMallocAsync's internal dependencies; not GE's) */
    uint64_t leaked_blocks;     /* blocks the group's destructor had to reclaim */
    uint64_t sync_violations;   /* allocator sanity failures (a bug if > 0) */
    uint64_t growth_recycles;   /* memory_first: recycles run instead of growing L1 */
    uint64_t settles;           /* memory_first: every stream synchronized so that the releases
                                 * waiting for events were known before L1 grew (not GE's) */
    uint64_t assumed_sizes;     /* buffers of run-time size (a tensor they hold has a size known
                                 * only at run time, gm_model_stats' dynamic_tensors, and none
                                 * declares bytes), each given an assumed 4 KiB */
    /* learn_plan: plans learned, iterations that kept to one, departures, mallocs the plans
     * answered, dependencies they added, and the largest plan's region */
    uint64_t plans_learned, plan_iterations, plan_departures, planned_mallocs, plan_orders, plan_region_bytes;
} gm_run_alloc_stats;

typedef struct gm_run_stats {
    uint64_t tasks;            /* node tasks run, all iterations */
    uint64_t reads_checked;    /* tensor reads whose pattern was verified */
    uint64_t bytes_checked;
    uint64_t corrupted_reads;  /* reads that found another pattern: memory reused too early */
    uint64_t corrupted_bytes;
    uint64_t events;           /* cross-stream waits */
    uint64_t events_recorded;  /* events recorded for other streams (and the start event) */
    uint64_t device_bytes;     /* memory allocated on the device for the plan's regions */
    uint64_t region_bytes[GM_PLAN_R_COUNT][GM_MEM_COUNT]; /* static: bytes of each region, per device */
    uint64_t device_peak_bytes; /* most device memory held at one time, all devices together */
    uint64_t driver_peak_bytes; /* the same as the devices' drivers count it (gm_device_counters);
                                   0 where the backend cannot tell (host) */
    /* Wall clock of an iteration, from its launch to every stream done: the first (allocations,
     * a plan's recording, kernels loading) and the median of the others (of the first 4,096;
     * the first's own when it ran alone). Measured, so never compared in a test. */
    uint64_t first_iteration_ns, median_iteration_ns;
    uint64_t skipped_dynamic;  /* static mode: reads of a tensor of run-time size (the plan's
                                * dynamic region), not checked */
    /* placement copies (see "Placement" above), all iterations */
    uint64_t copies[GM_COPY_KIND_COUNT]; /* by kind: H2D, D2H, (D2D unused), P2P */
    uint64_t copy_bytes;
    uint64_t host_syncs;       /* host nodes waiting for a producer's stream (GE's SyncStream) */
    uint64_t staging_bytes;    /* most memory the staging pools held (devices and host) */
    char first_corruption[256]; /* "node 'x' read 'y_out_0' (iteration k): n bytes differ" */
    uint64_t contiguity_violations; /* dynamic: continuous-group members found not adjacent */
    char first_violation[256];
    bool dynamic;               /* gm_run_dynamic filled it: alloc below is meaningful */
    gm_run_alloc_stats alloc;
} gm_run_stats;

/* Spreads m's nodes over `streams` streams, deterministically: nodes keep their stream's
 * relative order; streams = 1 puts everything on stream 0. Subgraph nodes go with their own
 * position. Run the passes and plan after this: the passes decide in-place reuse and the copies
 * before in-place writers on the streams (a reader on another stream must be ordered before a
 * write), and the plan's happens-before is the execution's. Calling it again after the passes
 * changes nothing (the streams are already folded onto `streams`). */
void gm_run_assign_streams(gm_model *m, unsigned streams);

/* Runs m (finalized, sorted, planned with p for this stream assignment) o->iterations times
 * and fills *stats. GM_OK means it ran; corruption is reported in stats, not as an error. */
gm_status gm_run_static(const gm_model *m, const gm_plan *p, const gm_run_options *o, gm_run_stats *stats,
                        gm_error *err);

/* Runs m (finalized, sorted, streams assigned) o->iterations times without a plan: every
 * buffer comes from the multi-stream runtime allocator when its first writer is launched and
 * goes back after its last use on each stream. A buffer gets the largest size any of its
 * anchors declares; one that none gives bytes gets 4 KiB — counted in stats->alloc.assumed_sizes
 * when it holds a tensor of run-time size (a size known only at run time), not when it is empty
 * (0 bytes, known). GM_OK means it ran; corruption is reported in stats, not as an error. */
gm_status gm_run_dynamic(const gm_model *m, const gm_run_options *o, gm_run_stats *stats, gm_error *err);

#ifdef __cplusplus
}
#endif
#endif
