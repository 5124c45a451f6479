/*
 * desc.c — tensor descs: dtype, shape, size, memory type, reuse_input. The size rule lives
 * here: an explicit size wins, else dtype width x element count rounded up to whole bytes;
 * an unknown dim makes the tensor dynamic (sized at run time).
 */
#include <string.h>

#include "ir/ir.h"
#include "util/alloc.h"

void gm_desc_init(gm_tensor_desc *d)
{
    memset(d, 0, sizeof *d);
    d->ndims = -1;
}

void gm_desc_fini(gm_tensor_desc *d)
{
    gm_free(d->dims);
    gm_free(d->layout);
    gm_attr_list_free(d->attrs);
    gm_desc_init(d);
}

gm_status gm_desc_copy(gm_tensor_desc *dst, const gm_tensor_desc *src)
{
    gm_tensor_desc t = *src;
    t.dims = NULL;
    t.layout = NULL;
    t.attrs = NULL;
    if (src->ndims > 0 && !(t.dims = gm_malloc((size_t)src->ndims * sizeof(int64_t)))) goto oom;
    if (src->ndims > 0) memcpy(t.dims, src->dims, (size_t)src->ndims * sizeof(int64_t));
    if (src->layout && !(t.layout = gm_strdup(src->layout))) goto oom;
    if (gm_attr_list_clone(&t.attrs, src->attrs) != GM_OK) goto oom;
    gm_desc_fini(dst);
    *dst = t;
    return GM_OK;
oom:
    gm_free(t.dims);
    gm_free(t.layout);
    return GM_ERR_NOMEM;
}

gm_dtype gm_desc_dtype(const gm_tensor_desc *d) { return d->dtype; }
void gm_desc_set_dtype(gm_tensor_desc *d, gm_dtype dt) { d->dtype = dt; }
int32_t gm_desc_ndims(const gm_tensor_desc *d) { return d->ndims; }
const int64_t *gm_desc_dims(const gm_tensor_desc *d) { return d->dims; }

gm_status gm_desc_set_shape(gm_tensor_desc *d, const int64_t *dims, int32_t ndims)
{
    int64_t *nd = NULL;
    if (ndims > 0) {
        nd = gm_malloc((size_t)ndims * sizeof *nd);
        if (!nd) return GM_ERR_NOMEM;
        memcpy(nd, dims, (size_t)ndims * sizeof *nd);
    }
    gm_free(d->dims);
    d->dims = nd;
    d->ndims = ndims < 0 ? -1 : ndims;
    return GM_OK;
}

bool gm_shape_dim_ok(int64_t dim, size_t ndims) { return dim >= -1 || (dim == GM_DIM_UNKNOWN_RANK && ndims == 1); }

int64_t gm_shape_bad_dim(const int64_t *dims, size_t ndims)
{
    for (size_t i = 0; i < ndims; i++) {
        if (!gm_shape_dim_ok(dims[i], ndims)) return (int64_t)i;
    }
    return -1;
}

bool gm_desc_size_given(const gm_tensor_desc *d) { return d->size_given; }

void gm_desc_set_size(gm_tensor_desc *d, int64_t size)
{
    d->size = size;
    d->size_given = true;
}

int64_t gm_desc_size(const gm_tensor_desc *d)
{
    if (d->size_given) return d->size;
    uint64_t elems = 1;
    bool unknown = false;
    for (int32_t i = 0; i < d->ndims; i++) {
        if (d->dims[i] == 0) return 0; /* empty whatever the other dims are */
        if (d->dims[i] < 0) unknown = true;
    }
    if (unknown) return GM_SIZE_DYNAMIC;
    for (int32_t i = 0; i < d->ndims; i++) {
        if (__builtin_mul_overflow(elems, (uint64_t)d->dims[i], &elems)) return -2;
    }
    uint64_t bits;
    if (__builtin_mul_overflow(elems, (uint64_t)gm_dtype_bits(d->dtype), &bits)) return -2;
    uint64_t bytes = bits / 8 + (bits % 8 != 0);
    return bytes > (uint64_t)INT64_MAX ? -2 : (int64_t)bytes;
}

bool gm_desc_size_at_run_time(const gm_tensor_desc *d) { return gm_desc_size(d) < 0; }

bool gm_node_outputs_known(const gm_node *n)
{
    for (uint32_t k = 0; k < n->n_out; k++)
        if (gm_desc_size_at_run_time(&n->out[k].desc)) return false;
    return true;
}

bool gm_graph_shape_known(const gm_graph *g, bool nodes_known)
{
    return nodes_known && !gm_attrs_get_bool(g->attrs, "_dynamic_shape_partitioned", false);
}

gm_mem_type gm_desc_mem_type(const gm_tensor_desc *d) { return d->mem_type; }

void gm_desc_set_mem_type(gm_tensor_desc *d, gm_mem_type mt)
{
    d->mem_type = mt;
    d->mem_type_given = true;
}

bool gm_desc_reuse_input(const gm_tensor_desc *d, int64_t *index)
{
    if (index) *index = d->reuse_input_index;
    return d->reuse_input;
}

void gm_desc_set_reuse_input(gm_tensor_desc *d, bool reuse, int64_t index)
{
    d->reuse_input = reuse;
    d->reuse_input_index = index;
}

const char *gm_desc_layout(const gm_tensor_desc *d) { return d->layout; }

gm_status gm_desc_set_layout(gm_tensor_desc *d, const char *layout)
{
    char *l = layout ? gm_strdup(layout) : NULL;
    if (layout && !l) return GM_ERR_NOMEM;
    gm_free(d->layout);
    d->layout = l;
    return GM_OK;
}

gm_attr **gm_desc_attrs(gm_tensor_desc *d) { return &d->attrs; }

bool gm_desc_is_blank(const gm_tensor_desc *d)
{
    const gm_attr *a = d->attrs;
    while (a && gm_attr_is_kept_proto(a->name)) a = a->next;
    return d->dtype == GM_DT_UNDEFINED && d->ndims < 0 && !d->size_given && !d->mem_type_given && !d->reuse_input &&
           !d->layout && !a;
}
