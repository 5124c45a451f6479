/*
 * executor_placement.c — where the executors' tensors live and their tasks run, and the copies
 * between places (see "Placement" in graphmem/executor.h). The copies work on addresses
 * (gm_place_read, gm_place_fill), shared by both modes; the static mode's places follow.
 *
 * Places. Host tensors (memory type host) live in host memory (static: the plan's host
 * regions, allocated with malloc); they are written and checked by host functions in stream
 * order, never by device kernels. Static device regions exist once per device; a device tensor
 * lives on the device of its last writer (per symbol, as the host walks the tasks). A node runs
 * on the host when its attribute "_placement" is "host", else on its device ("_device", with
 * two devices).
 *
 * Copies. A read whose tensor is elsewhere copies it into a staging buffer first, on the
 * reader's stream, and the pattern check reads the staging copy: a copy made too early, or
 * from the wrong place, carries the wrong pattern. Staging buffers come from per-run pools (one
 * per device, one for the host): chunks kept over the run, handed out by a bump pointer that
 * goes back to zero at each iteration (the streams are idle between iterations).
 *
 * SyncStream. A host node reads device memory only after the producer has finished: for each
 * dependency on another stream the launching thread waits for the producer's event
 * (gm_event_synchronize) instead of making the host node's stream wait; then the D2H is
 * enqueued on the node's stream. Once the host has waited for a point of a stream, no stream
 * needs to wait for it again.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/op_table.h"
#include "runtime/executor_placement.h"
#include "util/alloc.h"

#define STAGE_CHUNKS 32
#define STAGE_MIN_CHUNK ((size_t)64 << 10)
#define STAGE_ALIGN 256
#define GM_PLACE_MAX_SKIPS 64

/* A staging pool: chunks on one device (dev) or the host (dev NULL). */
typedef struct gm_stage_pool {
    gm_device *dev;
    void *chunk[STAGE_CHUNKS];
    size_t size[STAGE_CHUNKS];
    unsigned n, cur;
    size_t used;
    uint64_t bytes; /* held, all chunks */
} gm_stage_pool;

/* A host function's work: fill or verify host memory. */
typedef struct gm_place_op {
    uint8_t *ptr;
    size_t bytes;
    uint64_t seed;
    uint64_t *mismatches; /* NULL: fill */
} gm_place_op;

struct gm_place;
typedef struct gm_place_gate {
    struct gm_place *pl;
    size_t task;
} gm_place_gate;

typedef struct gm_place {
    gm_place_fault fault;
    gm_device *dev1;                           /* the second device, NULL with one */
    void *region1[GM_PLAN_R_COUNT][GM_MEM_COUNT]; /* device 1's copy of the device regions */
    gm_stage_pool pool[3];                     /* device 0, device 1, host */
    int8_t *loc;                               /* per symbol: device holding its last write */
    bool *host_task;                           /* per task */
    int64_t host_synced[GM_EXEC_MAX_STREAMS];  /* the last point of each stream the host waited for */
    /* host functions' work, one iteration */
    gm_place_op *ops;
    size_t n_ops, cap_ops;
    /* the fault: per task, how many consumers must copy before it may write (0: not held) */
    uint32_t *hold_need, *released;
    gm_place_gate *gates;
    size_t seen[GM_PLACE_MAX_SKIPS], n_seen; /* for_each_skipped's walk */
    gm_status (*walk_fn)(gm_exec *, size_t, size_t);
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool sync_init;
} gm_place;

/* ---- places ------------------------------------------------------------------------------ */

bool gm_place_node_on_host(const gm_node *n)
{
    const gm_attr *a = gm_attr_find(n->attrs, "_placement");
    if (!a || gm_attr_get_kind(a) != GM_ATTR_STRING) return false;
    const char *s = gm_attr_string(a, NULL);
    return s && strcmp(s, "host") == 0;
}

unsigned gm_place_node_device(const gm_exec *x, const gm_node *n)
{
    if (x->n_devices < 2) return 0;
    const gm_attr *a = gm_attr_find(n->attrs, "_device");
    return a && gm_attr_get_kind(a) == GM_ATTR_INT && gm_attr_int(a) == 1 ? 1 : 0;
}

gm_device *gm_place_device(const gm_exec *x, unsigned d) { return d ? x->place->dev1 : x->dev; }

