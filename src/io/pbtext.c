/*
 * pbtext.c — protobuf text format parsed into protobuf-c messages of any
 * type (see pbtext.h for what is accepted). Written from the text-format grammar; the message
 * layout is protobuf-c's: each field descriptor gives the member's offset, and the
 * quantifier_offset of its element count (repeated), has_ flag (proto2 / proto3 `optional`
 * scalars) or oneof case.
 *
 * Memory: every block hangs off the message as soon as it is allocated (a repeated field's
 * count is raised only after its new element is zeroed, a string replaces the default only
 * once it is complete), so protobuf_c_message_free_unpacked() can free a half-built message
 * at any error.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/pbtext.h"
#include "io/pbtext_internal.h"
#include "util/alloc.h"
#include "util/utf8.h"

/* 2^128 - 2^103: the smallest magnitude that rounds to infinity as a float. */
#define FLT_ROUNDS_TO_INF 3.4028235677973366e38


/* ---- positions --------------------------------------------------------------------------- */

static const char k_bom[] = "\xEF\xBB\xBF";

void gm_pbtext_line_col(const char *text, size_t len, size_t offset, size_t *line, size_t *col)
{
    /* A byte order mark is not a character the user sees. */
    size_t skip = len >= 3 && memcmp(text, k_bom, 3) == 0 ? 3 : 0;
    if (offset < skip) offset = skip;
    gm_text_position(text + skip, len - skip, offset - skip, line, col);
}

bool gm_pbtext_pos_find(const gm_pbtext_posmap *pm, const void *msg, uint32_t field, uint32_t index,
                        size_t *offset)
{
    if (!pm) return false;
    for (size_t i = 0; i < pm->n; i++) {
        const gm_pbtext_pos *e = &pm->v[i];
        if (e->msg == msg && e->field == field && e->index == index) {
            *offset = e->offset;
            return true;
        }
    }
    return false;
}

void gm_pbtext_posmap_free(gm_pbtext_posmap *pm)
{
    if (!pm) return;
    gm_free(pm->v);
    memset(pm, 0, sizeof *pm);
}

static gm_status walk(ProtobufCMessage *msg, int depth, gm_pb_visit visit, void *ctx)
{
    gm_status st = visit(msg, depth, ctx);
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields && st == GM_OK; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE) continue;
        char *base = (char *)msg;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF && *(uint32_t *)(base + f->quantifier_offset) != f->id) continue;
        size_t n = 1;
        ProtobufCMessage **v = (ProtobufCMessage **)(base + f->offset);
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            n = *(size_t *)(base + f->quantifier_offset);
            v = *(ProtobufCMessage ***)(base + f->offset);
        }
        for (size_t k = 0; k < n && st == GM_OK; k++)
            if (v[k]) st = walk(v[k], depth + 1, visit, ctx);
    }
    return st;
}

gm_status gm_pb_walk(ProtobufCMessage *msg, gm_pb_visit visit, void *ctx) { return walk(msg, 0, visit, ctx); }

/* ---- lexer ------------------------------------------------------------------------------- */

typedef enum { TK_END, TK_IDENT, TK_NUMBER, TK_STRING, TK_PUNCT } tk_kind;

typedef struct parser {
    const char *text;
    size_t len;
    const char *src;
    gm_error *err;
    gm_pbtext_posmap *pm;
    size_t pos;   /* next byte to lex */
    tk_kind kind; /* the current token: text[tb..te) */
    size_t tb, te;
    int depth;
} parser;

