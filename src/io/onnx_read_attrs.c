/*
 * onnx_read_attrs.c — the ONNX reader's attribute side: plain ONNX attributes as graphmem
 * attributes, and, in files graphmem wrote, the graphmem.* node attributes and the records of
 * the nodes that became graph inputs, initializers and outputs (encoding: onnx_write.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_internal.h"
#include "ir/ir.h"
#include "ops/attr_table.h"
#include "util/alloc.h"

typedef gm_onnx_reader rd;

#define fail gm_onnx_reader_fail

static gm_status oom(rd *r) { return fail(r, GM_ERR_NOMEM, "out of memory"); }

static const char *gname(const gm_onnx_rgraph *rg) { return rg->g->name; }

/* ---- attributes ---------------------------------------------------------------------------- */

bool gm_onnx_has_prefix(const char *s, const char *prefix) { return s && strncmp(s, prefix, strlen(prefix)) == 0; }

const char *gm_onnx_meta_name(const char *name)
{
    return gm_onnx_has_prefix(name, GM_ONNX_NODE_PREFIX) ? name + 2 : name;
}

/* An attribute of a kind the IR lacks, kept whole (GM_ATTR_ONNX_ATTR_PREFIX) so that the ONNX
 * writer gives it back: ConstantOfShape's value, a TYPE_PROTO ... Shape inference reads such
 * tensors from the protobuf directly. */
static gm_status keep_attr(gm_attr **list, const Onnx__AttributeProto *a)
{
    size_t len = protobuf_c_message_get_packed_size(&a->base), nlen = strlen(a->name);
    uint8_t *buf = gm_malloc(len ? len : 1);
    char *key = gm_malloc(sizeof GM_ATTR_ONNX_ATTR_PREFIX + nlen);
    gm_status st = buf && key ? GM_OK : GM_ERR_NOMEM;
    if (st == GM_OK) {
        protobuf_c_message_pack(&a->base, buf);
        memcpy(key, GM_ATTR_ONNX_ATTR_PREFIX, sizeof GM_ATTR_ONNX_ATTR_PREFIX - 1);
        memcpy(key + sizeof GM_ATTR_ONNX_ATTR_PREFIX - 1, a->name, nlen + 1);
        st = gm_attr_set_bytes(list, key, buf, len);
    }
    gm_free(buf);
    gm_free(key);
    return st;
}

/* An ONNX attribute as a graphmem attribute (name given). GRAPH attributes are the caller's
 * (bodies); the kinds the IR lacks are kept whole for the writer. */
gm_status gm_onnx_convert_attr(rd *r, gm_attr **list, const char *name, const Onnx__AttributeProto *a)
{
    int type = a->type;
    if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) { /* very old files: infer the kind */
        type = a->n_ints     ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS
             : a->n_floats   ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS
             : a->n_strings  ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS
             : a->has_s      ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
             : a->has_f      ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
             : a->has_i      ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
                             : 0;
    }
    gm_attr_kind want;
    bool known = !r->faithful && gm_attr_known_kind(name, &want);
    gm_status st = GM_OK;
    char *alt = NULL;
    /* A standard ONNX attribute whose name GE uses with another kind keeps its value under
     * "onnx.<name>", so that the model stays valid. */
    if (known) {
        bool fits = (want == GM_ATTR_INT && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) ||
                    (want == GM_ATTR_BOOL && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) ||
                    (want == GM_ATTR_FLOAT && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) ||
                    (want == GM_ATTR_STRING && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) ||
                    (want == GM_ATTR_LIST_INT && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) ||
                    (want == GM_ATTR_LIST_FLOAT && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS) ||
                    (want == GM_ATTR_LIST_STRING && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
        if (!fits) {
            size_t len = strlen(name) + 6;
            if (!(alt = gm_malloc(len))) return oom(r);
            snprintf(alt, len, "onnx.%s", name);
            name = alt;
        } else if (want == GM_ATTR_BOOL) {
            st = gm_attr_set_bool(list, name, a->i != 0);
            return st == GM_OK ? GM_OK : oom(r);
        }
    }
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: st = gm_attr_set_float(list, name, a->f); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: st = gm_attr_set_int(list, name, a->i); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        /* A C string cannot hold a NUL: such a value is kept as bytes. */
        if (a->s.len && memchr(a->s.data, 0, a->s.len)) st = gm_attr_set_bytes(list, name, a->s.data, a->s.len);
        else {
            char *s = gm_strndup(a->s.len ? (const char *)a->s.data : "", a->s.len);
            st = s ? gm_attr_set_string(list, name, s) : GM_ERR_NOMEM;
            gm_free(s);
        }
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: st = gm_attr_set_list_int(list, name, a->ints, a->n_ints); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
        double *v = gm_malloc((a->n_floats ? a->n_floats : 1) * sizeof *v);
        if (!v) {
            st = GM_ERR_NOMEM;
            break;
        }
        for (size_t i = 0; i < a->n_floats; i++) v[i] = a->floats[i];
        st = gm_attr_set_list_float(list, name, v, a->n_floats);
        gm_free(v);
        break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
        char **v = gm_calloc(a->n_strings ? a->n_strings : 1, sizeof *v);
        size_t i = 0;
        for (; v && i < a->n_strings; i++) {
            if (!(v[i] = gm_strndup(a->strings[i].len ? (const char *)a->strings[i].data : "", a->strings[i].len)))
                break;
        }
        st = v && i == a->n_strings ? gm_attr_set_list_string(list, name, (const char *const *)v, i) : GM_ERR_NOMEM;
        for (size_t j = 0; v && j < i; j++) gm_free(v[j]);
        gm_free(v);
        break;
    }
    default: st = type ? keep_attr(list, a) : GM_OK; break;
    }
    gm_free(alt);
    return st == GM_OK ? GM_OK : oom(r);
}

