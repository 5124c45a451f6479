/*
 * attr_table.h — the kinds of the attributes GE defines (reference §9.2). Readers check a
 * known attribute's value against its kind ("wrong attribute kind" is a clear error) and use
 * the kind to type values that the file format leaves ambiguous (a JSON 1 for a float attr).
 */
#ifndef GM_ATTR_TABLE_H
#define GM_ATTR_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "graphmem/graph.h"

/* Where an attribute sits: on a node, on a tensor desc, on a graph. */
typedef enum gm_attr_owner { GM_ATTR_ON_NODE = 1, GM_ATTR_ON_DESC = 2, GM_ATTR_ON_GRAPH = 4 } gm_attr_owner;

/* GE's runtime memory-type numbers (rtMemType) as `_input_memory_type` / `_output_memory_type`
 * carry them; graphmem's gm_mem_type names the ones planning distinguishes. */
#define GM_RT_MEMORY_P2P_DDR INT64_C(0x11)
#define GM_RT_MEMORY_L1 (INT64_C(1) << 16)
#define GM_RT_MEMORY_UB (INT64_C(1) << 17) /* assumed: GE's on-chip buffer type next to L1 */
#define GM_RT_MEMORY_TS INT64_C(0x40)
#define GM_RT_MEMORY_HOST INT64_C(0x81)

/* True when `name` is a known attribute; *kind receives its kind. */
bool gm_attr_known_kind(const char *name, gm_attr_kind *kind);
/* The table's own copy of a known attribute's name (static storage), else NULL. */
const char *gm_attr_known_name(const char *name);
/* The table must stay sorted for its binary search (a test checks). */
bool gm_attr_table_sorted(void);

#endif