static gm_status fail(parser *p, size_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static gm_status fail(parser *p, size_t off, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t line, col;
    gm_pbtext_line_col(p->text, p->len, off, &line, &col);
    return gm_error_set(p->err, GM_ERR_INPUT, "%s:%zu:%zu: %s", p->src, line, col, msg);
}

static gm_status oom(parser *p) { return gm_error_set(p->err, GM_ERR_NOMEM, "%s: out of memory", p->src); }

static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

static bool is_punct(const parser *p, char c)
{
    return p->kind == TK_PUNCT && p->text[p->tb] == c;
}

/* Skips white space and '#' comments. */
static void skip_space(parser *p)
{
    while (p->pos < p->len) {
        char c = p->text[p->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            p->pos++;
        } else if (c == '#') {
            while (p->pos < p->len && p->text[p->pos] != '\n') p->pos++;
        } else {
            break;
        }
    }
}

/* A number token: the longest run of characters that can belong to one literal. The value
 * is checked where the field's type is known. */
static size_t number_end(const parser *p, size_t i)
{
    const char *t = p->text;
    bool hex = i + 1 < p->len && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X');
    while (i < p->len) {
        char c = t[i];
        if (is_ident_char(c) || c == '.') {
            i++;
        } else if ((c == '+' || c == '-') && !hex && (t[i - 1] == 'e' || t[i - 1] == 'E')) {
            i++; /* exponent sign */
        } else {
            break;
        }
    }
    return i;
}

/* A quoted string token; the escapes are decoded (and checked) when the value is read. */
static gm_status string_end(parser *p, size_t i, size_t *end)
{
    char q = p->text[i];
    size_t start = i;
    for (i++; i < p->len; i++) {
        char c = p->text[i];
        if (c == q) {
            *end = i + 1;
            return GM_OK;
        }
        if (c == '\0') return fail(p, i, "a NUL byte inside a string (write it as \\0)");
        if (c == '\n') break;
        if (c == '\\') {
            if (i + 1 >= p->len || p->text[i + 1] == '\n') break;
            i++;
        }
    }
    return fail(p, start, "unterminated string (a string ends on the line it starts)");
}

/* Moves to the next token. */
static gm_status lex(parser *p)
{
    skip_space(p);
    p->tb = p->pos;
    if (p->pos >= p->len) {
        p->kind = TK_END;
        p->te = p->pos;
        return GM_OK;
    }
    char c = p->text[p->pos];
    size_t e = p->pos + 1;
    if (is_ident_start(c)) {
        while (e < p->len && is_ident_char(p->text[e])) e++;
        p->kind = TK_IDENT;
    } else if (is_digit(c) || (c == '.' && e < p->len && is_digit(p->text[e]))) {
        e = number_end(p, p->pos);
        p->kind = TK_NUMBER;
    } else if (c == '"' || c == '\'') {
        gm_status st = string_end(p, p->pos, &e);
        if (st != GM_OK) return st;
        p->kind = TK_STRING;
    } else if (c != '\0' && strchr("{}<>[]:,;-", c)) {
        p->kind = TK_PUNCT;
    } else {
        unsigned char u = (unsigned char)c;
        if (u >= 0x21 && u < 0x7F) return fail(p, p->pos, "unexpected character '%c'", c);
        return fail(p, p->pos, "unexpected byte 0x%02x", u);
    }
    p->te = e;
    p->pos = e;
    return GM_OK;
}

/* The current token for messages: "end of text", "'{'", "'foo'". */
static const char *tok_desc(const parser *p, char *buf, size_t cap)
{
    if (p->kind == TK_END) return "end of text";
    size_t n = p->te - p->tb;
    if (p->kind == TK_STRING) return "a string";
    snprintf(buf, cap, "'%.*s'%s", (int)(n < 40 ? n : 40), p->text + p->tb, n > 40 ? "..." : "");
    return buf;
}

/* Copies the current identifier token into buf (false when it does not fit). */
static bool tok_copy(const parser *p, char *buf, size_t cap)
{
    size_t n = p->te - p->tb;
    if (n >= cap) return false;
    memcpy(buf, p->text + p->tb, n);
    buf[n] = '\0';
    return true;
}

static bool tok_is(const parser *p, const char *s)
{
    size_t n = strlen(s);
    return p->kind == TK_IDENT && p->te - p->tb == n && memcmp(p->text + p->tb, s, n) == 0;
}

static bool tok_is_nocase(const parser *p, const char *s)
{
    size_t n = strlen(s);
    if (p->kind != TK_IDENT || p->te - p->tb != n) return false;
    for (size_t i = 0; i < n; i++) {
        char c = p->text[p->tb + i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != s[i]) return false;
    }
    return true;
}

/* ---- scalar values ----------------------------------------------------------------------- */

static const char *type_name(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32: return "int32";
    case PROTOBUF_C_TYPE_SINT32: return "sint32";
    case PROTOBUF_C_TYPE_SFIXED32: return "sfixed32";
    case PROTOBUF_C_TYPE_INT64: return "int64";
    case PROTOBUF_C_TYPE_SINT64: return "sint64";
    case PROTOBUF_C_TYPE_SFIXED64: return "sfixed64";
    case PROTOBUF_C_TYPE_UINT32: return "uint32";
    case PROTOBUF_C_TYPE_FIXED32: return "fixed32";
    case PROTOBUF_C_TYPE_UINT64: return "uint64";
    case PROTOBUF_C_TYPE_FIXED64: return "fixed64";
    case PROTOBUF_C_TYPE_FLOAT: return "float";
    case PROTOBUF_C_TYPE_DOUBLE: return "double";
    case PROTOBUF_C_TYPE_BOOL: return "bool";
    case PROTOBUF_C_TYPE_ENUM: return "enum";
    case PROTOBUF_C_TYPE_STRING: return "string";
    case PROTOBUF_C_TYPE_BYTES: return "bytes";
    case PROTOBUF_C_TYPE_MESSAGE: return "message";
    }
    return "?";
}

