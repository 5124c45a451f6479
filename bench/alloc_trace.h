/*
 * alloc_trace.h — an allocation trace recorded from a model's memory plan, with the semantics of
 * `graphmem run` (the dynamic executor): walk the planning order; at a symbol's first access its
 * birth stream allocates it, a stream that later reads it takes a reference (a cross-stream
 * access), and after its last access every stream holding a reference frees it. Cross-stream
 * data and control edges are event send (after the producer) and wait (before the consumer);
 * every iteration ends with LastWaitEvents. A malloc-like allocator sees only the alloc and the
 * free that drops the last reference; the multi-stream allocator sees everything.
 *
 * Header-only (every bench source is its own program). In memory a trace is an array of 16-byte
 * events; as text, one event a line:
 *
 *     alloc ID SIZE STREAM     access ID SRC DST     free ID STREAM
 *     send SLOT SRC DST        wait SLOT             iter
 */
#ifndef GM_BENCH_ALLOC_TRACE_H
#define GM_BENCH_ALLOC_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/executor.h"
#include "graphmem/graph.h"
#include "graphmem/plan.h"

enum { AT_ALLOC = 1, AT_ACCESS, AT_FREE, AT_SEND, AT_WAIT, AT_ITER };

typedef struct at_event {
    uint8_t op;
    uint8_t s1, s2; /* alloc/free: s1 = stream; access/send: s1 = src, s2 = dst */
    uint8_t last;   /* free: drops the last reference (what malloc-like allocators free at) */
    uint32_t id;    /* symbol id (alloc/access/free) or event slot (send/wait) */
    uint64_t size;  /* alloc */
} at_event;

typedef struct at_trace {
    at_event *ev;
    size_t n, cap;
    uint32_t ids, slots, streams, iterations;
    size_t allocs;          /* alloc events (= frees with last set) */
    uint64_t peak_live;     /* the largest sum of live bytes (alloc to last free) */
    uint64_t peak_pages;    /* the same with every block rounded up to 64 KiB (graphmem's page) */
    size_t *peak_at;        /* per iteration: the event after which its live sum peaks */
    size_t n_peak_at;
} at_trace;

static inline void at_free(at_trace *t)
{
    free(t->ev);
    free(t->peak_at);
    memset(t, 0, sizeof *t);
}

static inline int at_push(at_trace *t, at_event e)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4096;
        at_event *v = realloc(t->ev, cap * sizeof *v);
        if (!v) return -1;
        t->ev = v, t->cap = cap;
    }
    t->ev[t->n++] = e;
    return 0;
}

/* Sets `last` on frees, counts, finds the peak (trace-wide and per iteration). 0, or -1 when the
 * trace is inconsistent (free of what is not allocated, ids or streams out of range). */
static inline int at_finish(at_trace *t)
{
    uint32_t *refs = calloc(t->ids ? t->ids : 1, sizeof *refs);
    uint64_t *size = calloc(t->ids ? t->ids : 1, sizeof *size);
    size_t cap_iter = 16;
    free(t->peak_at);
    t->peak_at = malloc(cap_iter * sizeof *t->peak_at);
    t->n_peak_at = 0;
    if (!refs || !size || !t->peak_at) return free(refs), free(size), -1;
    uint64_t live = 0, iter_peak = 0, live_pg = 0;
    size_t iter_at = 0;
    int rc = 0;
    t->allocs = 0, t->peak_live = 0, t->peak_pages = 0, t->iterations = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        at_event *e = &t->ev[i];
        if ((e->op == AT_ALLOC || e->op == AT_ACCESS || e->op == AT_FREE) && e->id >= t->ids) rc = -1;
        else if (e->s1 >= t->streams || ((e->op == AT_ACCESS || e->op == AT_SEND) && e->s2 >= t->streams)) rc = -1;
        else if ((e->op == AT_SEND || e->op == AT_WAIT) && e->id >= t->slots) rc = -1;
        else if (e->op == AT_ALLOC) {
            if (refs[e->id]) rc = -1;
            refs[e->id] = 1, size[e->id] = e->size, live += e->size, t->allocs++;
            live_pg += (e->size + 65535) & ~(uint64_t)65535;
            if (live_pg > t->peak_pages) t->peak_pages = live_pg;
            if (live > iter_peak) iter_peak = live, iter_at = i;
        } else if (e->op == AT_ACCESS) {
            if (!refs[e->id]) rc = -1;
            refs[e->id]++;
        } else if (e->op == AT_FREE) {
            if (!refs[e->id]) rc = -1;
            else if (!--refs[e->id]) e->last = 1, live -= size[e->id], live_pg -= (size[e->id] + 65535) & ~(uint64_t)65535;
            else e->last = 0;
        } else if (e->op == AT_ITER) {
            if (t->n_peak_at == cap_iter) {
                size_t *v = realloc(t->peak_at, 2 * cap_iter * sizeof *v);
                if (!v) { rc = -1; break; }
                t->peak_at = v, cap_iter *= 2;
            }
            t->peak_at[t->n_peak_at++] = iter_at;
            if (iter_peak > t->peak_live) t->peak_live = iter_peak;
            iter_peak = live, iter_at = i;
            t->iterations++;
        }
    }
    for (uint32_t k = 0; k < t->ids && !rc; k++)
        if (refs[k]) rc = -1; /* every symbol is freed by the end */
    free(refs);
    free(size);
    return rc;
}

