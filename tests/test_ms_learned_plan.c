/*
 * test_ms_learned_plan.c — the learned plan of the multi-stream group (gm_ms_config.learn_plan,
 * src/runtime/ms_learned_plan.h): one iteration recorded, the next ones answered from a packed
 * plan while they repeat it, the dynamic allocator taking over where one departs.
 *
 * The randomized part runs an iteration script — each stream's own sequence of mallocs, accesses,
 * frees, event sends and waits, generated once — many times, each time interleaving the streams
 * differently on the host (a wait only after its send, an access only while the block is out, a
 * free only after the accesses that came before it when generated), now and then with one malloc
 * asking for another size (a departure). A shadow model checks every block handed out, as
 * test_ms_simulation.c does for whole pages:
 *   1. no 256-byte unit of it is held by another block (the dynamic allocator carves small blocks
 *      out of pages in such units);
 *   2. the stream that gets it has heard (through events, internal dependencies, synchronizes or
 *      the join of LastWaitEvents) of every earlier release of each unit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_mem_source.h"
#include "runtime/caching_allocator.h"
#include "runtime/ms_events.h"
#include "runtime/ms_fast_path.h"
#include "runtime/ms_l2_allocator.h"
#include "util/alloc.h"

#define MAXS 8
#define PAGES 256
#define UNIT 256 /* the finest any block starts on: the dynamic allocator's small-block units */
#define UNITS (PAGES * (FAKE_PAGE / UNIT))
#define MAXB 96   /* blocks of the script */
#define MAXOPS 2048

/* ---- a stack: the fake device, L1, the group ---------------------------------------------- */

typedef struct stack {
    fake_src dev;
    gm_caching_allocator *l1;
    gm_ms_group *g;
    uint32_t n;
} stack;

typedef struct model model;
static void on_sync(void *ctx, int stream);
static int on_order(void *ctx, uint32_t from, uint32_t to);

enum { MODE_GE, MODE_DEPS, MODE_MEMORY_FIRST };

static void stack_open(stack *s, uint32_t n, int mode, model *m)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    fake_init(&s->dev, PAGES);
    const bool mf = mode == MODE_MEMORY_FIRST;
    gm_mem_source dev = mf ? fake_source_vm(&s->dev, 1) : fake_source(&s->dev);
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    gm_scalable_config l1c = mf ? fake_expandable_config(PAGES) : c;
    assert_non_null(s->l1 = gm_caching_create(&dev, &l1c, on_sync, m));
    gm_mem_source l1 = gm_caching_as_source(s->l1);
    gm_ms_config cfg = {.streams = n, .l2 = c, .sync = on_sync, .sync_ctx = m, .recycle_before_growth = mf, .learn_plan = true};
    if (mode != MODE_GE) cfg.order = on_order, cfg.order_ctx = m;
    gm_error err;
    assert_int_equal(gm_ms_group_create(&cfg, &l1, &s->g, &err), GM_OK);
}

static void stack_close(stack *s)
{
    assert_int_equal(gm_ms_group_destroy(s->g), 0);
    gm_caching_destroy(s->l1);
    assert_int_equal(s->dev.live_bytes, 0);
    fake_fini(&s->dev);
}

static gm_ms_l2_allocator *al(stack *s, uint32_t stream) { return gm_ms_group_allocator(s->g, stream); }

static gm_ms_plan_stats plan_stats(stack *s)
{
    gm_ms_plan_stats ps;
    gm_ms_group_plan_stats(s->g, &ps);
    return ps;
}

/* ---- the shadow model ------------------------------------------------------------------- */

struct model {
    uint32_t n;
    uint64_t clock[MAXS][MAXS];
    uint64_t synced[MAXS];
    uint64_t rel[UNITS][MAXS]; /* tick of each stream's latest release of the unit */
    int16_t owner[UNITS];      /* script block holding the unit, or -1 */
    size_t handouts, planned;
};

static void tick(model *m, uint32_t s) { m->clock[s][s]++; }

static void sync_stream(model *m, uint32_t s)
{
    for (uint32_t t = 0; t < m->n; t++)
        if (m->clock[s][t] > m->synced[t]) m->synced[t] = m->clock[s][t];
}

static void on_sync(void *ctx, int stream)
{
    model *m = ctx;
    for (uint32_t s = 0; s < m->n; s++)
        if (stream < 0 || (uint32_t)stream == s) sync_stream(m, s);
}

static int on_order(void *ctx, uint32_t from, uint32_t to)
{
    model *m = ctx;
    tick(m, from);
    for (uint32_t t = 0; t < m->n; t++)
        if (m->clock[from][t] > m->clock[to][t]) m->clock[to][t] = m->clock[from][t];
    tick(m, to);
    return 0;
}

/* LastWaitEvents: every stream joined (what the group assumes of its caller). */
static void join_all(model *m)
{
    for (uint32_t s = 0; s < m->n; s++)
        for (uint32_t u = 0; u < m->n; u++)
            for (uint32_t t = 0; t < m->n; t++)
                if (m->clock[u][t] > m->clock[s][t]) m->clock[s][t] = m->clock[u][t];
}

/* The one shadow model (large: not on the stack), reset for n streams. */
static model *fresh_model(uint32_t n)
{
    static model m;
    memset(&m, 0, sizeof m);
    m.n = n;
    memset(m.owner, -1, sizeof m.owner);
    return &m;
}

static size_t unit_of(const void *p) { return (size_t)(((uintptr_t)p - FAKE_BASE) / UNIT); }
static size_t units_of(size_t size) { return (size + UNIT - 1) / UNIT; }

static void check_handout(model *m, uint32_t s, const gm_ms_block *b, size_t size, int id)
{
    const size_t first = unit_of(gm_ms_block_addr(b)), n = units_of(size);
    assert_true(first + n <= UNITS);
    for (size_t u = first; u < first + n; u++) {
        if (m->owner[u] >= 0)
            fail_msg("unit %zu handed to block %d on stream %u (%s, %zu bytes at unit %zu) while block %d holds it", u, id, s,
                     b->type == GM_MS_PLANNED ? "planned" : "dynamic", size, first, m->owner[u]);
        for (uint32_t t = 0; t < m->n; t++) {
            const uint64_t known = m->clock[s][t] > m->synced[t] ? m->clock[s][t] : m->synced[t];
            if (m->rel[u][t] > known)
                fail_msg("unit %zu reused by block %d on stream %u before it heard of stream %u's release (%llu > %llu)", u,
                         id, s, t, (unsigned long long)m->rel[u][t], (unsigned long long)known);
        }
        m->owner[u] = (int16_t)id;
    }
    m->handouts++;
    if (b->type == GM_MS_PLANNED) m->planned++;
}