static unsigned task_device(const gm_exec *x, size_t t) { return gm_exec_task_device(x, t); }

gm_status gm_place_open(gm_exec *x, const gm_run_options *o, gm_place_fault fault, size_t n_symbols)
{
    gm_place *pl = gm_calloc(1, sizeof *pl);
    if (!pl) return GM_ERR_NOMEM;
    x->place = pl;
    pl->fault = fault;
    if (pthread_mutex_init(&pl->mu, NULL) != 0) return GM_ERR_NOMEM;
    if (pthread_cond_init(&pl->cv, NULL) != 0) {
        pthread_mutex_destroy(&pl->mu);
        return GM_ERR_NOMEM;
    }
    pl->sync_init = true;
    if (!(pl->loc = gm_calloc(n_symbols ? n_symbols : 1, sizeof *pl->loc))) return GM_ERR_NOMEM;
    pl->pool[0].dev = x->dev;
    if (x->n_devices == 2) {
        gm_status st = gm_device_open(o->backend, o->device_id + 1, &pl->dev1, x->err);
        if (st != GM_OK) return st;
        gm_device_set_memory_limit(pl->dev1, o->memory_limit);
        if (o->vm_granularity && (st = gm_device_set_vm_granularity(pl->dev1, o->vm_granularity, x->err)) != GM_OK)
            return st;
        pl->pool[1].dev = pl->dev1;
    }
    return GM_OK;
}

void gm_place_close(gm_exec *x)
{
    gm_place *pl = x->place;
    if (!pl) return;
    gm_device_close(pl->dev1);
    if (pl->sync_init) {
        pthread_cond_destroy(&pl->cv);
        pthread_mutex_destroy(&pl->mu);
    }
    gm_free(pl->loc);
    gm_free(pl->host_task);
    gm_free(pl->ops);
    gm_free(pl->hold_need);
    gm_free(pl->released);
    gm_free(pl->gates);
    gm_free(pl);
    x->place = NULL;
}

/* ---- memory ------------------------------------------------------------------------------ */

gm_status gm_place_alloc_regions(gm_exec *x)
{
    gm_place *pl = x->place;
    for (int r = 0; r < GM_PLAN_R_DYNAMIC; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
            int64_t bytes = x->p->region_bytes[r][mt];
            if (bytes <= 0) continue;
            if (mt == GM_MEM_HOST) {
                if (!(x->region[r][mt] = malloc((size_t)bytes)))
                    return gm_error_set(x->err, GM_ERR_NOMEM, "run: out of host memory");
                x->stats->region_bytes[r][mt] = (uint64_t)bytes;
                continue;
            }
            for (unsigned d = 0; d < (x->n_devices == 2 ? 2u : 1u); d++) {
                void **at = d ? &pl->region1[r][mt] : &x->region[r][mt];
                gm_status st = gm_device_malloc(gm_place_device(x, d), (size_t)bytes, at, x->err);
                if (st != GM_OK) return st;
                x->stats->device_bytes += (uint64_t)bytes;
            }
            x->stats->region_bytes[r][mt] = (uint64_t)bytes;
        }
    return GM_OK;
}

static void pool_free(gm_stage_pool *p)
{
    gm_error ignore;
    for (unsigned i = 0; i < p->n; i++) {
        if (p->dev) gm_device_free(p->dev, p->chunk[i], &ignore);
        else free(p->chunk[i]);
    }
    p->n = p->cur = 0;
    p->used = 0;
}

void gm_place_free_staging(gm_exec *x)
{
    for (int i = 0; i < 3; i++) pool_free(&x->place->pool[i]);
}

void gm_place_free_regions(gm_exec *x)
{
    gm_error ignore;
    gm_place *pl = x->place;
    for (int r = 0; r < GM_PLAN_R_COUNT; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
            if (mt == GM_MEM_HOST) free(x->region[r][mt]);
            else if (x->region[r][mt]) gm_device_free(x->dev, x->region[r][mt], &ignore);
            x->region[r][mt] = NULL;
            if (pl->region1[r][mt]) gm_device_free(pl->dev1, pl->region1[r][mt], &ignore);
            pl->region1[r][mt] = NULL;
        }
    gm_place_free_staging(x);
}

