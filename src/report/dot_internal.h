/*
 * dot_internal.h — what the DOT graph (dot_graph.c) asks of the graph's shape to lay it out
 * (dot_trunk.c): which nodes are sources, and which form the trunk that is drawn straight.
 */
#ifndef GM_DOT_INTERNAL_H
#define GM_DOT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "graphmem/graph.h"

/* Const, Data and Variable: they compute nothing; drawn small, they do not pull the layout. */
bool dot_is_source(const gm_node *n);

/* Per topological index, the node's place on the trunk, or -1: a node of the root graph that
 * computes and that every path of data through the root graph passes (no data edge between
 * computing nodes jumps over it in the topological order), as resnet's Add and Relu between
 * its blocks. Drawn one under another they make a straight spine, with the branches beside
 * it, where Graphviz would otherwise let the graph drift sideways block by block. The place is
 * the node's among the root's computing nodes, so two trunk nodes' places differ by one more
 * than the computing nodes between them. gm_malloc'd (gm_model_node_count entries); NULL out
 * of memory. */
int64_t *dot_trunk(const gm_model *m);

#endif