/* ---- the script ------------------------------------------------------------------------- */

enum { OP_MALLOC, OP_ACCESS, OP_FREE, OP_SEND, OP_WAIT };

typedef struct op {
    uint8_t kind;
    uint8_t stream;   /* the stream whose sequence it is in */
    uint8_t src;      /* access: the stream it comes from; wait: the sender */
    uint16_t block;   /* malloc, access, free */
    uint16_t ev;      /* send, wait: the payload */
    uint16_t before;  /* free: accesses of the block generated before it */
    size_t size;      /* malloc */
} op;

typedef struct script {
    uint32_t n;
    op ops[MAXOPS];
    size_t nops;
    uint16_t nblocks, nev;
} script;

static uint64_t rnd(uint64_t *r)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return *r;
}

/* One iteration's calls in a valid host order: blocks made and dropped, events between streams,
 * everything freed and every event waited by its end. */
static void make_script(script *sc, uint32_t n, uint64_t seed, size_t target)
{
    memset(sc, 0, sizeof *sc);
    sc->n = n;
    uint64_t r = seed * 0x9E3779B97F4A7C15ull | 1;
    uint8_t refs[MAXB][MAXS] = {{0}};
    uint16_t accesses[MAXB] = {0};
    bool live[MAXB] = {false};
    int pending[MAXS][MAXS];
    memset(pending, -1, sizeof pending);
    for (size_t tries = 0; sc->nops + 2 * MAXS * MAXS + 4 * MAXB < MAXOPS && sc->nops < target && tries < 100 * target; tries++) {
        const uint64_t k = rnd(&r) % 100;
        const uint32_t s = (uint32_t)(rnd(&r) % n);
        if (k < 25 && sc->nblocks < MAXB) {
            const size_t size = (1 + rnd(&r) % 128) * UNIT - rnd(&r) % UNIT;
            sc->ops[sc->nops++] = (op){.kind = OP_MALLOC, .stream = (uint8_t)s, .block = sc->nblocks, .size = size};
            refs[sc->nblocks][s] = 1, live[sc->nblocks] = true;
            sc->nblocks++;
        } else if (k < 60) {
            uint16_t b = (uint16_t)(rnd(&r) % (sc->nblocks ? sc->nblocks : 1));
            if (!sc->nblocks || !live[b]) continue;
            if (k < 40 && n > 1) { /* another stream takes a reference */
                uint32_t src = 0;
                while (!refs[b][src]) src++;
                uint32_t dst = (uint32_t)(rnd(&r) % n);
                if (dst == src) dst = (dst + 1) % n;
                sc->ops[sc->nops++] = (op){.kind = OP_ACCESS, .stream = (uint8_t)dst, .src = (uint8_t)src, .block = b};
                refs[b][dst]++, accesses[b]++;
            } else { /* a holder lets go */
                uint32_t h = (uint32_t)(rnd(&r) % n);
                while (!refs[b][h]) h = (h + 1) % n;
                sc->ops[sc->nops++] = (op){.kind = OP_FREE, .stream = (uint8_t)h, .block = b, .before = accesses[b]};
                refs[b][h]--;
                bool any = false;
                for (uint32_t t = 0; t < n; t++) any |= refs[b][t] > 0;
                live[b] = any;
            }
        } else if (n > 1) {
            uint32_t d = (uint32_t)(rnd(&r) % (n - 1));
            if (d >= s) d++;
            if (pending[s][d] >= 0) {
                sc->ops[sc->nops++] = (op){.kind = OP_WAIT, .stream = (uint8_t)d, .src = (uint8_t)s, .ev = (uint16_t)pending[s][d]};
                pending[s][d] = -1;
            } else {
                sc->ops[sc->nops++] = (op){.kind = OP_SEND, .stream = (uint8_t)s, .src = (uint8_t)d, .ev = sc->nev};
                pending[s][d] = sc->nev++;
            }
        }
    }
    for (uint16_t b = 0; b < sc->nblocks; b++)
        for (uint32_t t = 0; t < n; t++)
            while (refs[b][t]) {
                sc->ops[sc->nops++] = (op){.kind = OP_FREE, .stream = (uint8_t)t, .block = b, .before = accesses[b]};
                refs[b][t]--;
            }
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t d = 0; d < n; d++)
            if (pending[s][d] >= 0)
                sc->ops[sc->nops++] = (op){.kind = OP_WAIT, .stream = (uint8_t)d, .src = (uint8_t)s, .ev = (uint16_t)pending[s][d]};
}

/* ---- running iterations ----------------------------------------------------------------- */

typedef struct runner {
    stack st;
    model *m;
    const script *sc;
    gm_ms_event_payload ev[MAXOPS];
    uint64_t ev_clock[MAXOPS][MAXS];
    uint64_t rng;
    uint64_t coin;      /* which of each call's two forms runs: the call or its in-line fast path */
    size_t grow;        /* added to every malloc of the iteration (its shape: a dynamic batch) */
    void *addr[MAXB];   /* where each block was handed out, the last time */
    bool planned[MAXB]; /* and whether the plan did */
    long fail_at_end;   /* >= 0: allocations fail from that many on, in the iteration's LastWaitEvents */
} runner;

typedef struct iter_state {
    gm_ms_block *b[MAXB];
    size_t size[MAXB];
    uint8_t refs[MAXB];
    uint16_t accessed[MAXB];
    bool made[MAXB], sent[MAXOPS];
    size_t next[MAXS];    /* per stream: index into its own op list */
    uint16_t *seq[MAXS];  /* per stream: the script's op indices */
    size_t len[MAXS];
} iter_state;

static bool enabled(const runner *ru, const iter_state *it, const op *o)
{
    switch (o->kind) {
    case OP_ACCESS: return it->made[o->block] && it->refs[o->block] > 0;
    case OP_FREE: return it->accessed[o->block] >= o->before;
    case OP_WAIT: return it->sent[o->ev];
    default: (void)ru; return true;
    }
}

