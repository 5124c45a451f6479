/*
 * onnx_shape_tensor.c — shape inference for the ONNX ops that move, cut and make tensors:
 * Constant, Shape, Size, Reshape, Flatten, (Un)Squeeze, Transpose, Gather*, Slice, Concat,
 * Split, Expand, Tile, Pad, Resize, ConstantOfShape, Range, NonZero, OneHot and friends.
 *
 * These ops also carry known values of small integer tensors along (Shape of a known shape,
 * Gather / Slice / Concat / (Un)Squeeze of known values), so a Reshape whose target was
 * computed from Shape gets a static shape.
 */
#include <math.h>
#include <string.h>

#include "io/onnx_internal.h"

static bool op_is(const Onnx__NodeProto *n, const char *op) { return strcmp(n->op_type, op) == 0; }

/* Input i when present. */
static const gm_onnx_info *input(const gm_onnx_info *const *in, size_t n_in, size_t i)
{
    return i < n_in ? in[i] : NULL;
}

/* Known int values of input i. */
static bool int_vals(const gm_onnx_info *const *in, size_t n_in, size_t i, const int64_t **v, int32_t *n)
{
    return gm_onnx_int_values(input(in, n_in, i), v, n);
}

/* Axis in [0, rank) or -1. */
static int64_t norm_axis(int64_t axis, int32_t rank)
{
    if (axis < 0) axis += rank;
    return axis >= 0 && axis < rank ? axis : -1;
}

static void set_values_from(gm_onnx_info *out, const gm_onnx_info *src)
{
    out->vkind = src->vkind;
    out->nval = src->nval;
    memcpy(out->ival, src->ival, sizeof src->ival);
    memcpy(out->fval, src->fval, sizeof src->fval);
}

/* Sets a 1-D int64 result with known values. */
static void set_int_vector(gm_onnx_info *out, const int64_t *v, int32_t n)
{
    out->dtype = GM_DT_INT64;
    out->rank = 1;
    out->dims[0] = n;
    if (n <= GM_ONNX_MAX_VALUES) {
        memcpy(out->ival, v, (size_t)n * sizeof *v);
        for (int32_t i = 0; i < n; i++) out->fval[i] = (double)v[i];
        out->vkind = GM_ONNX_VAL_INT;
        out->nval = n;
    }
}

/* ---- Constant, Shape, Size ----------------------------------------------------------------- */

static void infer_constant(const Onnx__NodeProto *n, gm_onnx_info *out)
{
    const Onnx__AttributeProto *a;
    size_t k;
    if ((a = gm_onnx_attr(n, "value")) && a->t) {
        gm_onnx_info_from_tensor(a->t, out);
    } else if ((a = gm_onnx_attr(n, "sparse_value")) && a->sparse_tensor) {
        const Onnx__SparseTensorProto *sp = a->sparse_tensor;
        gm_dtype dt;
        if (sp->values && sp->values->has_data_type && gm_onnx_dtype_to_gm(sp->values->data_type, &dt)) out->dtype = dt;
        if (sp->n_dims <= GM_ONNX_MAX_RANK) {
            out->rank = (int32_t)sp->n_dims;
            for (k = 0; k < sp->n_dims; k++) out->dims[k] = sp->dims[k] >= 0 ? sp->dims[k] : -1;
        }
    } else if ((a = gm_onnx_attr(n, "value_int"))) {
        out->dtype = GM_DT_INT64;
        out->rank = 0;
        out->ival[0] = a->i;
        out->fval[0] = (double)a->i;
        out->vkind = GM_ONNX_VAL_INT;
        out->nval = 1;
    } else if ((a = gm_onnx_attr(n, "value_ints"))) {
        set_int_vector(out, a->ints, (int32_t)(a->n_ints > INT32_MAX ? INT32_MAX : a->n_ints));
    } else if ((a = gm_onnx_attr(n, "value_float"))) {
        out->dtype = GM_DT_FLOAT;
        out->rank = 0;
        out->fval[0] = a->f;
        out->vkind = GM_ONNX_VAL_FLOAT;
        out->nval = 1;
    } else if ((a = gm_onnx_attr(n, "value_floats"))) {
        out->dtype = GM_DT_FLOAT;
        out->rank = 1;
        out->dims[0] = (int64_t)a->n_floats;
        if (a->n_floats <= GM_ONNX_MAX_VALUES) {
            for (k = 0; k < a->n_floats; k++) out->fval[k] = a->floats[k];
            out->vkind = GM_ONNX_VAL_FLOAT;
            out->nval = (int32_t)a->n_floats;
        }
    } else if ((a = gm_onnx_attr(n, "value_string"))) {
        out->dtype = GM_DT_STRING;
        out->rank = 0;
    } else if ((a = gm_onnx_attr(n, "value_strings"))) {
        out->dtype = GM_DT_STRING;
        out->rank = 1;
        out->dims[0] = (int64_t)a->n_strings;
    }
}