static gm_status stage_alloc(gm_exec *x, gm_stage_pool *p, size_t bytes, void **out)
{
    size_t need = (bytes + STAGE_ALIGN - 1) & ~(size_t)(STAGE_ALIGN - 1);
    while (p->cur < p->n && p->used + need > p->size[p->cur]) p->cur++, p->used = 0;
    if (p->cur == p->n) {
        if (p->n == STAGE_CHUNKS) return gm_error_set(x->err, GM_ERR_INTERNAL, "run: staging pool exhausted");
        size_t size = need > STAGE_MIN_CHUNK ? need : STAGE_MIN_CHUNK;
        void *c = NULL;
        if (p->dev) {
            gm_status st = gm_device_malloc(p->dev, size, &c, x->err);
            if (st != GM_OK) return st;
        } else if (!(c = malloc(size))) {
            return gm_error_set(x->err, GM_ERR_NOMEM, "run: out of host memory");
        }
        p->chunk[p->n] = c, p->size[p->n] = size, p->n++;
        p->used = 0;
        p->bytes += size;
        uint64_t held = x->place->pool[0].bytes + x->place->pool[1].bytes + x->place->pool[2].bytes;
        if (held > x->stats->staging_bytes) x->stats->staging_bytes = held;
    }
    *out = (char *)p->chunk[p->cur] + p->used;
    p->used += need;
    return GM_OK;
}

static void *addr_on(gm_exec *x, const gm_exec_slot *sl, unsigned d)
{
    const gm_plan_symbol *y = &x->p->symbols[sl->sym];
    char *base = d && y->mem_type != GM_MEM_HOST ? x->place->region1[y->region][y->mem_type]
                                                 : x->region[y->region][y->mem_type];
    return base ? base + sl->offset : NULL;
}

/* ---- host functions ---------------------------------------------------------------------- */

static void host_op(void *user)
{
    gm_place_op *op = user;
    if (!op->mismatches) {
        for (size_t i = 0; i < op->bytes; i++) op->ptr[i] = gm_pattern_byte(op->seed, i);
        return;
    }
    uint64_t bad = 0;
    for (size_t i = 0; i < op->bytes; i++) bad += op->ptr[i] != gm_pattern_byte(op->seed, i);
    *op->mismatches = bad;
}

static gm_status launch_host_op(gm_exec *x, gm_stream *s, void *ptr, size_t bytes, uint64_t seed, uint64_t *mm)
{
    gm_place *pl = x->place;
    if (pl->n_ops == pl->cap_ops) return gm_error_set(x->err, GM_ERR_INTERNAL, "run: host operation capacity");
    gm_place_op *op = &pl->ops[pl->n_ops++];
    *op = (gm_place_op){ptr, bytes, seed, mm};
    return gm_stream_launch_host_fn(s, host_op, op, x->err);
}

/* ---- the fault's hold points ------------------------------------------------------------- */

static bool skips(const gm_exec *x, size_t t, size_t dep)
{
    const gm_place *pl = x->place;
    if (x->task_stream[t] == x->task_stream[dep]) return false;
    if (pl->fault == GM_PLACE_FAULT_NO_SYNC) return pl->host_task[t];
    if (pl->fault == GM_PLACE_FAULT_P2P_NO_WAIT) return !pl->host_task[t] && task_device(x, t) != task_device(x, dep);
    return false;
}

/* Calls fn(x, t, dep) once for each distinct dependency of t that the fault skips (the walk's
 * state lives in the place: only the launching thread walks). */
static gm_status skip_visit(gm_exec *x, size_t t, size_t dep)
{
    gm_place *pl = x->place;
    if (!skips(x, t, dep)) return GM_OK;
    for (size_t i = 0; i < pl->n_seen; i++)
        if (pl->seen[i] == dep) return GM_OK;
    if (pl->n_seen == GM_PLACE_MAX_SKIPS)
        return gm_error_set(x->err, GM_ERR_INPUT, "run: fault injection: too many dependencies");
    pl->seen[pl->n_seen++] = dep;
    return pl->walk_fn(x, t, dep);
}

static gm_status for_each_skipped(gm_exec *x, size_t t, gm_status (*fn)(gm_exec *, size_t, size_t))
{
    x->place->n_seen = 0;
    x->place->walk_fn = fn;
    return gm_exec_for_each_dep(x, t, skip_visit);
}

static gm_status count_hold(gm_exec *x, size_t t, size_t dep)
{
    (void)t;
    x->place->hold_need[dep]++;
    return GM_OK;
}