/* The magnitude of an integer literal text[b..e): decimal, 0x hex or 0 octal. Returns 0,
 * -1 when the text is not an integer literal, -2 when it overflows 64 bits. */
static int int_literal(const char *t, size_t b, size_t e, uint64_t *mag)
{
    unsigned base = 10;
    if (e - b > 2 && t[b] == '0' && (t[b + 1] == 'x' || t[b + 1] == 'X')) {
        base = 16;
        b += 2;
    } else if (e - b > 1 && t[b] == '0') {
        base = 8;
        b++;
    }
    uint64_t v = 0;
    for (size_t i = b; i < e; i++) {
        char c = t[i];
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else return -1;
        if (d >= base) return -1;
        if (v > (UINT64_MAX - d) / base) return -2;
        v = v * base + d;
    }
    *mag = v;
    return 0;
}

/* True when text[b..e) is a decimal float literal: digits, an optional fraction, an optional
 * exponent and an optional f/F suffix, with at least one mantissa digit. */
static bool float_literal(const char *t, size_t b, size_t e, size_t *num_end)
{
    size_t i = b, digits = 0;
    while (i < e && is_digit(t[i])) i++, digits++;
    if (i < e && t[i] == '.') {
        i++;
        while (i < e && is_digit(t[i])) i++, digits++;
    }
    if (!digits) return false;
    if (i < e && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (i < e && (t[i] == '+' || t[i] == '-')) i++;
        size_t d = i;
        while (i < e && is_digit(t[i])) i++;
        if (i == d) return false;
    }
    *num_end = i;
    if (i < e && (t[i] == 'f' || t[i] == 'F')) i++;
    return i == e;
}

/* An optional '-' and an integer literal. */
static gm_status read_int(parser *p, const ProtobufCFieldDescriptor *f, bool *neg, uint64_t *mag)
{
    size_t start = p->tb;
    gm_status st;
    *neg = false;
    if (is_punct(p, '-')) {
        *neg = true;
        if ((st = lex(p)) != GM_OK) return st;
    }
    char buf[64];
    if (p->kind != TK_NUMBER)
        return fail(p, p->tb, "field '%s': expected an integer (%s), found %s", f->name, type_name(f->type),
                    tok_desc(p, buf, sizeof buf));
    int rc = int_literal(p->text, p->tb, p->te, mag);
    if (rc == -1)
        return fail(p, p->tb, "field '%s': expected an integer (%s), found %s", f->name, type_name(f->type),
                    tok_desc(p, buf, sizeof buf));
    if (rc == -2)
        return fail(p, start, "field '%s': %s is out of range for %s", f->name, tok_desc(p, buf, sizeof buf),
                    type_name(f->type));
    return lex(p);
}

static gm_status out_of_range(parser *p, size_t start, const ProtobufCFieldDescriptor *f, bool neg, uint64_t mag)
{
    return fail(p, start, "field '%s': %s%" PRIu64 " is out of range for %s", f->name, neg ? "-" : "", mag,
                type_name(f->type));
}

