/*
 * executor_internal.h — what executor.c (the run) and executor_tasks.c (index, memory, tasks,
 * checks) share. Not part of the API.
 */
#ifndef GM_EXECUTOR_INTERNAL_H
#define GM_EXECUTOR_INTERNAL_H

#include "graphmem/executor.h"

#define GM_EXEC_MAX_STREAMS 64

/* Where an anchor's tensor lives: its plan symbol and its address in the symbol's region. */
typedef struct gm_exec_slot {
    int32_t sym;    /* plan symbol, -1 none (not in the plan) */
    int64_t offset; /* bytes from the region's start */
    bool view;      /* addresses its symbol at its own offset (a no-padding member) */
} gm_exec_slot;

/* One read checked in the current iteration, for the report. */
typedef struct gm_exec_check {
    const gm_node *node;
    int32_t sym;
    uint64_t bytes;
} gm_exec_check;

typedef struct gm_exec {
    const gm_model *m;
    const gm_plan *p;
    gm_error *err;
    gm_run_stats *stats;
    unsigned iteration;
    /* index */
    size_t *base[2];          /* [in/out] node topo id -> first slot */
    gm_exec_slot *slot[2];    /* [in/out] slots */
    int32_t *task_of[2];      /* [enter/exit] node topo id -> task number, -1 none */
    const gm_node **task_node;
    bool *task_exit;
    size_t n_tasks;
    int32_t *task_stream;
    int64_t *task_seq;        /* task's position among its stream's tasks */
    gm_event **task_event;    /* recorded after the task when another stream waits for it */
    gm_event *start_event;    /* after the start writers, on stream 0; every stream waits first */
    int64_t waited[GM_EXEC_MAX_STREAMS][GM_EXEC_MAX_STREAMS]; /* [s][d]: the last task of stream d
                                                                 that stream s waits for */
    uint64_t *seed;           /* per symbol: the pattern its last writer left, 0 unknown */
    /* checks of one iteration */
    gm_exec_check *checks;
    uint64_t *mismatches;
    size_t n_checks, cap_checks;
    /* device */
    gm_device *dev;
    gm_stream *streams[GM_EXEC_MAX_STREAMS];
    unsigned n_streams;
    void *region[GM_PLAN_R_COUNT][GM_MEM_COUNT];
} gm_exec;

gm_status gm_exec_index(gm_exec *x);
void gm_exec_free_index(gm_exec *x);
gm_status gm_exec_alloc_regions(gm_exec *x);
void gm_exec_free_regions(gm_exec *x);
void gm_exec_free_events(gm_exec *x);
/* Nothing to prepare beyond the index today: Const and Variable are written by their own tasks. */
gm_status gm_exec_init_constants(gm_exec *x);
gm_status gm_exec_launch_iteration(gm_exec *x);
/* After the streams are synchronized: the iteration's mismatches into the statistics. */
void gm_exec_collect(gm_exec *x);

#endif
