/*
 * pbtext_print.c — protobuf text format printed from protobuf-c messages of any type, in the
 * layout of GE's dumps: 2-space indent, fields in field-number order, proto3 defaults left out.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/pbtext.h"
#include "io/pbtext_internal.h"
#include "util/alloc.h"
#include "util/utf8.h"

/* ---- printer ----------------------------------------------------------------------------- */

typedef struct printer {
    sbuf b;
    bool oom;
} printer;

static void put(printer *w, const char *s, size_t n)
{
    if (!w->oom && sbuf_put(&w->b, s, n)) w->oom = true;
}

static void puts_(printer *w, const char *s) { put(w, s, strlen(s)); }

static void indent(printer *w, int level)
{
    static const char spaces[] = "                                ";
    for (size_t n = (size_t)level * 2; n > 0;) {
        size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        put(w, spaces, k);
        n -= k;
    }
}

/* A quoted string, C-escaped. Bytes of valid UTF-8 text stay as they are (readable names);
 * other bytes outside printable ASCII become 3-digit octal escapes. */
static void put_quoted(printer *w, const uint8_t *s, size_t n)
{
    bool utf8 = gm_utf8_valid((const char *)s, n, NULL);
    put(w, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = s[i];
        char esc[8];
        const char *e = NULL;
        switch (c) {
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        case '"': e = "\\\""; break;
        case '\'': e = "\\'"; break;
        case '\\': e = "\\\\"; break;
        default:
            if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) {
                snprintf(esc, sizeof esc, "\\%03o", c);
                e = esc;
            }
        }
        if (!e) {
            run++;
            continue;
        }
        put(w, (const char *)s + i - run, run);
        run = 0;
        puts_(w, e);
    }
    put(w, (const char *)s + n - run, run);
    put(w, "\"", 1);
}

/* The shortest text that reads back to the same float / double. */
static void put_floating(printer *w, double v, bool single)
{
    char b[48];
    if (isnan(v)) {
        puts_(w, "nan");
        return;
    }
    if (isinf(v)) {
        puts_(w, v > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = single ? 6 : 15; prec <= (single ? 9 : 17); prec++) {
        snprintf(b, sizeof b, "%.*g", prec, v);
        if (single ? strtof(b, NULL) == (float)v : strtod(b, NULL) == v) break;
    }
    puts_(w, b);
}

static void print_fields(printer *w, const ProtobufCMessage *msg, int level);

/* The scalar stored at slot, as text. */
static void put_scalar(printer *w, const ProtobufCFieldDescriptor *f, const void *slot)
{
    char b[32];
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
        snprintf(b, sizeof b, "%" PRId32, *(const int32_t *)slot);
        puts_(w, b);
        return;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
        snprintf(b, sizeof b, "%" PRId64, *(const int64_t *)slot);
        puts_(w, b);
        return;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
        snprintf(b, sizeof b, "%" PRIu32, *(const uint32_t *)slot);
        puts_(w, b);
        return;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        snprintf(b, sizeof b, "%" PRIu64, *(const uint64_t *)slot);
        puts_(w, b);
        return;
    case PROTOBUF_C_TYPE_FLOAT: put_floating(w, *(const float *)slot, true); return;
    case PROTOBUF_C_TYPE_DOUBLE: put_floating(w, *(const double *)slot, false); return;
    case PROTOBUF_C_TYPE_BOOL: puts_(w, *(const protobuf_c_boolean *)slot ? "true" : "false"); return;
    case PROTOBUF_C_TYPE_ENUM: {
        /* By name when the value has one (proto3 enums are open: a number may not). */
        int32_t v = *(const int32_t *)slot;
        const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
        if (ev) {
            puts_(w, ev->name);
        } else {
            snprintf(b, sizeof b, "%" PRId32, v);
            puts_(w, b);
        }
        return;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)slot;
        put_quoted(w, (const uint8_t *)(s ? s : ""), s ? strlen(s) : 0);
        return;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *bd = slot;
        put_quoted(w, bd->data ? bd->data : (const uint8_t *)"", bd->data ? bd->len : 0);
        return;
    }
    case PROTOBUF_C_TYPE_MESSAGE: return;
    }
}

/* One `name: value` line (or `name {` block) for the value stored at slot. */
static void print_value(printer *w, const ProtobufCFieldDescriptor *f, const void *slot, int level)
{
    indent(w, level);
    puts_(w, f->name);
    if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
        puts_(w, " {\n");
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)slot;
        if (sub) print_fields(w, sub, level + 1);
        indent(w, level);
        puts_(w, "}\n");
        return;
    }
    puts_(w, ": ");
    put_scalar(w, f, slot);
    put(w, "\n", 1);
}

/* Whether a non-repeated field outside a oneof is present: a has_ flag for proto2 and proto3
 * `optional` scalars, a pointer for messages, otherwise (proto3) a value other than zero. */
static bool is_present(const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f)
{
    const void *slot = CMEMBER(msg, f->offset);
    if (f->type == PROTOBUF_C_TYPE_MESSAGE) return *(ProtobufCMessage *const *)slot != NULL;
    if (f->type == PROTOBUF_C_TYPE_STRING) {
        const char *s = *(const char *const *)slot;
        if (!s) return false;
        if (f->label == PROTOBUF_C_LABEL_NONE) return *s != '\0';
        if (f->label == PROTOBUF_C_LABEL_OPTIONAL) return s != f->default_value;
        return true;
    }
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL) return *(const protobuf_c_boolean *)CMEMBER(msg, f->quantifier_offset);
    if (f->label == PROTOBUF_C_LABEL_REQUIRED) return true;
    if (f->type == PROTOBUF_C_TYPE_BYTES) return ((const ProtobufCBinaryData *)slot)->len > 0;
    /* Scalars: any set bit (-0.0 counts as set, as in protobuf). */
    static const uint8_t zero[8];
    return memcmp(slot, zero, elem_size(f)) != 0;
}

static void print_fields(printer *w, const ProtobufCMessage *msg, int level)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)CMEMBER(msg, f->quantifier_offset);
            const char *arr = *(const char *const *)CMEMBER(msg, f->offset);
            size_t es = elem_size(f);
            for (size_t j = 0; arr && j < n; j++) print_value(w, f, arr + j * es, level);
        } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            if (*(const uint32_t *)CMEMBER(msg, f->quantifier_offset) == f->id)
                print_value(w, f, CMEMBER(msg, f->offset), level);
        } else if (is_present(msg, f)) {
            print_value(w, f, CMEMBER(msg, f->offset), level);
        }
    }
}

gm_status gm_pbtext_print(const ProtobufCMessage *msg, char **text, size_t *len, gm_error *err)
{
    *text = NULL;
    if (len) *len = 0;
    printer w = {{0}, false};
    put(&w, "", 0);
    print_fields(&w, msg, 0);
    if (w.oom) {
        gm_free(w.b.v);
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory printing %s", msg->descriptor->name);
    }
    *text = w.b.v;
    if (len) *len = w.b.n;
    return GM_OK;
}
