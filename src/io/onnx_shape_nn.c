/*
 * onnx_shape_nn.c — shape inference for the neural-network ONNX ops: convolutions and pools
 * (pads, auto_pad, strides, dilations, group, ceil_mode), MatMul / Gemm, normalizations,
 * reductions, TopK / ArgMax, recurrent layers and losses. Formulas follow the operator
 * specification; where an input the formula needs is unknown, the dim is unknown.
 */
#include <stdlib.h>
#include <string.h>

#include "io/onnx_internal.h"

static bool op_is(const Onnx__NodeProto *n, const char *op) { return strcmp(n->op_type, op) == 0; }

/* The STRING attribute `name` equals `value` (absent: `absent_matches`). */
static bool attr_str_is(const Onnx__NodeProto *n, const char *name, const char *value, bool absent_matches)
{
    const Onnx__AttributeProto *a = gm_onnx_attr(n, name);
    if (!a || !a->has_s) return absent_matches;
    size_t len = strlen(value);
    return a->s.len == len && memcmp(a->s.data, value, len) == 0;
}

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/* ---- convolution and pooling --------------------------------------------------------------- */

typedef enum { PAD_NOTSET, PAD_SAME, PAD_VALID } pad_mode;

static pad_mode auto_pad(const Onnx__NodeProto *n)
{
    if (attr_str_is(n, "auto_pad", "SAME_UPPER", false) || attr_str_is(n, "auto_pad", "SAME_LOWER", false))
        return PAD_SAME;
    if (attr_str_is(n, "auto_pad", "VALID", false)) return PAD_VALID;
    return PAD_NOTSET;
}

/* The i-th of k values of an INTS attribute, or dflt. */
static int64_t ints_at(const int64_t *v, size_t n, size_t i, int64_t dflt) { return v && i < n ? v[i] : dflt; }

/* Output spatial dims of a conv or pool window over x (rank >= 3). kernel[i] < 0 = unknown. */
static void window_dims(const Onnx__NodeProto *n, const gm_onnx_info *x, const int64_t *kernel, bool ceil_mode,
                        bool transpose, gm_onnx_info *out)
{
    size_t ns, nd, np, nop;
    const int64_t *strides = gm_onnx_attr_ints(n, "strides", &ns);
    const int64_t *dil = gm_onnx_attr_ints(n, "dilations", &nd);
    const int64_t *pads = gm_onnx_attr_ints(n, "pads", &np);
    const int64_t *opad = gm_onnx_attr_ints(n, "output_padding", &nop);
    pad_mode pm = auto_pad(n);
    int32_t k = x->rank - 2;
    for (int32_t i = 0; i < k; i++) {
        int64_t in = x->dims[2 + i], s = ints_at(strides, ns, (size_t)i, 1), d = ints_at(dil, nd, (size_t)i, 1);
        int64_t pb = pm == PAD_NOTSET ? ints_at(pads, np, (size_t)i, 0) : 0;
        int64_t pe = pm == PAD_NOTSET ? ints_at(pads, np, (size_t)(i + k), 0) : 0;
        int64_t r = -1;
        if (in >= 0 && kernel[i] >= 0 && s > 0 && d > 0) {
            int64_t ek = d * (kernel[i] - 1) + 1;
            if (transpose) {
                r = pm == PAD_SAME ? in * s : s * (in - 1) + ints_at(opad, nop, (size_t)i, 0) + ek - pb - pe;
            } else if (pm == PAD_SAME) {
                r = ceil_div(in, s);
            } else {
                int64_t span = in + pb + pe - ek;
                if (span >= 0) {
                    r = (ceil_mode ? ceil_div(span, s) : span / s) + 1;
                    /* A window may not start in the right padding (ceil_mode only). */
                    if (ceil_mode && (r - 1) * s >= in + pb) r--;
                }
            }
        }
        out->dims[2 + i] = r >= 0 ? r : -1;
    }
}