/* ---- recording from a plan ---------------------------------------------------------------- */

typedef struct at_pos_list {
    size_t *v;
    size_t n, cap;
} at_pos_list;

static inline int at_list_add(at_pos_list *l, size_t x)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4;
        size_t *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

static inline uint8_t at_stream_of(const gm_node *n, unsigned streams)
{
    int64_t s = gm_node_stream(n) % (int64_t)streams;
    return (uint8_t)(s < 0 ? s + streams : s);
}

/* One iteration's events in order, repeated `iterations` times. m: passes run, streams assigned
 * (gm_run_assign_streams), p planned on it. Feature-map symbols of known size are the tensors
 * the dynamic executor allocates; weights (fixed) and user I/O (zero copy) are not. */
static inline int at_record(const gm_model *m, const gm_plan *p, unsigned streams, unsigned iterations, at_trace *t)
{
    size_t npos = gm_model_node_count(m);
    memset(t, 0, sizeof *t);
    t->streams = streams;
    /* per position: symbols born, accesses, symbols dying, event waits and sends */
    at_pos_list *born = calloc(npos + 1, sizeof *born), *dying = calloc(npos + 1, sizeof *dying);
    at_pos_list *acc = calloc(npos + 1, sizeof *acc); /* (symbol << 8 | dst) */
    at_pos_list *sends = calloc(npos + 1, sizeof *sends), *waits = calloc(npos + 1, sizeof *waits);
    uint8_t *birth = calloc(p->n_symbols + 1, 1);
    uint64_t *holders = calloc(p->n_symbols + 1, sizeof *holders); /* stream bitmap */
    int64_t *first_on = malloc(streams * sizeof *first_on);
    uint8_t *slot_src = NULL, *slot_dst = NULL;
    int rc = -1;
    if (!born || !dying || !acc || !sends || !waits || !birth || !holders || !first_on) goto out;
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        if (y->region != GM_PLAN_R_FEATURE_MAP || y->size <= 0 || y->first < 0 || (size_t)y->last_use >= npos ||
            y->first > y->last_use)
            continue;
        birth[i] = at_stream_of(gm_model_node_at(m, (size_t)y->first), streams);
        holders[i] = 1ull << birth[i];
        for (unsigned s = 0; s < streams; s++) first_on[s] = -1;
        for (size_t a = 0; a < y->n_anchors; a++) {
            const gm_node *n = y->anchors[a].node;
            if (!n) continue;
            uint8_t s = at_stream_of(n, streams);
            int64_t pos = gm_node_topo_id(n);
            if (pos < y->first) pos = y->first;
            if (pos > y->last_use) pos = y->last_use;
            if (s != birth[i] && (first_on[s] < 0 || pos < first_on[s])) first_on[s] = pos;
        }
        if (at_list_add(&born[y->first], i) || at_list_add(&dying[y->last_use], i)) goto out;
        for (unsigned s = 0; s < streams; s++)
            if (first_on[s] >= 0) {
                holders[i] |= 1ull << s;
                if (at_list_add(&acc[first_on[s]], i << 8 | s)) goto out;
            }
        t->ids = (uint32_t)(i + 1);
    }
    /* cross-stream edges: one event slot per (producer, consumer) pair */
    size_t cap_slots = 0;
    int64_t latest[64];
    for (size_t pos = 0; pos < npos; pos++) {
        const gm_node *n = gm_model_node_at(m, pos);
        uint8_t s = at_stream_of(n, streams);
        size_t nin = gm_node_input_count(n), nctl = gm_node_control_input_count(n);
        for (unsigned q = 0; q < streams; q++) latest[q] = -1;
        for (size_t k = 0; k < nin + nctl; k++) {
            int32_t idx;
            const gm_node *src = k < nin ? gm_node_input(n, k, &idx) : gm_node_control_input(n, k - nin);
            if (!src) continue;
            uint8_t ss = at_stream_of(src, streams);
            int64_t sp = gm_node_topo_id(src);
            if (ss != s && sp >= 0 && (size_t)sp < pos && sp > latest[ss]) latest[ss] = sp;
        }
        /* one wait per other stream: on that stream's latest producer (program order covers the rest) */
        for (unsigned ss = 0; ss < streams; ss++) {
            if (latest[ss] < 0) continue;
            if (t->slots == cap_slots) {
                cap_slots = cap_slots ? 2 * cap_slots : 1024;
                uint8_t *a = realloc(slot_src, cap_slots);
                if (!a) goto out;
                slot_src = a;
                if (!(a = realloc(slot_dst, cap_slots))) goto out;
                slot_dst = a;
            }
            slot_src[t->slots] = (uint8_t)ss, slot_dst[t->slots] = s;
            if (at_list_add(&sends[latest[ss]], t->slots) || at_list_add(&waits[pos], t->slots)) goto out;
            t->slots++;
        }
    }
    for (unsigned it = 0; it < iterations; it++) {
        for (size_t pos = 0; pos < npos; pos++) {
            for (size_t q = 0; q < waits[pos].n; q++)
                if (at_push(t, (at_event){.op = AT_WAIT, .s1 = slot_dst[waits[pos].v[q]], .id = (uint32_t)waits[pos].v[q]})) goto out;
            for (size_t q = 0; q < born[pos].n; q++) {
                size_t i = born[pos].v[q];
                uint64_t sz = p->symbols[i].real_size > 0 ? (uint64_t)p->symbols[i].real_size : (uint64_t)p->symbols[i].size;
                if (at_push(t, (at_event){.op = AT_ALLOC, .s1 = birth[i], .id = (uint32_t)i, .size = sz})) goto out;
            }
            for (size_t q = 0; q < acc[pos].n; q++) {
                size_t i = acc[pos].v[q] >> 8;
                uint8_t d = (uint8_t)(acc[pos].v[q] & 0xff);
                if (at_push(t, (at_event){.op = AT_ACCESS, .s1 = birth[i], .s2 = d, .id = (uint32_t)i})) goto out;
            }
            for (size_t q = 0; q < dying[pos].n; q++) {
                size_t i = dying[pos].v[q];
                for (unsigned s = 0; s < streams; s++) /* readers first, the birth stream last */
                    if (s != birth[i] && holders[i] >> s & 1)
                        if (at_push(t, (at_event){.op = AT_FREE, .s1 = (uint8_t)s, .id = (uint32_t)i})) goto out;
                if (at_push(t, (at_event){.op = AT_FREE, .s1 = birth[i], .id = (uint32_t)i})) goto out;
            }
            for (size_t q = 0; q < sends[pos].n; q++) {
                size_t sl = sends[pos].v[q];
                if (at_push(t, (at_event){.op = AT_SEND, .s1 = slot_src[sl], .s2 = slot_dst[sl], .id = (uint32_t)sl})) goto out;
            }
        }
        if (at_push(t, (at_event){.op = AT_ITER})) goto out;
    }
    rc = at_finish(t);