static void release_units(model *m, uint32_t s, const iter_state *it, uint16_t b, bool last)
{
    const size_t first = unit_of(gm_ms_block_addr(it->b[b])), n = units_of(it->size[b]);
    for (size_t u = first; u < first + n; u++) {
        m->rel[u][s] = m->clock[s][s];
        if (last) m->owner[u] = -1;
    }
}

static void run_op(runner *ru, iter_state *it, const op *o, size_t bump)
{
    model *m = ru->m;
    stack *st = &ru->st;
    gm_error err;
    const uint32_t s = o->stream;
    const bool fast = rnd(&ru->coin) & 1; /* ms_fast_path.h must answer as the call does */
    switch (o->kind) {
    case OP_MALLOC: {
        const size_t size = o->size + bump + ru->grow;
        gm_ms_block *b = fast ? gm_ms_fast_malloc(al(st, s), size) : gm_ms_l2_malloc(al(st, s), size);
        assert_non_null(b);
        tick(m, s);
        check_handout(m, s, b, size, o->block);
        ru->addr[o->block] = gm_ms_block_addr(b), ru->planned[o->block] = b->type == GM_MS_PLANNED;
        it->b[o->block] = b, it->size[o->block] = size, it->refs[o->block] = 1, it->made[o->block] = true;
        break;
    }
    case OP_ACCESS:
        assert_int_equal(fast ? gm_ms_fast_access(it->b[o->block], o->src, s, &err)
                              : gm_ms_access_mem_cross_stream(it->b[o->block], o->src, s, &err),
                         GM_OK);
        it->refs[o->block]++, it->accessed[o->block]++;
        tick(m, s);
        break;
    case OP_FREE: {
        const bool last = --it->refs[o->block] == 0;
        release_units(m, s, it, o->block, last); /* before the free: it may hand the units out at once */
        tick(m, s);
        if (fast) gm_ms_fast_free(it->b[o->block], s);
        else gm_ms_block_free(it->b[o->block], s);
        break;
    }
    case OP_SEND:
        assert_int_equal(fast ? gm_ms_fast_send(st->g, &ru->ev[o->ev], &err) : gm_ms_send_event(st->g, &ru->ev[o->ev], &err),
                         GM_OK);
        tick(m, s);
        memcpy(ru->ev_clock[o->ev], m->clock[s], sizeof m->clock[s]);
        it->sent[o->ev] = true;
        break;
    case OP_WAIT:
        for (uint32_t t = 0; t < m->n; t++)
            if (ru->ev_clock[o->ev][t] > m->clock[s][t]) m->clock[s][t] = ru->ev_clock[o->ev][t];
        if (fast) gm_ms_fast_wait(st->g, &ru->ev[o->ev]);
        else gm_ms_wait_event(st->g, &ru->ev[o->ev]);
        tick(m, s);
        break;
    }
}

/* One iteration: the streams' sequences interleaved at random; `bumped` (or SIZE_MAX) is the
 * malloc that asks for GM_MS_PLAN_ALIGN more bytes this time. */
static void run_iteration(runner *ru, size_t bumped)
{
    static iter_state it;
    static uint16_t idx[MAXS][MAXOPS];
    memset(&it, 0, sizeof it);
    const script *sc = ru->sc;
    for (size_t i = 0; i < sc->nops; i++) {
        const uint32_t s = sc->ops[i].stream;
        idx[s][it.len[s]++] = (uint16_t)i;
    }
    for (uint32_t s = 0; s < sc->n; s++) it.seq[s] = idx[s];
    size_t done = 0;
    while (done < sc->nops) {
        uint32_t s = (uint32_t)(rnd(&ru->rng) % sc->n);
        for (uint32_t tries = 0; tries < sc->n; tries++, s = (s + 1) % sc->n) {
            if (it.next[s] == it.len[s]) continue;
            const size_t i = it.seq[s][it.next[s]];
            if (!enabled(ru, &it, &sc->ops[i])) continue;
            run_op(ru, &it, &sc->ops[i], i == bumped ? GM_MS_PLAN_ALIGN : 0);
            it.next[s]++, done++;
            break;
        }
    }
    join_all(ru->m);
    if (ru->fail_at_end >= 0) gm_alloc_fail_after(ru->fail_at_end);
    gm_ms_last_wait_events(ru->st.g);
    gm_alloc_fail_after(-1);
}

static void runner_open(runner *ru, const script *sc, int mode, uint64_t seed)
{
    memset(ru, 0, sizeof *ru);
    ru->m = fresh_model(sc->n);
    ru->sc = sc;
    ru->rng = seed * 0xD1B54A32D192ED03ull | 1;
    ru->coin = seed * 0x9E3779B97F4A7C15ull | 1;
    ru->fail_at_end = -1;
    stack_open(&ru->st, sc->n, mode, ru->m);
    for (size_t i = 0; i < sc->nops; i++)
        if (sc->ops[i].kind == OP_SEND) gm_ms_event_payload_init(&ru->ev[sc->ops[i].ev], sc->ops[i].stream, sc->ops[i].src);
}

static void runner_close(runner *ru)
{
    for (size_t i = 0; i < ru->sc->nops; i++)
        if (ru->sc->ops[i].kind == OP_SEND) gm_ms_event_payload_fini(&ru->ev[ru->sc->ops[i].ev]);
    stack_close(&ru->st);
}

