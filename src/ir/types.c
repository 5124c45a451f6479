/*
 * types.c — data types (GE's DataType ids, with graphmem, GE and ONNX spellings) and memory
 * types. One table each; every reader and writer asks these.
 */
#include <string.h>
#include <strings.h>

#include "graphmem/graph.h"

typedef struct dtype_info {
    const char *name;    /* graphmem's canonical name */
    const char *ge_name; /* GE's DT_* name */
    const char *onnx;    /* ONNX TensorProto.DataType name, or NULL */
    unsigned bits;       /* storage width; 0 = no fixed width */
} dtype_info;

static const dtype_info k_dtypes[GM_DT_COUNT] = {
    [GM_DT_UNDEFINED] = {"undefined", "DT_UNDEFINED", "UNDEFINED", 0},
    [GM_DT_FLOAT] = {"float32", "DT_FLOAT", "FLOAT", 32},
    [GM_DT_FLOAT16] = {"float16", "DT_FLOAT16", "FLOAT16", 16},
    [GM_DT_INT8] = {"int8", "DT_INT8", "INT8", 8},
    [GM_DT_UINT8] = {"uint8", "DT_UINT8", "UINT8", 8},
    [GM_DT_INT16] = {"int16", "DT_INT16", "INT16", 16},
    [GM_DT_UINT16] = {"uint16", "DT_UINT16", "UINT16", 16},
    [GM_DT_INT32] = {"int32", "DT_INT32", "INT32", 32},
    [GM_DT_INT64] = {"int64", "DT_INT64", "INT64", 64},
    [GM_DT_UINT32] = {"uint32", "DT_UINT32", "UINT32", 32},
    [GM_DT_UINT64] = {"uint64", "DT_UINT64", "UINT64", 64},
    [GM_DT_BOOL] = {"bool", "DT_BOOL", "BOOL", 8},
    [GM_DT_DOUBLE] = {"double", "DT_DOUBLE", "DOUBLE", 64},
    [GM_DT_STRING] = {"string", "DT_STRING", "STRING", 0},
    [GM_DT_DUAL_SUB_INT8] = {"dual_sub_int8", "DT_DUAL_SUB_INT8", NULL, 8},
    [GM_DT_DUAL_SUB_UINT8] = {"dual_sub_uint8", "DT_DUAL_SUB_UINT8", NULL, 8},
    [GM_DT_COMPLEX64] = {"complex64", "DT_COMPLEX64", "COMPLEX64", 64},
    [GM_DT_COMPLEX128] = {"complex128", "DT_COMPLEX128", "COMPLEX128", 128},
    [GM_DT_QINT8] = {"qint8", "DT_QINT8", NULL, 8},
    [GM_DT_QINT16] = {"qint16", "DT_QINT16", NULL, 16},
    [GM_DT_QINT32] = {"qint32", "DT_QINT32", NULL, 32},
    [GM_DT_QUINT8] = {"quint8", "DT_QUINT8", NULL, 8},
    [GM_DT_QUINT16] = {"quint16", "DT_QUINT16", NULL, 16},
    [GM_DT_RESOURCE] = {"resource", "DT_RESOURCE", NULL, 0},
    [GM_DT_STRING_REF] = {"string_ref", "DT_STRING_REF", NULL, 0},
    [GM_DT_DUAL] = {"dual", "DT_DUAL", NULL, 0},
    [GM_DT_VARIANT] = {"variant", "DT_VARIANT", NULL, 0},
    [GM_DT_BF16] = {"bfloat16", "DT_BF16", "BFLOAT16", 16},
    [GM_DT_INT4] = {"int4", "DT_INT4", "INT4", 4},
    [GM_DT_UINT1] = {"uint1", "DT_UINT1", NULL, 1},
    [GM_DT_INT2] = {"int2", "DT_INT2", NULL, 2},
    [GM_DT_UINT2] = {"uint2", "DT_UINT2", NULL, 2},
    [GM_DT_COMPLEX32] = {"complex32", "DT_COMPLEX32", NULL, 32},
    [GM_DT_HIFLOAT8] = {"hifloat8", "DT_HIFLOAT8", NULL, 8},
    [GM_DT_FLOAT8_E5M2] = {"float8_e5m2", "DT_FLOAT8_E5M2", "FLOAT8E5M2", 8},
    [GM_DT_FLOAT8_E4M3FN] = {"float8_e4m3fn", "DT_FLOAT8_E4M3FN", "FLOAT8E4M3FN", 8},
    [GM_DT_FLOAT8_E8M0] = {"float8_e8m0", "DT_FLOAT8_E8M0", "FLOAT8E8M0", 8},
    [GM_DT_FLOAT6_E3M2] = {"float6_e3m2", "DT_FLOAT6_E3M2", NULL, 6},
    [GM_DT_FLOAT6_E2M3] = {"float6_e2m3", "DT_FLOAT6_E2M3", NULL, 6},
    [GM_DT_FLOAT4_E2M1] = {"float4_e2m1", "DT_FLOAT4_E2M1", "FLOAT4E2M1", 4},
    [GM_DT_FLOAT4_E1M2] = {"float4_e1m2", "DT_FLOAT4_E1M2", NULL, 4},
    [GM_DT_HIFLOAT4] = {"hifloat4", "DT_HIFLOAT4", NULL, 4},
};

