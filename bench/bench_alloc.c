/*
 * bench_alloc.c — the runtime allocator against malloc peers, side by side in one run, replaying
 * one allocation trace (alloc_trace.h) recorded from a model's plan with `graphmem run`'s
 * semantics:
 *
 *   graphmem  the multi-stream L2 group (one L2 pool a stream, borrowing, local recycles carried
 *             by events, LastWaitEvents each iteration; beyond GE, in its default config: small
 *             blocks carved out of shared pages, idle chunks shared between streams after events,
 *             internal dependencies — `--ge-protocol` leaves them out) over the caching L1 over
 *             a memory source that maps whole chunks (mmap: the "device", kept out of glibc's
 *             heap so that glibc's own figures stay its own);
 *   graphmem-tight  the same, memory first: 4 KiB pages (gm_scalable_config_memory_first), the
 *             L1 in expandable mode (one reserved range of the "device", mapped and unmapped in
 *             pages) and the pools recycling before L1 grows
 *             (gm_ms_config.recycle_before_growth), at the price of stream synchronizes (counted:
 *             the trace has no device to wait for) and of remapping;
 *   graphmem-plan  graphmem-tight learning a plan (gm_ms_config.learn_plan): the first iteration
 *             recorded as graphmem-tight serves it, then every iteration answered from one packed
 *             region (ms_learned_plan.h). Its timed replays run on the plan learned in its untimed
 *             first replay, as the other stacks run on the memory their first replay cached; that
 *             first replay's own rate is printed on stderr;
 *   glibc     malloc/free;
 *   jemalloc  libjemalloc.so.2 (dlopen'd, RTLD_LOCAL: malloc/free/mallctl of its own);
 *   mimalloc  libmimalloc.so.2 (dlopen'd: mi_malloc/mi_free/mi_process_info).
 *
 * A peer that is missing is reported and skipped. Each allocated block has its first and last
 * byte written, so that lazy allocators pay for real memory.
 *
 * Per allocator: alloc+free operations per second (median of --runs replays of the whole trace,
 * the allocators interleaved run by run), and reserved bytes at the trace's peak ÷ the peak of
 * live bytes. Reserved is sampled, in one more replay untimed, right after each iteration's peak:
 * graphmem — bytes the L1 holds from the source (occupied + idle); glibc — mallinfo2 arena +
 * hblkhd, less the bytes in use before that replay (glibc's replay runs first; replay a --trace
 * file in a fresh process so that no model's freed memory sits in the heap);
 * jemalloc — stats.mapped (after an epoch refresh) less what was mapped before its replay (its
 * start-up extents, about 6 MB); mimalloc — mi_process_info current commit (0 before). Only the
 * replay uses those two heaps.
 *
 *   bench_alloc --dump FILE [--streams S] [--iterations K] MODEL   record a trace, write it as text
 *   bench_alloc [--runs R] [--label L] [--no-header] --trace FILE  replay a text trace
 *   bench_alloc [--streams S] [--iterations K] [--runs R] MODEL...  record and replay in memory
 *   --only NAME times one allocator alone (for perf record)
 *   --ge-protocol: graphmem reuses memory only as GE's events allow (no internal dependencies)
 *
 * One markdown row per trace, and on stderr graphmem's counters: the most bytes in blocks (the
 * protocol's own floor: a release that waits for an event keeps its block), idle chunks shared
 * between streams, L1 mallocs, and where its reservation sits at its largest sample (L1's idle
 * cache, the L2 pools, the blocks in them). bench/run_alloc_bench.sh records first and replays
 * each trace in a fresh process (glibc's reserved figure is clean only there).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc_trace.h"
#include "bench_util.h"
#include "graphmem/executor.h"
#include "graphmem/io.h"
#include "graphmem/log.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "runtime/caching_allocator.h"
#include "runtime/ms_events.h"
#include "runtime/ms_fast_path.h"
#include "runtime/ms_l2_allocator.h"

/* ---- the peers ---------------------------------------------------------------------------- */

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);
typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef void (*mi_info_fn)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *);