static void infer_conv(const Onnx__NodeProto *n, const gm_onnx_info *x, const gm_onnx_info *w, gm_onnx_info *out,
                       bool transpose)
{
    int32_t rank = x->rank >= 0 ? x->rank : w ? w->rank : -1;
    out->dtype = x->dtype;
    if (rank < 3) return;
    out->rank = rank;
    out->dims[0] = x->rank >= 0 ? x->dims[0] : -1;
    int64_t kernel[GM_ONNX_MAX_RANK];
    size_t nk;
    const int64_t *ks = gm_onnx_attr_ints(n, "kernel_shape", &nk);
    for (int32_t i = 0; i < rank - 2; i++) {
        kernel[i] = ks && (size_t)i < nk ? ks[i] : w && w->rank == rank ? w->dims[2 + i] : -1;
    }
    int64_t group = gm_onnx_attr_int(n, "group", 1);
    if (!w || w->rank < 2) out->dims[1] = -1;
    else if (!transpose) out->dims[1] = w->dims[0];
    else out->dims[1] = w->dims[1] >= 0 && group > 0 ? w->dims[1] * group : -1;
    if (x->rank < 0) {
        for (int32_t i = 2; i < rank; i++) out->dims[i] = -1;
        return;
    }
    size_t nos;
    const int64_t *os = gm_onnx_attr_ints(n, "output_shape", &nos);
    if (transpose && os && nos >= (size_t)(rank - 2)) {
        for (int32_t i = 0; i < rank - 2; i++) out->dims[2 + i] = os[nos - (size_t)(rank - 2) + (size_t)i];
        return;
    }
    window_dims(n, x, kernel, false, transpose, out);
}

static void infer_pool(const Onnx__NodeProto *n, const gm_onnx_info *x, gm_onnx_info *out, size_t n_out)
{
    out->dtype = x->dtype;
    if (x->rank < 3) return;
    gm_onnx_info_copy_shape(out, x);
    int64_t kernel[GM_ONNX_MAX_RANK];
    size_t nk;
    const int64_t *ks = gm_onnx_attr_ints(n, "kernel_shape", &nk);
    for (int32_t i = 0; i < x->rank - 2; i++) kernel[i] = ks && (size_t)i < nk ? ks[i] : -1;
    window_dims(n, x, kernel, gm_onnx_attr_int(n, "ceil_mode", 0) != 0, false, out);
    if (n_out > 1) { /* MaxPool's Indices */
        gm_onnx_info_copy_shape(&out[1], out);
        out[1].dtype = GM_DT_INT64;
    }
}

/* ---- matrix products ----------------------------------------------------------------------- */

static void infer_matmul(const gm_onnx_info *a, const gm_onnx_info *b, gm_onnx_info *out)
{
    if (a->rank < 1 || b->rank < 1) return;
    gm_onnx_info aa = *a, bb = *b;
    if (a->rank == 1) { /* [K] -> [1, K], the 1 removed afterwards */
        aa.rank = 2;
        aa.dims[0] = 1;
        aa.dims[1] = a->dims[0];
    }
    if (b->rank == 1) { /* [K] -> [K, 1] */
        bb.rank = 2;
        bb.dims[0] = b->dims[0];
        bb.dims[1] = 1;
    }
    gm_onnx_info ba = aa, bbatch = bb, batch;
    ba.rank -= 2;
    bbatch.rank -= 2;
    if (!gm_onnx_broadcast(&ba, &bbatch, &batch) || batch.rank < 0 || batch.rank + 2 > GM_ONNX_MAX_RANK) return;
    int32_t r = batch.rank;
    memcpy(out->dims, batch.dims, (size_t)r * sizeof batch.dims[0]);
    if (a->rank != 1) out->dims[r++] = aa.dims[aa.rank - 2];
    if (b->rank != 1) out->dims[r++] = bb.dims[bb.rank - 1];
    out->rank = r;
}

static void infer_gemm(const Onnx__NodeProto *n, const gm_onnx_info *a, const gm_onnx_info *b, gm_onnx_info *out)
{
    out->rank = 2;
    bool ta = gm_onnx_attr_int(n, "transA", 0) != 0, tb = gm_onnx_attr_int(n, "transB", 0) != 0;
    out->dims[0] = a && a->rank == 2 ? a->dims[ta ? 1 : 0] : -1;
    out->dims[1] = b && b->rank == 2 ? b->dims[tb ? 0 : 1] : -1;
}

/* ---- reductions ---------------------------------------------------------------------------- */