/* Signed integers of `bits` bits. */
static gm_status read_signed(parser *p, const ProtobufCFieldDescriptor *f, unsigned bits, int64_t *v)
{
    size_t start = p->tb;
    bool neg = false;
    uint64_t mag = 0;
    gm_status st = read_int(p, f, &neg, &mag);
    if (st != GM_OK) return st;
    uint64_t max = bits == 64 ? (uint64_t)INT64_MAX : ((uint64_t)1 << (bits - 1)) - 1;
    if (mag > max + (neg ? 1 : 0)) return out_of_range(p, start, f, neg, mag);
    /* -2^63 has no positive counterpart: negate in unsigned arithmetic. */
    *v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    if (neg && mag == (uint64_t)INT64_MAX + 1) *v = INT64_MIN;
    return GM_OK;
}

static gm_status read_unsigned(parser *p, const ProtobufCFieldDescriptor *f, unsigned bits, uint64_t *v)
{
    size_t start = p->tb;
    bool neg = false;
    uint64_t mag = 0;
    gm_status st = read_int(p, f, &neg, &mag);
    if (st != GM_OK) return st;
    if ((neg && mag != 0) || (bits == 32 && mag > UINT32_MAX)) return out_of_range(p, start, f, neg, mag);
    *v = mag;
    return GM_OK;
}

static gm_status read_floating(parser *p, const ProtobufCFieldDescriptor *f, bool single, double *v)
{
    size_t start = p->tb;
    bool neg = false;
    gm_status st;
    char buf[64];
    if (is_punct(p, '-')) {
        neg = true;
        if ((st = lex(p)) != GM_OK) return st;
    }
    double x;
    uint64_t mag = 0;
    size_t num_end;
    if (tok_is_nocase(p, "inf") || tok_is_nocase(p, "infinity")) {
        x = INFINITY;
    } else if (tok_is_nocase(p, "nan")) {
        x = NAN;
    } else if (p->kind == TK_NUMBER && int_literal(p->text, p->tb, p->te, &mag) == 0) {
        x = (double)mag;
    } else if (p->kind == TK_NUMBER && float_literal(p->text, p->tb, p->te, &num_end)) {
        char num[128];
        size_t n = num_end - p->tb;
        if (n >= sizeof num) return fail(p, p->tb, "field '%s': number literal too long", f->name);
        memcpy(num, p->text + p->tb, n);
        num[n] = '\0';
        errno = 0;
        x = strtod(num, NULL);
        if (errno == ERANGE && isinf(x))
            return fail(p, start, "field '%s': %s is out of range for %s", f->name, tok_desc(p, buf, sizeof buf),
                        type_name(f->type));
    } else {
        return fail(p, p->tb, "field '%s': expected a number (%s), found %s", f->name, type_name(f->type),
                    tok_desc(p, buf, sizeof buf));
    }
    if (single && isfinite(x) && fabs(x) > FLT_MAX) {
        /* Values up to half a unit above FLT_MAX round to it (its own printed form is one). */
        if (fabs(x) >= FLT_ROUNDS_TO_INF)
            return fail(p, start, "field '%s': %s is out of range for float", f->name, tok_desc(p, buf, sizeof buf));
        x = copysign(FLT_MAX, x);
    }
    *v = neg ? -x : x;
    return lex(p);
}

static gm_status read_bool(parser *p, const ProtobufCFieldDescriptor *f, protobuf_c_boolean *v)
{
    uint64_t mag = 0;
    char buf[64];
    if (tok_is(p, "true") || tok_is(p, "True") || tok_is(p, "t")) {
        *v = 1;
    } else if (tok_is(p, "false") || tok_is(p, "False") || tok_is(p, "f")) {
        *v = 0;
    } else if (p->kind == TK_NUMBER && int_literal(p->text, p->tb, p->te, &mag) == 0 && mag <= 1) {
        *v = (protobuf_c_boolean)mag;
    } else {
        return fail(p, p->tb, "field '%s': expected a bool (true or false), found %s", f->name,
                    tok_desc(p, buf, sizeof buf));
    }
    return lex(p);
}

