/*
 * anchor_attrs.h — the memory attributes GE's layout-conflict optimizer gives each anchor
 * (reference §2.3: MarkInTypes / MarkOutTypes), the graph-level flags it decides with (§2.4),
 * and which graphs it processes at all (§2.1, the "top static graphs").
 *
 * An anchor's attributes are a set, kept as a bit mask; GE keeps them as a list in the order
 * it pushed them, and that order decides which attribute pair a checker meets first. The push
 * order is fixed per direction (gm_lt_in_order / gm_lt_out_order), so the mask and the order
 * together give GE's list back.
 */
#ifndef GM_ANCHOR_ATTRS_H
#define GM_ANCHOR_ATTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"

/* GE's enum order: the numbers index the tables and the registry. */
typedef enum gm_lt {
    GM_LT_USER_IN = 0,   /* USER_MEMORY_INPUT: output of a Data-type node of the processed graph */
    GM_LT_USER_OUT,      /* USER_MEMORY_OUTPUT: input of the processed graph's NetOutput */
    GM_LT_IMMUTABLE_OUT, /* IMMUTABLE_ADDRESS_OUTPUT: output of a constant or a variable */
    GM_LT_UNSUP_OUT,     /* UNSUPPORTED_ADDRESS_REFRESH_OPERATOR_OUTPUT */
    GM_LT_UNSUP_IN,      /* UNSUPPORTED_ADDRESS_REFRESH_OPERATOR_INPUT */
    GM_LT_CONT_IN,       /* CONTINUOUS_INPUT */
    GM_LT_CONT_OUT,      /* CONTINUOUS_OUTPUT */
    GM_LT_NOPAD_IN,      /* NOPADDING_CONTINUOUS_INPUT */
    GM_LT_NOPAD_OUT,     /* NOPADDING_CONTINUOUS_OUTPUT */
    GM_LT_RTS_IN,        /* RTS_SPECIAL_TYPE_INPUT: input in special (p2p, ts) memory */
    GM_LT_RTS_OUT,       /* RTS_SPECIAL_TYPE_OUTPUT */
    GM_LT_REF_OUT,       /* REFERENCE_OUTPUT: the output is one of the node's inputs */
    GM_LT_NORMAL_IN,     /* NORMAL_INPUT: none of the above */
    GM_LT_NORMAL_OUT,    /* NORMAL_OUTPUT */
    GM_LT_COUNT          /* GE's RESERVED */
} gm_lt;

typedef uint16_t gm_lt_mask; /* bit t = attribute t */
#define GM_LT_BIT(t) ((gm_lt_mask)(1u << (t)))

/* GE's names ("USER_MEMORY_INPUT" ...); "RESERVED" for GM_LT_COUNT and beyond. */
const char *gm_lt_name(gm_lt t);

/* The order GE pushes attributes in (MarkInTypes, MarkOutTypes). */
extern const gm_lt gm_lt_in_order[6];
extern const gm_lt gm_lt_out_order[8];

/* The mask as GE's ordered list: writes up to cap types into v, returns how many the mask has. */
size_t gm_lt_list(gm_lt_mask mask, bool out, gm_lt *v, size_t cap);
/* "[USER_MEMORY_INPUT, IMMUTABLE_ADDRESS_OUTPUT]" (GE's type-list print) into buf. */
const char *gm_lt_list_str(gm_lt_mask mask, bool out, char *buf, size_t cap);

/* ---- graph flags (§2.4) ------------------------------------------------------------------ */

typedef struct gm_layout_flags {
    bool root_static;           /* is_root_graph_static */
    bool fm_refreshable;        /* is_feature_map_refreshable */
    bool user_in_nopad_cont_out; /* is_support_user_input_nopadding_continuous_output */
    bool physical_refreshable;  /* is_physical_memory_refreshable (static memory policy 4) */
} gm_layout_flags;

/* IsStaticGraph: not `_dynamic_shape_partitioned` and of known shape (graphmem reads GE's
 * unknown-shape flag as "some output of the graph's own nodes has no compile-time size"). */
bool gm_layout_graph_is_static(const gm_graph *g);

/* The flags GE computes for processing g:
 *  - fm_refreshable: option ge.featureBaseRefreshable == "1", else the root is not static
 *    and g is of known shape;
 *  - user_in_nopad_cont_out: not (ge.buildGraphMode == "offline" or bool graph attr
 *    `_single_op_scene` on g or on the root); graphmem has no heterogeneous deployment;
 *  - physical_refreshable: ge.exec.staticMemoryPolicy == "4". */
gm_layout_flags gm_layout_flags_for(const gm_graph *g);

/* The graphs the optimizer processes (§2.1): the root when it is static; else every static
 * subgraph whose parent node sits in a graph that is not static, in the model's graph order.
 * *out (free with gm_free) receives *n of them; each graph's shape is looked at once. */
gm_status gm_layout_top_static_graphs(const gm_model *m, gm_graph ***out, size_t *n, gm_error *err);

/* ---- marking (§2.3) ---------------------------------------------------------------------- */

/* IsAddressRefreshable: false for StreamSwitch / LabelSwitchByIndex, and for a collective
 * that cannot refresh addresses (graphmem's op table marks every Hcom op so) when the feature
 * map of its graph is not refreshable. */
bool gm_layout_addr_refreshable(const gm_node *n, const gm_layout_flags *f);
/* IsPhysicalAddressRefreshable: false only for StreamSwitch / LabelSwitchByIndex. */
bool gm_layout_phys_refreshable(const gm_node *n);

/* GE's rtMemType of an anchor: `_input_memory_type`[i] / `_output_memory_type`[k] when the
 * list has that entry, else the desc's memory type (hbm 0, p2p RT_MEMORY_P2P_DDR, ts
 * RT_MEMORY_TS, host RT_MEMORY_HOST). */
int64_t gm_layout_mem_type(const gm_node *n, bool out, uint32_t index);
/* MemTypeUtils::IsMemoryTypeSpecial: every type but default (0), HBM (2) and DDR (4). */
bool gm_layout_mem_type_special(int64_t rt);

/* MarkInTypes for input i of n, processing graph g. */
gm_lt_mask gm_layout_in_types(const gm_graph *g, const gm_layout_flags *f, const gm_node *n, uint32_t i);
/* MarkOutTypes for output k of n, processing graph g. ref_from_var: IsRefFromVar holds (the
 * output names a var by ref_var_src_var_name whose output 0 is in the same symbol): the caller
 * knows the symbol. */
gm_lt_mask gm_layout_out_types(const gm_graph *g, const gm_layout_flags *f, const gm_node *n, uint32_t k,
                               bool ref_from_var);
/* The node that output k names by `ref_var_src_var_name` (any type), NULL when none. */
gm_node *gm_layout_ref_var_node(const gm_node *n, uint32_t k);

/* Node classes the checkers share (GE's MemLayoutConflictUtil predicates). */
bool gm_layout_needs_cont_in(const gm_node *n);   /* continuous_input */
bool gm_layout_needs_nopad_in(const gm_node *n);  /* _no_padding_continuous_input */
bool gm_layout_needs_cont_out(const gm_node *n);  /* continuous_output */
bool gm_layout_needs_nopad_out(const gm_node *n); /* _no_padding_continuous_output */

#endif
