/*
 * symbols.h — GE's symbol table (GetRefMapping, reference §2.2): the classes of anchors that
 * share one address. A producer's output and its consumers' inputs; ref chains through ref ops,
 * reuse_input and views; subgraph Data and NetOutput joined to their parent's anchors; Merge
 * inputs; While pass-through. Built in one walk of the model order with union by size
 * ("larger absorbs smaller"), so it is near-linear.
 */
#ifndef GM_SYMBOLS_H
#define GM_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "graphmem/graph.h"

typedef struct gm_symbols gm_symbols;

typedef struct gm_anchor {
    gm_node *node;
    uint32_t index;
    bool out;
} gm_anchor;

gm_status gm_symbols_build(const gm_model *m, gm_symbols **out, gm_error *err);
/* GE's GetRefMapping run on one graph of the model as if it were the model: g's nodes and
 * those of every subgraph below g, and no others. g's own Data and NetOutput nodes are
 * ordinary nodes (a Data's output starts its own symbol, a NetOutput's inputs join their
 * producers); Data and NetOutput of subgraphs below g join their parent's anchors as in
 * gm_symbols_build. Costs the size of g and below, not the model's (they are one run of the
 * model order). The model must be sorted where g is concerned: a node of g or below made
 * since the last sort is GM_ERR_INTERNAL. For the root graph this is gm_symbols_build.
 * Anchors of nodes outside g have no symbol (gm_symbols_find returns -1). */
gm_status gm_symbols_build_graph(const gm_model *m, const gm_graph *g, gm_symbols **out, gm_error *err);
void gm_symbols_free(gm_symbols *s);
/* Whether s is m's whole table and no node or edge of m changed since it was built. Attributes
 * are not watched: a pass that writes one the table reads (reuse_input, ref and subgraph links)
 * must not hand its table on unless it built it after those writes. */
bool gm_symbols_current(const gm_symbols *s, const gm_model *m);

/* Makes s current again after edits that only added control edges running forward in the
 * model order (the access-order pass): the table reads no control edge, and such edges leave
 * the topological order as it was. The model must be sorted. */
void gm_symbols_restamp(gm_symbols *s, const gm_model *m);

/* The symbol of an anchor, -1 when it has none (an unconnected subgraph Data's missing in). */
int32_t gm_symbols_find(const gm_symbols *s, const gm_node *n, bool out, uint32_t index);

/* Live symbols, in GE's order: sorted by name (GE keeps them in a map keyed by name). */
size_t gm_symbols_count(const gm_symbols *s);
/* Every symbol id is below this bound (a symbol joined into another keeps its id unlisted).
 * Ids follow the model's order of the symbols' first anchors: work over many symbols that
 * reads the model goes through its memory in order when it takes them by id. */
size_t gm_symbols_id_bound(const gm_symbols *s);
/* Asks the memory, in steps that each read what the one before asked for, for what reading
 * the symbols a few places after name-order place i will need: the symbol, its first anchor,
 * that anchor's node. Work over many symbols in name order visits the model all over it; a
 * look ahead hides part of the wait. No effect on the table. */
void gm_symbols_prefetch(const gm_symbols *s, size_t i);
/* The place of symbol `id` in name order (gm_symbols_at's index); -1 for an id not listed. */
int32_t gm_symbols_rank(const gm_symbols *s, size_t id);
int32_t gm_symbols_at(const gm_symbols *s, size_t i);

/* A symbol is named after the anchor that created it: "<node>_out_<i>" / "<node>_in_<i>". */
const char *gm_symbol_name(const gm_symbols *s, int32_t sym, char *buf, size_t cap);
size_t gm_symbol_size(const gm_symbols *s, int32_t sym);
/* Its anchors in list order: first, then next until -1. Anchor ids are opaque. */
int32_t gm_symbol_first(const gm_symbols *s, int32_t sym);
int32_t gm_symbols_next(const gm_symbols *s, int32_t anchor);
gm_anchor gm_symbols_anchor(const gm_symbols *s, int32_t anchor);

#endif
