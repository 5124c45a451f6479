/*
 * inplace.h — GE's ProcessInplace (reference §4.1): outputs that may be written straight into
 * the buffer of one of their node's inputs, as the node's `_output_inplace_ability` offers
 * ([[out, in], ...]), when nobody reads that buffer afterwards and sharing it breaks no
 * memory-layout rule. A kept pair becomes reuse_input / reuse_input_index on the output desc,
 * which every later symbol table (gm_symbols_build) follows.
 */
#ifndef GM_INPLACE_H
#define GM_INPLACE_H

#include "passes/pass_util.h"

/* The root-graph attribute (LIST_LIST_INT) naming the model outputs that end up in the buffer
 * of a model input: rows [input index, output index] — the order of GE's option
 * ge.exec.outputReuseInputMemIndexes ("in,out" pairs, reference §6.10), whose model attribute
 * of the same name the runtime checks. The input index is the root Data's `index` attribute
 * (else its position among the root graph's Data nodes), the output index the root NetOutput
 * input. Absent when no output shares a model input's buffer. */
#define GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES "output_reuse_input_mem_indexes"

/* ProcessInplace on the whole model (GetAllNodes order). Every candidate pair is judged on the
 * symbol table as it stands when the pass starts; the kept pairs are applied together, and
 * taken back together when a control-node subgraph (If/Case branch, While body) would then
 * need an Identity (§2.8). Logs "Node %s can inplace, output[%d] can reuse input[%d]" at info
 * level. Inserts nothing and records nothing in the report. Then records
 * GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES on the root graph from the final symbols.
 *
 * Errors: an `_output_inplace_ability` entry that is not an [out, in] pair, or the attribute of
 * another kind, is GM_ERR_INPUT naming the node; out of memory is GM_ERR_NOMEM. On any error
 * the model is left as it was. */
gm_status gm_pass_inplace(gm_pass_ctx *c);

#endif