static size_t first_malloc(const script *sc)
{
    for (size_t i = 0; i < sc->nops; i++)
        if (sc->ops[i].kind == OP_MALLOC) return i;
    return SIZE_MAX;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* Many scripts, streams and modes; half of them in three shapes mixed at random (every malloc of
 * an iteration larger by 0, 1 or 2 alignments); now and then one malloc of an iteration asks for
 * more. */
static void test_random_iterations_never_reuse_early(void **state)
{
    (void)state;
    static script sc;
    static runner ru;
    size_t iterations = 0, on = 0, departures = 0, planned = 0, orders = 0, learned = 0, stand_ins = 0, switches = 0;
    for (uint64_t seed = 1; seed <= 24; seed++) {
        const uint32_t n = (uint32_t)(1 + seed % MAXS);
        const int mode = (int)(seed % 3);
        make_script(&sc, n, seed, 300 + seed * 20);
        runner_open(&ru, &sc, mode, seed);
        for (int k = 0; k < 12; k++) {
            ru.grow = seed % 2 ? 0 : rnd(&ru.rng) % 3 * GM_MS_PLAN_ALIGN; /* three shapes, mixed */
            size_t bumped = SIZE_MAX;
            if (k == 5 || (k > 6 && rnd(&ru.rng) % 8 == 0)) { /* a departure, somewhere in the iteration */
                size_t pick = rnd(&ru.rng) % sc.nops;
                while (sc.ops[pick].kind != OP_MALLOC) pick = (pick + 1) % sc.nops;
                bumped = pick;
            }
            run_iteration(&ru, bumped);
            iterations++;
        }
        gm_ms_plan_stats ps = plan_stats(&ru.st);
        on += ps.iterations_on, departures += ps.departures, learned += ps.learned;
        orders += ps.orders, stand_ins += ps.stand_ins, switches += ps.switches;
        planned += ru.m->planned;
        runner_close(&ru);
    }
    printf("learned plan: %zu iterations, %zu on a plan, %zu departures, %zu plans learned, %zu blocks handed out "
           "from plans, %zu internal dependencies added by planned mallocs, %zu stand-ins, %zu switches of shape\n",
           iterations, on, departures, learned, planned, orders, stand_ins, switches);
    assert_true(on > iterations / 2); /* the plans served most iterations */
    assert_true(departures >= 24);    /* every script departed at least once */
    assert_true(learned > 24);        /* and learned again */
    assert_true(orders > 0);          /* the second packing rule ran and held */
    assert_true(stand_ins > 0);       /* and its guards failed where the host interleaved otherwise */
    assert_true(switches > 12);       /* iterations of the shapes the plans knew took them up */
}

/* The plan's blocks stay where they were packed, iteration after iteration, whatever the host's
 * interleaving of the streams; the device then holds the region and nothing else. */
static void test_plan_keeps_addresses(void **state)
{
    (void)state;
    static script sc;
    static runner ru;
    make_script(&sc, 2, 77, 200);
    runner_open(&ru, &sc, MODE_MEMORY_FIRST, 1);
    run_iteration(&ru, SIZE_MAX); /* recorded */
    gm_ms_plan_stats ps = plan_stats(&ru.st);
    assert_int_equal(ps.learned, 1);
    assert_int_equal(ps.blocks, sc.nblocks);
    assert_int_equal(ru.st.dev.live_bytes, (ps.region_bytes + FAKE_PAGE - 1) / FAKE_PAGE * FAKE_PAGE);
    void *first[MAXB];
    for (int k = 0; k < 4; k++) {
        run_iteration(&ru, SIZE_MAX);
        for (uint16_t b = 0; b < sc.nblocks; b++) {
            assert_true(ru.planned[b]);
            if (k == 0) first[b] = ru.addr[b];
            assert_ptr_equal(ru.addr[b], first[b]);
        }
    }
    ps = plan_stats(&ru.st);
    assert_int_equal(ps.iterations_on, 4);
    assert_int_equal(ps.departures, 0);
    assert_int_equal(ps.planned_mallocs, 4u * sc.nblocks);
    assert_int_equal(ru.st.dev.live_bytes, (ps.region_bytes + FAKE_PAGE - 1) / FAKE_PAGE * FAKE_PAGE);

    /* an iteration of another shape from its first call: served dynamically and learned too */
    const size_t m0 = first_malloc(&sc);
    gm_ms_block *b = gm_ms_l2_malloc(al(&ru.st, sc.ops[m0].stream), 1);
    assert_non_null(b);
    assert_int_not_equal(b->type, GM_MS_PLANNED);
    gm_ms_block_free(b, sc.ops[m0].stream);
    gm_ms_last_wait_events(ru.st.g);
    ps = plan_stats(&ru.st);
    assert_int_equal(ps.departures, 1);
    assert_int_equal(ps.learned, 2);
    assert_int_equal(ps.shapes, 2);
    /* the script's shape again: its plan takes over at the first call, and keeps its addresses */
    run_iteration(&ru, SIZE_MAX);
    for (uint16_t k = 0; k < sc.nblocks; k++) assert_ptr_equal(ru.addr[k], first[k]);
    b = gm_ms_l2_malloc(al(&ru.st, sc.ops[m0].stream), 1); /* and the other one, from the region too */
    assert_int_equal(b->type, GM_MS_PLANNED);
    gm_ms_block_free(b, sc.ops[m0].stream);
    gm_ms_last_wait_events(ru.st.g);
    run_iteration(&ru, SIZE_MAX);
    ps = plan_stats(&ru.st);
    assert_int_equal(ps.learned, 2);
    assert_int_equal(ps.departures, 1);
    assert_int_equal(ps.switches, 3);
    assert_int_equal(ps.iterations_on, 7);
    assert_int_equal(ru.st.dev.live_bytes, (ps.region_bytes + FAKE_PAGE - 1) / FAKE_PAGE * FAKE_PAGE);
    runner_close(&ru);
}

/* One step of a graph with a dynamic batch on two streams, as the executor makes it: a start
 * event, then blocks whose sizes follow the batch, the second stream reading the first's. */
static void batch_step(stack *st, gm_ms_event_payload *start, gm_ms_event_payload *done, size_t batch, void **where)
{
    gm_error err;
    assert_int_equal(gm_ms_send_event(st->g, start, &err), GM_OK);
    gm_ms_wait_event(st->g, start);
    gm_ms_block *a = gm_ms_l2_malloc(al(st, 0), 1000 * batch);
    gm_ms_block *b = gm_ms_l2_malloc(al(st, 1), 3000 * batch);
    assert_int_equal(gm_ms_access_mem_cross_stream(a, 0, 1, &err), GM_OK);
    gm_ms_block_free(a, 0);
    gm_ms_block *c = gm_ms_l2_malloc(al(st, 0), 2000 * batch);
    gm_ms_block_free(a, 1);
    gm_ms_block_free(b, 1);
    assert_int_equal(gm_ms_send_event(st->g, done, &err), GM_OK);
    gm_ms_wait_event(st->g, done);
    gm_ms_block_free(c, 0);
    gm_ms_last_wait_events(st->g);
    where[0] = gm_ms_block_addr(a), where[1] = gm_ms_block_addr(b), where[2] = gm_ms_block_addr(c);
}

/* Iterations of three shapes in a random mix: each is learned at its first appearance (its own
 * iteration recorded from the start), and from then on the plan of the shape an iteration takes
 * answers it, its blocks where they were, all in one region; a shape seen again is the same plan.
 * Shapes that keep coming new fill the places (the least recently used goes) and then give up. */
static void test_shapes_of_a_dynamic_batch(void **state)
{
    (void)state;
    model *m = fresh_model(2);
    stack st;
    stack_open(&st, 2, MODE_GE, m);
    gm_ms_event_payload start, done;
    gm_ms_event_payload_init(&start, 0, 1);
    gm_ms_event_payload_init(&done, 1, 0);
    const size_t batches[3] = {1, 2, 4};
    void *first[3][3] = {{0}}, *where[3];
    bool seen[3] = {false};
    uint64_t r = 7;
    for (int k = 0; k < 40; k++) {
        const int i = k < 3 ? k : (int)(rnd(&r) % 3);
        batch_step(&st, &start, &done, batches[i], where);
        if (k >= 3 && !seen[i]) memcpy(first[i], where, sizeof where), seen[i] = true;
        if (k >= 3) assert_memory_equal(first[i], where, sizeof where);
    }
    gm_ms_plan_stats ps = plan_stats(&st);
    assert_int_equal(ps.learned, 3);
    assert_int_equal(ps.shapes, 3);
    assert_int_equal(ps.departures, 2); /* the first iterations of batches 2 and 4 */
    assert_int_equal(ps.iterations_on, 40 - 3);
    assert_true(ps.switches > 10);
    assert_int_equal(ps.planned_mallocs, 3 * (40 - 3));
    assert_true(ps.region_bytes >= 6000 * 4 && ps.region_bytes <= 6000 * 4 + 3 * GM_MS_PLAN_ALIGN);
    assert_int_equal(st.dev.live_bytes, (ps.region_bytes + FAKE_PAGE - 1) / FAKE_PAGE * FAKE_PAGE);
    /* new shapes, one after another */
    for (size_t b = 8; b <= 64; b *= 2) batch_step(&st, &start, &done, b, where);
    ps = plan_stats(&st);
    assert_false(ps.gave_up);
    assert_int_equal(ps.shapes, GM_MS_PLAN_SHAPES);
    assert_int_equal(ps.learned, 7);
    batch_step(&st, &start, &done, 128, where);
    ps = plan_stats(&st);
    assert_true(ps.gave_up);
    assert_int_equal(ps.shapes, 0);
    assert_int_equal(ps.region_bytes, 0);
    gm_ms_event_payload_fini(&start);
    gm_ms_event_payload_fini(&done);
    stack_close(&st);
}

/* Another shape takes over only if it began with the very calls made so far: here stream 1's
 * first wait stands for an earlier send than in shape D, where Y may take X's bytes because of
 * it. Taking D over would hand Y X's bytes while X is live. */
static void c_step(stack *st, gm_ms_event_payload *q)
{
    gm_error err;
    assert_int_equal(gm_ms_send_event(st->g, q, &err), GM_OK);
    gm_ms_wait_event(st->g, q);
    gm_ms_block *z = gm_ms_l2_malloc(al(st, 0), 5000);
    gm_ms_block_free(z, 0);
    gm_ms_last_wait_events(st->g);
}

static void test_switch_needs_the_same_start(void **state)
{
    (void)state;
    model *m = fresh_model(2);
    stack st;
    stack_open(&st, 2, MODE_GE, m);
    gm_ms_event_payload p, q;
    gm_ms_event_payload_init(&p, 0, 1);
    gm_ms_event_payload_init(&q, 0, 1);
    gm_error err;
    /* shape D: s0 sends p, has X, sends q after freeing it; s1 waits for q and has Y (may share) */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(gm_ms_send_event(st.g, &p, &err), GM_OK);
        gm_ms_block *x = gm_ms_l2_malloc(al(&st, 0), 1000);
        gm_ms_block_free(x, 0);
        assert_int_equal(gm_ms_send_event(st.g, &q, &err), GM_OK);
        gm_ms_wait_event(st.g, &q);
        gm_ms_block *y = gm_ms_l2_malloc(al(&st, 1), 1000);
        if (k) assert_ptr_equal(gm_ms_block_addr(x), gm_ms_block_addr(y)); /* D shares them */
        gm_ms_block_free(y, 1);
        gm_ms_last_wait_events(st.g);
    }
    /* shape C: s0 sends q, s1 waits for it, s0 has Z */
    c_step(&st, &q);
    c_step(&st, &q);
    gm_ms_plan_stats ps = plan_stats(&st);
    assert_int_equal(ps.shapes, 2);
    assert_int_equal(ps.iterations_on, 2);
    /* C's start, then s0 has X and s1 has Y at once: no plan may answer */
    assert_int_equal(gm_ms_send_event(st.g, &q, &err), GM_OK);
    gm_ms_wait_event(st.g, &q);
    gm_ms_block *x = gm_ms_l2_malloc(al(&st, 0), 1000);
    gm_ms_block *y = gm_ms_l2_malloc(al(&st, 1), 1000);
    assert_ptr_not_equal(gm_ms_block_addr(x), gm_ms_block_addr(y));
    gm_ms_block_free(x, 0);
    gm_ms_block_free(y, 1);
    gm_ms_last_wait_events(st.g);
    assert_int_equal(plan_stats(&st).switches, 0);
    gm_ms_event_payload_fini(&p);
    gm_ms_event_payload_fini(&q);
    stack_close(&st);
}

