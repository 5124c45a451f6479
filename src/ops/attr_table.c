/* attr_table.c — kinds of GE's memory-relevant attributes (reference §9.2), sorted by name. */
#include <stdlib.h>
#include <string.h>

#include "ops/attr_table.h"

typedef struct { const char *name; gm_attr_kind kind; } attr_kind_entry;

/* Keep sorted by strcmp order (a test checks). */
static const attr_kind_entry k_attrs[] = {
    {"_alloc_fixed_addr", GM_ATTR_STRING},
    {"_alloc_fixed_addr_index", GM_ATTR_INT},
    {"_batch_label", GM_ATTR_STRING},
    {"_cannot_be_deleted", GM_ATTR_BOOL},
    {"_dynamic_shape_partitioned", GM_ATTR_BOOL},
    {"_gm_carried_outputs", GM_ATTR_INT}, /* graphmem's: a loop's carried outputs (op_table.h) */
    {"_gm_input_offsets", GM_ATTR_LIST_INT},
    {"_gm_output_offsets", GM_ATTR_LIST_INT},
    {"_gm_workspace_bytes", GM_ATTR_LIST_INT},
    {"_gm_workspace_offsets", GM_ATTR_LIST_INT},
    {"_inplace_support_input_index", GM_ATTR_INT},
    {"_input_memory_type", GM_ATTR_LIST_INT},
    {"_input_mutable", GM_ATTR_BOOL},
    {"_mem_release_first_reuse_first", GM_ATTR_BOOL},
    {"_next_iteration_node", GM_ATTR_STRING},
    {"_no_padding_continuous_input", GM_ATTR_BOOL},
    {"_no_padding_continuous_output", GM_ATTR_BOOL},
    {"_no_task", GM_ATTR_BOOL},
    {"_output_inplace_ability", GM_ATTR_LIST_LIST_INT},
    {"_output_memory_type", GM_ATTR_LIST_INT},
    {"_output_reuse_input", GM_ATTR_BOOL},
    {"_parent_node_index", GM_ATTR_INT},
    {"_reuse_input_on_dim_index", GM_ATTR_INT},
    {"_single_op_scene", GM_ATTR_BOOL},
    {"_skip_rw_conflict", GM_ATTR_BOOL},
    {"_special_input_size", GM_ATTR_INT},
    {"_stream_label", GM_ATTR_STRING},
    {"atomic_input_index", GM_ATTR_LIST_INT},
    {"atomic_output_index", GM_ATTR_LIST_INT},
    {"continuous_input", GM_ATTR_BOOL},
    {"continuous_output", GM_ATTR_BOOL},
    {"index", GM_ATTR_INT},
    {"is_atomic_node", GM_ATTR_BOOL},
    {"need_gentask_atomic", GM_ATTR_BOOL},
    {"no_need_constant_folding", GM_ATTR_BOOL},
    {"ref_var_src_var_name", GM_ATTR_STRING},
    {"reference", GM_ATTR_BOOL},
    {"zero_copy_basic_offset", GM_ATTR_LIST_INT},
    {"zero_copy_relative_offset", GM_ATTR_LIST_INT},
};

static int cmp_name(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const attr_kind_entry *)elem)->name);
}

static const attr_kind_entry *lookup(const char *name)
{
    return bsearch(name, k_attrs, sizeof k_attrs / sizeof k_attrs[0], sizeof k_attrs[0], cmp_name);
}

bool gm_attr_known_kind(const char *name, gm_attr_kind *kind)
{
    const attr_kind_entry *e = lookup(name);
    if (!e) return false;
    *kind = e->kind;
    return true;
}

const char *gm_attr_known_name(const char *name)
{
    const attr_kind_entry *e = lookup(name);
    return e ? e->name : NULL;
}

bool gm_attr_table_sorted(void)
{
    for (size_t i = 1; i < sizeof k_attrs / sizeof k_attrs[0]; i++) {
        if (strcmp(k_attrs[i - 1].name, k_attrs[i].name) >= 0) return false;
    }
    return true;
}
