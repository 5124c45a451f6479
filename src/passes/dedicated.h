/*
 * dedicated.h — entry points of GE's dedicated memory-conflict passes (reference §3, GE's
 * compiler/graph/passes/memory_conflict/), one file each, named after GE's pass. pipeline.c
 * registers them; each takes the whole model and walks its graphs itself.
 *
 * GE's order (reference §0): hccl_memcpy, subgraph, inplace_support_check, atomic_addr_clean,
 * (hccl_continuous_memcpy), hccl_memcpy again, memcpy_addr_async, mark_same_addr; and
 * set_io_offset after memory assignment. hccl_memcpy is idempotent, so its second run only
 * acts on what the passes between added.
 */
#ifndef GM_PASSES_DEDICATED_H
#define GM_PASSES_DEDICATED_H

#include "passes/pass_util.h"

gm_status gm_pass_hccl_memcpy(gm_pass_ctx *c);            /* §3.1 HcclMemcpyPass */
gm_status gm_pass_hccl_continuous_memcpy(gm_pass_ctx *c); /* §3.2 HcclContinuousMemcpyPass */
gm_status gm_pass_subgraph(gm_pass_ctx *c);               /* §3.3 SubgraphPass */
gm_status gm_pass_inplace_support_check(gm_pass_ctx *c);  /* §3.4 InplaceSupportCheckPass */
gm_status gm_pass_atomic_addr_clean(gm_pass_ctx *c);      /* §3.5 AtomicAddrCleanPass */
gm_status gm_pass_memcpy_addr_async(gm_pass_ctx *c);      /* §3.6 MemcpyAddrAsyncPass */
gm_status gm_pass_mark_same_addr(gm_pass_ctx *c);         /* §3.7 MarkSameAddrPass */
gm_status gm_pass_set_io_offset(gm_pass_ctx *c);          /* §3.8 SetInputOutputOffsetPass */

/* Shared by §3.1 and §3.2: GE's InsertAssignAfterBroadcastIfNeed. For an HcomBroadcast whose
 * input i was fed by the variable-like `var`:out `var_out` (before a copy was put in between),
 * and when the variable has no assign-like consumer yet, adds Assign `<hccl>_Assign_<i>`
 * (ref <- var, value <- hccl:out i) with control edges to every other consumer of hccl:out i
 * and every control successor of hccl, so the broadcast result is written back to the
 * variable before anyone reads it. */
gm_status gm_pass_assign_after_broadcast(gm_pass_ctx *c, gm_node *hccl, size_t i, gm_node *var, int32_t var_out);

#endif