static gm_status read_enum(parser *p, const ProtobufCFieldDescriptor *f, int32_t *v)
{
    const ProtobufCEnumDescriptor *ed = f->descriptor;
    if (p->kind == TK_IDENT) {
        char name[256];
        const ProtobufCEnumValue *ev = tok_copy(p, name, sizeof name)
                                           ? protobuf_c_enum_descriptor_get_value_by_name(ed, name)
                                           : NULL;
        if (!ev) {
            return fail(p, p->tb, "field '%s': unknown value '%.*s' of enum %s", f->name,
                        (int)(p->te - p->tb < 80 ? p->te - p->tb : 80), p->text + p->tb, ed->name);
        }
        *v = ev->value;
        return lex(p);
    }
    /* A number: proto3 enums are open, any int32 is a value. */
    int64_t x;
    gm_status st = read_signed(p, f, 32, &x);
    if (st == GM_OK) *v = (int32_t)x;
    return st;
}

/* ---- strings ----------------------------------------------------------------------------- */



static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Code point cp as UTF-8 into out; returns the byte count. */
static size_t utf8_encode(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* One escape sequence starting at text[i] == '\\'; appends its bytes, *next = after it. */
static gm_status decode_escape(parser *p, size_t i, size_t end, sbuf *b, size_t *next)
{
    const char *t = p->text;
    char c = t[i + 1];
    char out[4];
    size_t n = 1;
    size_t j = i + 2;
    switch (c) {
    case 'n': out[0] = '\n'; break;
    case 't': out[0] = '\t'; break;
    case 'r': out[0] = '\r'; break;
    case 'a': out[0] = '\a'; break;
    case 'b': out[0] = '\b'; break;
    case 'f': out[0] = '\f'; break;
    case 'v': out[0] = '\v'; break;
    case '\\': case '\'': case '"': case '?': out[0] = c; break;
    case 'x': case 'X': {
        unsigned v = 0, k = 0;
        while (k < 2 && j < end && hex_value(t[j]) >= 0) v = v * 16 + (unsigned)hex_value(t[j++]), k++;
        if (!k) return fail(p, i, "bad escape '\\%c' in a string (\\x needs hex digits)", c);
        out[0] = (char)v;
        break;
    }
    case 'u': case 'U': {
        unsigned want = c == 'u' ? 4 : 8, k = 0;
        uint32_t cp = 0;
        while (k < want && j < end && hex_value(t[j]) >= 0) cp = cp * 16 + (uint32_t)hex_value(t[j++]), k++;
        if (k != want || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return fail(p, i, "bad escape '\\%c' in a string (expected %u hex digits of a Unicode scalar value)", c,
                        want);
        n = utf8_encode(cp, out);
        break;
    }
    default:
        if (c >= '0' && c <= '7') {
            unsigned v = 0, k = 0;
            j = i + 1;
            while (k < 3 && j < end && t[j] >= '0' && t[j] <= '7') v = v * 8 + (unsigned)(t[j++] - '0'), k++;
            if (v > 0xFF) return fail(p, i, "bad escape: octal value \\%.3s is above \\377", t + i + 1);
            out[0] = (char)v;
            break;
        }
        if ((unsigned char)c >= 0x21 && (unsigned char)c < 0x7F)
            return fail(p, i, "bad escape '\\%c' in a string", c);
        return fail(p, i, "bad escape (backslash before byte 0x%02x) in a string", (unsigned char)c);
    }
    *next = j;
    return sbuf_put(b, out, n) ? oom(p) : GM_OK;
}

/* One or more adjacent string tokens, decoded and concatenated into a malloc'ed buffer
 * (NUL-terminated; *len excludes the NUL). */
static gm_status read_string(parser *p, const ProtobufCFieldDescriptor *f, char **out, size_t *len)
{
    char buf[64];
    if (p->kind != TK_STRING)
        return fail(p, p->tb, "field '%s': expected a string (%s), found %s", f->name, type_name(f->type),
                    tok_desc(p, buf, sizeof buf));
    sbuf b = {0};
    gm_status st = sbuf_put(&b, "", 0) ? oom(p) : GM_OK;
    while (st == GM_OK && p->kind == TK_STRING) {
        size_t i = p->tb + 1, end = p->te - 1; /* inside the quotes */
        while (st == GM_OK && i < end) {
            size_t run = i;
            while (i < end && p->text[i] != '\\') i++;
            if (i > run && sbuf_put(&b, p->text + run, i - run)) st = oom(p);
            if (st == GM_OK && i < end) st = decode_escape(p, i, end, &b, &i);
        }
        if (st == GM_OK) st = lex(p);
    }
    if (st != GM_OK) {
        gm_free(b.v);
        return st;
    }
    *out = b.v;
    *len = b.n;
    return GM_OK;
}

/* ---- building the message ---------------------------------------------------------------- */


/* The storage for the next value of field f: a new zeroed element of a repeated field (its
 * index in *index), or the field itself, with its has_ flag or oneof case set. */
static gm_status take_slot(parser *p, ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, void **slot,
                           uint32_t *index)
{
    *index = 0;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        size_t *count = MEMBER(msg, f->quantifier_offset);
        void **arr = MEMBER(msg, f->offset);
        size_t n = *count, es = elem_size(f);
        if (n >= UINT32_MAX) return fail(p, p->tb, "field '%s': too many elements", f->name);
        /* The array holds a power of two elements: grow when n reaches one. */
        if ((n & (n - 1)) == 0) {
            size_t cap = n ? n * 2 : 1;
            void *q = gm_realloc(*arr, cap * es);
            if (!q) return oom(p);
            *arr = q;
        }
        void *e = (char *)*arr + n * es;
        memset(e, 0, es);
        *count = n + 1;
        *slot = e;
        *index = (uint32_t)n;
        return GM_OK;
    }
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        *(uint32_t *)MEMBER(msg, f->quantifier_offset) = f->id;
    } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_STRING &&
               f->type != PROTOBUF_C_TYPE_MESSAGE) {
        *(protobuf_c_boolean *)MEMBER(msg, f->quantifier_offset) = 1;
    }
    *slot = MEMBER(msg, f->offset);
    return GM_OK;
}