/* A planned block that outlives its iteration keeps the region until it is freed; only then is
 * the next iteration recorded; departures in a row make the group give up. */
static void test_departures_and_giving_up(void **state)
{
    (void)state;
    stack st;
    model *m = fresh_model(1);
    stack_open(&st, 1, MODE_GE, m);
    gm_ms_l2_allocator *a = al(&st, 0);
    /* iteration 1, recorded: two blocks */
    gm_ms_block *x = gm_ms_l2_malloc(a, 4096), *y = gm_ms_l2_malloc(a, 100000);
    gm_ms_block_free(x, 0);
    gm_ms_block_free(y, 0);
    gm_ms_last_wait_events(st.g);
    assert_int_equal(plan_stats(&st).learned, 1);
    /* iteration 2: on the plan, but y stays out across the boundary */
    x = gm_ms_l2_malloc(a, 4096);
    y = gm_ms_l2_malloc(a, 100000);
    assert_int_equal(x->type, GM_MS_PLANNED);
    assert_int_equal(y->type, GM_MS_PLANNED);
    gm_ms_block_free(x, 0);
    gm_ms_last_wait_events(st.g);
    gm_ms_plan_stats ps = plan_stats(&st);
    assert_int_equal(ps.departures, 1);
    assert_true(ps.region_bytes > 0); /* kept: y is out */
    /* iteration 3: dynamic; y freed */
    x = gm_ms_l2_malloc(a, 4096);
    assert_int_not_equal(x->type, GM_MS_PLANNED);
    gm_ms_block_free(x, 0);
    gm_ms_block_free(y, 0);
    gm_ms_last_wait_events(st.g);
    assert_int_equal(plan_stats(&st).region_bytes, 0); /* gone now */
    /* iterations 4..: each recorded iteration is followed by one that departs after it had a
     * block from the plan (no other shape can take over then); iteration 2's departure was the
     * first in the row */
    for (int k = 0; k < GM_MS_PLAN_RELEARNS - 1; k++) {
        x = gm_ms_l2_malloc(a, 8192);
        y = gm_ms_l2_malloc(a, 4096);
        gm_ms_block_free(x, 0);
        gm_ms_block_free(y, 0);
        gm_ms_last_wait_events(st.g); /* recorded */
        x = gm_ms_l2_malloc(a, 8192);
        y = gm_ms_l2_malloc(a, 4096 + 512 * (size_t)(k + 1));
        assert_int_equal(x->type, GM_MS_PLANNED);
        assert_int_not_equal(y->type, GM_MS_PLANNED);
        gm_ms_block_free(x, 0);
        gm_ms_block_free(y, 0);
        gm_ms_last_wait_events(st.g); /* departed */
    }
    ps = plan_stats(&st);
    assert_true(ps.gave_up);
    assert_int_equal(ps.region_bytes, 0);
    x = gm_ms_l2_malloc(a, 8192); /* the dynamic allocator alone, from here on */
    assert_int_not_equal(x->type, GM_MS_PLANNED);
    gm_ms_block_free(x, 0);
    gm_ms_last_wait_events(st.g);
    stack_close(&st);
}

