/*
 * ge_rest.c — the residual of a GE message: what a dump or an offline model said that the IR
 * does not hold, kept packed on the IR object so that the GE writer gives the file back
 * (ge_internal.h says what goes in it and what never does).
 *
 * Each message type owns a fixed set of fields in its residual: fields that describe nothing
 * graphmem plans with, and that the writer would otherwise make up (an op's id from the
 * topological order, has_out_attr, real_dim_cnt from the shape). When a residual is present,
 * those fields are the residual's, zero values included (proto3 cannot tell 0 from unset, so
 * "the file had none" must win over the made-up value). Attributes are merged by key instead:
 * the residual holds only the ones whose IR form would print differently (kinds the IR lacks,
 * a dt that would print as i, a list whose val_type was left unset ...).
 */
#include <stdio.h>
#include <string.h>

#include "io/ge_internal.h"
#include "ir/ir.h"
#include "util/alloc.h"

/* The owned fields, by number, per message type. */
static const uint32_t k_model_owned[] = {2 /* version */, 3 /* custom_version */, 12 /* attr_groups */};
static const uint32_t k_graph_owned[] = {4 /* input */, 5 /* output */, 12 /* attr_groups */};
static const uint32_t k_op_owned[] = {11 /* attr_groups */, 20 /* has_out_attr */, 21 /* id */,
                                      24 /* src_name */,    25 /* src_index */,    26 /* dst_name */,
                                      27 /* dst_index */,   32 /* is_input_const */};
static const uint32_t k_desc_owned[] = {6 /* attr_groups */,   9 /* has_out_attr */,   11 /* weight_size */,
                                        13 /* output_tensor */, 14 /* device_type */,   15 /* input_tensor */,
                                        16 /* real_dim_cnt */,  18 /* data_offset */,   19 /* cmps_size */,
                                        20 /* cmps_tab */,      21 /* cmps_tab_offset */};

static const uint32_t *owned(const ProtobufCMessageDescriptor *d, size_t *n)
{
#define OWNED(desc, arr)                                                                                               \
    if (d == &(desc)) {                                                                                                \
        *n = sizeof(arr) / sizeof *(arr);                                                                              \
        return arr;                                                                                                    \
    }
    OWNED(ge__proto__model_def__descriptor, k_model_owned)
    OWNED(ge__proto__graph_def__descriptor, k_graph_owned)
    OWNED(ge__proto__op_def__descriptor, k_op_owned)
    OWNED(ge__proto__tensor_descriptor__descriptor, k_desc_owned)
#undef OWNED
    *n = 0;
    return NULL;
}

/* The bytes a field's value takes in its message (one element of a repeated field). */
static size_t slot_size(const ProtobufCFieldDescriptor *f)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_ENUM: return 4;
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
    default: return 8; /* the 64-bit integers and double */
    }
}

/* Field `id` of from, shallow, into to: the value (or the array and its count), and for an
 * optional field its presence. */
static void copy_field(ProtobufCMessage *to, const ProtobufCMessage *from, uint32_t id)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(from->descriptor, id);
    if (!f) return;
    const char *src = (const char *)from;
    char *dst = (char *)to;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        memcpy(dst + f->quantifier_offset, src + f->quantifier_offset, sizeof(size_t));
        memcpy(dst + f->offset, src + f->offset, sizeof(void *));
        return;
    }
    if (f->quantifier_offset && f->label == PROTOBUF_C_LABEL_OPTIONAL)
        memcpy(dst + f->quantifier_offset, src + f->quantifier_offset, sizeof(protobuf_c_boolean));
    memcpy(dst + f->offset, src + f->offset, slot_size(f));
}

static void copy_owned(ProtobufCMessage *to, const ProtobufCMessage *from)
{
    size_t n;
    const uint32_t *ids = owned(from->descriptor, &n);
    for (size_t i = 0; i < n; i++) copy_field(to, from, ids[i]);
}

