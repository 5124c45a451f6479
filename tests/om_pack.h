/*
 * om_pack.h — builds GE offline models (.om) for the tests from text dumps: the ModelDef of a
 * dump, its attribute names optionally compressed as GE's offline models store them, packed
 * into the container src/io/ge_om.c reads (a 256-byte header, a partition table with 32- or
 * 64-bit fields, the partitions). No .om written by GE's tools is public; these are written
 * from the layout public loaders read, so that every path of the reader is exercised.
 * Include after <cmocka.h>.
 */
#ifndef GM_OM_PACK_H
#define GM_OM_PACK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ge_ir.pb-c.h"
#include "io/pbtext.h"

typedef struct om_names {
    char **names;
    bool *use_string;
    size_t n;
    char **values;
    size_t n_values;
} om_names;

static size_t om_index(char ***arr, size_t *n, const char *s, size_t len)
{
    for (size_t i = 0; i < *n; i++)
        if (strlen((*arr)[i]) == len && memcmp((*arr)[i], s, len) == 0) return i;
    *arr = realloc(*arr, (*n + 1) * sizeof **arr);
    assert_non_null(*arr);
    char *c = malloc(len + 1);
    assert_non_null(c);
    memcpy(c, s, len);
    c[len] = '\0';
    (*arr)[*n] = c;
    return (*n)++;
}

/* Compressed key: a NUL, then the index in base 127, least significant digit first, + 1. */
static void om_encode_key(ProtobufCBinaryData *key, size_t idx)
{
    uint8_t buf[8];
    size_t n = 0;
    buf[n++] = 0;
    do {
        buf[n++] = (uint8_t)(idx % 127 + 1);
        idx /= 127;
    } while (idx);
    free(key->data);
    key->data = malloc(n);
    assert_non_null(key->data);
    memcpy(key->data, buf, n);
    key->len = n;
}

static bool om_text(const ProtobufCBinaryData *b) { return !memchr(b->data, 0, b->len); }

/* A string attribute (an `s`, or a list of `s`) whose values are text: its values go to
 * attr_value_enum, as indices. A name keeps the kind of its first use (a test dump uses each
 * name one way). */
static void om_compress_entry(om_names *nm, Ge__Proto__AttrEntry *e)
{
    size_t idx = om_index(&nm->names, &nm->n, (const char *)e->key.data, e->key.len);
    nm->use_string = realloc(nm->use_string, nm->n * sizeof *nm->use_string);
    assert_non_null(nm->use_string);
    Ge__Proto__AttrDef *v = e->value;
    Ge__Proto__AttrDef__ListValue *l = v && v->value_case == GE__PROTO__ATTR_DEF__VALUE_LIST ? v->list : NULL;
    bool str = v && v->value_case == GE__PROTO__ATTR_DEF__VALUE_S && om_text(&v->s);
    bool strs = l && l->n_s && !l->n_i;
    for (size_t k = 0; strs && k < l->n_s; k++) strs = om_text(&l->s[k]);
    if (idx + 1 == nm->n) nm->use_string[idx] = str || strs;
    if (nm->use_string[idx] && str) {
        size_t vi = om_index(&nm->values, &nm->n_values, (const char *)v->s.data, v->s.len);
        free(v->s.data);
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_I;
        v->i = (int64_t)vi;
    } else if (nm->use_string[idx] && strs) {
        l->i = malloc(l->n_s * sizeof *l->i);
        assert_non_null(l->i);
        for (size_t k = 0; k < l->n_s; k++) {
            l->i[k] = (int64_t)om_index(&nm->values, &nm->n_values, (const char *)l->s[k].data, l->s[k].len);
            free(l->s[k].data);
        }
        free(l->s);
        l->s = NULL;
        l->n_i = l->n_s;
        l->n_s = 0;
    }
    om_encode_key(&e->key, idx);
}

static gm_status om_visit(ProtobufCMessage *msg, int depth, void *ctx)
{
    (void)depth;
    if (msg->descriptor == &ge__proto__attr_entry__descriptor) om_compress_entry(ctx, (Ge__Proto__AttrEntry *)msg);
    return GM_OK;
}