static gm_status record(parser *p, const void *msg, uint32_t field, uint32_t index, size_t off)
{
    gm_pbtext_posmap *pm = p->pm;
    if (!pm) return GM_OK;
    if (gm_grow((void **)&pm->v, sizeof *pm->v, pm->n + 1, &pm->cap)) return oom(p);
    pm->v[pm->n++] = (gm_pbtext_pos){msg, field, index, off};
    return GM_OK;
}

static gm_status parse_fields(parser *p, ProtobufCMessage *msg, char close);

static gm_status parse_message_value(parser *p, const ProtobufCFieldDescriptor *f, void *slot, size_t off)
{
    char buf[64];
    if (!is_punct(p, '{') && !is_punct(p, '<'))
        return fail(p, p->tb, "field '%s': expected '{' to start a %s, found %s", f->name,
                    ((const ProtobufCMessageDescriptor *)f->descriptor)->name, tok_desc(p, buf, sizeof buf));
    if (p->depth >= GM_PBTEXT_MAX_DEPTH)
        return fail(p, p->tb, "messages nested deeper than %d levels", GM_PBTEXT_MAX_DEPTH);
    char close = p->text[p->tb] == '{' ? '}' : '>';
    const ProtobufCMessageDescriptor *sd = f->descriptor;
    ProtobufCMessage *sub = gm_malloc(sd->sizeof_message);
    if (!sub) return oom(p);
    protobuf_c_message_init(sd, sub);
    *(ProtobufCMessage **)slot = sub;
    gm_status st = record(p, sub, 0, 0, off);
    if (st == GM_OK) st = lex(p);
    if (st != GM_OK) return st;
    p->depth++;
    st = parse_fields(p, sub, close);
    p->depth--;
    return st;
}

/* Frees a string or bytes value about to be replaced, unless it is the field's default. */
static void drop_old(const ProtobufCFieldDescriptor *f, void *slot)
{
    if (f->label == PROTOBUF_C_LABEL_REPEATED) return; /* fresh zeroed element */
    if (f->type == PROTOBUF_C_TYPE_STRING) {
        char *s = *(char **)slot;
        if (s && s != f->default_value) gm_free(s);
    } else {
        ProtobufCBinaryData *bd = slot;
        const ProtobufCBinaryData *dflt = f->default_value;
        if (bd->data && (!dflt || dflt->data != bd->data)) gm_free(bd->data);
    }
}

