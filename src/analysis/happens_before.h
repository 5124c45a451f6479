/*
 * happens_before.h — the planner's view of time across streams (docs/plan-format.md, "The
 * execution model"): which accesses are ordered by data edges, control edges and per-stream
 * program order, and from that a symbol's lifetime that is safe to pack as a plain interval.
 *
 * Why intervals still work with streams: a symbol A is given the release position R(A) = the
 * last position, on the model order, of any event that does NOT happen after every access of A.
 * Any event placed after R(A) then happens after all of A — so if another symbol B starts
 * (its first access, which is the earliest of all its accesses on the model order) after R(A),
 * every access of B follows every access of A, and A and B may share memory. On one stream
 * R(A) is just A's last access; a stream that never waits for A keeps A alive to its own end.
 *
 * The verifier (src/plan/verify_order.c) checks the same model independently; this file is the
 * planner's own implementation, so that a mistake in one is caught by the other.
 */
#ifndef GM_HAPPENS_BEFORE_H
#define GM_HAPPENS_BEFORE_H

#include <stdbool.h>
#include <stdint.h>

#include "graphmem/graph.h"

typedef struct gm_hb gm_hb;

/* Events and vector clocks for m (finalized, sorted). GM_ERR_NOMEM when events x streams
 * is beyond memory. */
gm_status gm_hb_build(const gm_model *m, gm_hb **out, gm_error *err);
void gm_hb_free(gm_hb *hb);

/* Distinct streams of the model (at least 1). */
size_t gm_hb_stream_count(const gm_hb *hb);

/* The last position a node covers: its own, or for a node with subgraphs the last of its
 * bodies' nodes (bodies follow their parent in the model order). */
int64_t gm_hb_span_end(const gm_hb *hb, const gm_node *n);

/* One symbol's accesses, gathered anchor by anchor with gm_hb_life_add, then summed up. The
 * struct holds scratch sized by the model; reuse it for every symbol (not thread-safe). */
typedef struct gm_hb_life gm_hb_life;
gm_status gm_hb_life_new(const gm_hb *hb, gm_hb_life **out);
void gm_hb_life_free(gm_hb_life *l);
void gm_hb_life_reset(gm_hb_life *l);
/* An anchor's node accesses the symbol (both events of a node with subgraphs). */
gm_status gm_hb_life_add(gm_hb_life *l, const gm_node *n);
/* Accessed before the first node (root Data outputs) / after the last (root NetOutput inputs). */
void gm_hb_life_at_start(gm_hb_life *l);
void gm_hb_life_at_end(gm_hb_life *l);

typedef struct gm_hb_span {
    int64_t first;   /* earliest access on the model order */
    int64_t last;    /* latest access (a value used inside and outside a While: the loop's end) */
    int64_t release; /* >= last: everything after it happens after every access */
} gm_hb_span;
gm_hb_span gm_hb_life_span(gm_hb_life *l);

#endif