static void infer_shape(const Onnx__NodeProto *n, const gm_onnx_info *x, gm_onnx_info *out)
{
    out->dtype = GM_DT_INT64;
    out->rank = 1;
    out->dims[0] = -1;
    if (!x || x->rank < 0) return;
    int64_t start = gm_onnx_attr_int(n, "start", 0), end = gm_onnx_attr_int(n, "end", x->rank);
    if (start < 0) start += x->rank;
    if (end < 0) end += x->rank;
    start = start < 0 ? 0 : start > x->rank ? x->rank : start;
    end = end < 0 ? 0 : end > x->rank ? x->rank : end;
    int32_t len = end > start ? (int32_t)(end - start) : 0;
    out->dims[0] = len;
    /* Unknown dims become unknown elements: the known ones still feed shape arithmetic. */
    int64_t v[GM_ONNX_MAX_RANK];
    for (int32_t i = 0; i < len; i++) v[i] = x->dims[start + i] >= 0 ? x->dims[start + i] : GM_ONNX_UNKNOWN_VALUE;
    set_int_vector(out, v, len);
}

/* ---- Reshape family ------------------------------------------------------------------------ */

static void infer_reshape(const Onnx__NodeProto *n, const gm_onnx_info *x, const gm_onnx_info *shape,
                          gm_onnx_info *out)
{
    out->dtype = x->dtype;
    const int64_t *sv;
    int32_t ns;
    if (!gm_onnx_int_values_partial(shape, &sv, &ns)) {
        /* The target is computed at run time: only its length tells the rank. */
        if (shape && shape->rank == 1 && shape->dims[0] >= 0 && shape->dims[0] <= GM_ONNX_MAX_RANK) {
            out->rank = (int32_t)shape->dims[0];
            for (int32_t i = 0; i < out->rank; i++) out->dims[i] = -1;
        }
        return;
    }
    bool allowzero = gm_onnx_attr_int(n, "allowzero", 0) != 0;
    int32_t infer_at = -1;
    int64_t known = 1;
    bool all_known = true;
    out->rank = ns;
    for (int32_t i = 0; i < ns; i++) {
        int64_t d = sv[i];
        if (d == GM_ONNX_UNKNOWN_VALUE) d = -2; /* an unknown dim, not the one to infer */
        else if (d == 0 && !allowzero) d = x->rank > i ? x->dims[i] : -1;
        else if (d == -1) {
            if (infer_at >= 0) return; /* two -1: invalid */
            infer_at = i;
        } else if (d < -2) {
            out->rank = -1;
            return;
        }
        if (d == -2) d = -1;
        out->dims[i] = d;
        if (i != infer_at) {
            if (d < 0) all_known = false;
            else if (__builtin_mul_overflow(known, d, &known)) all_known = false;
        }
    }
    if (infer_at >= 0) {
        int64_t total = gm_onnx_info_numel(x);
        out->dims[infer_at] = all_known && total >= 0 && known > 0 && total % known == 0 ? total / known : -1;
    }
    if (x->vkind != GM_ONNX_VAL_NONE) set_values_from(out, x);
}

static int64_t dims_product(const gm_onnx_info *x, int32_t from, int32_t to)
{
    int64_t p = 1;
    for (int32_t i = from; i < to; i++) {
        if (x->dims[i] < 0 || __builtin_mul_overflow(p, x->dims[i], &p)) return -1;
    }
    return p;
}

static void infer_flatten(const Onnx__NodeProto *n, const gm_onnx_info *x, gm_onnx_info *out)
{
    out->dtype = x->dtype;
    out->rank = 2;
    out->dims[0] = out->dims[1] = -1;
    if (x->rank < 0) return;
    int64_t axis = gm_onnx_attr_int(n, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank) return;
    out->dims[0] = dims_product(x, 0, (int32_t)axis);
    out->dims[1] = dims_product(x, (int32_t)axis, x->rank);
    if (x->vkind != GM_ONNX_VAL_NONE) set_values_from(out, x);
}

