/*
 * onnx_shape_elem.c — shape inference for element-wise ONNX ops: unary ops (same shape, same
 * or bool type), numpy-broadcasting binary and variadic ops, Where, Cast, Dropout, quantize.
 * Small integer tensors also get their values computed (Add/Sub/Mul/Div on shape values, Equal
 * and Where on them), which is how exporters build Reshape targets.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_internal.h"

typedef enum kind {
    K_SAME,     /* output 0 (and every output) like input 0 */
    K_BOOL1,    /* like input 0, bool */
    K_BIN,      /* broadcast of all inputs, type of input 0 */
    K_CMP,      /* broadcast of all inputs, bool */
    K_WHERE,    /* broadcast of three, type of input 1 */
    K_CAST,     /* like input 0, type from `to` */
    K_CASTLIKE, /* like input 0, type of input 1 */
    K_DROPOUT,  /* output 0 like input 0, output 1 (mask) bool */
    K_QUANT,    /* like input 0, type of the zero point (input 2) or uint8 */
    K_DEQUANT,  /* like input 0, type of the scale (input 1) */
    K_LIKE_DT,  /* like input 0, type from `dtype` when given */
} kind;

typedef enum vop {
    V_NONE, V_ADD, V_SUB, V_MUL, V_DIV, V_MOD, V_MAX, V_MIN, V_EQ, V_LT, V_GT, V_LE, V_GE, V_AND, V_OR,
    V_NOT, V_NEG, V_ABS, V_ID, V_SUM
} vop;

typedef struct op_rule {
    const char *op;
    kind k;
    vop v;
} op_rule;

/* Sorted by strcmp order of op. */
static const op_rule k_rules[] = {
    {"Abs", K_SAME, V_ABS},
    {"Acos", K_SAME, V_NONE},
    {"Acosh", K_SAME, V_NONE},
    {"Add", K_BIN, V_ADD},
    {"And", K_CMP, V_AND},
    {"Asin", K_SAME, V_NONE},
    {"Asinh", K_SAME, V_NONE},
    {"Atan", K_SAME, V_NONE},
    {"Atanh", K_SAME, V_NONE},
    {"Bernoulli", K_LIKE_DT, V_NONE},
    {"BitShift", K_BIN, V_NONE},
    {"BitwiseAnd", K_BIN, V_NONE},
    {"BitwiseNot", K_SAME, V_NONE},
    {"BitwiseOr", K_BIN, V_NONE},
    {"BitwiseXor", K_BIN, V_NONE},
    {"Cast", K_CAST, V_ID},
    {"CastLike", K_CASTLIKE, V_ID},
    {"Ceil", K_SAME, V_NONE},
    {"Celu", K_SAME, V_NONE},
    {"Clip", K_SAME, V_NONE},
    {"Cos", K_SAME, V_NONE},
    {"Cosh", K_SAME, V_NONE},
    {"CumSum", K_SAME, V_NONE},
    {"DequantizeLinear", K_DEQUANT, V_NONE},
    {"Div", K_BIN, V_DIV},
    {"Dropout", K_DROPOUT, V_NONE},
    {"Elu", K_SAME, V_NONE},
    {"Equal", K_CMP, V_EQ},
    {"Erf", K_SAME, V_NONE},
    {"Exp", K_SAME, V_NONE},
    {"EyeLike", K_LIKE_DT, V_NONE},
    {"Floor", K_SAME, V_NONE},
    {"Gelu", K_SAME, V_NONE},
    {"Greater", K_CMP, V_GT},
    {"GreaterOrEqual", K_CMP, V_GE},
    {"HardSigmoid", K_SAME, V_NONE},
    {"HardSwish", K_SAME, V_NONE},
    {"Hardmax", K_SAME, V_NONE},
    {"Identity", K_SAME, V_ID},
    {"InstanceNormalization", K_SAME, V_NONE},
    {"IsInf", K_BOOL1, V_NONE},
    {"IsNaN", K_BOOL1, V_NONE},
    {"LRN", K_SAME, V_NONE},
    {"LeakyRelu", K_SAME, V_NONE},
    {"Less", K_CMP, V_LT},
    {"LessOrEqual", K_CMP, V_LE},
    {"Log", K_SAME, V_NONE},
    {"LogSoftmax", K_SAME, V_NONE},
    {"LpNormalization", K_SAME, V_NONE},
    {"Max", K_BIN, V_MAX},
    {"Mean", K_BIN, V_NONE},
    {"MeanVarianceNormalization", K_SAME, V_NONE},
    {"Min", K_BIN, V_MIN},
    {"Mish", K_SAME, V_NONE},
    {"Mod", K_BIN, V_MOD},
    {"Mul", K_BIN, V_MUL},
    {"Neg", K_SAME, V_NEG},
    {"Not", K_BOOL1, V_NOT},
    {"Or", K_CMP, V_OR},
    {"PRelu", K_BIN, V_NONE},
    {"Pow", K_BIN, V_NONE},
    {"QuantizeLinear", K_QUANT, V_NONE},
    {"RandomNormalLike", K_LIKE_DT, V_NONE},
    {"RandomUniformLike", K_LIKE_DT, V_NONE},
    {"Reciprocal", K_SAME, V_NONE},
    {"Relu", K_SAME, V_NONE},
    {"ReverseSequence", K_SAME, V_NONE},
    {"Round", K_SAME, V_NONE},
    {"Selu", K_SAME, V_NONE},
    {"Shrink", K_SAME, V_NONE},
    {"Sigmoid", K_SAME, V_NONE},
    {"Sign", K_SAME, V_NONE},
    {"Sin", K_SAME, V_NONE},
    {"Sinh", K_SAME, V_NONE},
    {"Softmax", K_SAME, V_NONE},
    {"Softplus", K_SAME, V_NONE},
    {"Softsign", K_SAME, V_NONE},
    {"Sqrt", K_SAME, V_NONE},
    {"Sub", K_BIN, V_SUB},
    {"Sum", K_BIN, V_SUM},
    {"Swish", K_SAME, V_NONE},
    {"Tan", K_SAME, V_NONE},
    {"Tanh", K_SAME, V_NONE},
    {"ThresholdedRelu", K_SAME, V_NONE},
    {"Trilu", K_SAME, V_NONE},
    {"Where", K_WHERE, V_NONE},
    {"Xor", K_CMP, V_NONE},
};

