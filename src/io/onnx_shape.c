/*
 * onnx_shape.c — shape inference for ONNX models without (complete) value_info: the element
 * type map, the tensor facts and their lattice (unknown < partly known < known; join for
 * control flow, merge with what the file declares), and the dispatch to the op families
 * (onnx_shape_elem.c, onnx_shape_nn.c, onnx_shape_tensor.c).
 *
 * The rule everywhere: what cannot be derived stays unknown (-1 dim, unknown rank, undefined
 * dtype). A wrong static shape would make the memory plan wrong; an unknown one only makes the
 * tensor dynamic.
 */
#include <math.h>
#include <string.h>

#include "io/onnx_internal.h"

/* ---- element types ------------------------------------------------------------------------- */

/* TensorProto.DataType numbers (ONNX 1.12 has up to 16; later versions add the float8/4-bit
 * types, accepted here so newer files read). */
static const struct { int32_t onnx; gm_dtype gm; } k_types[] = {
    {0, GM_DT_UNDEFINED},  {1, GM_DT_FLOAT},       {2, GM_DT_UINT8},          {3, GM_DT_INT8},
    {4, GM_DT_UINT16},     {5, GM_DT_INT16},       {6, GM_DT_INT32},          {7, GM_DT_INT64},
    {8, GM_DT_STRING},     {9, GM_DT_BOOL},        {10, GM_DT_FLOAT16},       {11, GM_DT_DOUBLE},
    {12, GM_DT_UINT32},    {13, GM_DT_UINT64},     {14, GM_DT_COMPLEX64},     {15, GM_DT_COMPLEX128},
    {16, GM_DT_BF16},      {17, GM_DT_FLOAT8_E4M3FN}, {19, GM_DT_FLOAT8_E5M2}, {22, GM_DT_INT4},
    {23, GM_DT_FLOAT4_E2M1}, {24, GM_DT_FLOAT8_E8M0},
};

bool gm_onnx_dtype_to_gm(int32_t onnx, gm_dtype *out)
{
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++) {
        if (k_types[i].onnx == onnx) {
            *out = k_types[i].gm;
            return true;
        }
    }
    return false;
}

int32_t gm_onnx_dtype_from_gm(gm_dtype dt)
{
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++) {
        if (k_types[i].gm == dt) return k_types[i].onnx;
    }
    return 0;
}

/* ---- attributes ---------------------------------------------------------------------------- */

const Onnx__AttributeProto *gm_onnx_attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->attribute[i];
        if (a->name && strcmp(a->name, name) == 0) return a;
    }
    return NULL;
}

int64_t gm_onnx_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = gm_onnx_attr(n, name);
    if (!a) return dflt;
    if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT || a->has_i) return a->i;
    return dflt;
}

const int64_t *gm_onnx_attr_ints(const Onnx__NodeProto *n, const char *name, size_t *count)
{
    const Onnx__AttributeProto *a = gm_onnx_attr(n, name);
    *count = 0;
    if (!a) return NULL;
    if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) { /* a single int where ints are expected */
        *count = 1;
        return &a->i;
    }
    static const int64_t none[1];
    *count = a->n_ints;
    return a->ints ? a->ints : none; /* present but empty: not NULL */
}

/* ---- tensor facts -------------------------------------------------------------------------- */

void gm_onnx_info_unknown(gm_onnx_info *t)
{
    t->dtype = GM_DT_UNDEFINED;
    t->rank = -1;
    t->vkind = GM_ONNX_VAL_NONE;
    t->nval = 0;
}

int64_t gm_onnx_info_numel(const gm_onnx_info *t)
{
    if (t->rank < 0) return -1;
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0) return -1;
        if (__builtin_mul_overflow(n, t->dims[i], &n)) return -1;
    }
    return n;
}

void gm_onnx_info_copy_shape(gm_onnx_info *dst, const gm_onnx_info *src)
{
    dst->dtype = src->dtype;
    dst->rank = src->rank;
    if (src->rank > 0) memcpy(dst->dims, src->dims, (size_t)src->rank * sizeof src->dims[0]);
}

bool gm_onnx_int_values_partial(const gm_onnx_info *t, const int64_t **v, int32_t *n)
{
    if (!t || t->vkind != GM_ONNX_VAL_INT || t->rank > 1) return false;
    *v = t->ival;
    *n = t->nval;
    return true;
}

