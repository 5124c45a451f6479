/*
 * ref.h — which outputs are the same tensor as one of their node's inputs (GE's
 * IsRefFromInput, reference §2.2). Symbols, the layout checker's REFERENCE_OUTPUT and the
 * planner all ask this one function.
 */
#ifndef GM_REF_H
#define GM_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "graphmem/graph.h"

/* True when output `out` of n is input *in of n, by GE's rules, first hit wins:
 *  1. pass-through nodes (NetOutput, While types) and subgraph Data: output i is input i
 *     (a subgraph Data has no input slot in graphmem's IR: *in is 0 and refers to the
 *     parent's input _parent_node_index — see gm_subgraph_data_parent_index);
 *  2. Merge and Reshape: output 0 is input 0; graphmem adds views (ONNX Squeeze, Unsqueeze,
 *     Flatten: the op table's GM_OP_VIEW), which share their input's memory the same way;
 *  3. attr `reference` and an output IR name equal to an input IR name;
 *  4. output desc reuse_input -> reuse_input_index;
 *  5. `_no_padding_continuous_input` or `_no_padding_continuous_output` with
 *     `_output_reuse_input`: every output is input 0. */
bool gm_ref_input_of_output(const gm_node *n, uint32_t out, uint32_t *in);

/* A Data node inside a subgraph: the parent input it reads (_parent_node_index), else -1. */
int64_t gm_subgraph_data_parent_index(const gm_node *n);

#endif