static int cmp_rule(const void *key, const void *elem) { return strcmp(key, ((const op_rule *)elem)->op); }

/* ---- values -------------------------------------------------------------------------------- */

static bool is_int_type(gm_dtype dt)
{
    switch (dt) {
    case GM_DT_INT8: case GM_DT_INT16: case GM_DT_INT32: case GM_DT_INT64: case GM_DT_UINT8:
    case GM_DT_UINT16: case GM_DT_UINT32: case GM_DT_UINT64: case GM_DT_BOOL:
        return true;
    default:
        return false;
    }
}

static bool is_float_type(gm_dtype dt)
{
    return dt == GM_DT_FLOAT || dt == GM_DT_DOUBLE || dt == GM_DT_FLOAT16 || dt == GM_DT_BF16;
}

/* Flat index into input t (broadcast against out) of output element `flat`. */
static int32_t bcast_index(const gm_onnx_info *out, const gm_onnx_info *t, int32_t flat)
{
    int32_t idx = 0, stride = 1;
    for (int32_t i = out->rank - 1; i >= 0; i--) {
        int32_t coord = (int32_t)(flat % out->dims[i]);
        flat /= (int32_t)out->dims[i];
        int32_t ti = i - (out->rank - t->rank);
        if (ti < 0) continue;
        if (t->dims[ti] != 1) idx += coord * stride;
        stride *= (int32_t)t->dims[ti];
    }
    return idx;
}

static bool int_op(vop v, int64_t a, int64_t b, int64_t *r, bool fmod_attr)
{
    if (a == GM_ONNX_UNKNOWN_VALUE || b == GM_ONNX_UNKNOWN_VALUE) { /* unknown in, unknown out */
        *r = GM_ONNX_UNKNOWN_VALUE;
        return true;
    }
    switch (v) {
    case V_ADD: case V_SUM: return !__builtin_add_overflow(a, b, r);
    case V_SUB: return !__builtin_sub_overflow(a, b, r);
    case V_MUL: return !__builtin_mul_overflow(a, b, r);
    case V_DIV:
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        *r = a / b; /* integer Div truncates, as the runtimes do */
        return true;
    case V_MOD:
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        *r = a % b;
        if (!fmod_attr && *r != 0 && ((*r < 0) != (b < 0))) *r += b; /* the divisor's sign */
        return true;
    case V_MAX: *r = a > b ? a : b; return true;
    case V_MIN: *r = a < b ? a : b; return true;
    case V_EQ: *r = a == b; return true;
    case V_LT: *r = a < b; return true;
    case V_GT: *r = a > b; return true;
    case V_LE: *r = a <= b; return true;
    case V_GE: *r = a >= b; return true;
    case V_AND: *r = a && b; return true;
    case V_OR: *r = a || b; return true;
    default: return false;
    }
}