enum { A_GRAPHMEM, A_TIGHT, A_PLAN, A_GLIBC, A_JEMALLOC, A_MIMALLOC, A_COUNT };
static const char *const alloc_name[A_COUNT] = {"graphmem", "graphmem-tight", "graphmem-plan", "glibc", "jemalloc", "mimalloc"};

typedef struct peer {
    bool present;
    malloc_fn mal;
    free_fn fre;
    mallctl_fn mallctl;
    mi_info_fn mi_info;
} peer;

static peer peers[A_COUNT];

static void load_peers(void)
{
    peers[A_GLIBC] = (peer){.present = true, .mal = malloc, .fre = free};
    void *h = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        peers[A_JEMALLOC] = (peer){.mal = (malloc_fn)dlsym(h, "malloc"), .fre = (free_fn)dlsym(h, "free"),
                                   .mallctl = (mallctl_fn)dlsym(h, "mallctl")};
        peers[A_JEMALLOC].present = peers[A_JEMALLOC].mal && peers[A_JEMALLOC].fre && peers[A_JEMALLOC].mallctl;
    }
    if (!peers[A_JEMALLOC].present)
        fprintf(stderr, "bench_alloc: jemalloc skipped: libjemalloc.so.2 not loadable (%s); `make bench-deps` installs "
                        "libjemalloc-dev\n", h ? "symbols missing" : dlerror());
    h = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        peers[A_MIMALLOC] = (peer){.mal = (malloc_fn)dlsym(h, "mi_malloc"), .fre = (free_fn)dlsym(h, "mi_free"),
                                   .mi_info = (mi_info_fn)dlsym(h, "mi_process_info")};
        peers[A_MIMALLOC].present = peers[A_MIMALLOC].mal && peers[A_MIMALLOC].fre && peers[A_MIMALLOC].mi_info;
    }
    if (!peers[A_MIMALLOC].present)
        fprintf(stderr, "bench_alloc: mimalloc skipped: libmimalloc.so.2 not loadable (%s); `make bench-deps` installs "
                        "libmimalloc-dev\n", h ? "symbols missing" : dlerror());
    peers[A_GRAPHMEM].present = peers[A_TIGHT].present = peers[A_PLAN].present = true;
}

static size_t peer_reserved(int a)
{
    if (a == A_GLIBC) {
        struct mallinfo2 mi = mallinfo2();
        return mi.arena + mi.hblkhd;
    }
    if (a == A_JEMALLOC) {
        uint64_t epoch = 1;
        size_t sz = sizeof epoch, mapped = 0, msz = sizeof mapped;
        peers[a].mallctl("epoch", &epoch, &sz, &epoch, sz);
        peers[a].mallctl("stats.mapped", &mapped, &msz, NULL, 0);
        return mapped;
    }
    size_t e, u, s, rss, prss, commit = 0, pcommit, faults;
    peers[a].mi_info(&e, &u, &s, &rss, &prss, &commit, &pcommit, &faults);
    return commit;
}

/* ---- graphmem's stack --------------------------------------------------------------------- */

typedef struct dev_src {
    size_t live, peak;
    size_t maps, syncs; /* virtual-memory map calls; stream synchronizes the allocator asked for */
} dev_src;

static int dev_alloc(void *ctx, size_t bytes, void **ptr)
{
    dev_src *d = ctx;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    *ptr = p;
    d->live += bytes;
    if (d->live > d->peak) d->peak = d->live;
    return 0;
}

/* munmap needs the length: chunks are few, so a tiny open-addressed table does. */
#define CHUNK_TAB (1u << 16)
static struct {
    void *p;
    size_t n;
} chunk_tab[CHUNK_TAB];

static size_t chunk_slot(void *p)
{
    size_t h = (size_t)((uintptr_t)p >> 12) * 0x9E3779B97F4A7C15ull >> 48;
    while (chunk_tab[h].p && chunk_tab[h].p != p) h = (h + 1) & (CHUNK_TAB - 1);
    return h;
}