/* Axes from the `axes` attribute or input 1; false when there are axes but they are unknown. */
static bool get_axes(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, const int64_t **axes,
                     int32_t *na)
{
    size_t count;
    *axes = gm_onnx_attr_ints(n, "axes", &count);
    *na = (int32_t)(count > GM_ONNX_MAX_RANK ? GM_ONNX_MAX_RANK + 1 : count);
    if (*axes) return true;
    if (!input(in, n_in, 1)) {
        *na = 0;
        return true;
    }
    return int_vals(in, n_in, 1, axes, na);
}

static void infer_squeeze(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out)
{
    const gm_onnx_info *x = in[0];
    out->dtype = x->dtype;
    const int64_t *axes;
    int32_t na;
    if (x->rank < 0 || !get_axes(n, in, n_in, &axes, &na)) return;
    bool drop[GM_ONNX_MAX_RANK] = {false};
    if (na == 0) {
        for (int32_t i = 0; i < x->rank; i++) {
            if (x->dims[i] < 0) return; /* it might be 1: the rank is unknown */
            drop[i] = x->dims[i] == 1;
        }
    }
    for (int32_t i = 0; i < na; i++) {
        int64_t ax = norm_axis(axes[i], x->rank);
        if (ax < 0) return;
        drop[ax] = true;
    }
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (!drop[i]) out->dims[r++] = x->dims[i];
    }
    out->rank = r;
    if (x->vkind != GM_ONNX_VAL_NONE) set_values_from(out, x);
}

static void infer_unsqueeze(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in,
                            gm_onnx_info *out)
{
    const gm_onnx_info *x = in[0];
    out->dtype = x->dtype;
    const int64_t *axes;
    int32_t na;
    if (x->rank < 0 || !get_axes(n, in, n_in, &axes, &na)) return;
    int32_t r = x->rank + na;
    if (r > GM_ONNX_MAX_RANK) return;
    bool added[GM_ONNX_MAX_RANK] = {false};
    for (int32_t i = 0; i < na; i++) {
        int64_t ax = norm_axis(axes[i], r);
        if (ax < 0 || added[ax]) return;
        added[ax] = true;
    }
    for (int32_t i = 0, j = 0; i < r; i++) out->dims[i] = added[i] ? 1 : x->dims[j++];
    out->rank = r;
    if (x->vkind != GM_ONNX_VAL_NONE) set_values_from(out, x);
}

static void infer_transpose(const Onnx__NodeProto *n, const gm_onnx_info *x, gm_onnx_info *out)
{
    out->dtype = x->dtype;
    if (x->rank < 0) return;
    size_t np;
    const int64_t *perm = gm_onnx_attr_ints(n, "perm", &np);
    if (perm && np != (size_t)x->rank) return;
    bool used[GM_ONNX_MAX_RANK] = {false};
    for (int32_t i = 0; i < x->rank; i++) {
        int64_t p = perm ? perm[i] : x->rank - 1 - i;
        if (p < 0 || p >= x->rank || used[p]) return;
        used[p] = true;
        out->dims[i] = x->dims[p];
    }
    out->rank = x->rank;
    if (x->rank <= 1 && x->vkind != GM_ONNX_VAL_NONE) set_values_from(out, x);
}

/* ---- gathering and cutting ----------------------------------------------------------------- */

static void infer_gather(const Onnx__NodeProto *n, const gm_onnx_info *x, const gm_onnx_info *idx,
                         gm_onnx_info *out)
{
    out->dtype = x->dtype;
    if (x->rank < 1 || !idx || idx->rank < 0) return;
    int64_t axis = norm_axis(gm_onnx_attr_int(n, "axis", 0), x->rank);
    if (axis < 0) return;
    int32_t r = x->rank + idx->rank - 1;
    if (r > GM_ONNX_MAX_RANK) return;
    int32_t k = 0;
    for (int32_t i = 0; i < axis; i++) out->dims[k++] = x->dims[i];
    for (int32_t i = 0; i < idx->rank; i++) out->dims[k++] = idx->dims[i];
    for (int32_t i = (int32_t)axis + 1; i < x->rank; i++) out->dims[k++] = x->dims[i];
    out->rank = r;
    /* Values: picking elements of a known vector by known indices. */
    if (x->rank == 1 && x->vkind != GM_ONNX_VAL_NONE && idx->vkind == GM_ONNX_VAL_INT && idx->rank <= 1) {
        for (int32_t i = 0; i < idx->nval; i++) {
            if (idx->ival[i] == GM_ONNX_UNKNOWN_VALUE) {
                if (x->vkind != GM_ONNX_VAL_INT) return;
                out->ival[i] = GM_ONNX_UNKNOWN_VALUE;
                continue;
            }
            int64_t j = idx->ival[i] < 0 ? idx->ival[i] + x->nval : idx->ival[i];
            if (j < 0 || j >= x->nval) return;
            out->ival[i] = x->ival[j];
            out->fval[i] = x->fval[j];
        }
        out->vkind = x->vkind;
        out->nval = idx->nval;
    }
}