static void infer_reduce(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out)
{
    const gm_onnx_info *x = in[0];
    out->dtype = x->dtype;
    bool keep = gm_onnx_attr_int(n, "keepdims", 1) != 0;
    size_t na = 0;
    const int64_t *axes = gm_onnx_attr_ints(n, "axes", &na);
    int32_t nv = 0;
    bool axes_input = n_in > 1 && in[1];
    if (!axes && axes_input) {
        if (!gm_onnx_int_values(in[1], &axes, &nv)) {
            /* Axes exist but are not known: which dims shrink is unknown. */
            if (keep && x->rank >= 0) {
                out->rank = x->rank;
                for (int32_t i = 0; i < x->rank; i++) out->dims[i] = x->dims[i] == 1 ? 1 : -1;
            } else if (!keep && x->rank >= 0 && in[1]->rank == 1 && in[1]->dims[0] >= 0 &&
                       in[1]->dims[0] <= x->rank) {
                out->rank = x->rank - (int32_t)in[1]->dims[0];
                for (int32_t i = 0; i < out->rank; i++) out->dims[i] = -1;
            }
            return;
        }
        na = (size_t)nv;
    }
    if (x->rank < 0) return;
    bool reduced[GM_ONNX_MAX_RANK] = {false};
    if (na == 0) {
        if (gm_onnx_attr_int(n, "noop_with_empty_axes", 0) != 0) {
            gm_onnx_info_copy_shape(out, x);
            return;
        }
        for (int32_t i = 0; i < x->rank; i++) reduced[i] = true;
    }
    for (size_t i = 0; i < na; i++) {
        int64_t ax = axes[i] < 0 ? axes[i] + x->rank : axes[i];
        if (ax < 0 || ax >= x->rank) return;
        reduced[ax] = true;
    }
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (!reduced[i]) out->dims[r++] = x->dims[i];
        else if (keep) out->dims[r++] = 1;
    }
    out->rank = r;
}

/* Reduces one axis (ArgMax, ArgMin) or sets it to k (TopK). */
static void infer_axis(const gm_onnx_info *x, int64_t axis, bool keep, int64_t k, gm_onnx_info *out)
{
    if (x->rank < 0) return;
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) return;
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (i != axis) out->dims[r++] = x->dims[i];
        else if (keep) out->dims[r++] = k;
    }
    out->rank = r;
}

/* ---- recurrent layers ---------------------------------------------------------------------- */

static void infer_rnn(const Onnx__NodeProto *n, const gm_onnx_info *x, gm_onnx_info *out, size_t n_out)
{
    int64_t hidden = gm_onnx_attr_int(n, "hidden_size", -1);
    int64_t dirs = attr_str_is(n, "direction", "bidirectional", false) ? 2 : 1;
    bool batch_first = gm_onnx_attr_int(n, "layout", 0) != 0;
    int64_t seq = x->rank == 3 ? x->dims[batch_first ? 1 : 0] : -1;
    int64_t batch = x->rank == 3 ? x->dims[batch_first ? 0 : 1] : -1;
    if (hidden < 0) hidden = -1;
    for (size_t k = 0; k < n_out; k++) {
        gm_onnx_info *o = &out[k];
        o->dtype = x->dtype;
        if (k == 0) {
            o->rank = 4;
            int64_t d[4] = {seq, dirs, batch, hidden}, dbf[4] = {batch, seq, dirs, hidden};
            memcpy(o->dims, batch_first ? dbf : d, sizeof d);
        } else {
            o->rank = 3;
            int64_t d[3] = {dirs, batch, hidden}, dbf[3] = {batch, dirs, hidden};
            memcpy(o->dims, batch_first ? dbf : d, sizeof d);
        }
    }
}

/* ---- dispatch ------------------------------------------------------------------------------ */

static bool is_reduce(const char *op)
{
    return strncmp(op, "Reduce", 6) == 0 &&
           (strcmp(op + 6, "Mean") == 0 || strcmp(op + 6, "Sum") == 0 || strcmp(op + 6, "Max") == 0 ||
            strcmp(op + 6, "Min") == 0 || strcmp(op + 6, "Prod") == 0 || strcmp(op + 6, "L1") == 0 ||
            strcmp(op + 6, "L2") == 0 || strcmp(op + 6, "LogSum") == 0 || strcmp(op + 6, "LogSumExp") == 0 ||
            strcmp(op + 6, "SumSquare") == 0);
}