/* Common spellings that are none of the three tables' names. */
static const struct { const char *alias; gm_dtype dt; } k_aliases[] = {
    {"float", GM_DT_FLOAT}, {"half", GM_DT_FLOAT16}, {"fp16", GM_DT_FLOAT16},
    {"fp32", GM_DT_FLOAT}, {"float64", GM_DT_DOUBLE}, {"bf16", GM_DT_BF16},
    {"DT_BFLOAT16", GM_DT_BF16},
};

bool gm_dtype_from_name(const char *name, gm_dtype *out)
{
    if (!name) return false;
    for (int i = 0; i < GM_DT_COUNT; i++) {
        const dtype_info *d = &k_dtypes[i];
        if (strcmp(name, d->name) == 0 || strcmp(name, d->ge_name) == 0 ||
            (d->onnx && strcmp(name, d->onnx) == 0)) {
            *out = (gm_dtype)i;
            return true;
        }
    }
    for (size_t i = 0; i < sizeof k_aliases / sizeof k_aliases[0]; i++) {
        if (strcmp(name, k_aliases[i].alias) == 0) {
            *out = k_aliases[i].dt;
            return true;
        }
    }
    return false;
}

const char *gm_dtype_name(gm_dtype dt)
{
    return (unsigned)dt < GM_DT_COUNT ? k_dtypes[dt].name : "undefined";
}

const char *gm_dtype_ge_name(gm_dtype dt)
{
    return (unsigned)dt < GM_DT_COUNT ? k_dtypes[dt].ge_name : "DT_UNDEFINED";
}

unsigned gm_dtype_bits(gm_dtype dt) { return (unsigned)dt < GM_DT_COUNT ? k_dtypes[dt].bits : 0; }

static const char *const k_mem_names[GM_MEM_COUNT] = {"hbm", "p2p", "ts", "host"};

bool gm_mem_type_from_name(const char *name, gm_mem_type *out)
{
    if (!name) return false;
    for (int i = 0; i < GM_MEM_COUNT; i++) {
        if (strcasecmp(name, k_mem_names[i]) == 0) {
            *out = (gm_mem_type)i;
            return true;
        }
    }
    return false;
}

const char *gm_mem_type_name(gm_mem_type mt)
{
    return (unsigned)mt < GM_MEM_COUNT ? k_mem_names[mt] : "?";
}

bool gm_mem_type_is_special(gm_mem_type mt) { return mt == GM_MEM_P2P || mt == GM_MEM_TS; }