static gm_status parse_text_value(parser *p, const ProtobufCFieldDescriptor *f, void *slot, size_t start)
{
    char *s = NULL;
    size_t n = 0;
    gm_status st = read_string(p, f, &s, &n);
    if (st != GM_OK) return st;
    if (f->type == PROTOBUF_C_TYPE_STRING) {
        size_t bad;
        if (memchr(s, '\0', n)) {
            gm_free(s);
            return fail(p, start, "field '%s': a string field cannot hold a NUL byte (use a bytes field)", f->name);
        }
        if (!gm_utf8_valid(s, n, &bad)) {
            gm_free(s);
            return fail(p, start, "field '%s': the string is not valid UTF-8 (byte %zu)", f->name, bad);
        }
        drop_old(f, slot);
        *(char **)slot = s;
    } else {
        drop_old(f, slot);
        ProtobufCBinaryData *bd = slot;
        bd->data = (uint8_t *)s;
        bd->len = n;
    }
    return GM_OK;
}

/* One value of field f (an element of a list, or the whole value); off = where it starts. */
static gm_status parse_value(parser *p, ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, size_t off)
{
    void *slot = NULL;
    uint32_t index = 0;
    gm_status st = take_slot(p, msg, f, &slot, &index);
    if (st == GM_OK) st = record(p, msg, f->id, index, off);
    if (st != GM_OK) return st;
    size_t start = p->tb;
    int64_t sv = 0;
    uint64_t uv = 0;
    double dv = 0;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
        if ((st = read_signed(p, f, 32, &sv)) == GM_OK) *(int32_t *)slot = (int32_t)sv;
        return st;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
        if ((st = read_signed(p, f, 64, &sv)) == GM_OK) *(int64_t *)slot = sv;
        return st;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
        if ((st = read_unsigned(p, f, 32, &uv)) == GM_OK) *(uint32_t *)slot = (uint32_t)uv;
        return st;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        if ((st = read_unsigned(p, f, 64, &uv)) == GM_OK) *(uint64_t *)slot = uv;
        return st;
    case PROTOBUF_C_TYPE_FLOAT:
        if ((st = read_floating(p, f, true, &dv)) == GM_OK) *(float *)slot = (float)dv;
        return st;
    case PROTOBUF_C_TYPE_DOUBLE:
        if ((st = read_floating(p, f, false, &dv)) == GM_OK) *(double *)slot = dv;
        return st;
    case PROTOBUF_C_TYPE_BOOL: return read_bool(p, f, slot);
    case PROTOBUF_C_TYPE_ENUM: return read_enum(p, f, slot);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES: return parse_text_value(p, f, slot, start);
    case PROTOBUF_C_TYPE_MESSAGE: return parse_message_value(p, f, slot, off);
    }
    return gm_error_set(p->err, GM_ERR_INTERNAL, "%s: field '%s' has an unknown type", p->src, f->name);
}

/* The value part of a field, after its name: ': value', ': [list]', or a message. */
static gm_status parse_field(parser *p, ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, size_t name_off)
{
    char buf[64];
    gm_status st;
    bool is_msg = f->type == PROTOBUF_C_TYPE_MESSAGE;
    if (is_punct(p, ':')) {
        if ((st = lex(p)) != GM_OK) return st;
    } else if (!is_msg) {
        return fail(p, p->tb, "field '%s': expected ':' after the field name, found %s", f->name,
                    tok_desc(p, buf, sizeof buf));
    }
    if (!is_punct(p, '[')) return parse_value(p, msg, f, name_off);
    if (f->label != PROTOBUF_C_LABEL_REPEATED)
        return fail(p, p->tb, "field '%s' of %s is not repeated: it cannot take a list", f->name,
                    msg->descriptor->name);
    if ((st = lex(p)) != GM_OK) return st;
    if (is_punct(p, ']')) return lex(p);
    for (;;) {
        if ((st = parse_value(p, msg, f, p->tb)) != GM_OK) return st;
        if (is_punct(p, ']')) return lex(p);
        if (!is_punct(p, ','))
            return fail(p, p->tb, "field '%s': expected ',' or ']' in the list, found %s", f->name,
                        tok_desc(p, buf, sizeof buf));
        if ((st = lex(p)) != GM_OK) return st;
    }
}