static bool float_op(vop v, double a, double b, double *r)
{
    switch (v) {
    case V_ADD: case V_SUM: *r = a + b; return true;
    case V_SUB: *r = a - b; return true;
    case V_MUL: *r = a * b; return true;
    case V_DIV: *r = a / b; return true;
    case V_MAX: *r = a > b ? a : b; return true;
    case V_MIN: *r = a < b ? a : b; return true;
    default: return false;
    }
}

/* Values of a broadcasting op over known small inputs (out's shape is already set). */
static void binary_values(const Onnx__NodeProto *n, vop v, const gm_onnx_info *const *in, size_t n_in,
                          gm_onnx_info *out)
{
    int64_t numel = gm_onnx_info_numel(out);
    if (v == V_NONE || n_in < 2 || numel < 0 || numel > GM_ONNX_MAX_VALUES) return;
    gm_onnx_vkind vk = in[0] ? in[0]->vkind : GM_ONNX_VAL_NONE;
    for (size_t i = 0; i < n_in; i++) {
        if (!in[i] || in[i]->vkind != vk || vk == GM_ONNX_VAL_NONE) return;
    }
    bool cmp = v >= V_EQ && v <= V_OR;
    if (vk == GM_ONNX_VAL_FLOAT && cmp) return;
    bool fmod_attr = gm_onnx_attr_int(n, "fmod", 0) != 0;
    for (int32_t e = 0; e < (int32_t)numel; e++) {
        int64_t ia = in[0]->ival[bcast_index(out, in[0], e)];
        double fa = in[0]->fval[bcast_index(out, in[0], e)];
        for (size_t i = 1; i < n_in; i++) {
            int32_t j = bcast_index(out, in[i], e);
            if (vk == GM_ONNX_VAL_INT ? !int_op(v, ia, in[i]->ival[j], &ia, fmod_attr)
                                      : !float_op(v, fa, in[i]->fval[j], &fa))
                return;
        }
        out->ival[e] = ia;
        out->fval[e] = fa;
    }
    out->vkind = vk;
    out->nval = (int32_t)numel;
}

static void unary_values(vop v, const gm_onnx_info *a, gm_onnx_info *out)
{
    if (v == V_NONE || a->vkind == GM_ONNX_VAL_NONE) return;
    for (int32_t i = 0; i < a->nval; i++) {
        int64_t x = a->ival[i];
        double f = a->fval[i];
        switch (v) {
        case V_ID: break;
        case V_NOT: if (a->vkind != GM_ONNX_VAL_INT) return; x = x == GM_ONNX_UNKNOWN_VALUE ? x : !x; break;
        case V_NEG: x = x == GM_ONNX_UNKNOWN_VALUE ? x : -x; f = -f; break;
        case V_ABS: x = x == GM_ONNX_UNKNOWN_VALUE ? x : x < 0 ? -x : x; f = fabs(f); break;
        default: return;
        }
        out->ival[i] = x;
        out->fval[i] = f;
    }
    out->vkind = a->vkind;
    out->nval = a->nval;
}

/* Cast of known values to dtype `to`. */
static void cast_values(const gm_onnx_info *a, gm_onnx_info *out)
{
    if (a->vkind == GM_ONNX_VAL_NONE) return;
    bool to_int = is_int_type(out->dtype), to_float = is_float_type(out->dtype);
    if (!to_int && !to_float) return;
    for (int32_t i = 0; i < a->nval; i++) {
        if (a->vkind == GM_ONNX_VAL_INT) {
            if (a->ival[i] == GM_ONNX_UNKNOWN_VALUE && to_float) return; /* a float has no "unknown" */
            out->ival[i] = out->dtype == GM_DT_BOOL && a->ival[i] != GM_ONNX_UNKNOWN_VALUE ? a->ival[i] != 0 : a->ival[i];
            out->fval[i] = (double)a->ival[i];
        } else {
            double f = a->fval[i];
            if (to_int) {
                if (!isfinite(f) || fabs(f) >= 9.2e18) return;
                out->ival[i] = out->dtype == GM_DT_BOOL ? f != 0 : (int64_t)f;
            }
            out->fval[i] = out->dtype == GM_DT_FLOAT ? (double)(float)f : f;
        }
    }
    out->vkind = to_int ? GM_ONNX_VAL_INT : GM_ONNX_VAL_FLOAT;
    out->nval = a->nval;
}