/* The in-line fast paths (ms_fast_path.h) answer only while a plan is on and the call keeps to
 * it: while recording, after a departure and with bad arguments they make the call, which records,
 * serves dynamically or reports the usage error as it always does; the plan is not left for a
 * call that was refused. */
static void test_fast_paths_answer_only_on_the_plan(void **state)
{
    (void)state;
    model *m = fresh_model(2);
    stack st;
    stack_open(&st, 2, MODE_GE, m);
    gm_ms_event_payload p, bad;
    gm_ms_event_payload_init(&p, 0, 1);
    gm_ms_event_payload_init(&bad, 0, 9);
    gm_error err;
    for (int k = 0; k < 4; k++) {
        const bool on = k == 1 || k == 2; /* 0 is recorded; 3 is of another shape from its first
                                             malloc: recorded as a new one */
        gm_ms_block *x = gm_ms_fast_malloc(al(&st, 0), k == 3 ? 8192 : 4096);
        assert_non_null(x);
        assert_int_equal(x->type == GM_MS_PLANNED, on);
        assert_int_equal(gm_ms_fast_access(x, 0, 0, &err), GM_ERR_USAGE);
        assert_int_equal(gm_ms_fast_access(x, 0, 2, &err), GM_ERR_USAGE);
        assert_int_equal(gm_ms_fast_access(x, 0, GM_MAX_STREAMS, &err), GM_ERR_USAGE);
        assert_int_equal(gm_ms_fast_send(st.g, &bad, &err), GM_ERR_USAGE);
        assert_int_equal(gm_ms_fast_access(x, 0, 1, &err), GM_OK);
        gm_ms_fast_free(x, 0);
        assert_int_equal(gm_ms_fast_send(st.g, &p, &err), GM_OK);
        gm_ms_fast_wait(st.g, &p);
        gm_ms_fast_free(x, 1);
        gm_ms_last_wait_events(st.g);
        gm_ms_plan_stats ps = plan_stats(&st);
        assert_int_equal(ps.learned, k == 3 ? 2 : 1);
        assert_int_equal(ps.iterations_on, k >= 2 ? 2 : (size_t)k);
        assert_int_equal(ps.departures, k == 3);
        assert_int_equal(ps.planned_mallocs, k >= 2 ? 2 : (size_t)k);
    }
    gm_ms_event_payload_fini(&p);
    gm_ms_event_payload_fini(&bad);
    stack_close(&st);
}

/* A recording that cannot be planned (nothing malloc'ed; a block that outlives it) gives up at
 * once, quietly; so does a region L1 cannot provide. */
static void test_unplannable_recordings(void **state)
{
    (void)state;
    model *m = fresh_model(2);
    stack st;
    stack_open(&st, 2, MODE_DEPS, m);
    gm_ms_event_payload p;
    gm_ms_event_payload_init(&p, 0, 1);
    gm_error err;
    assert_int_equal(gm_ms_send_event(st.g, &p, &err), GM_OK);
    gm_ms_last_wait_events(st.g); /* the first recording: only a send, nothing to plan */
    assert_true(plan_stats(&st).gave_up);
    gm_ms_wait_event(st.g, &p);
    gm_ms_event_payload_fini(&p);
    stack_close(&st);

    stack_open(&st, 2, MODE_DEPS, m);
    gm_ms_event_payload_init(&p, 0, 1);
    gm_ms_block *b = gm_ms_l2_malloc(al(&st, 0), 4096);
    assert_int_equal(gm_ms_send_event(st.g, &p, &err), GM_OK);
    gm_ms_last_wait_events(st.g); /* b outlives the recorded iteration */
    assert_true(plan_stats(&st).gave_up);
    gm_ms_wait_event(st.g, &p);
    gm_ms_block_free(b, 0);
    gm_ms_event_payload_fini(&p);
    stack_close(&st);

    stack_open(&st, 2, MODE_DEPS, m);
    b = gm_ms_l2_malloc(al(&st, 1), 3 * FAKE_PAGE);
    gm_ms_block_free(b, 1);
    st.dev.fail_always = 1; /* the region cannot be had */
    gm_ms_last_wait_events(st.g);
    gm_ms_plan_stats ps = plan_stats(&st);
    assert_true(ps.gave_up);
    assert_int_equal(ps.learned, 0);
    st.dev.fail_always = 0;
    b = gm_ms_l2_malloc(al(&st, 1), 3 * FAKE_PAGE);
    assert_non_null(b);
    gm_ms_block_free(b, 1);
    gm_ms_last_wait_events(st.g);
    stack_close(&st);
}