gm_status gm_ge_rest_keep(gm_attr **list, const char *name, const ProtobufCMessage *rest)
{
    /* Kept even when empty: an empty residual says that the owned fields were all zero, which
     * the writer would otherwise make up (has_out_attr, real_dim_cnt). */
    size_t len = protobuf_c_message_get_packed_size(rest);
    uint8_t *buf = gm_malloc(len ? len : 1);
    if (!buf) return GM_ERR_NOMEM;
    protobuf_c_message_pack(rest, buf);
    gm_status st = gm_attr_set_bytes(list, name, buf, len);
    gm_free(buf);
    return st;
}

ProtobufCMessage *gm_ge_rest_find(gm_ge_arena *a, const gm_attr *list, const char *name,
                                  const ProtobufCMessageDescriptor *d, const char *what)
{
    const gm_attr *at = gm_attr_find(list, name);
    if (!at || a->bad || a->oom) return NULL;
    if (a->n_unpacked == a->cap_unpacked &&
        gm_grow((void **)&a->unpacked, sizeof *a->unpacked, a->n_unpacked + 1, &a->cap_unpacked)) {
        a->oom = true;
        return NULL;
    }
    ProtobufCMessage *m = at->kind == GM_ATTR_BYTES
                              ? protobuf_c_message_unpack(d, NULL, at->u.s.len, (const uint8_t *)at->u.s.data)
                              : NULL;
    /* Not one: a hand-written attribute of that name (a JSON model), or no memory to unpack. */
    if (!m) {
        a->bad = true;
        snprintf(a->bad_what, sizeof a->bad_what, "attribute '%s' of %s is not a packed %s", name, what, d->name);
        return NULL;
    }
    a->unpacked[a->n_unpacked++] = m;
    return m;
}

/* The attr field of a message type, when it has one. */
static const ProtobufCFieldDescriptor *attr_field(const ProtobufCMessageDescriptor *d)
{
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type == PROTOBUF_C_TYPE_MESSAGE && f->descriptor == &ge__proto__attr_entry__descriptor &&
            strcmp(f->name, "attr") == 0)
            return f;
    }
    return NULL;
}

static bool same_key(const GeAttrEntry *x, const GeAttrEntry *y)
{
    return x->key.len == y->key.len && (x->key.len == 0 || memcmp(x->key.data, y->key.data, x->key.len) == 0);
}

void gm_ge_rest_begin(ProtobufCMessage *kept, const ProtobufCMessage *from, GeAttrEntry **attrs, size_t n)
{
    protobuf_c_message_init(from->descriptor, kept);
    copy_owned(kept, from);
    const ProtobufCFieldDescriptor *f = attr_field(from->descriptor);
    if (!f) return;
    *(size_t *)((char *)kept + f->quantifier_offset) = n;
    *(GeAttrEntry ***)((char *)kept + f->offset) = attrs;
}

void gm_ge_rest_merge(gm_ge_arena *a, ProtobufCMessage *built, const ProtobufCMessage *rest)
{
    copy_owned(built, rest);
    const ProtobufCFieldDescriptor *f = attr_field(rest->descriptor);
    if (!f) return;
    size_t *nb = (size_t *)((char *)built + f->quantifier_offset);
    GeAttrEntry ***vb = (GeAttrEntry ***)((char *)built + f->offset);
    size_t nr = *(const size_t *)((const char *)rest + f->quantifier_offset);
    GeAttrEntry *const *vr = *(GeAttrEntry *const *const *)((const char *)rest + f->offset);
    if (!nr) return;
    GeAttrEntry **all = gm_ge_array(a, *nb + nr, sizeof *all);
    if (!all) return;
    size_t k = 0;
    for (size_t i = 0; i < *nb; i++) {
        bool replaced = false;
        for (size_t j = 0; j < nr && !replaced; j++) replaced = same_key((*vb)[i], vr[j]);
        if (!replaced) all[k++] = (*vb)[i];
    }
    for (size_t j = 0; j < nr; j++) all[k++] = vr[j];
    *vb = all;
    *nb = k;
}