/* Where(cond, x, y) over known small inputs. */
static void where_values(const gm_onnx_info *const *in, gm_onnx_info *out)
{
    int64_t numel = gm_onnx_info_numel(out);
    if (numel < 0 || numel > GM_ONNX_MAX_VALUES) return;
    if (in[0]->vkind != GM_ONNX_VAL_INT || in[1]->vkind == GM_ONNX_VAL_NONE || in[2]->vkind != in[1]->vkind) return;
    for (int32_t e = 0; e < (int32_t)numel; e++) {
        int64_t c = in[0]->ival[bcast_index(out, in[0], e)];
        if (c == GM_ONNX_UNKNOWN_VALUE) {
            if (in[1]->vkind != GM_ONNX_VAL_INT) return;
            out->ival[e] = GM_ONNX_UNKNOWN_VALUE;
            continue;
        }
        const gm_onnx_info *src = c ? in[1] : in[2];
        int32_t j = bcast_index(out, src, e);
        out->ival[e] = src->ival[j];
        out->fval[e] = src->fval[j];
    }
    out->vkind = in[1]->vkind;
    out->nval = (int32_t)numel;
}

/* ---- shapes -------------------------------------------------------------------------------- */

static gm_dtype attr_dtype(const Onnx__NodeProto *n, const char *name, gm_dtype dflt)
{
    gm_dtype dt;
    int64_t v = gm_onnx_attr_int(n, name, -1);
    if (v < 0 || v > INT32_MAX || !gm_onnx_dtype_to_gm((int32_t)v, &dt)) return dflt;
    return dt;
}

bool gm_onnx_infer_elementwise(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in,
                               gm_onnx_info *out, size_t n_out)
{
    const op_rule *r = bsearch(n->op_type, k_rules, sizeof k_rules / sizeof k_rules[0], sizeof k_rules[0], cmp_rule);
    if (!r) return false;
    const gm_onnx_info *a = n_in > 0 ? in[0] : NULL;
    if (!a) return true;
    switch (r->k) {
    case K_SAME:
    case K_BOOL1:
    case K_CAST:
    case K_CASTLIKE:
    case K_DROPOUT:
    case K_QUANT:
    case K_DEQUANT:
    case K_LIKE_DT:
        for (size_t k = 0; k < n_out; k++) gm_onnx_info_copy_shape(&out[k], a);
        if (r->k == K_BOOL1) out[0].dtype = GM_DT_BOOL;
        if (r->k == K_CAST) out[0].dtype = attr_dtype(n, "to", GM_DT_UNDEFINED);
        if (r->k == K_CASTLIKE) out[0].dtype = n_in > 1 && in[1] ? in[1]->dtype : GM_DT_UNDEFINED;
        if (r->k == K_DROPOUT && n_out > 1) out[1].dtype = GM_DT_BOOL;
        if (r->k == K_QUANT) out[0].dtype = n_in > 2 && in[2] ? in[2]->dtype : GM_DT_UINT8;
        if (r->k == K_DEQUANT) out[0].dtype = n_in > 1 && in[1] ? in[1]->dtype : GM_DT_FLOAT;
        if (r->k == K_LIKE_DT) out[0].dtype = attr_dtype(n, "dtype", a->dtype);
        if (r->k == K_CAST || r->k == K_CASTLIKE) cast_values(a, &out[0]);
        else unary_values(r->v, a, &out[0]);
        return true;
    case K_BIN:
    case K_CMP:
    case K_WHERE: {
        gm_onnx_info acc;
        gm_onnx_info_unknown(&acc);
        gm_onnx_info_copy_shape(&acc, a);
        for (size_t i = 1; i < n_in; i++) {
            if (!in[i]) return true; /* an absent input of an element-wise op: leave it unknown */
            if (!gm_onnx_broadcast(&acc, in[i], &acc)) return true;
        }
        gm_onnx_info_copy_shape(&out[0], &acc);
        if (r->k == K_CMP) out[0].dtype = GM_DT_BOOL;
        if (r->k == K_WHERE) {
            out[0].dtype = n_in > 1 && in[1] ? in[1]->dtype : GM_DT_UNDEFINED;
            if (n_in == 3) where_values(in, &out[0]);
        } else {
            if (a->dtype == GM_DT_UNDEFINED && r->k == K_BIN) {
                for (size_t i = 1; i < n_in && out[0].dtype == GM_DT_UNDEFINED; i++) out[0].dtype = in[i]->dtype;
            }
            binary_values(n, r->v, in, n_in, &out[0]);
        }
        return true;
    }
    }
    return true;
}
