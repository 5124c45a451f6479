/*
 * executor_placement.h — placement copies of both executors (executor_placement.c): host
 * tensors in host memory, host nodes, a second device; the copies (H2D, D2H after SyncStream,
 * P2P) that carry a tensor's pattern to the place where it is read. The copy logic works on
 * addresses (gm_place_read, gm_place_fill); the static executor's wrappers find them in the
 * plan's regions, the dynamic executor's in its allocators' blocks. Not part of the API.
 */
#ifndef GM_EXECUTOR_PLACEMENT_H
#define GM_EXECUTOR_PLACEMENT_H

#include "runtime/executor_internal.h"

/* Test-only faults, to see the checks catch a copy made too early. With a fault, the producer
 * of every skipped dependency is held (a host function on its stream, after its reads, before
 * its writes) until each consumer that skipped it has made its copies: the race is forced, and
 * the stale copy is deterministic. For the small test graphs only (a consumer must not itself
 * wait, on its stream, behind a held producer). */
typedef enum gm_place_fault {
    GM_PLACE_FAULT_NONE = 0,
    /* host nodes neither synchronize with their producers' streams nor wait for them: the D2H
     * reads device memory the producer has not written yet */
    GM_PLACE_FAULT_NO_SYNC,
    /* device nodes do not wait for producers on the other device: the P2P copy runs before
     * the producer's event */
    GM_PLACE_FAULT_P2P_NO_WAIT,
} gm_place_fault;

/* Opens the placement state (x->place) for symbols below n_symbols, the second device when
 * o->devices == 2. */
gm_status gm_place_open(gm_exec *x, const gm_run_options *o, gm_place_fault fault, size_t n_symbols);
/* Closes the second device and frees the state; after every stream is destroyed. */
void gm_place_close(gm_exec *x);
gm_device *gm_place_device(const gm_exec *x, unsigned d);

/* The plan's regions: device regions on every device, the host region with malloc; and the
 * staging pools. */
gm_status gm_place_alloc_regions(gm_exec *x);
void gm_place_free_regions(gm_exec *x);
/* The staging pools alone (gm_place_free_regions frees them too). */
void gm_place_free_staging(gm_exec *x);

/* Where node n runs: its device (0, or 1 with two devices and "_device": 1). */
unsigned gm_place_node_device(const gm_exec *x, const gm_node *n);
bool gm_place_node_on_host(const gm_node *n);

/* After the tasks are indexed: host tasks, and with a fault the held producers. */
gm_status gm_place_index(gm_exec *x);
/* Before an iteration's first launch (all streams idle). */
void gm_place_begin_iteration(gm_exec *x);
/* gm_exec_for_each_dep callback replacing gm_exec_wait_dep: a host task synchronizes. */
gm_status gm_place_wait_dep(gm_exec *x, size_t t, size_t dep);
/* The shared copy logic. A checked read by task t of bytes at src, which lies in host memory
 * (host_mem) or on device src_dev, expecting pattern seed: with the copy the read needs (H2D,
 * D2H, P2P) into staging, the check reading the copy; the check is recorded under sym. */
gm_status gm_place_read(gm_exec *x, size_t t, int32_t sym, bool host_mem, unsigned src_dev, void *src, size_t bytes,
                        uint64_t seed);
/* Task t fills bytes at dst (host memory, or its own device's) with pattern seed. */
gm_status gm_place_fill(gm_exec *x, size_t t, bool host_mem, void *dst, size_t bytes, uint64_t seed);

/* Static mode. A checked read of slot sl (bytes, expected seed) by task t, with its copy if it needs one. */
gm_status gm_place_check_read(gm_exec *x, size_t t, const gm_exec_slot *sl, int64_t bytes, uint64_t seed);
/* Task t writes pattern seed over bytes where sl lies (sl->sym >= 0, a static region). */
gm_status gm_place_write(gm_exec *x, size_t t, const gm_exec_slot *sl, int64_t bytes, uint64_t seed);
/* Between task t's reads and its writes: the fault's release and hold points. */
gm_status gm_place_after_reads(gm_exec *x, size_t t);

/* gm_run_dynamic with deliberate faults (either may be NONE). */
gm_status gm_run_dynamic_faults(const gm_model *m, const gm_run_options *o, gm_run_fault fault,
                                gm_place_fault place_fault, gm_run_stats *stats, gm_error *err);

/* gm_run_static with a deliberate fault. */
gm_status gm_run_static_fault(const gm_model *m, const gm_plan *p, const gm_run_options *o, gm_place_fault fault,
                              gm_run_stats *stats, gm_error *err);

/* Both modes (executor.c): checks the stream and device counts, opens the device(s) (placement
 * with n_symbols for its per-tensor state; 0 in dynamic mode) and creates every stream. */
gm_status gm_exec_open_streams(gm_exec *x, const gm_run_options *o, gm_place_fault fault, size_t n_symbols);

#endif