static int dev_alloc_tab(void *ctx, size_t bytes, void **ptr)
{
    if (dev_alloc(ctx, bytes, ptr)) return -1;
    size_t h = chunk_slot(*ptr);
    chunk_tab[h].p = *ptr, chunk_tab[h].n = bytes;
    return 0;
}

static void dev_free(void *ctx, void *ptr)
{
    dev_src *d = ctx;
    size_t h = chunk_slot(ptr);
    size_t n = chunk_tab[h].n;
    munmap(ptr, n);
    d->live -= n;
    /* backward-shift delete */
    chunk_tab[h].p = NULL;
    for (size_t j = (h + 1) & (CHUNK_TAB - 1); chunk_tab[j].p; j = (j + 1) & (CHUNK_TAB - 1)) {
        void *q = chunk_tab[j].p;
        size_t nq = chunk_tab[j].n;
        chunk_tab[j].p = NULL;
        size_t k = chunk_slot(q);
        chunk_tab[k].p = q, chunk_tab[k].n = nq;
    }
}

/* The "device"'s virtual memory, for the expandable L1 of graphmem-tight: a range with no access
 * and nothing behind it, mapped by replacing a part with fresh anonymous pages, unmapped by making
 * that part inaccessible again (the kernel drops its pages). */
static int dev_reserve(void *ctx, size_t bytes, void **base)
{
    (void)ctx;
    void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return -1;
    *base = p;
    return 0;
}

static int dev_map(void *ctx, void *addr, size_t bytes)
{
    dev_src *d = ctx;
    if (mmap(addr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) return -1;
    d->live += bytes;
    if (d->live > d->peak) d->peak = d->live;
    d->maps++;
    return 0;
}

static void dev_unmap(void *ctx, void *addr, size_t bytes)
{
    dev_src *d = ctx;
    mmap(addr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    d->live -= bytes;
}

static void dev_release(void *ctx, void *base, size_t bytes)
{
    (void)ctx;
    munmap(base, bytes);
}

/* The trace has no device: a synchronize has nothing to wait for, and is only counted. */
static void count_sync(void *ctx, int stream) { (void)stream, ((dev_src *)ctx)->syncs++; }

typedef struct gm_stack {
    dev_src dev;
    gm_mem_source src, l1src;
    gm_caching_allocator *l1;
    gm_ms_group *g;
    gm_ms_l2_allocator *al[64];
    gm_ms_event_payload *ev;
    uint32_t slots;
} gm_stack;

/* The trace's streams are logical: the dependency an internal event adds is only counted (the
 * group counts it too). */
static int no_device_order(void *ctx, uint32_t from, uint32_t to) { return (void)ctx, (void)from, (void)to, 0; }

static bool ge_protocol_only; /* --ge-protocol: no internal dependencies (GE's reuse rules) */

/* How a stack is configured: graphmem's default, GE's reuse rules alone (no internal
 * dependencies), graphmem-tight, or graphmem-plan. */
enum stack_mode { STACK_DEFAULT, STACK_GE, STACK_TIGHT, STACK_PLAN };

static int gm_stack_open(gm_stack *s, const at_trace *t, enum stack_mode mode)
{
    memset(s, 0, sizeof *s);
    s->src = (gm_mem_source){.ctx = &s->dev, .alloc = dev_alloc_tab, .free = dev_free, .reserve = dev_reserve,
                             .map = dev_map, .unmap = dev_unmap, .release = dev_release, .granularity = 4096};
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    if (mode == STACK_TIGHT || mode == STACK_PLAN) gm_scalable_config_memory_first(&c);
    gm_scalable_config l1c = c;
    l1c.expandable = mode == STACK_TIGHT || mode == STACK_PLAN;
    if (!(s->l1 = gm_caching_create(&s->src, &l1c, NULL, NULL))) return -1;
    s->l1src = gm_caching_as_source(s->l1);
    gm_ms_config cfg = {.streams = t->streams, .l2 = c, .order = mode == STACK_GE ? NULL : no_device_order,
                        .recycle_before_growth = mode == STACK_TIGHT || mode == STACK_PLAN, .learn_plan = mode == STACK_PLAN,
                        .sync = count_sync, .sync_ctx = &s->dev};
    gm_error err;
    if (gm_ms_group_create(&cfg, &s->l1src, &s->g, &err) != GM_OK) return -1;
    for (uint32_t k = 0; k < t->streams; k++) s->al[k] = gm_ms_group_allocator(s->g, k);
    s->slots = t->slots;
    s->ev = calloc(t->slots ? t->slots : 1, sizeof *s->ev);
    if (!s->ev) return -1;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].op == AT_SEND) gm_ms_event_payload_init(&s->ev[t->ev[i].id], t->ev[i].s1, t->ev[i].s2);
    return 0;
}