/* Every allocation of packing and activation made to fail in turn: the group gives the plan up
 * (and goes on dynamically) or keeps it, and never loses a block or crashes. */
static void test_allocation_failures(void **state)
{
    (void)state;
    static script sc;
    static runner ru;
    make_script(&sc, 3, 5, 200);
    size_t gave_up = 0, kept = 0;
    for (long k = 0; kept < 3; k++) {
        assert_true(k < 1000);
        runner_open(&ru, &sc, MODE_DEPS, 3);
        ru.fail_at_end = k;
        run_iteration(&ru, SIZE_MAX); /* recorded, then packed at its end */
        ru.fail_at_end = -1;
        run_iteration(&ru, SIZE_MAX);
        gm_ms_plan_stats ps = plan_stats(&ru.st);
        if (ps.gave_up) gave_up++;
        else kept++, assert_int_equal(ps.iterations_on, 1);
        runner_close(&ru);
    }
    assert_true(gave_up >= 10);
}

/* A wait stands for its payload's first send since its last wait (the device wait may be on that
 * record): a release between two sends of one payload is not heard through it, and without
 * internal dependencies the plan keeps the two blocks apart. */
static void test_wait_stands_for_the_first_send(void **state)
{
    (void)state;
    model *m = fresh_model(2);
    gm_error err;
    for (int twice = 0; twice < 2; twice++) {
        stack st;
        stack_open(&st, 2, MODE_GE, m);
        gm_ms_event_payload p;
        gm_ms_event_payload_init(&p, 0, 1);
        for (int k = 0; k < 3; k++) {
            gm_ms_block *a = gm_ms_l2_malloc(al(&st, 0), 8192);
            if (twice) assert_int_equal(gm_ms_send_event(st.g, &p, &err), GM_OK);
            gm_ms_block_free(a, 0);
            assert_int_equal(gm_ms_send_event(st.g, &p, &err), GM_OK);
            gm_ms_wait_event(st.g, &p);
            gm_ms_block *b = gm_ms_l2_malloc(al(&st, 1), 8192);
            gm_ms_block_free(b, 1);
            gm_ms_last_wait_events(st.g);
        }
        gm_ms_plan_stats ps = plan_stats(&st);
        assert_int_equal(ps.iterations_on, 2);
        assert_int_equal(ps.region_bytes, twice ? 2 * 8192 : 8192);
        gm_ms_event_payload_fini(&p);
        stack_close(&st);
    }
}

/* Each stream keeps its sequence, but the host interleaves them so that a wait stands for
 * another send than when recorded: stream 1 waits twice on one payload that stream 0 sends before
 * and after freeing a. Recorded with the second wait after the second send (b may take a's bytes),
 * replayed with both waits after it (the first stands for the first send, the second for
 * nothing): the plan must depart at the second wait, in the call and in its fast path alike. */
static void test_wait_on_another_send_departs(void **state)
{
    (void)state;
    model *m = fresh_model(2);
    gm_error err;
    for (int fast = 0; fast < 2; fast++) {
        stack st;
        stack_open(&st, 2, MODE_GE, m);
        gm_ms_event_payload p;
        gm_ms_event_payload_init(&p, 0, 1);
        for (int k = 0; k < 3; k++) {
            const bool late = k == 2; /* both waits after both sends */
            assert_int_equal(fast ? gm_ms_fast_send(st.g, &p, &err) : gm_ms_send_event(st.g, &p, &err), GM_OK);
            if (!late) fast ? gm_ms_fast_wait(st.g, &p) : gm_ms_wait_event(st.g, &p);
            gm_ms_block *a = fast ? gm_ms_fast_malloc(al(&st, 0), 8192) : gm_ms_l2_malloc(al(&st, 0), 8192);
            void *where = gm_ms_block_addr(a);
            fast ? gm_ms_fast_free(a, 0) : gm_ms_block_free(a, 0);
            assert_int_equal(fast ? gm_ms_fast_send(st.g, &p, &err) : gm_ms_send_event(st.g, &p, &err), GM_OK);
            if (late) fast ? gm_ms_fast_wait(st.g, &p) : gm_ms_wait_event(st.g, &p);
            fast ? gm_ms_fast_wait(st.g, &p) : gm_ms_wait_event(st.g, &p);
            gm_ms_block *b = fast ? gm_ms_fast_malloc(al(&st, 1), 8192) : gm_ms_l2_malloc(al(&st, 1), 8192);
            if (late) assert_ptr_not_equal(gm_ms_block_addr(b), where); /* stream 1 never heard of a's free */
            fast ? gm_ms_fast_free(b, 1) : gm_ms_block_free(b, 1);
            gm_ms_last_wait_events(st.g);
            if (k == 0) assert_int_equal(plan_stats(&st).region_bytes, 8192); /* a and b share */
        }
        gm_ms_plan_stats ps = plan_stats(&st);
        assert_int_equal(ps.iterations_on, 1);
        assert_int_equal(ps.departures, 1);
        gm_ms_event_payload_fini(&p);
        stack_close(&st);
    }
}

/* Block b (stream 1) is malloc'ed after a (stream 0) is freed on the host, with no event between:
 * they share bytes only through an internal dependency, which the plan adds only where it saves
 * L1 pages (each one is an event record and wait on the device every iteration). */
static void test_dependencies_only_where_they_save_pages(void **state)
{
    (void)state;
    model *m = fresh_model(2);
    for (int big = 0; big < 2; big++) {
        const size_t bytes = big ? FAKE_PAGE : 8192;
        stack st;
        stack_open(&st, 2, MODE_DEPS, m);
        for (int k = 0; k < 3; k++) {
            gm_ms_block *a = gm_ms_l2_malloc(al(&st, 0), bytes);
            gm_ms_block_free(a, 0);
            gm_ms_block *b = gm_ms_l2_malloc(al(&st, 1), bytes);
            gm_ms_block_free(b, 1);
            gm_ms_last_wait_events(st.g);
        }
        gm_ms_plan_stats ps = plan_stats(&st);
        assert_int_equal(ps.iterations_on, 2);
        assert_int_equal(ps.region_bytes, big ? bytes : 2 * bytes);
        assert_int_equal(ps.dependent_blocks, big ? 1 : 0);
        assert_int_equal(ps.orders, big ? 2 : 0);
        stack_close(&st);
    }
}

