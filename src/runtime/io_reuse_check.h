/*
 * io_reuse_check.h — GE's IO address reuse check (reference §6.10). A model compiled with
 * option ge.exec.outputReuseInputMemIndexes ("in,out|in,out ...") promises that output `out`
 * lives in the buffer of input `in`; the compiler records the pairs as the root-graph attribute
 * output_reuse_input_mem_indexes. When the user then hands in his own output buffers, each such
 * output must be the very buffer of its input, or the model would write somewhere the user did
 * not look: the executor checks it before running (CheckIoReuseAddrPairs).
 */
#ifndef GM_IO_REUSE_CHECK_H
#define GM_IO_REUSE_CHECK_H

#include <stddef.h>

#include "graphmem/graph.h"

#define GM_OPTION_OUTPUT_REUSE_INPUT_MEM_INDEXES "ge.exec.outputReuseInputMemIndexes"

typedef struct gm_io_reuse_pair {
    size_t in, out;
} gm_io_reuse_pair;

/* The address of user buffer `index` (an input or an output); ctx is the caller's. */
typedef const void *(*gm_io_addr_getter)(void *ctx, size_t index);

/* CheckIoReuseAddrPairs: for every pair, in < n_in and out < n_out (else GM_ERR_INPUT "param
 * invalid: ..."), and the output's address equals the input's, else GM_ERR_INPUT with GE's
 * message ("Output[o] address(%p) must be same as Input[i] address(%p) because the option
 * 'ge.exec.outputReuseInputMemIndexes' is set with value containing 'i,o', addr reuse check not
 * pass"). Checks nothing (GM_OK) when there are no pairs or the user gave no buffers on either
 * side (a NULL getter or a count of 0): the executor then places the outputs itself. */
gm_status gm_io_reuse_check_pairs(const gm_io_reuse_pair *pairs, size_t n_pairs, gm_io_addr_getter in_addr,
                                  void *in_ctx, size_t n_in, gm_io_addr_getter out_addr, void *out_ctx, size_t n_out,
                                  gm_error *err);

/* Parses the option's text: pairs "in,out" of decimal indexes separated by '|', spaces allowed
 * around numbers; "" gives no pairs. Anything else (empty pair, missing comma, sign, non-digit,
 * overflow, a third number) is GM_ERR_INPUT naming the option, the pair and the text.
 * *pairs is gm_malloc'ed (free with gm_free), NULL when *n is 0. */
gm_status gm_io_reuse_parse_option(const char *text, gm_io_reuse_pair **pairs, size_t *n, gm_error *err);

/* The model's pairs: the root-graph attribute output_reuse_input_mem_indexes (rows [in, out],
 * GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES) where present, else the option's text where set, else
 * none. A row that is not two non-negative ints is GM_ERR_INPUT. */
gm_status gm_io_reuse_pairs_from_model(const gm_model *m, gm_io_reuse_pair **pairs, size_t *n, gm_error *err);

#endif