static void gm_stack_close(gm_stack *s)
{
    if (s->g) gm_ms_group_destroy(s->g);
    if (s->l1) gm_caching_destroy(s->l1);
    for (uint32_t k = 0; s->ev && k < s->slots; k++) gm_ms_event_payload_fini(&s->ev[k]);
    free(s->ev);
}

static size_t gm_stack_reserved(gm_stack *s)
{
    gm_caching_stats st;
    gm_caching_get_stats(s->l1, &st);
    return st.pool.occupied + st.pool.idle;
}

/* Where graphmem's reservation sits at its largest sample: L1's idle cache, the L2 pools' idle
 * caches, blocks handed out (page-rounded, including those whose last user freed them but whose
 * release has not reached their birth stream yet) — printed with the row, to say which cause a
 * miss has. */
typedef struct gm_breakdown {
    size_t reserved, l1_idle, l2_held, in_blocks;
} gm_breakdown;

static gm_breakdown gm_stack_breakdown(gm_stack *s)
{
    gm_caching_stats st;
    gm_caching_get_stats(s->l1, &st);
    gm_ms_stats ms;
    size_t l2 = 0;
    gm_ms_group_stats(s->g, &ms, &l2);
    return (gm_breakdown){st.pool.occupied + st.pool.idle, st.pool.idle, l2, ms.allocated};
}

/* ---- replays ------------------------------------------------------------------------------ */

static inline void touch(void *p, uint64_t size)
{
    volatile char *c = p;
    c[0] = 1;
    c[size - 1] = 1;
}

/* One replay; when samples is not NULL, the reserved bytes after each iteration's peak event
 * go into samples[0..n_peak_at). -1 on an allocator failure. */
static gm_breakdown gm_worst;

/* The replays are made twice by the compiler, with and without sampling (`sampled` constant),
 * so that the timed loops test nothing per event but the event: alike for every allocator. */
#define REPLAY_BODY static inline __attribute__((always_inline)) int

REPLAY_BODY replay_gm_body(gm_stack *s, const at_trace *t, void **h, size_t *samples, const bool sampled)
{
    gm_error err;
    size_t pk = 0;
    for (size_t i = 0; i < t->n; i++) {
        const at_event *e = &t->ev[i];
        switch (e->op) {
        case AT_ALLOC: {
            gm_ms_block *b = gm_ms_fast_malloc(s->al[e->s1], e->size);
            if (!b) {
                fprintf(stderr, "bench_alloc: graphmem: malloc of %llu bytes on stream %u failed at event %zu of %zu "
                                "(L1 holds %zu bytes, the source lent %zu)\n",
                        (unsigned long long)e->size, e->s1, i, t->n, gm_stack_reserved(s), s->dev.live);
                return -1;
            }
            touch(gm_ms_block_addr(b), e->size);
            h[e->id] = b;
            break;
        }
        case AT_ACCESS:
            if (gm_ms_fast_access(h[e->id], e->s1, e->s2, &err) != GM_OK) return -1;
            break;
        case AT_FREE: gm_ms_fast_free(h[e->id], e->s1); break;
        case AT_SEND:
            if (gm_ms_fast_send(s->g, &s->ev[e->id], &err) != GM_OK) return -1;
            break;
        case AT_WAIT: gm_ms_fast_wait(s->g, &s->ev[e->id]); break;
        case AT_ITER: gm_ms_last_wait_events(s->g); break;
        }
        if (sampled && pk < t->n_peak_at && t->peak_at[pk] == i) {
            gm_breakdown bd = gm_stack_breakdown(s);
            if (bd.reserved > gm_worst.reserved) gm_worst = bd;
            samples[pk++] = bd.reserved;
        }
    }
    return 0;
}