static void infer_gather_nd(const Onnx__NodeProto *n, const gm_onnx_info *x, const gm_onnx_info *idx,
                            gm_onnx_info *out)
{
    out->dtype = x->dtype;
    if (x->rank < 0 || !idx || idx->rank < 1) return;
    int64_t b = gm_onnx_attr_int(n, "batch_dims", 0), m = idx->dims[idx->rank - 1];
    if (m < 0 || b < 0 || b + m > x->rank) return;
    int32_t r = idx->rank - 1 + x->rank - (int32_t)(b + m);
    if (r > GM_ONNX_MAX_RANK) return;
    int32_t k = 0;
    for (int32_t i = 0; i < idx->rank - 1; i++) out->dims[k++] = idx->dims[i];
    for (int32_t i = (int32_t)(b + m); i < x->rank; i++) out->dims[k++] = x->dims[i];
    out->rank = r;
}

/* Elements of a slice [start, end) by step over a dim of size d (known). */
static int64_t slice_len(int64_t d, int64_t start, int64_t end, int64_t step, int64_t *first)
{
    if (start < 0) start += d;
    if (end < 0) end += d;
    if (step > 0) {
        start = start < 0 ? 0 : start > d ? d : start;
        end = end < 0 ? 0 : end > d ? d : end;
        *first = start;
        return end > start ? (end - start + step - 1) / step : 0;
    }
    start = start < 0 ? 0 : start > d - 1 ? d - 1 : start;
    end = end < -1 ? -1 : end > d - 1 ? d - 1 : end;
    *first = start;
    return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

static void infer_slice(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out)
{
    const gm_onnx_info *x = in[0];
    out->dtype = x->dtype;
    if (x->rank < 0) return;
    gm_onnx_info_copy_shape(out, x);
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    int32_t ns = 0, ne = 0, na = 0, nst = 0;
    size_t c1, c2, c3;
    bool from_attrs = gm_onnx_attr(n, "starts") != NULL;
    bool known;
    if (from_attrs) { /* opset < 10 */
        starts = gm_onnx_attr_ints(n, "starts", &c1);
        ends = gm_onnx_attr_ints(n, "ends", &c2);
        axes = gm_onnx_attr_ints(n, "axes", &c3);
        ns = (int32_t)c1;
        ne = (int32_t)c2;
        na = (int32_t)c3;
        known = c1 <= GM_ONNX_MAX_RANK && c2 <= GM_ONNX_MAX_RANK && c3 <= GM_ONNX_MAX_RANK;
    } else {
        known = int_vals(in, n_in, 1, &starts, &ns) && int_vals(in, n_in, 2, &ends, &ne) &&
                (!input(in, n_in, 3) || int_vals(in, n_in, 3, &axes, &na)) &&
                (!input(in, n_in, 4) || int_vals(in, n_in, 4, &steps, &nst));
    }
    if (!known || ns != ne || (axes && na != ns) || (steps && nst != ns)) {
        /* Which axes are cut may be known even when the bounds are not. */
        const int64_t *ax;
        int32_t nax;
        if (!from_attrs && int_vals(in, n_in, 3, &ax, &nax)) {
            for (int32_t i = 0; i < nax; i++) {
                int64_t a = norm_axis(ax[i], x->rank);
                if (a >= 0) out->dims[a] = -1;
            }
        } else {
            for (int32_t i = 0; i < x->rank; i++) out->dims[i] = -1;
        }
        return;
    }
    int64_t first0 = 0, step0 = 1;
    for (int32_t i = 0; i < ns; i++) {
        int64_t a = norm_axis(axes ? axes[i] : i, x->rank), step = steps ? steps[i] : 1;
        if (a < 0 || step == 0) {
            out->rank = -1;
            return;
        }
        int64_t d = x->dims[a], first = 0;
        out->dims[a] = d >= 0 ? slice_len(d, starts[i], ends[i], step, &first) : -1;
        if (a == 0) {
            first0 = first;
            step0 = step;
        }
    }
    int64_t last = out->dims[0] > 0 ? first0 + (out->dims[0] - 1) * step0 : first0;
    if (x->rank == 1 && x->vkind != GM_ONNX_VAL_NONE && out->dims[0] >= 0 && first0 >= 0 && last >= 0 &&
        (out->dims[0] == 0 || (first0 < x->nval && last < x->nval))) {
        for (int64_t i = 0; i < out->dims[0]; i++) {
            out->ival[i] = x->ival[first0 + i * step0];
            out->fval[i] = x->fval[first0 + i * step0];
        }
        out->vkind = x->vkind;
        out->nval = (int32_t)out->dims[0];
    }
}

static void infer_concat(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out)
{
    int32_t rank = -1;
    for (size_t i = 0; i < n_in; i++) {
        if (!in[i]) continue;
        if (out->dtype == GM_DT_UNDEFINED) out->dtype = in[i]->dtype;
        if (in[i]->rank >= 0) rank = in[i]->rank;
    }
    if (rank < 1) return;
    int64_t axis = norm_axis(gm_onnx_attr_int(n, "axis", 0), rank);
    if (axis < 0) return;
    for (int32_t d = 0; d < rank; d++) out->dims[d] = d == axis ? 0 : -1;
    bool values = true;
    int32_t nv = 0;
    for (size_t i = 0; i < n_in; i++) {
        const gm_onnx_info *t = in[i];
        if (!t) continue;
        if (t->rank < 0) {
            out->dims[axis] = -1;
            values = false;
            continue;
        }
        if (t->rank != rank) return;
        for (int32_t d = 0; d < rank; d++) {
            if (d == axis) {
                if (t->dims[d] < 0 || out->dims[d] < 0) out->dims[d] = -1;
                else out->dims[d] += t->dims[d];
            } else if (out->dims[d] < 0) {
                out->dims[d] = t->dims[d];
            }
        }
        if (rank != 1 || t->vkind == GM_ONNX_VAL_NONE || nv + t->nval > GM_ONNX_MAX_VALUES ||
            (nv && t->vkind != out->vkind)) {
            values = false;
        } else {
            memcpy(out->ival + nv, t->ival, (size_t)t->nval * sizeof t->ival[0]);
            memcpy(out->fval + nv, t->fval, (size_t)t->nval * sizeof t->fval[0]);
            out->vkind = t->vkind;
            nv += t->nval;
        }
    }
    out->rank = rank;
    out->nval = nv;
    if (!values) out->vkind = GM_ONNX_VAL_NONE;
}

static void infer_split(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out,
                        size_t n_out)
{
    const gm_onnx_info *x = in[0];
    for (size_t k = 0; k < n_out; k++) out[k].dtype = x->dtype;
    if (x->rank < 0) return;
    int64_t axis = norm_axis(gm_onnx_attr_int(n, "axis", 0), x->rank);
    if (axis < 0) return;
    int64_t d = x->dims[axis];
    size_t nsz;
    const int64_t *sizes = gm_onnx_attr_ints(n, "split", &nsz);
    int32_t nv;
    if (!sizes && input(in, n_in, 1)) {
        if (!int_vals(in, n_in, 1, &sizes, &nv)) sizes = NULL, nsz = (size_t)-1;
        else nsz = (size_t)nv;
    }
    int64_t offset = 0;
    for (size_t k = 0; k < n_out; k++) {
        gm_onnx_info_copy_shape(&out[k], x);
        int64_t len = -1;
        if (sizes && nsz == n_out) {
            len = sizes[k];
        } else if (!sizes && nsz != (size_t)-1 && d >= 0) {
            int64_t chunk = (d + (int64_t)n_out - 1) / (int64_t)n_out; /* the last one takes the rest */
            len = k + 1 < n_out ? chunk : d - chunk * (int64_t)(n_out - 1);
            if (len < 0) len = -1;
        }
        out[k].dims[axis] = len;
        if (x->rank == 1 && x->vkind != GM_ONNX_VAL_NONE && len >= 0 && offset >= 0 && offset + len <= x->nval) {
            memcpy(out[k].ival, x->ival + offset, (size_t)len * sizeof x->ival[0]);
            memcpy(out[k].fval, x->fval + offset, (size_t)len * sizeof x->fval[0]);
            out[k].vkind = x->vkind;
            out[k].nval = (int32_t)len;
        }
        offset = len >= 0 && offset >= 0 ? offset + len : -1;
    }
}

/* ---- making and growing tensors ------------------------------------------------------------ */

/* A shape given as known values (each >= 0 or -1), or only its length. */
static void shape_from_values(const gm_onnx_info *s, gm_onnx_info *out)
{
    const int64_t *v;
    int32_t nv;
    if (gm_onnx_int_values_partial(s, &v, &nv) && nv <= GM_ONNX_MAX_RANK) {
        out->rank = nv;
        for (int32_t i = 0; i < nv; i++) out->dims[i] = v[i] >= 0 ? v[i] : -1;
    } else if (s && s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= GM_ONNX_MAX_RANK) {
        out->rank = (int32_t)s->dims[0];
        for (int32_t i = 0; i < out->rank; i++) out->dims[i] = -1;
    }
}

static void infer_expand(const gm_onnx_info *x, const gm_onnx_info *s, gm_onnx_info *out)
{
    out->dtype = x->dtype;
    gm_onnx_info target;
    gm_onnx_info_unknown(&target);
    shape_from_values(s, &target);
    if (target.rank < 0 || x->rank < 0) return;
    if (!gm_onnx_broadcast(x, &target, out)) out->rank = -1;
}

static void infer_tile(const gm_onnx_info *x, const gm_onnx_info *reps, gm_onnx_info *out)
{
    out->dtype = x->dtype;
    if (x->rank < 0) return;
    gm_onnx_info_copy_shape(out, x);
    const int64_t *r;
    int32_t nr;
    bool known = gm_onnx_int_values(reps, &r, &nr) && nr == x->rank;
    for (int32_t i = 0; i < x->rank; i++) {
        int64_t p;
        out->dims[i] = known && x->dims[i] >= 0 && r[i] >= 0 && !__builtin_mul_overflow(x->dims[i], r[i], &p) ? p : -1;
    }
}

static void infer_pad(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out)
{
    const gm_onnx_info *x = in[0];
    out->dtype = x->dtype;
    if (x->rank < 0) return;
    gm_onnx_info_copy_shape(out, x);
    size_t np;
    const int64_t *pads = gm_onnx_attr_ints(n, "pads", &np), *axes = NULL;
    int32_t nv = 0, na = x->rank;
    if (!pads && !int_vals(in, n_in, 1, &pads, &nv)) pads = NULL;
    else if (!gm_onnx_attr(n, "pads")) np = (size_t)nv;
    if (input(in, n_in, 3) && !int_vals(in, n_in, 3, &axes, &na)) pads = NULL;
    if (!pads || np != 2 * (size_t)na) {
        for (int32_t i = 0; i < x->rank; i++) out->dims[i] = -1;
        return;
    }
    for (int32_t i = 0; i < na; i++) {
        int64_t a = axes ? norm_axis(axes[i], x->rank) : i;
        if (a < 0) continue;
        int64_t d = x->dims[a], r = d + pads[i] + pads[i + na];
        out->dims[a] = d >= 0 && r >= 0 ? r : -1;
    }
}

static void infer_resize(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out)
{
    const gm_onnx_info *x = in[0];
    out->dtype = x->dtype;
    if (x->rank < 0) return;
    out->rank = x->rank;
    for (int32_t i = 0; i < x->rank; i++) out->dims[i] = -1;
    const int64_t *sizes;
    int32_t nsz;
    size_t sc_idx = op_is(n, "Upsample") || n_in == 2 ? 1 : 2;
    const gm_onnx_info *scales = input(in, n_in, sc_idx);
    if (int_vals(in, n_in, 3, &sizes, &nsz) && nsz == x->rank) {
        for (int32_t i = 0; i < x->rank; i++) out->dims[i] = sizes[i] >= 0 ? sizes[i] : -1;
        return;
    }
    size_t nattr = 0;
    const Onnx__AttributeProto *sa = gm_onnx_attr(n, "scales");
    if (sa) nattr = sa->n_floats;
    for (int32_t i = 0; i < x->rank; i++) {
        double s;
        if (scales && scales->vkind == GM_ONNX_VAL_FLOAT && scales->nval == x->rank) s = scales->fval[i];
        else if (sa && nattr == (size_t)x->rank) s = sa->floats[i];
        else return;
        double r = floor((double)x->dims[i] * s);
        if (x->dims[i] >= 0 && isfinite(r) && r >= 0 && r < 9e18) out->dims[i] = (int64_t)r;
    }
}

static void infer_range(const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out)
{
    const gm_onnx_info *s = input(in, n_in, 0), *l = input(in, n_in, 1), *d = input(in, n_in, 2);
    out->rank = 1;
    out->dims[0] = -1;
    if (!s || !l || !d) return;
    out->dtype = s->dtype;
    if (s->nval != 1 || l->nval != 1 || d->nval != 1) return;
    if (s->vkind == GM_ONNX_VAL_INT && l->vkind == GM_ONNX_VAL_INT && d->vkind == GM_ONNX_VAL_INT) {
        int64_t a = s->ival[0], b = l->ival[0], st = d->ival[0];
        if (st == 0) return;
        double span = ((double)b - (double)a) / (double)st;
        int64_t len = span > 0 ? (int64_t)ceil(span) : 0;
        out->dims[0] = len;
        if (len <= GM_ONNX_MAX_VALUES) {
            for (int64_t i = 0; i < len; i++) {
                out->ival[i] = a + i * st;
                out->fval[i] = (double)out->ival[i];
            }
            out->vkind = GM_ONNX_VAL_INT;
            out->nval = (int32_t)len;
        }
    } else if (s->vkind == GM_ONNX_VAL_FLOAT && l->vkind == GM_ONNX_VAL_FLOAT && d->vkind == GM_ONNX_VAL_FLOAT) {
        if (d->fval[0] == 0) return;
        double span = ceil((l->fval[0] - s->fval[0]) / d->fval[0]);
        if (isfinite(span)) out->dims[0] = span > 0 && span < 9e18 ? (int64_t)span : 0;
    }
}

static void infer_one_hot(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out)
{
    const gm_onnx_info *idx = in[0], *depth = input(in, n_in, 1), *vals = input(in, n_in, 2);
    out->dtype = vals ? vals->dtype : GM_DT_UNDEFINED;
    if (idx->rank < 0 || idx->rank + 1 > GM_ONNX_MAX_RANK) return;
    int32_t r = idx->rank + 1;
    int64_t axis = norm_axis(gm_onnx_attr_int(n, "axis", -1), r);
    if (axis < 0) return;
    int64_t dv = -1;
    if (depth && depth->nval == 1) {
        if (depth->vkind == GM_ONNX_VAL_INT) dv = depth->ival[0];
        else if (depth->vkind == GM_ONNX_VAL_FLOAT && depth->fval[0] >= 0 && depth->fval[0] < 9e18)
            dv = (int64_t)depth->fval[0];
    }
    for (int32_t i = 0, j = 0; i < r; i++) out->dims[i] = i == axis ? (dv >= 0 ? dv : -1) : idx->dims[j++];
    out->rank = r;
}

static void infer_depth_space(const Onnx__NodeProto *n, const gm_onnx_info *x, gm_onnx_info *out, bool to_space)
{
    out->dtype = x->dtype;
    if (x->rank != 4) return;
    int64_t b = gm_onnx_attr_int(n, "blocksize", -1);
    out->rank = 4;
    out->dims[0] = x->dims[0];
    for (int32_t i = 1; i < 4; i++) out->dims[i] = -1;
    if (b <= 0) return;
    int64_t c = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (to_space) {
        out->dims[1] = c >= 0 && c % (b * b) == 0 ? c / (b * b) : -1;
        out->dims[2] = h >= 0 ? h * b : -1;
        out->dims[3] = w >= 0 ? w * b : -1;
    } else {
        out->dims[1] = c >= 0 ? c * b * b : -1;
        out->dims[2] = h >= 0 && h % b == 0 ? h / b : -1;
        out->dims[3] = w >= 0 && w % b == 0 ? w / b : -1;
    }
}

/* ---- dispatch ------------------------------------------------------------------------------ */

bool gm_onnx_infer_tensor(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in,
                          gm_onnx_info *out, size_t n_out)
{
    const gm_onnx_info *x = input(in, n_in, 0), *y = input(in, n_in, 1);
    if (op_is(n, "Constant")) {
        infer_constant(n, out);
        return true;
    }
    if (op_is(n, "RandomNormal") || op_is(n, "RandomUniform")) {
        size_t ns;
        const int64_t *s = gm_onnx_attr_ints(n, "shape", &ns);
        int64_t dt = gm_onnx_attr_int(n, "dtype", 1);
        gm_dtype g;
        out->dtype = dt > 0 && dt <= INT32_MAX && gm_onnx_dtype_to_gm((int32_t)dt, &g) ? g : GM_DT_UNDEFINED;
        if (s && ns <= GM_ONNX_MAX_RANK) {
            out->rank = (int32_t)ns;
            for (size_t i = 0; i < ns; i++) out->dims[i] = s[i] >= 0 ? s[i] : -1;
        }
        return true;
    }
    if (op_is(n, "ConstantOfShape")) {
        const Onnx__AttributeProto *a = gm_onnx_attr(n, "value");
        gm_dtype dt = GM_DT_FLOAT;
        if (a && a->t && a->t->has_data_type) gm_onnx_dtype_to_gm(a->t->data_type, &dt);
        out->dtype = dt;
        shape_from_values(x, out);
        return true;
    }
    if (op_is(n, "Range")) {
        infer_range(in, n_in, out);
        return true;
    }
    if (!x) return op_is(n, "Shape") || op_is(n, "Size") || op_is(n, "Reshape");
    if (op_is(n, "Shape")) {
        infer_shape(n, x, out);
    } else if (op_is(n, "Size")) {
        out->dtype = GM_DT_INT64;
        out->rank = 0;
        int64_t numel = gm_onnx_info_numel(x);
        if (numel >= 0) {
            out->ival[0] = numel;
            out->fval[0] = (double)numel;
            out->vkind = GM_ONNX_VAL_INT;
            out->nval = 1;
        }
    } else if (op_is(n, "Reshape")) {
        infer_reshape(n, x, y, out);
    } else if (op_is(n, "Flatten")) {
        infer_flatten(n, x, out);
    } else if (op_is(n, "Squeeze")) {
        infer_squeeze(n, in, n_in, out);
    } else if (op_is(n, "Unsqueeze")) {
        infer_unsqueeze(n, in, n_in, out);
    } else if (op_is(n, "Transpose")) {
        infer_transpose(n, x, out);
    } else if (op_is(n, "Gather")) {
        infer_gather(n, x, y, out);
    } else if (op_is(n, "GatherElements")) {
        if (y) gm_onnx_info_copy_shape(out, y);
        out->dtype = x->dtype;
    } else if (op_is(n, "GatherND")) {
        infer_gather_nd(n, x, y, out);
    } else if (op_is(n, "Scatter") || op_is(n, "ScatterElements") || op_is(n, "ScatterND")) {
        gm_onnx_info_copy_shape(out, x);
    } else if (op_is(n, "Slice")) {
        infer_slice(n, in, n_in, out);
    } else if (op_is(n, "Concat")) {
        infer_concat(n, in, n_in, out);
    } else if (op_is(n, "Split")) {
        infer_split(n, in, n_in, out, n_out);
    } else if (op_is(n, "Expand")) {
        infer_expand(x, y, out);
    } else if (op_is(n, "Tile")) {
        infer_tile(x, y, out);
    } else if (op_is(n, "Pad")) {
        infer_pad(n, in, n_in, out);
    } else if (op_is(n, "Resize") || op_is(n, "Upsample")) {
        infer_resize(n, in, n_in, out);
    } else if (op_is(n, "NonZero")) {
        out->dtype = GM_DT_INT64;
        out->rank = 2;
        out->dims[0] = x->rank >= 0 ? x->rank : -1;
        out->dims[1] = -1;
    } else if (op_is(n, "NonMaxSuppression")) {
        out->dtype = GM_DT_INT64;
        out->rank = 2;
        out->dims[0] = -1;
        out->dims[1] = 3;
    } else if (op_is(n, "Compress")) {
        out->dtype = x->dtype;
        const Onnx__AttributeProto *a = gm_onnx_attr(n, "axis");
        int64_t axis = a ? norm_axis(a->i, x->rank) : -1;
        if (a && axis >= 0) {
            gm_onnx_info_copy_shape(out, x);
            out->dims[axis] = -1;
        } else if (!a) {
            out->rank = 1;
            out->dims[0] = -1;
        }
    } else if (op_is(n, "OneHot")) {
        infer_one_hot(n, in, n_in, out);
    } else if (op_is(n, "DepthToSpace") || op_is(n, "SpaceToDepth")) {
        infer_depth_space(n, x, out, op_is(n, "DepthToSpace"));
    } else {
        return false;
    }
    return true;
}