/* The name of the oneof member of msg that is set alongside f, for messages. */
static const char *oneof_member(const ProtobufCMessage *msg, uint32_t id)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        if (d->fields[i].id == id) return d->fields[i].name;
    }
    return "?";
}

/* Field checks before a value: a non-repeated field once, one member per oneof. seen has a
 * bit per field of the message. */
static gm_status check_field_once(parser *p, ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f,
                                  uint8_t *seen, size_t name_off)
{
    if (f->label == PROTOBUF_C_LABEL_REPEATED) return GM_OK;
    size_t k = (size_t)(f - msg->descriptor->fields);
    if (seen[k / 8] & (1u << (k % 8)))
        return fail(p, name_off, "field '%s' of %s is given twice (it is not repeated)", f->name,
                    msg->descriptor->name);
    seen[k / 8] |= (uint8_t)(1u << (k % 8));
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t c = *(const uint32_t *)CMEMBER(msg, f->quantifier_offset);
        if (c != 0 && c != f->id)
            return fail(p, name_off, "field '%s' of %s: field '%s' of the same oneof is already set", f->name,
                        msg->descriptor->name, oneof_member(msg, c));
    }
    return GM_OK;
}

/* Fields up to `close` ('}' or '>', consumed) or, for the top level (close 0), the end. */
static gm_status parse_fields(parser *p, ProtobufCMessage *msg, char close)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    uint8_t small[16] = {0};
    size_t nbytes = d->n_fields / 8 + 1;
    uint8_t *seen = nbytes <= sizeof small ? small : gm_calloc(nbytes, 1);
    if (!seen) return oom(p);
    gm_status st = GM_OK;
    char buf[64], name[256];
    while (st == GM_OK) {
        if (p->kind == TK_END) {
            if (close) st = fail(p, p->tb, "unexpected end of text: expected '%c' to close %s", close, d->name);
            break;
        }
        if (close && is_punct(p, close)) {
            st = lex(p);
            break;
        }
        if (is_punct(p, '[')) {
            st = fail(p, p->tb, "extension and Any fields ('[...]') are not supported (in %s)", d->name);
            break;
        }
        if (p->kind != TK_IDENT) {
            char closing[8] = "";
            if (close) snprintf(closing, sizeof closing, " or '%c'", close);
            st = fail(p, p->tb, "expected a field name of %s%s, found %s", d->name, closing,
                      tok_desc(p, buf, sizeof buf));
            break;
        }
        const ProtobufCFieldDescriptor *f =
            tok_copy(p, name, sizeof name) ? protobuf_c_message_descriptor_get_field_by_name(d, name) : NULL;
        if (!f) {
            st = fail(p, p->tb, "%s has no field named '%.*s'", d->name,
                      (int)(p->te - p->tb < 80 ? p->te - p->tb : 80), p->text + p->tb);
            break;
        }
        size_t name_off = p->tb;
        if ((st = check_field_once(p, msg, f, seen, name_off)) != GM_OK) break;
        if ((st = lex(p)) != GM_OK) break;
        if ((st = parse_field(p, msg, f, name_off)) != GM_OK) break;
        if (is_punct(p, ',') || is_punct(p, ';')) st = lex(p);
    }
    if (seen != small) gm_free(seen);
    return st;
}

gm_status gm_pbtext_parse(const ProtobufCMessageDescriptor *desc, const char *text, size_t len,
                          const char *source, gm_pbtext_posmap *pos, ProtobufCMessage **out, gm_error *err)
{
    *out = NULL;
    parser p = {.text = text, .len = len, .src = source ? source : "", .err = err, .pm = pos};
    if (len >= 3 && memcmp(text, k_bom, 3) == 0) p.pos = 3;
    ProtobufCMessage *msg = gm_malloc(desc->sizeof_message);
    if (!msg) return oom(&p);
    protobuf_c_message_init(desc, msg);
    gm_status st = lex(&p);
    if (st == GM_OK) st = parse_fields(&p, msg, 0);
    if (st != GM_OK) {
        protobuf_c_message_free_unpacked(msg, NULL);
        return st;
    }
    *out = msg;
    return GM_OK;
}