/* Decodes a graphmem text value held in a STRING attribute. */
static gm_status decode_text(rd *r, const gm_node *n, const Onnx__AttributeProto *a,
                             gm_status (*dec)(const char *, size_t, void *, char *, size_t), void *target)
{
    char why[200];
    gm_status st = dec(a->has_s ? (const char *)a->s.data : "", a->s.len, target, why, sizeof why);
    if (st == GM_ERR_NOMEM) return oom(r);
    if (st != GM_OK)
        return fail(r, GM_ERR_INPUT, "graph '%s': node '%s': attribute '%s': bad graphmem value: %s",
                    n->graph->name, n->name, a->name, why);
    return GM_OK;
}

static gm_status dec_desc_cb(const char *t, size_t len, void *d, char *why, size_t cap)
{
    return gm_onnx_dec_desc(t, len, d, why, cap);
}

/* Attribute "graphmem.attr.<name>": a typed value. */
typedef struct { gm_attr **list; const char *name; } value_target;

static gm_status dec_value_cb(const char *t, size_t len, void *vt, char *why, size_t cap)
{
    value_target *v = vt;
    return gm_onnx_dec_value(t, len, v->list, v->name, why, cap);
}

gm_status gm_onnx_decode_attr_value(rd *r, gm_node *n, const Onnx__AttributeProto *a)
{
    value_target vt = {&n->attrs, gm_onnx_meta_name(a->name) + strlen(GM_ONNX_PREFIX "attr.")};
    return decode_text(r, n, a, dec_value_cb, &vt);
}

gm_status gm_onnx_decode_attr_desc(rd *r, const gm_node *n, const Onnx__AttributeProto *a, gm_tensor_desc *d)
{
    return decode_text(r, n, a, dec_desc_cb, d);
}

/* Sets the names of a strings attribute into the input (out=false) or output names. */
static gm_status set_io_names(rd *r, gm_node *n, const Onnx__AttributeProto *a, bool out)
{
    size_t count = out ? n->n_out : n->n_in;
    if (a->n_strings > count)
        return fail(r, GM_ERR_INPUT, "graph '%s': node '%s': %s lists %zu names for %zu %s", n->graph->name, n->name,
                    a->name, a->n_strings, count, out ? "outputs" : "inputs");
    for (size_t i = 0; i < a->n_strings; i++) {
        if (!a->strings[i].len) continue;
        char *s = gm_strndup((const char *)a->strings[i].data, a->strings[i].len);
        gm_status st = s ? (out ? gm_node_set_output_name(n, i, s) : gm_node_set_input_name(n, i, s)) : GM_ERR_NOMEM;
        gm_free(s);
        if (st != GM_OK) return oom(r);
    }
    return GM_OK;
}

/* An index suffix "graphmem.output.<k>" below `count`, or -1. */
static long index_suffix(const char *name, const char *prefix, size_t count)
{
    const char *p = name + strlen(prefix);
    char *e;
    errno = 0;
    long k = strtol(p, &e, 10);
    if (!*p || *e || errno || k < 0 || (size_t)k >= count) return -1;
    return k;
}