static int replay_gm(gm_stack *s, const at_trace *t, void **h, size_t *samples)
{
    return samples ? replay_gm_body(s, t, h, samples, true) : replay_gm_body(s, t, h, NULL, false);
}

REPLAY_BODY replay_peer_body(int a, const at_trace *t, void **h, size_t *samples, size_t base, const bool sampled)
{
    malloc_fn mal = peers[a].mal;
    free_fn fre = peers[a].fre;
    size_t pk = 0;
    for (size_t i = 0; i < t->n; i++) {
        const at_event *e = &t->ev[i];
        if (e->op == AT_ALLOC) {
            void *p = mal(e->size);
            if (!p) return -1;
            touch(p, e->size);
            h[e->id] = p;
        } else if (e->op == AT_FREE && e->last) {
            fre(h[e->id]);
        }
        if (sampled && pk < t->n_peak_at && t->peak_at[pk] == i) {
            size_t r = peer_reserved(a);
            samples[pk++] = r > base ? r - base : 0;
        }
    }
    return 0;
}

static int replay_peer(int a, const at_trace *t, void **h, size_t *samples, size_t base)
{
    return samples ? replay_peer_body(a, t, h, samples, base, true) : replay_peer_body(a, t, h, NULL, base, false);
}

static size_t max_of(const size_t *v, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void human(char *buf, size_t cap, double bytes)
{
    if (bytes >= 1 << 30) snprintf(buf, cap, "%.2f GiB", bytes / (1 << 30));
    else if (bytes >= 1 << 20) snprintf(buf, cap, "%.1f MiB", bytes / (1 << 20));
    else snprintf(buf, cap, "%.1f KiB", bytes / 1024);
}

static bool header_done;
static bool timed[A_COUNT] = {true, true, true, true, true, true}; /* --only NAME: time just that one (profiling) */

/* Replays t through every allocator and prints its row. */
static int bench_trace(const char *label, const at_trace *t, int runs)
{
    void **h = calloc(t->ids ? t->ids : 1, sizeof *h);
    size_t *samples = calloc(t->n_peak_at ? t->n_peak_at : 1, sizeof *samples);
    double *secs[A_COUNT];
    size_t reserved[A_COUNT] = {0};
    for (int a = 0; a < A_COUNT; a++) secs[a] = calloc((size_t)runs, sizeof(double));
    if (!h || !samples) return -1;
    /* reserved first, glibc on its cold heap (before anything else of this trace touched it) */
    struct mallinfo2 mi0 = mallinfo2();
    size_t base = mi0.uordblks + mi0.hblkhd; /* in use before: the rest of the heap is glibc's slack */
    if (replay_peer(A_GLIBC, t, h, samples, base)) return fprintf(stderr, "bench_alloc: glibc: out of memory\n"), -1;
    reserved[A_GLIBC] = max_of(samples, t->n_peak_at);
    size_t before[A_COUNT] = {0};
    for (int a = A_JEMALLOC; a <= A_MIMALLOC; a++) {
        if (!peers[a].present) continue;
        before[a] = peer_reserved(a);
        if (replay_peer(a, t, h, samples, before[a])) return fprintf(stderr, "bench_alloc: %s: out of memory\n", alloc_name[a]), -1;
        reserved[a] = max_of(samples, t->n_peak_at);
    }
    /* graphmem under GE's reuse rules alone (no internal dependencies), untimed: the last column */
    size_t reserved_ge = 0;
    {
        gm_stack ge;
        int rc = gm_stack_open(&ge, t, STACK_GE) || replay_gm(&ge, t, h, samples);
        gm_stack_close(&ge);
        if (rc) return fprintf(stderr, "bench_alloc: graphmem (GE's reuse): allocator failure\n"), -1;
        reserved_ge = max_of(samples, t->n_peak_at);
        gm_worst = (gm_breakdown){0};
    }
    /* graphmem-tight, untimed first for its reservation and counters */
    gm_stack gt;
    if (gm_stack_open(&gt, t, STACK_TIGHT) || replay_gm(&gt, t, h, samples))
        return fprintf(stderr, "bench_alloc: graphmem-tight: allocator failure\n"), gm_stack_close(&gt), -1;
    reserved[A_TIGHT] = max_of(samples, t->n_peak_at);
    gm_ms_stats tight;
    gm_ms_group_stats(gt.g, &tight, NULL);
    const size_t tight_syncs = gt.dev.syncs, tight_maps = gt.dev.maps;
    gm_worst = (gm_breakdown){0};
    /* graphmem-plan (memory first, learning the first iteration's plan), untimed first too */
    gm_stack gp;
    double cold_ms = gm_clock_ms(); /* the first replay learns: timed too, for the record */
    if (gm_stack_open(&gp, t, STACK_PLAN) || replay_gm(&gp, t, h, samples))
        return fprintf(stderr, "bench_alloc: graphmem-plan: allocator failure\n"), gm_stack_close(&gp), gm_stack_close(&gt), -1;
    cold_ms = gm_clock_ms() - cold_ms;
    reserved[A_PLAN] = max_of(samples, t->n_peak_at);
    const size_t plan_syncs = gp.dev.syncs;
    gm_worst = (gm_breakdown){0};
    gm_stack gs;
    if (gm_stack_open(&gs, t, ge_protocol_only ? STACK_GE : STACK_DEFAULT) || replay_gm(&gs, t, h, samples))
        return fprintf(stderr, "bench_alloc: graphmem: allocator failure\n"), gm_stack_close(&gs), gm_stack_close(&gp),
               gm_stack_close(&gt), -1;
    reserved[A_GRAPHMEM] = max_of(samples, t->n_peak_at);
    size_t gm_held_peak = gs.dev.peak;
    const size_t gm_syncs = gs.dev.syncs;
    /* timed: run by run, the allocators interleaved (the machine's noise hits them alike) */
    for (int r = 0; r < runs; r++) {
        for (int a = 0; a < A_COUNT; a++) {
            if (!peers[a].present || !timed[a]) continue;
            double t0 = gm_clock_ms();
            int rc = a == A_GRAPHMEM ? replay_gm(&gs, t, h, NULL)
                     : a == A_TIGHT  ? replay_gm(&gt, t, h, NULL)
                     : a == A_PLAN   ? replay_gm(&gp, t, h, NULL)
                                     : replay_peer(a, t, h, NULL, 0);
            secs[a][r] = (gm_clock_ms() - t0) / 1e3;
            if (rc) return fprintf(stderr, "bench_alloc: %s failed\n", alloc_name[a]), -1;
        }
    }
    gm_ms_stats ms;
    size_t l2_reserved;
    gm_ms_group_stats(gs.g, &ms, &l2_reserved);
    gm_caching_stats l1st;
    gm_caching_get_stats(gs.l1, &l1st);
    gm_ms_plan_stats plan;
    gm_ms_group_plan_stats(gp.g, &plan);
    gm_stack_close(&gs);
    gm_stack_close(&gt);
    gm_stack_close(&gp);

    if (!header_done) {
        printf("| trace | streams | iterations | events | alloc+free ops | peak active | 64 KiB-page peak ÷ peak |");
        for (int a = 0; a < A_COUNT; a++) printf(" %s Mops/s |", alloc_name[a]);
        for (int a = 0; a < A_COUNT; a++) printf(" %s reserved/peak |", alloc_name[a]);
        printf(" graphmem ÷ mimalloc ops/s | graphmem-tight ÷ mimalloc ops/s | graphmem-plan ÷ mimalloc ops/s |"
               " graphmem reserved/peak, GE's reuse only | synchronizes per iteration: graphmem, graphmem-tight, graphmem-plan |"
               "\n|---|---|---|---|---|---|---|");
        for (int a = 0; a < 2 * A_COUNT + 5; a++) printf("---|");
        printf("\n");
        header_done = true;
    }
    char pk[32];
    human(pk, sizeof pk, (double)t->peak_live);
    double ops = 2.0 * (double)t->allocs, mops[A_COUNT] = {0};
    printf("| %s | %u | %u | %zu | %.0f | %s | %.3f |", label, t->streams, t->iterations, t->n, ops, pk,
           (double)t->peak_pages / (double)(t->peak_live ? t->peak_live : 1));
    for (int a = 0; a < A_COUNT; a++) {
        if (!peers[a].present || !timed[a]) {
            printf(peers[a].present ? " - |" : " (absent) |");
            continue;
        }
        mops[a] = ops / bench_median(secs[a], (size_t)runs) / 1e6;
        printf(" %.2f |", mops[a]);
    }
    for (int a = 0; a < A_COUNT; a++) {
        if (!peers[a].present) printf(" (absent) |");
        else printf(" %.3f |", (double)reserved[a] / (double)(t->peak_live ? t->peak_live : 1));
    }
    for (int a = A_GRAPHMEM; a <= A_PLAN; a++) {
        if (peers[A_MIMALLOC].present && mops[a] > 0 && mops[A_MIMALLOC] > 0) printf(" %.2f× |", mops[a] / mops[A_MIMALLOC]);
        else printf(" - |");
    }
    printf(" %.3f |", (double)reserved_ge / (double)(t->peak_live ? t->peak_live : 1));
    const double iters = t->iterations ? t->iterations : 1;
    printf(" %.2f, %.2f, %.2f |\n", (double)gm_syncs / iters, (double)tight_syncs / iters, (double)plan_syncs / iters);
    fprintf(stderr,
            "  %s: graphmem held peak %zu B (%.3f × peak active); borrow hits %zu, local recycles %zu, birth %zu, "
            "borrow recycles %zu, events sent %zu, stale %zu, idle chunks shared between streams %zu, internal events %zu, delivered early %zu, L1 mallocs %zu; before the replay jemalloc mapped %zu B, mimalloc "
            "committed %zu B; blocks out at most %zu B (%.3f x peak active: the protocol's own floor, with releases that wait for an event); at graphmem's largest sample: L1 idle %zu B, L2 pools hold %zu B, %zu B of it in blocks\n",
            label, gm_held_peak, (double)gm_held_peak / (double)(t->peak_live ? t->peak_live : 1), ms.borrow_hits,
            ms.local_recycles, ms.birth_recycles, ms.borrow_recycles, ms.events_sent, ms.stale_messages, ms.shared_chunks, ms.internal_events, ms.delivered_early, l1st.mallocs, before[A_JEMALLOC], before[A_MIMALLOC],
            ms.peak_allocated, (double)ms.peak_allocated / (double)(t->peak_live ? t->peak_live : 1), gm_worst.l1_idle, gm_worst.l2_held, gm_worst.in_blocks);
    fprintf(stderr, "  %s: graphmem-tight held peak %zu B; recycles before growth %zu, releases settled %zu (%zu of them in "
                    "vain: L1 grew all the same), synchronizes %zu, device maps %zu (one replay)\n",
            label, gt.dev.peak, tight.growth_ladders, tight.settles, tight.settles_in_vain, tight_syncs, tight_maps);
    fprintf(stderr, "  %s: graphmem-plan: %zu plan(s) learned, region %zu B (%.3f x peak active), %zu blocks, %zu of them "
            "adding internal dependencies (%zu added), %zu iterations on the plan, %zu departures, %zu planned mallocs, "
            "%zu stand-ins%s; its first replay (the recorded iteration included, reserved sampled) %.2f Mops/s\n",
            label, plan.learned, plan.region_bytes, (double)plan.region_bytes / (double)(t->peak_live ? t->peak_live : 1),
            plan.blocks, plan.dependent_blocks, plan.orders, plan.iterations_on, plan.departures, plan.planned_mallocs,
            plan.stand_ins, plan.gave_up ? "; gave up" : "", ops / (cold_ms * 1e3));
    for (int a = 0; a < A_COUNT; a++) free(secs[a]);
    free(h);
    free(samples);
    return 0;
}

static int record(const char *path, unsigned streams, unsigned iterations, at_trace *t)
{
    gm_model *m = NULL;
    gm_error err;
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    gm_plan *p = NULL;
    int rc = -1;
    if (gm_model_read_file(path, &m, &err) == GM_OK && (gm_run_assign_streams(m, streams), true) &&
        gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, &err) == GM_OK) {
        if (gm_plan_build(m, NULL, &p, &err) == GM_OK) rc = at_record(m, p, streams, iterations, t);
    }
    if (rc) fprintf(stderr, "bench_alloc: %s: %s\n", path, err.code != GM_OK ? err.message : "cannot record a trace");
    gm_plan_free(p);
    gm_pass_report_free(&rep);
    gm_model_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned streams = 2, iterations = 10;
    int runs = 5;
    const char *dump = NULL, *trace = NULL, *label = NULL, *only = NULL;
    int first = 1;
    for (; first < argc && !strncmp(argv[first], "--", 2); first += 2) {
        if (!strcmp(argv[first], "--no-header")) {
            header_done = true, first--;
            continue;
        }
        if (first + 1 >= argc) break;
        const char *o = argv[first], *v = argv[first + 1];
        if (!strcmp(o, "--streams")) streams = (unsigned)atoi(v);
        else if (!strcmp(o, "--iterations")) iterations = (unsigned)atoi(v);
        else if (!strcmp(o, "--runs")) runs = atoi(v);
        else if (!strcmp(o, "--dump")) dump = v;
        else if (!strcmp(o, "--trace")) trace = v;
        else if (!strcmp(o, "--label")) label = v;
        else if (!strcmp(o, "--only")) only = v;
        else if (!strcmp(o, "--ge-protocol") && (first--, true)) ge_protocol_only = true;
        else break;
    }
    if ((first >= argc && !trace) || (dump && first >= argc) || streams < 1 || streams > 64 || iterations < 1 || runs < 1) {
        fprintf(stderr, "usage: bench_alloc --dump FILE [--streams S(1..64)] [--iterations K] MODEL\n"
                        "       bench_alloc [--runs R] [--label L] [--no-header] --trace FILE\n"
                        "       bench_alloc [--streams S] [--iterations K] [--runs R] MODEL...\n"
                        "       options: --only NAME, --ge-protocol\n");
        return 2;
    }
    gm_log_set_level(GM_LOG_ERROR);
    load_peers();
    for (int a = 0; only && a < A_COUNT; a++) timed[a] = !strcmp(only, alloc_name[a]);
    int rc = 0;
    if (trace) {
        at_trace t;
        if (at_read_text(trace, &t)) return fprintf(stderr, "bench_alloc: %s: not a valid trace\n", trace), 2;
        rc |= bench_trace(label ? label : base_name(trace), &t, runs) != 0;
        at_free(&t);
    }
    for (int i = first; i < argc; i++) {
        at_trace t;
        if (record(argv[i], streams, iterations, &t)) return 2;
        if (dump) {
            rc = at_write_text(&t, dump) ? (fprintf(stderr, "bench_alloc: cannot write %s\n", dump), 2) : 0;
            at_free(&t);
            return rc;
        }
        rc |= bench_trace(label ? label : base_name(argv[i]), &t, runs) != 0;
        at_free(&t);
    }
    return rc;
}