out:
    for (size_t pos = 0; born && dying && acc && sends && waits && pos <= npos; pos++)
        free(born[pos].v), free(dying[pos].v), free(acc[pos].v), free(sends[pos].v), free(waits[pos].v);
    free(born), free(dying), free(acc), free(sends), free(waits);
    free(birth), free(holders), free(first_on), free(slot_src), free(slot_dst);
    if (rc) at_free(t);
    return rc;
}

/* ---- text form ---------------------------------------------------------------------------- */

static inline int at_write_text(const at_trace *t, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# graphmem alloc trace: streams %u ids %u slots %u\n", t->streams, t->ids, t->slots);
    for (size_t i = 0; i < t->n; i++) {
        const at_event *e = &t->ev[i];
        switch (e->op) {
        case AT_ALLOC: fprintf(f, "alloc %u %llu %u\n", e->id, (unsigned long long)e->size, e->s1); break;
        case AT_ACCESS: fprintf(f, "access %u %u %u\n", e->id, e->s1, e->s2); break;
        case AT_FREE: fprintf(f, "free %u %u\n", e->id, e->s1); break;
        case AT_SEND: fprintf(f, "send %u %u %u\n", e->id, e->s1, e->s2); break;
        case AT_WAIT: fprintf(f, "wait %u\n", e->id); break;
        case AT_ITER: fputs("iter\n", f); break;
        }
    }
    return fclose(f) ? -1 : 0;
}

