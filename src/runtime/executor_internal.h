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

/* Iteration durations (executor_clock.c). */
#define GM_EXEC_CLOCK_KEPT 4096
typedef struct gm_exec_clock {
    uint64_t ns[GM_EXEC_CLOCK_KEPT]; /* the first GM_EXEC_CLOCK_KEPT iterations' */
    unsigned n;                      /* iterations timed */
    uint64_t t0;
} gm_exec_clock;

void gm_exec_clock_start(gm_exec_clock *c);
void gm_exec_clock_stop(gm_exec_clock *c);
/* first_iteration_ns and median_iteration_ns of s (the median of the others; of the first when
 * it was the only one). */
void gm_exec_clock_report(gm_exec_clock *c, gm_run_stats *s);

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
    gm_stream *streams[GM_EXEC_MAX_STREAMS]; /* device d's stream s at d * n_streams + s */
    unsigned n_streams;       /* per device */
    unsigned n_devices;       /* 0 or 1: one device; 2 (static mode): placement device 1 too */
    struct gm_place *place;   /* placement copies (executor_placement.c), both modes */
    void *region[GM_PLAN_R_COUNT][GM_MEM_COUNT];
    /* a symbol's name for reports: the plan's id, or the symbol table's name */
    const char *(*sym_name)(const struct gm_exec *x, int32_t sym, char *buf, size_t cap);
    gm_exec_clock clock;
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
/* The device task t runs on (its stream's). */
static inline unsigned gm_exec_task_device(const gm_exec *x, size_t t)
{
    return (unsigned)x->task_stream[t] / x->n_streams;
}

/* The most device memory held at one time into the statistics: each device's peak (regions,
 * allocators and staging), as the device and as its driver count it. */
void gm_exec_note_device_peak(gm_exec *x);
/* Streams of all devices (n_streams * n_devices). */
unsigned gm_exec_total_streams(const gm_exec *x);
/* A checked read of sym by n: its mismatch counter, NULL (error set) when out of capacity. */
uint64_t *gm_exec_add_check(gm_exec *x, const gm_node *n, int32_t sym, uint64_t bytes);
/* Task t waits on its stream for task dep (once per producer stream point). */
gm_status gm_exec_wait_dep(gm_exec *x, size_t t, size_t dep);

/* Shared with the dynamic executor (executor_dynamic.c): the task model and the patterns. */
/* Calls fn(x, t, dep) for every task dep that task t waits for. */
gm_status gm_exec_for_each_dep(gm_exec *x, size_t t, gm_status (*fn)(gm_exec *, size_t, size_t));
/* A pattern seed from (iteration, task, salt); never 0 (0 means "unknown"). */
uint64_t gm_exec_mix(uint64_t z);
/* Is n in the If/Case branch iteration x->iteration takes (or in no such branch)? */
bool gm_exec_branch_taken(const gm_exec *x, const gm_node *n);
/* The body outputs loop n stacks (gm_body_output_is_stacked), which its exit task reads, in one
 * fixed order: from *c = (gm_exec_stacked){0}, each call gives the next body NetOutput *o and its
 * input *in; false past the last. */
/* The most reads one iteration checks: every input, and every subgraph NetOutput input once
 * more (a loop's exit reads the body outputs it stacks). */
size_t gm_exec_max_reads(const gm_model *m);
typedef struct gm_exec_stacked {
    uint32_t g, j, i;
} gm_exec_stacked;
bool gm_exec_next_stacked(const gm_node *n, gm_exec_stacked *c, const gm_node **o, uint32_t *in);

/* ---- dynamic mode (executor_dynamic.c): test-only faults --------------------------------- */

typedef enum gm_run_fault {
    GM_RUN_FAULT_NONE = 0,
    /* Free every tensor on its producer's stream right after the producer's task, with no
     * cross-stream references: the next allocation reuses memory readers still need. */
    GM_RUN_FAULT_EARLY_FREE,
    /* Lay out continuous groups with a gap of one alignment unit before every member but the
     * first: the run-time contiguity check must report every group. */
    GM_RUN_FAULT_GAPPED_GROUPS,
} gm_run_fault;

/* A continuous group as the dynamic executor checks it (executor_dyn_layout.c). */
typedef struct gm_dyn_group {
    const struct gm_node *node; /* the node with the attribute */
    bool out;                   /* its outputs (else its inputs) */
    bool nopad;                 /* members at their real sizes, member 0 at the whole's start */
} gm_dyn_group;

/* A block given back late (executor_dyn_place.c): symbol y's birth stream waits for the last
 * read of y on each stream of the other device, then frees its reference. */
typedef struct gm_dyn_late_free {
    int32_t y;
    uint32_t stream;          /* global stream index */
    size_t wait_first, wait_n; /* tasks in gm_dyn.late_wait */
} gm_dyn_late_free;