static void release_fn(void *user)
{
    gm_place_gate *g = user;
    pthread_mutex_lock(&g->pl->mu);
    g->pl->released[g->task]++;
    pthread_cond_broadcast(&g->pl->cv);
    pthread_mutex_unlock(&g->pl->mu);
}

static void hold_fn(void *user)
{
    gm_place_gate *g = user;
    pthread_mutex_lock(&g->pl->mu);
    while (g->pl->released[g->task] < g->pl->hold_need[g->task]) pthread_cond_wait(&g->pl->cv, &g->pl->mu);
    pthread_mutex_unlock(&g->pl->mu);
}

static gm_status release_dep(gm_exec *x, size_t t, size_t dep)
{
    return gm_stream_launch_host_fn(x->streams[x->task_stream[t]], release_fn, &x->place->gates[dep], x->err);
}

gm_status gm_place_after_reads(gm_exec *x, size_t t)
{
    gm_place *pl = x->place;
    if (pl->fault == GM_PLACE_FAULT_NONE) return GM_OK;
    gm_status st = for_each_skipped(x, t, release_dep);
    if (st != GM_OK || !pl->hold_need[t]) return st;
    return gm_stream_launch_host_fn(x->streams[x->task_stream[t]], hold_fn, &pl->gates[t], x->err);
}

/* ---- index and iterations ---------------------------------------------------------------- */

gm_status gm_place_index(gm_exec *x)
{
    gm_place *pl = x->place;
    size_t nt = x->n_tasks ? x->n_tasks : 1, cap = 0;
    pl->host_task = gm_calloc(nt, sizeof *pl->host_task);
    pl->hold_need = gm_calloc(nt, sizeof *pl->hold_need);
    pl->released = gm_calloc(nt, sizeof *pl->released);
    pl->gates = gm_calloc(nt, sizeof *pl->gates);
    if (!pl->host_task || !pl->hold_need || !pl->released || !pl->gates) return GM_ERR_NOMEM;
    for (size_t t = 0; t < x->n_tasks; t++) {
        pl->host_task[t] = !gm_node_at_start(x->task_node[t]) && gm_place_node_on_host(x->task_node[t]);
        pl->gates[t] = (gm_place_gate){pl, t};
    }
    for (size_t t = 0; t < gm_model_node_count(x->m); t++) {
        const gm_node *n = gm_model_node_at(x->m, t);
        cap += 2 * (size_t)n->n_in + n->n_out;
        if (n->graph->parent && gm_node_is(n, GM_OP_NETOUTPUT)) cap += 2 * (size_t)n->n_in; /* a loop's exit reads */
    }
    pl->cap_ops = cap ? cap : 1;
    if (!(pl->ops = gm_malloc(pl->cap_ops * sizeof *pl->ops))) return GM_ERR_NOMEM;
    if (pl->fault == GM_PLACE_FAULT_NONE) return GM_OK;
    gm_status st = GM_OK;
    for (size_t t = 0; t < x->n_tasks && st == GM_OK; t++)
        if (!x->task_exit[t]) st = for_each_skipped(x, t, count_hold);
    return st;
}

void gm_place_begin_iteration(gm_exec *x)
{
    gm_place *pl = x->place;
    pl->n_ops = 0;
    for (int i = 0; i < 3; i++) pl->pool[i].cur = 0, pl->pool[i].used = 0;
    for (unsigned s = 0; s < GM_EXEC_MAX_STREAMS; s++) pl->host_synced[s] = -1;
    /* every stream is idle: no hold function reads these now */
    memset(pl->released, 0, (x->n_tasks ? x->n_tasks : 1) * sizeof *pl->released);
}

gm_status gm_place_wait_dep(gm_exec *x, size_t t, size_t dep)
{
    gm_place *pl = x->place;
    if (skips(x, t, dep)) return GM_OK;
    if (!pl->host_task[t]) return gm_exec_wait_dep(x, t, dep);
    int32_t d = x->task_stream[dep];
    if (d == x->task_stream[t] || x->task_seq[dep] <= pl->host_synced[d]) return GM_OK;
    /* SyncStream: the host waits until the producer has finished */
    gm_status st = gm_event_synchronize(x->task_event[dep], x->err);
    if (st != GM_OK) return st;
    pl->host_synced[d] = x->task_seq[dep];
    x->stats->host_syncs++;
    unsigned total = gm_exec_total_streams(x);
    for (unsigned s = 0; s < total; s++)
        if (x->waited[s][d] < x->task_seq[dep]) x->waited[s][d] = x->task_seq[dep];
    return GM_OK;
}

