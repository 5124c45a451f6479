/*
 * ge_names.c — GE's compressed attribute names. An offline model may be written with its
 * attribute names replaced by indices (the model attribute om_compress_version set): the model
 * attribute attr_name_enum lists the names, and a key that starts with a NUL byte is an index
 * into it, written in base 127 from the least significant digit, each digit plus one so that
 * no other NUL appears. attrs_use_string_value says, per name, that the attribute's string
 * values were replaced the same way: an `i` (or a list of `i`) indexing attr_value_enum.
 *
 * Decoding happens in place on the parsed ModelDef, before it is read, so that the reader and
 * the residual see the names and values the model was built with; the tables are then dropped
 * (a dump graphmem writes has its names in full, as GE's own JSON conversion gives them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "io/ge_internal.h"
#include "util/alloc.h"

#define NAMES_MAX_DEPTH 100 /* as deep as the text parser goes */

typedef struct names {
    const char *src, *text;
    size_t len;
    const gm_pbtext_posmap *pos;
    gm_error *err;
    const Ge__Proto__AttrDef__ListValue *names, *values, *use_string;
} names;

static gm_status fail(names *nm, const void *msg, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static gm_status fail(names *nm, const void *msg, const char *fmt, ...)
{
    char text[400], where[64] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t off;
    if (nm->pos && nm->text && gm_pbtext_pos_find(nm->pos, msg, 0, 0, &off)) {
        size_t line, col;
        gm_pbtext_line_col(nm->text, nm->len, off, &line, &col);
        snprintf(where, sizeof where, ":%zu:%zu", line, col);
    }
    return gm_error_set(nm->err, GM_ERR_INPUT, "%s%s: %s", nm->src, where, text);
}

static bool key_is(const GeAttrEntry *e, const char *s)
{
    return e->key.len == strlen(s) && memcmp(e->key.data, s, e->key.len) == 0;
}

static const Ge__Proto__AttrDef__ListValue *list_of(const GeAttrEntry *e)
{
    return e->value && e->value->value_case == GE__PROTO__ATTR_DEF__VALUE_LIST ? e->value->list : NULL;
}

/* A copy of b in a block protobuf_c_message_free_unpacked frees. */
static bool copy_bytes(ProtobufCBinaryData *to, const ProtobufCBinaryData *b)
{
    uint8_t *p = gm_malloc(b->len ? b->len : 1);
    if (!p) return false;
    if (b->len) memcpy(p, b->data, b->len);
    *to = (ProtobufCBinaryData){b->len, p};
    return true;
}

static gm_status value_of(names *nm, const GeAttrEntry *e, int64_t i, ProtobufCBinaryData *out)
{
    size_t n = nm->values ? nm->values->n_s : 0;
    if (i < 0 || (uint64_t)i >= n)
        return fail(nm, e, "attribute '%.*s': string value %lld is beyond the model's attr_value_enum (%zu values)",
                    (int)e->key.len, (const char *)e->key.data, (long long)i, n);
    return copy_bytes(out, &nm->values->s[i]) ? GM_OK : gm_error_set(nm->err, GM_ERR_NOMEM, "%s: out of memory", nm->src);
}

/* The values of a name whose string values are indices: i -> s, a list of i -> a list of s. */
static gm_status decode_value(names *nm, GeAttrEntry *e)
{
    GeAttrDef *v = e->value;
    if (!v) return GM_OK;
    if (v->value_case == GE__PROTO__ATTR_DEF__VALUE_I) {
        ProtobufCBinaryData s;
        gm_status st = value_of(nm, e, v->i, &s);
        if (st != GM_OK) return st;
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_S;
        v->s = s;
        return GM_OK;
    }
    Ge__Proto__AttrDef__ListValue *l = v->value_case == GE__PROTO__ATTR_DEF__VALUE_LIST ? v->list : NULL;
    if (!l || !l->n_i || l->n_s) return GM_OK;
    ProtobufCBinaryData *s = gm_calloc(l->n_i, sizeof *s);
    if (!s) return gm_error_set(nm->err, GM_ERR_NOMEM, "%s: out of memory", nm->src);
    gm_status st = GM_OK;
    size_t k = 0;
    for (; k < l->n_i && st == GM_OK; k++) st = value_of(nm, e, l->i[k], &s[k]);
    if (st != GM_OK) {
        for (size_t j = 0; j + 1 < k; j++) gm_free(s[j].data);
        gm_free(s);
        return st;
    }
    gm_free(l->i);
    l->s = s;
    l->n_s = l->n_i;
    l->i = NULL;
    l->n_i = 0;
    l->val_type = GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_STRING;
    return GM_OK;
}

static gm_status decode_entry(names *nm, GeAttrEntry *e)
{
    if (!e->key.len || e->key.data[0] != 0) return GM_OK;
    if (!nm->names)
        return fail(nm, e, "an attribute key starts with a NUL byte, GE's compressed name, but the model has no "
                           "attr_name_enum to look it up in");
    size_t idx = 0, scale = 1;
    for (size_t i = 1; i < e->key.len; i++) {
        unsigned b = e->key.data[i];
        if (b < 1 || b > 127 || scale > SIZE_MAX / 127)
            return fail(nm, e, "an attribute key starts with a NUL byte but is no compressed name (byte %zu is %u)", i,
                        b);
        idx += (b - 1) * scale;
        scale *= 127;
    }
    if (idx >= nm->names->n_s)
        return fail(nm, e, "compressed attribute name %zu is beyond the model's attr_name_enum (%zu names)", idx,
                    nm->names->n_s);
    ProtobufCBinaryData key;
    if (!copy_bytes(&key, &nm->names->s[idx])) return gm_error_set(nm->err, GM_ERR_NOMEM, "%s: out of memory", nm->src);
    gm_free(e->key.data);
    e->key = key;
    bool strings = nm->use_string && idx < nm->use_string->n_b && nm->use_string->b[idx];
    return strings ? decode_value(nm, e) : GM_OK;
}

/* The visitor of every message below the model's graphs and attributes: each AttrEntry decoded. */
static gm_status visit(ProtobufCMessage *msg, int depth, void *ctx)
{
    names *nm = ctx;
    if (depth > NAMES_MAX_DEPTH) return fail(nm, msg, "messages nested deeper than %d", NAMES_MAX_DEPTH);
    return msg->descriptor == &ge__proto__attr_entry__descriptor ? decode_entry(nm, (GeAttrEntry *)msg) : GM_OK;
}

static bool is_table(const GeAttrEntry *e)
{
    return key_is(e, "om_compress_version") || key_is(e, "attr_name_enum") || key_is(e, "attr_value_enum") ||
           key_is(e, "attrs_use_string_value");
}

gm_status gm_ge_names_decode(GeModelDef *md, const char *source, const char *text, size_t len,
                             const gm_pbtext_posmap *pos, gm_error *err)
{
    names nm = {.src = source, .text = text, .len = len, .pos = pos, .err = err};
    bool tables = false;
    for (size_t i = 0; i < md->n_attr; i++) {
        const GeAttrEntry *e = md->attr[i];
        if (key_is(e, "attr_name_enum")) nm.names = list_of(e);
        if (key_is(e, "attr_value_enum")) nm.values = list_of(e);
        if (key_is(e, "attrs_use_string_value")) nm.use_string = list_of(e);
        tables |= is_table(e);
    }
    /* The model's own keys are plain (the tables are found by name), so decoding starts at
     * its graphs; the tables go once everything is decoded. */
    for (size_t i = 0; i < md->n_graph; i++) {
        gm_status st = gm_pb_walk(&md->graph[i]->base, visit, &nm);
        if (st != GM_OK) return st;
    }
    for (size_t i = 0; i < md->n_attr; i++) {
        gm_status st = is_table(md->attr[i]) ? GM_OK : gm_pb_walk(&md->attr[i]->base, visit, &nm);
        if (st != GM_OK) return st;
    }
    if (!tables) return GM_OK;
    size_t k = 0;
    for (size_t i = 0; i < md->n_attr; i++) {
        if (is_table(md->attr[i])) protobuf_c_message_free_unpacked(&md->attr[i]->base, NULL);
        else md->attr[k++] = md->attr[i];
    }
    md->n_attr = k;
    return GM_OK;
}