/* A dynamic run: the static executor's tasks, streams and events (x, first, so that the
 * callbacks of gm_exec_for_each_dep can get back here), GE's symbol table instead of a plan,
 * and the runtime allocator. Per-iteration work is fixed by the graph, so everything below is
 * indexed once: which symbols a task allocates, touches and frees, and which payloads its
 * event carries. Filled by executor_dyn_index.c, run by executor_dynamic.c. */
typedef struct gm_dyn {
    gm_exec x;
    gm_run_fault fault;
    struct gm_symbols *sy;
    size_t n_sym;          /* symbol ids lie below it */
    /* per symbol */
    size_t *bytes;         /* the tensor's size (largest declared, or assumed) */
    int32_t *root;         /* the symbol whose block holds it: itself, or its group's first */
    uint64_t *off;         /* where in its root's block */
    size_t *unit_bytes;    /* per root: the block's size */
    size_t *unit_base;     /* CSR per root: the symbols it holds (itself included) */
    int32_t *unit_members;
    bool *host_mem;        /* per root: host memory (a buffer for the run), not a device's */
    int8_t *home;          /* per root: the device whose allocator gives its block */
    void **host_buf;       /* per root with host memory */
    uint64_t *touch;       /* per root: streams of its home device that use it (bit per stream) */
    struct gm_ms_block **block;
    void **addr;
    uint64_t *seed;        /* last writer's pattern this iteration, 0 unknown */
    uint64_t *seed_bytes;  /* how many bytes that writer wrote */
    /* per task, CSR (base has n_tasks + 1 entries): symbols allocated at its launch, the
     * symbols of its anchors (inputs then outputs, -1 none), symbols freed on its stream after */
    size_t *alloc_base, *use_base, *free_base;
    int32_t *allocs, *uses, *frees;
    /* events: per task the streams that wait for it and its payloads, one per such stream */
    uint64_t *dst_mask;
    size_t *pay_base;
    struct gm_ms_event_payload *pay;
    size_t n_pay;
    /* per stream pair (src * n + dst): the tasks whose payloads go that way, in stream order,
     * and how many of them dst has applied this iteration */
    size_t *pair_base, *pair_cursor;
    int32_t *pair_task;
    struct gm_ms_event_payload *start_pay; /* stream 0 -> s at the start event */
    gm_event *end_event[GM_EXEC_MAX_STREAMS];
    gm_event *order_event[GM_EXEC_MAX_STREAMS]; /* per stream: the allocator's internal dependencies */
    /* continuous groups: per task (CSR) the groups its node checks before it runs */
    size_t *group_base;
    gm_dyn_group *groups;
    /* joins, per task (CSR): allocating tasks of the blocks of several symbols that the task is
     * its stream's first to use; it waits for them (another stream allocated the block) */
    size_t *join_base;
    int32_t *join_task;
    /* late frees, per task (CSR): after the task's event record */
    size_t *late_base;
    gm_dyn_late_free *late;
    int32_t *late_wait;
    /* the allocator: a stack per device */
    struct gm_caching_allocator *l1[2];
    struct gm_ms_group *g[2];
    struct gm_dyn_sync {
        struct gm_dyn *d;
        unsigned dev;
    } sync_ctx[2];
    struct gm_dyn_device {  /* the memory source of a device's L1 */
        struct gm_device *dev;
        size_t piece;       /* bytes per backend map (0: no virtual memory) */
    } source[2];
} gm_dyn;

/* Builds everything above from d->x's tasks (gm_exec_init_constants ran) and the symbols. */
gm_status gm_dyn_index(gm_dyn *d);
void gm_dyn_free_index(gm_dyn *d);

/* executor_dyn_layout.c: after the symbols and sizes are known, before the lifetimes: the
 * groups' roots and offsets, the blocks' sizes, and the groups each task checks. */
gm_status gm_dyn_layout(gm_dyn *d);
/* Does each group of task t find its members adjacent? Counts and reports violations. */
void gm_dyn_check_groups(gm_dyn *d, size_t t);
/* Symbol y's address this iteration (its root's block at its offset), NULL before allocation. */
void *gm_dyn_addr(const gm_dyn *d, int32_t y);

/* executor_dyn_place.c: after the lifetimes: host tensors' buffers, the checks that no node
 * writes another device's tensor, and the late frees of tensors read on the other device. */
gm_status gm_dyn_place_index(gm_dyn *d, const int32_t *first, const int32_t *last, const bool *remote,
                             const int32_t *rank);
/* Task t's late frees, after its event record. */
gm_status gm_dyn_late_frees(gm_dyn *d, size_t t);
void gm_dyn_place_free(gm_dyn *d);

/* gm_run_dynamic with a deliberate fault, so that tests can see the checks catch it. */
gm_status gm_run_dynamic_fault(const gm_model *m, const gm_run_options *o, gm_run_fault fault, gm_run_stats *stats,
                               gm_error *err);

#endif