/* ---- reads and writes -------------------------------------------------------------------- */

static void count_copy(gm_exec *x, gm_copy_kind k, int64_t bytes)
{
    x->stats->copies[k]++;
    x->stats->copy_bytes += (uint64_t)bytes;
}

gm_status gm_place_read(gm_exec *x, size_t t, int32_t sym, bool host_mem, unsigned src_dev, void *src, size_t bytes,
                        uint64_t seed)
{
    gm_place *pl = x->place;
    const gm_node *n = x->task_node[t];
    gm_stream *s = x->streams[x->task_stream[t]];
    unsigned td = task_device(x, t);
    bool host = pl->host_task[t];
    uint64_t *mm = gm_exec_add_check(x, n, sym, (uint64_t)bytes);
    if (!mm) return GM_ERR_INTERNAL;
    void *stage = NULL;
    gm_status st;
    if (host_mem) {
        if (host) return launch_host_op(x, s, src, bytes, seed, mm);
        if ((st = stage_alloc(x, &pl->pool[td], bytes, &stage)) != GM_OK) return st;
        if ((st = gm_memcpy_async(s, stage, src, bytes, GM_COPY_H2D, x->err)) != GM_OK) return st;
        count_copy(x, GM_COPY_H2D, (int64_t)bytes);
        return gm_verify_pattern_async(s, stage, bytes, seed, mm, x->err);
    }
    if (host) {
        if (src_dev != td) {
            char name[160];
            return gm_error_set(x->err, GM_ERR_INPUT,
                                "run: host node '%s' reads '%s' on device %u; give it \"_device\": %u",
                                gm_node_name(n), x->sym_name(x, sym, name, sizeof name), src_dev, src_dev);
        }
        if ((st = stage_alloc(x, &pl->pool[2], bytes, &stage)) != GM_OK) return st;
        if ((st = gm_memcpy_async(s, stage, src, bytes, GM_COPY_D2H, x->err)) != GM_OK) return st;
        count_copy(x, GM_COPY_D2H, (int64_t)bytes);
        return launch_host_op(x, s, stage, bytes, seed, mm);
    }
    if (src_dev == td) return gm_verify_pattern_async(s, src, bytes, seed, mm, x->err);
    if ((st = stage_alloc(x, &pl->pool[td], bytes, &stage)) != GM_OK) return st;
    st = gm_memcpy_peer_async(s, gm_place_device(x, td), stage, gm_place_device(x, src_dev), src, bytes, x->err);
    if (st != GM_OK) return st;
    count_copy(x, GM_COPY_P2P, (int64_t)bytes);
    return gm_verify_pattern_async(s, stage, bytes, seed, mm, x->err);
}

gm_status gm_place_fill(gm_exec *x, size_t t, bool host_mem, void *dst, size_t bytes, uint64_t seed)
{
    gm_stream *s = x->streams[x->task_stream[t]];
    if (host_mem) return launch_host_op(x, s, dst, bytes, seed, NULL);
    return gm_fill_pattern_async(s, dst, bytes, seed, x->err);
}

/* ---- static mode: the plan's places ---------------------------------------------------------- */

gm_status gm_place_check_read(gm_exec *x, size_t t, const gm_exec_slot *sl, int64_t bytes, uint64_t seed)
{
    bool host_mem = x->p->symbols[sl->sym].mem_type == GM_MEM_HOST;
    unsigned sd = host_mem ? 0 : (unsigned)x->place->loc[sl->sym];
    return gm_place_read(x, t, sl->sym, host_mem, sd, addr_on(x, sl, sd), (size_t)bytes, seed);
}

gm_status gm_place_write(gm_exec *x, size_t t, const gm_exec_slot *sl, int64_t bytes, uint64_t seed)
{
    unsigned td = task_device(x, t);
    bool host_mem = x->p->symbols[sl->sym].mem_type == GM_MEM_HOST;
    if (!host_mem) x->place->loc[sl->sym] = (int8_t)td;
    return gm_place_fill(x, t, host_mem, addr_on(x, sl, host_mem ? 0 : td), (size_t)bytes, seed);
}