bool gm_onnx_infer_nn(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out,
                      size_t n_out)
{
    const gm_onnx_info *x = n_in > 0 ? in[0] : NULL, *w = n_in > 1 ? in[1] : NULL;
    const char *op = n->op_type;
    if (op_is(n, "Conv") || op_is(n, "ConvInteger") || op_is(n, "ConvTranspose")) {
        if (x) infer_conv(n, x, w, out, op_is(n, "ConvTranspose"));
        if (op_is(n, "ConvInteger")) out->dtype = GM_DT_INT32;
    } else if (op_is(n, "QLinearConv")) {
        const gm_onnx_info *qw = n_in > 3 ? in[3] : NULL;
        if (x) infer_conv(n, x, qw, out, false);
        out->dtype = n_in > 7 && in[7] ? in[7]->dtype : GM_DT_UNDEFINED;
    } else if (op_is(n, "MaxPool") || op_is(n, "AveragePool") || op_is(n, "LpPool")) {
        if (x) infer_pool(n, x, out, n_out);
    } else if (op_is(n, "GlobalAveragePool") || op_is(n, "GlobalMaxPool") || op_is(n, "GlobalLpPool")) {
        if (x) {
            gm_onnx_info_copy_shape(out, x);
            for (int32_t i = 2; i < x->rank; i++) out->dims[i] = 1;
        }
    } else if (op_is(n, "MatMul") || op_is(n, "MatMulInteger")) {
        if (x && w) infer_matmul(x, w, out);
        out->dtype = op_is(n, "MatMulInteger") ? GM_DT_INT32 : x ? x->dtype : GM_DT_UNDEFINED;
    } else if (op_is(n, "QLinearMatMul")) {
        if (x && n_in > 3 && in[3]) infer_matmul(x, in[3], out);
        out->dtype = n_in > 7 && in[7] ? in[7]->dtype : GM_DT_UNDEFINED;
    } else if (op_is(n, "Gemm")) {
        infer_gemm(n, x, w, out);
        out->dtype = x ? x->dtype : GM_DT_UNDEFINED;
    } else if (op_is(n, "BatchNormalization")) {
        /* Y like X; the training outputs (running or saved mean and variance) are [C]. */
        if (!x) return true;
        gm_onnx_info_copy_shape(&out[0], x);
        for (size_t k = 1; k < n_out; k++) {
            out[k].dtype = n_in > 3 && in[3] ? in[3]->dtype : x->dtype;
            out[k].rank = 1;
            out[k].dims[0] = x->rank >= 2 ? x->dims[1] : w && w->rank == 1 ? w->dims[0] : -1;
        }
    } else if (op_is(n, "LayerNormalization")) {
        if (!x) return true;
        gm_onnx_info_copy_shape(&out[0], x);
        int64_t axis = gm_onnx_attr_int(n, "axis", -1);
        gm_dtype stash = GM_DT_FLOAT;
        int64_t st = gm_onnx_attr_int(n, "stash_type", 1);
        if (st > 0 && st <= INT32_MAX) gm_onnx_dtype_to_gm((int32_t)st, &stash);
        for (size_t k = 1; k < n_out; k++) {
            gm_onnx_info_copy_shape(&out[k], x);
            out[k].dtype = stash;
            if (x->rank < 0) continue;
            int64_t ax = axis < 0 ? axis + x->rank : axis;
            for (int32_t i = 0; i < x->rank; i++) {
                if (i >= ax) out[k].dims[i] = 1;
            }
        }
    } else if (op_is(n, "GroupNormalization")) {
        if (x) gm_onnx_info_copy_shape(&out[0], x);
    } else if (is_reduce(op)) {
        if (x) infer_reduce(n, in, n_in, out);
    } else if (op_is(n, "ArgMax") || op_is(n, "ArgMin")) {
        if (x) infer_axis(x, gm_onnx_attr_int(n, "axis", 0), gm_onnx_attr_int(n, "keepdims", 1) != 0, 1, out);
        out->dtype = GM_DT_INT64;
    } else if (op_is(n, "TopK")) {
        if (!x) return true;
        const int64_t *kv;
        int32_t nk;
        int64_t k = gm_onnx_attr_int(n, "k", -1);
        if (w && gm_onnx_int_values(w, &kv, &nk) && nk == 1) k = kv[0];
        infer_axis(x, gm_onnx_attr_int(n, "axis", -1), true, k >= 0 ? k : -1, &out[0]);
        out[0].dtype = x->dtype;
        if (n_out > 1) {
            gm_onnx_info_copy_shape(&out[1], &out[0]);
            out[1].dtype = GM_DT_INT64;
        }
    } else if (op_is(n, "RNN") || op_is(n, "GRU") || op_is(n, "LSTM")) {
        if (x) infer_rnn(n, x, out, n_out);
    } else if (op_is(n, "SoftmaxCrossEntropyLoss") || op_is(n, "NegativeLogLikelihoodLoss")) {
        if (!x) return true;
        out[0].dtype = x->dtype;
        if (attr_str_is(n, "reduction", "none", false)) {
            if (w) gm_onnx_info_copy_shape(&out[0], w);
            out[0].dtype = x->dtype;
        } else {
            out[0].rank = 0;
        }
        if (n_out > 1) gm_onnx_info_copy_shape(&out[1], x);
    } else if (op_is(n, "RoiAlign")) {
        out->dtype = x ? x->dtype : GM_DT_UNDEFINED;
        out->rank = 4;
        out->dims[0] = w && w->rank == 2 ? w->dims[0] : -1;
        out->dims[1] = x && x->rank == 4 ? x->dims[1] : -1;
        out->dims[2] = gm_onnx_attr_int(n, "output_height", 1);
        out->dims[3] = gm_onnx_attr_int(n, "output_width", 1);
    } else {
        return false;
    }
    return true;
}