bool gm_onnx_int_values(const gm_onnx_info *t, const int64_t **v, int32_t *n)
{
    if (!gm_onnx_int_values_partial(t, v, n)) return false;
    for (int32_t i = 0; i < *n; i++) {
        if ((*v)[i] == GM_ONNX_UNKNOWN_VALUE) return false;
    }
    return true;
}

/* Little-endian element i of width w bytes. */
static uint64_t le_at(const uint8_t *p, size_t i, size_t w)
{
    uint64_t v = 0;
    for (size_t k = 0; k < w; k++) v |= (uint64_t)p[i * w + k] << (8 * k);
    return v;
}

/* Values of a small tensor whose data is in the file. */
static void tensor_values(const Onnx__TensorProto *tp, gm_onnx_info *out, int64_t numel)
{
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) return;
    if (numel < 0 || numel > GM_ONNX_MAX_VALUES) return;
    size_t n = (size_t)numel, w = 0;
    bool is_float = false, is_signed = true;
    switch (out->dtype) {
    case GM_DT_INT64: w = 8; break;
    case GM_DT_INT32: w = 4; break;
    case GM_DT_INT16: w = 2; break;
    case GM_DT_INT8: w = 1; break;
    case GM_DT_UINT8: case GM_DT_BOOL: w = 1; is_signed = false; break;
    case GM_DT_UINT16: w = 2; is_signed = false; break;
    case GM_DT_UINT32: w = 4; is_signed = false; break;
    case GM_DT_UINT64: w = 8; is_signed = false; break;
    case GM_DT_FLOAT: w = 4; is_float = true; break;
    case GM_DT_DOUBLE: w = 8; is_float = true; break;
    default: return;
    }
    if (tp->has_raw_data) {
        if (tp->raw_data.len != n * w) return;
        for (size_t i = 0; i < n; i++) {
            uint64_t u = le_at(tp->raw_data.data, i, w);
            if (is_float) {
                if (w == 4) {
                    uint32_t u32 = (uint32_t)u;
                    float f;
                    memcpy(&f, &u32, sizeof f);
                    out->fval[i] = f;
                } else {
                    memcpy(&out->fval[i], &u, sizeof(double));
                }
            } else if (is_signed && w < 8 && (u >> (8 * w - 1)) & 1) {
                out->ival[i] = (int64_t)(u | (~UINT64_C(0) << (8 * w))); /* sign-extend */
            } else if (!is_signed && w == 8 && u > (uint64_t)INT64_MAX) {
                return;
            } else {
                out->ival[i] = (int64_t)u;
            }
        }
    } else if (is_float && out->dtype == GM_DT_FLOAT && tp->n_float_data == n) {
        for (size_t i = 0; i < n; i++) out->fval[i] = tp->float_data[i];
    } else if (is_float && tp->n_double_data == n) {
        for (size_t i = 0; i < n; i++) out->fval[i] = tp->double_data[i];
    } else if (!is_float && out->dtype == GM_DT_INT64 && tp->n_int64_data == n) {
        for (size_t i = 0; i < n; i++) out->ival[i] = tp->int64_data[i];
    } else if (!is_float && w <= 4 && out->dtype != GM_DT_UINT32 && tp->n_int32_data == n) {
        for (size_t i = 0; i < n; i++) out->ival[i] = tp->int32_data[i];
    } else if (!is_float && tp->n_uint64_data == n) {
        for (size_t i = 0; i < n; i++) {
            if (tp->uint64_data[i] > (uint64_t)INT64_MAX) return;
            out->ival[i] = (int64_t)tp->uint64_data[i];
        }
    } else {
        return;
    }
    out->vkind = is_float ? GM_ONNX_VAL_FLOAT : GM_ONNX_VAL_INT;
    out->nval = (int32_t)n;
}

void gm_onnx_info_from_tensor(const Onnx__TensorProto *tp, gm_onnx_info *out)
{
    gm_onnx_info_unknown(out);
    gm_dtype dt;
    if (tp->has_data_type && gm_onnx_dtype_to_gm(tp->data_type, &dt)) out->dtype = dt;
    if (tp->n_dims > GM_ONNX_MAX_RANK) return;
    out->rank = (int32_t)tp->n_dims;
    for (size_t i = 0; i < tp->n_dims; i++) out->dims[i] = tp->dims[i] >= 0 ? tp->dims[i] : -1;
    tensor_values(tp, out, gm_onnx_info_numel(out));
}