static Ge__Proto__AttrEntry *om_list_entry(const char *key, char **s, size_t n_s, const bool *b, size_t n_b)
{
    Ge__Proto__AttrEntry *e = malloc(sizeof *e);
    Ge__Proto__AttrDef *v = malloc(sizeof *v);
    Ge__Proto__AttrDef__ListValue *l = malloc(sizeof *l);
    assert_true(e && v && l);
    ge__proto__attr_entry__init(e);
    ge__proto__attr_def__init(v);
    ge__proto__attr_def__list_value__init(l);
    e->key.len = strlen(key);
    e->key.data = malloc(e->key.len);
    assert_non_null(e->key.data);
    memcpy(e->key.data, key, e->key.len);
    e->value = v;
    v->value_case = GE__PROTO__ATTR_DEF__VALUE_LIST;
    v->list = l;
    if (n_s) {
        l->s = malloc(n_s * sizeof *l->s);
        for (size_t i = 0; i < n_s; i++) l->s[i] = (ProtobufCBinaryData){strlen(s[i]), (uint8_t *)s[i]};
        l->n_s = n_s;
    }
    if (n_b) {
        l->b = malloc(n_b * sizeof *l->b);
        for (size_t i = 0; i < n_b; i++) l->b[i] = b[i];
        l->n_b = n_b;
    }
    return e;
}

/* Every attribute name below the graphs compressed, the tables added to the model's attrs. */
static void om_compress(Ge__Proto__ModelDef *md)
{
    om_names nm = {0};
    for (size_t i = 0; i < md->n_graph; i++) gm_pb_walk(&md->graph[i]->base, om_visit, &nm);
    md->attr = realloc(md->attr, (md->n_attr + 3) * sizeof *md->attr);
    assert_non_null(md->attr);
    md->attr[md->n_attr++] = om_list_entry("attr_name_enum", nm.names, nm.n, NULL, 0);
    md->attr[md->n_attr++] = om_list_entry("attr_value_enum", nm.values, nm.n_values, NULL, 0);
    md->attr[md->n_attr++] = om_list_entry("attrs_use_string_value", NULL, 0, nm.use_string, nm.n);
    free(nm.names); /* the strings now belong to the lists */
    free(nm.values);
    free(nm.use_string);
}

static void om_put32(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void om_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The ModelDef of text (a dump), compressed or not, in an offline model: a weights partition
 * (type 1, 40 bytes) first, then MODEL_DEF (type 0), then a task partition (type 2); 64-bit
 * table fields when wide; the header names the model. Free *out with free(). */
static void om_pack(const char *text, bool compress, bool wide, uint8_t **out, size_t *len)
{
    ProtobufCMessage *msg = NULL;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_pbtext_parse(&ge__proto__model_def__descriptor, text, strlen(text), "om.txt", NULL, &msg, &err),
                     GM_OK);
    Ge__Proto__ModelDef *md = (Ge__Proto__ModelDef *)msg;
    if (compress) om_compress(md);
    size_t mdlen = protobuf_c_message_get_packed_size(msg);
    const uint64_t types[3] = {1, 0, 2}, sizes[3] = {40, mdlen, 16};
    size_t head = 256, thead = wide ? 8 : 4, entry = wide ? 24 : 12;
    size_t data = head + thead + 3 * entry, total = data + 40 + mdlen + 16;
    uint8_t *p = calloc(1, total);
    assert_non_null(p);
    memcpy(p, "IMOD", 4);
    om_put32(p + 4, 256);
    om_put32(p + 8, 0x10000000u);
    om_put32(p + 76, total - head);
    if (md->name) memcpy(p + 84, md->name, strlen(md->name) < 31 ? strlen(md->name) : 31); /* as ATC: the model's */
    if (wide) om_put64(p + head, 3);
    else om_put32(p + head, 3);
    uint64_t off = 0;
    for (int i = 0; i < 3; i++) {
        uint8_t *e = p + head + thead + (size_t)i * entry;
        if (wide) {
            om_put64(e, types[i]);
            om_put64(e + 8, off);
            om_put64(e + 16, sizes[i]);
        } else {
            om_put32(e, types[i]);
            om_put32(e + 4, off);
            om_put32(e + 8, sizes[i]);
        }
        off += sizes[i];
    }
    memset(p + data, 0xAB, 40); /* weights: not read */
    protobuf_c_message_pack(msg, p + data + 40);
    protobuf_c_message_free_unpacked(msg, NULL);
    *out = p;
    *len = total;
}

#endif