/* On the plan no call counts anything (the fast paths only move cursors): the statistics read
 * in the middle of an iteration count what the cursors passed, and a departure counts each
 * planned block's references as the passed calls left them, so that a block still referenced on
 * another stream keeps the region until its last free. */
static void test_counted_where_the_cursors_are(void **state)
{
    (void)state;
    model *m = fresh_model(2);
    stack st;
    stack_open(&st, 2, MODE_GE, m);
    gm_ms_event_payload p;
    gm_ms_event_payload_init(&p, 0, 1);
    gm_error err;
    gm_ms_stats ms;
    gm_ms_block *x = NULL, *y = NULL;
    for (int k = 0; k < 2; k++) { /* 0 recorded; 1 departs at y's malloc (another size) */
        x = gm_ms_fast_malloc(al(&st, 0), 4096);
        assert_int_equal(gm_ms_fast_send(st.g, &p, &err), GM_OK);
        gm_ms_group_stats(st.g, &ms, NULL);
        assert_int_equal(ms.events_sent, (size_t)k + 1);
        assert_int_equal(plan_stats(&st).planned_mallocs, (size_t)k);
        gm_ms_fast_wait(st.g, &p);
        assert_int_equal(gm_ms_fast_access(x, 0, 1, &err), GM_OK);
        gm_ms_fast_free(x, 0);
        gm_ms_group_stats(st.g, &ms, NULL);
        assert_int_equal(ms.events_waited, (size_t)k + 1);
        y = gm_ms_fast_malloc(al(&st, 1), k ? 9999 : 8192);
        gm_ms_fast_free(y, 1);
        if (!k) gm_ms_fast_free(x, 1);
        gm_ms_last_wait_events(st.g);
    }
    gm_ms_plan_stats ps = plan_stats(&st);
    assert_int_equal(ps.departures, 1);
    assert_int_equal(ps.planned_mallocs, 1);
    assert_true(ps.region_bytes > 0); /* x is still out on stream 1 */
    gm_ms_group_stats(st.g, &ms, NULL);
    assert_int_equal(ms.events_sent, 2);
    assert_int_equal(ms.events_waited, 2);
    gm_ms_fast_free(x, 1); /* off the plan: counted call by call */
    gm_ms_last_wait_events(st.g);
    assert_int_equal(plan_stats(&st).region_bytes, 0);
    gm_ms_event_payload_fini(&p);
    stack_close(&st);
}

/* A send names its destination in the plan: a payload from the same stream to another one leaves
 * the plan at the send, in the call and in its fast path alike. */
static void test_send_to_another_stream_departs(void **state)
{
    (void)state;
    model *m = fresh_model(3);
    gm_error err;
    for (int fast = 0; fast < 2; fast++) {
        stack st;
        stack_open(&st, 3, MODE_GE, m);
        gm_ms_event_payload p, q;
        gm_ms_event_payload_init(&p, 0, 1);
        gm_ms_event_payload_init(&q, 0, 2);
        for (int k = 0; k < 3; k++) {
            gm_ms_event_payload *e = k == 2 ? &q : &p;
            gm_ms_block *a = gm_ms_fast_malloc(al(&st, 0), 8192);
            gm_ms_fast_free(a, 0);
            assert_int_equal(fast ? gm_ms_fast_send(st.g, e, &err) : gm_ms_send_event(st.g, e, &err), GM_OK);
            assert_int_equal(plan_stats(&st).departures, k == 2);
            fast ? gm_ms_fast_wait(st.g, e) : gm_ms_wait_event(st.g, e);
            gm_ms_block *b = gm_ms_fast_malloc(al(&st, e->dst), 8192);
            assert_int_equal(b->type == GM_MS_PLANNED, k == 1);
            gm_ms_fast_free(b, e->dst);
            gm_ms_last_wait_events(st.g);
        }
        gm_ms_plan_stats ps = plan_stats(&st);
        assert_int_equal(ps.iterations_on, 1);
        assert_int_equal(ps.departures, 1);
        gm_ms_event_payload_fini(&p);
        gm_ms_event_payload_fini(&q);
        stack_close(&st);
    }
}

/* A planned block never freed is a leak like any other: counted by the group's destroy, which
 * still gives the region back. */
static void test_planned_leak_at_destroy(void **state)
{
    (void)state;
    model *m = fresh_model(1);
    stack st;
    stack_open(&st, 1, MODE_GE, m);
    gm_ms_block *x = gm_ms_l2_malloc(al(&st, 0), 4096);
    gm_ms_block_free(x, 0);
    gm_ms_last_wait_events(st.g);
    x = gm_ms_l2_malloc(al(&st, 0), 4096);
    assert_int_equal(x->type, GM_MS_PLANNED);
    assert_int_equal(gm_ms_group_destroy(st.g), 1);
    gm_caching_destroy(st.l1);
    assert_int_equal(st.dev.live_bytes, 0);
    fake_fini(&st.dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_iterations_never_reuse_early),
                                       cmocka_unit_test(test_plan_keeps_addresses),
                                       cmocka_unit_test(test_departures_and_giving_up),
                                       cmocka_unit_test(test_shapes_of_a_dynamic_batch),
                                       cmocka_unit_test(test_switch_needs_the_same_start),
                                       cmocka_unit_test(test_fast_paths_answer_only_on_the_plan),
                                       cmocka_unit_test(test_unplannable_recordings),
                                       cmocka_unit_test(test_wait_stands_for_the_first_send),
                                       cmocka_unit_test(test_wait_on_another_send_departs),
                                       cmocka_unit_test(test_dependencies_only_where_they_save_pages),
                                       cmocka_unit_test(test_planned_leak_at_destroy),
                                       cmocka_unit_test(test_counted_where_the_cursors_are),
                                       cmocka_unit_test(test_send_to_another_stream_departs),
                                       cmocka_unit_test(test_allocation_failures)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