void gm_onnx_info_merge_decl(gm_onnx_info *inf, const gm_onnx_info *decl)
{
    if (decl->dtype != GM_DT_UNDEFINED) {
        if (inf->dtype != decl->dtype) inf->vkind = GM_ONNX_VAL_NONE;
        inf->dtype = decl->dtype;
    }
    if (decl->rank < 0) return;
    if (inf->rank != decl->rank) {
        inf->rank = decl->rank;
        memcpy(inf->dims, decl->dims, (size_t)decl->rank * sizeof decl->dims[0]);
        inf->vkind = GM_ONNX_VAL_NONE;
        return;
    }
    for (int32_t i = 0; i < decl->rank; i++) {
        if (decl->dims[i] < 0) continue;
        if (inf->dims[i] >= 0 && inf->dims[i] != decl->dims[i]) inf->vkind = GM_ONNX_VAL_NONE;
        inf->dims[i] = decl->dims[i];
    }
}

static bool values_equal(const gm_onnx_info *a, const gm_onnx_info *b)
{
    if (a->vkind != b->vkind || a->nval != b->nval) return false;
    for (int32_t i = 0; i < a->nval; i++) {
        if (a->vkind == GM_ONNX_VAL_INT ? a->ival[i] != b->ival[i] : a->fval[i] != b->fval[i]) return false;
    }
    return true;
}

void gm_onnx_info_join(gm_onnx_info *a, const gm_onnx_info *b)
{
    if (a->dtype == GM_DT_UNDEFINED) a->dtype = b->dtype;
    else if (b->dtype != GM_DT_UNDEFINED && b->dtype != a->dtype) a->dtype = GM_DT_UNDEFINED;
    if (a->rank != b->rank || b->rank < 0) {
        a->rank = -1;
        a->vkind = GM_ONNX_VAL_NONE;
        return;
    }
    for (int32_t i = 0; i < a->rank; i++) {
        if (a->dims[i] != b->dims[i]) a->dims[i] = -1;
    }
    if (a->vkind == GM_ONNX_VAL_INT && b->vkind == GM_ONNX_VAL_INT && a->nval == b->nval) {
        for (int32_t i = 0; i < a->nval; i++) {
            if (a->ival[i] != b->ival[i]) a->ival[i] = GM_ONNX_UNKNOWN_VALUE;
        }
    } else if (!values_equal(a, b)) {
        a->vkind = GM_ONNX_VAL_NONE;
    }
}

bool gm_onnx_info_same(const gm_onnx_info *a, const gm_onnx_info *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++) {
        if (a->dims[i] != b->dims[i]) return false;
    }
    return a->vkind == GM_ONNX_VAL_NONE ? b->vkind == GM_ONNX_VAL_NONE : values_equal(a, b);
}

/* ---- broadcasting -------------------------------------------------------------------------- */

bool gm_onnx_broadcast(const gm_onnx_info *a, const gm_onnx_info *b, gm_onnx_info *out)
{
    if (a->rank < 0 || b->rank < 0) {
        out->rank = -1;
        return true;
    }
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    int64_t dims[GM_ONNX_MAX_RANK];
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        int64_t d;
        if (da == 1) d = db;
        else if (db == 1) d = da;
        else if (da < 0) d = db; /* db is known and not 1: the unknown one is 1 or equal to it */
        else if (db < 0) d = da;
        else if (da == db) d = da;
        else return false;
        dims[i] = d;
    }
    out->rank = r;
    memcpy(out->dims, dims, (size_t)r * sizeof dims[0]);
    return true;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

void gm_onnx_infer(const Onnx__NodeProto *node, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out,
                   size_t n_out)
{
    for (size_t k = 0; k < n_out; k++) gm_onnx_info_unknown(&out[k]);
    /* Only the standard operator set has rules here; other domains stay unknown. */
    if (node->domain && *node->domain && strcmp(node->domain, "ai.onnx") != 0) return;
    if (!node->op_type || n_out == 0) return;
    if (gm_onnx_infer_elementwise(node, in, n_in, out, n_out)) goto done;
    if (gm_onnx_infer_nn(node, in, n_in, out, n_out)) goto done;
    gm_onnx_infer_tensor(node, in, n_in, out, n_out);
done:
    /* Values only go with the shape they belong to. */
    for (size_t k = 0; k < n_out; k++) {
        gm_onnx_info *o = &out[k];
        if (o->vkind != GM_ONNX_VAL_NONE && gm_onnx_info_numel(o) != o->nval) o->vkind = GM_ONNX_VAL_NONE;
        if (o->rank > GM_ONNX_MAX_RANK) o->rank = -1;
    }
}