/* Reads what at_write_text wrote (the header line is optional; streams, ids and slots are taken
 * from the events). The wait's stream comes from its send. */
static inline int at_read_text(const char *path, at_trace *t)
{
    FILE *f = fopen(path, "r");
    char line[256], op[16];
    memset(t, 0, sizeof *t);
    if (!f) return -1;
    uint8_t *slot_dst = NULL;
    size_t cap = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        unsigned long long a = 0, b = 0, c = 0;
        if (line[0] == '#' || line[0] == '\n') continue;
        int k = sscanf(line, "%15s %llu %llu %llu", op, &a, &b, &c);
        at_event e = {0};
        if (k >= 4 && !strcmp(op, "alloc")) e = (at_event){.op = AT_ALLOC, .id = (uint32_t)a, .size = b, .s1 = (uint8_t)c};
        else if (k >= 4 && !strcmp(op, "access")) e = (at_event){.op = AT_ACCESS, .id = (uint32_t)a, .s1 = (uint8_t)b, .s2 = (uint8_t)c};
        else if (k >= 3 && !strcmp(op, "free")) e = (at_event){.op = AT_FREE, .id = (uint32_t)a, .s1 = (uint8_t)b};
        else if (k >= 4 && !strcmp(op, "send")) e = (at_event){.op = AT_SEND, .id = (uint32_t)a, .s1 = (uint8_t)b, .s2 = (uint8_t)c};
        else if (k >= 2 && !strcmp(op, "wait")) e = (at_event){.op = AT_WAIT, .id = (uint32_t)a};
        else if (k >= 1 && !strcmp(op, "iter")) e = (at_event){.op = AT_ITER};
        else { rc = -1; break; }
        if (b > 63 && (e.op == AT_ACCESS || e.op == AT_FREE || e.op == AT_SEND)) { rc = -1; break; }
        if (e.op != AT_ITER && e.op != AT_WAIT && e.id + 1 > t->ids && e.op != AT_SEND) t->ids = e.id + 1;
        if (e.op == AT_SEND || e.op == AT_WAIT) {
            if (e.id + 1 > t->slots) t->slots = e.id + 1;
            if (e.id >= cap) {
                size_t nc = (e.id + 1) * 2;
                uint8_t *v = realloc(slot_dst, nc);
                if (!v) { rc = -1; break; }
                memset(v + cap, 0, nc - cap);
                slot_dst = v, cap = nc;
            }
            if (e.op == AT_SEND) slot_dst[e.id] = e.s2;
            else e.s1 = slot_dst[e.id];
        }
        uint32_t hi = e.s1 > e.s2 ? e.s1 : e.s2;
        if (hi + 1u > t->streams) t->streams = hi + 1u;
        rc = at_push(t, e);
    }
    fclose(f);
    free(slot_dst);
    if (!rc) rc = at_finish(t);
    if (rc) at_free(t);
    return rc;
}

#endif