/* The graphmem.* attributes of a node graphmem wrote, once its inputs and outputs exist. */
gm_status gm_onnx_apply_meta_attrs(rd *r, gm_onnx_rgraph *rg, gm_onnx_rnode *rn)
{
    gm_node *n = rn->node;
    const Onnx__NodeProto *np = rn->np;
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        const char *nm = a->name ? gm_onnx_meta_name(a->name) : NULL;
        gm_status st = GM_OK;
        if (!gm_onnx_has_prefix(nm, GM_ONNX_PREFIX)) continue;
        if (strcmp(nm, GM_ONNX_PREFIX "stream") == 0) {
            n->stream = a->i;
        } else if (strcmp(nm, GM_ONNX_PREFIX "control_inputs") == 0) {
            for (size_t k = 0; k < a->n_strings && st == GM_OK; k++) {
                char *s = gm_strndup(a->strings[k].len ? (const char *)a->strings[k].data : "", a->strings[k].len);
                st = s ? gm_node_add_control_input_by_name(n, s) : GM_ERR_NOMEM;
                gm_free(s);
                if (st != GM_OK) st = oom(r);
            }
        } else if (strcmp(nm, GM_ONNX_PREFIX "input_names") == 0) {
            st = set_io_names(r, n, a, false);
        } else if (strcmp(nm, GM_ONNX_PREFIX "output_names") == 0) {
            st = set_io_names(r, n, a, true);
        } else if (gm_onnx_has_prefix(nm, GM_ONNX_PREFIX "input.")) {
            long k = index_suffix(nm, GM_ONNX_PREFIX "input.", n->n_in);
            if (k < 0) st = fail(r, GM_ERR_INPUT, "graph '%s': node '%s': attribute '%s': no such input", gname(rg), n->name, nm);
            else {
                gm_tensor_desc *d = gm_node_input_desc(n, (size_t)k);
                st = d ? decode_text(r, n, a, dec_desc_cb, d) : oom(r);
            }
        } else if (gm_onnx_has_prefix(nm, GM_ONNX_PREFIX "output.")) {
            long k = index_suffix(nm, GM_ONNX_PREFIX "output.", rn->n_out);
            if (k < 0) st = fail(r, GM_ERR_INPUT, "graph '%s': node '%s': attribute '%s': no such output", gname(rg), n->name, nm);
            else rg->t[rn->out[k]].overlay = a;
        }
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

/* ---- records (Data, Const and NetOutput nodes graphmem wrote) ------------------------------ */

/* Parses the record in a doc_string; *has false when there is none. */
gm_status gm_onnx_parse_record(rd *r, const char *doc, const char *what, gm_onnx_record *rec, bool *has)
{
    *has = false;
    if (!r->faithful || !gm_onnx_has_prefix(doc, GM_ONNX_RECORD_MAGIC)) return GM_OK;
    const char *text = doc + strlen(GM_ONNX_RECORD_MAGIC);
    char why[200];
    gm_status st = gm_onnx_dec_record(text, strlen(text), rec, why, sizeof why);
    if (st == GM_ERR_NOMEM) return oom(r);
    if (st != GM_OK) return fail(r, GM_ERR_INPUT, "%s: bad graphmem record: %s", what, why);
    *has = true;
    return GM_OK;
}

/* A node from a record: everything but its data inputs. */
gm_node *gm_onnx_node_from_record(rd *r, gm_onnx_rgraph *rg, gm_onnx_record *rec, gm_status *st)
{
    gm_node *n = gm_graph_add_node(rg->g, rec->name, rec->type, r->err);
    if (!n) {
        *st = r->err ? r->err->code : GM_ERR_INPUT;
        return NULL;
    }
    n->stream = rec->stream;
    n->attrs = rec->attrs;
    rec->attrs = NULL;
    for (size_t i = 0; i < rec->n_ctrl; i++) {
        if (gm_node_add_control_input_by_name(n, rec->ctrl[i]) != GM_OK) goto nomem;
    }
    for (size_t k = 0; k < rec->n_outs; k++) {
        gm_tensor_desc *d = gm_node_add_output(n);
        if (!d) goto nomem;
        *d = rec->outs[k];
        gm_desc_init(&rec->outs[k]);
    }
    if (rec->n_out_names > n->n_out) {
        *st = fail(r, GM_ERR_INPUT, "graph '%s': node '%s': record names %zu outputs, it has %u", gname(rg), n->name,
                   rec->n_out_names, n->n_out);
        return NULL;
    }
    for (size_t k = 0; k < rec->n_out_names; k++) {
        if (*rec->out_names[k] && gm_node_set_output_name(n, k, rec->out_names[k]) != GM_OK) goto nomem;
    }
    if (!gm_onnx_reader_own_name(r, gm_strdup(n->name))) goto nomem;
    return n;
nomem:
    *st = oom(r);
    return NULL;
}

/* Input descs and names of a record node, once its inputs exist. */
gm_status gm_onnx_record_inputs(rd *r, gm_onnx_rgraph *rg, gm_node *n, gm_onnx_record *rec)
{
    if (rec->n_ins > n->n_in || rec->n_in_names > n->n_in)
        return fail(r, GM_ERR_INPUT, "graph '%s': node '%s': its record describes more inputs than it has (%u)",
                    gname(rg), n->name, n->n_in);
    for (size_t i = 0; i < rec->n_ins; i++) {
        gm_tensor_desc *d = gm_node_input_desc(n, i);
        if (!d) return oom(r);
        gm_desc_fini(d);
        *d = rec->ins[i];
        gm_desc_init(&rec->ins[i]);
    }
    for (size_t i = 0; i < rec->n_in_names; i++) {
        if (*rec->in_names[i] && gm_node_set_input_name(n, i, rec->in_names[i]) != GM_OK) return oom(r);
    }
    return GM_OK;
}

