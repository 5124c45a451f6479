/* json_emit.c — the JSON text emitter (see json_emit.h). */
#include "io/json_emit.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/utf8.h"

static void stop_reader(gm_jw *w)
{
    pthread_mutex_lock(&w->reader->lock);
    w->reader->moving = true;
    pthread_mutex_unlock(&w->reader->lock);
    w->reader = NULL;
}

void gm_jw_attach(gm_jw *w, gm_jw_reader *r)
{
    r->buf = w->buf;
    w->reader = r;
    w->shown = w->len;
    atomic_store_explicit(&r->shown, w->len, memory_order_release);
}

void gm_jw_detach(gm_jw *w, bool done)
{
    if (!w->reader) return;
    if (done && w->st == GM_OK) {
        atomic_store_explicit(&w->reader->shown, w->len, memory_order_release);
        atomic_store_explicit(&w->reader->done, true, memory_order_release);
        w->reader = NULL;
        return;
    }
    stop_reader(w);
}

bool gm_jw_room(gm_jw *w, size_t n)
{
    if (w->st != GM_OK) return false;
    if (w->len + n + 1 > w->cap) {
        if (w->reader) stop_reader(w); /* the buffer moves */
        if (gm_grow((void **)&w->buf, 1, w->len + n + 1, &w->cap)) {
            w->st = GM_ERR_NOMEM;
            return false;
        }
    } else if (w->reader && w->len - w->shown >= GM_JW_SHOW_EVERY) {
        w->shown = w->len;
        atomic_store_explicit(&w->reader->shown, w->len, memory_order_release);
    }
    return true;
}

void gm_jw_put(gm_jw *w, const char *s, size_t n)
{
    if (!gm_jw_room(w, n)) return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

void gm_jw_puts(gm_jw *w, const char *s) { gm_jw_put(w, s, strlen(s)); }

void gm_jw_fail(gm_jw *w, const char *fmt, ...)
{
    if (w->st != GM_OK) return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *src = gm_model_source(w->m);
    int k = snprintf(w->why, sizeof w->why, "%s", *src ? src : gm_model_name(w->m));
    if (k < 0) k = 0;
    size_t off = (size_t)k < sizeof w->why ? (size_t)k : sizeof w->why - 1;
    if (w->graph) off += (size_t)snprintf(w->why + off, sizeof w->why - off, ": graph '%s'", w->graph);
    if (off < sizeof w->why && w->node)
        off += (size_t)snprintf(w->why + off, sizeof w->why - off, ": node '%s'", w->node);
    if (off < sizeof w->why && w->what) off += (size_t)snprintf(w->why + off, sizeof w->why - off, ": %s", w->what);
    if (off < sizeof w->why) snprintf(w->why + off, sizeof w->why - off, ": %s", msg);
    w->st = GM_ERR_INPUT;
}

void gm_jw_newline(gm_jw *w)
{
    static const char spaces[] = "                                ";
    if (w->wrap_depth && w->depth > w->wrap_depth) return; /* compact below the wrap depth */
    gm_jw_put(w, "\n", 1);
    for (size_t d = w->depth; d > 0;) {
        size_t n = d < sizeof spaces - 1 ? d : sizeof spaces - 1;
        gm_jw_put(w, spaces, n);
        d -= n;
    }
}

/* Separator and line break before a member of the open container. */
void gm_jw_item(gm_jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0) return;
    if (w->count[w->depth - 1]++) gm_jw_put(w, ",", 1);
    gm_jw_newline(w);
}

void gm_jw_open(gm_jw *w, char c)
{
    gm_jw_item(w);
    gm_jw_put(w, &c, 1);
    if (w->st != GM_OK) return;
    if (gm_grow((void **)&w->count, sizeof *w->count, w->depth + 1, &w->cap_depth)) {
        w->st = GM_ERR_NOMEM;
        return;
    }
    w->count[w->depth++] = 0;
}

void gm_jw_close(gm_jw *w, char c)
{
    if (w->st != GM_OK) return;
    uint32_t had = w->count[--w->depth];
    /* a container written on one line closes on that line */
    bool inline_ = w->wrap_depth && w->depth + 1 > w->wrap_depth;
    if (had && !inline_) gm_jw_newline(w);
    gm_jw_put(w, &c, 1);
}

/* The escaping path of gm_jw_str: s[0, n) is valid UTF-8 with something to escape. */
static void put_escaped(gm_jw *w, const char *s, size_t n)
{
    size_t run = 0; /* bytes copied as they are, flushed before each escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[8];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                snprintf(u, sizeof u, "\\u%04x", c);
                esc = u;
            }
        }
        if (!esc) {
            run++;
            continue;
        }
        gm_jw_put(w, s + i - run, run);
        run = 0;
        gm_jw_puts(w, esc);
    }
    gm_jw_put(w, s + n - run, run);
}

/* Printable ASCII (0x20..0x7f: one unsigned comparison) but quote and backslash: copied as
 * it is. NUL is not, so a run of them ends at the end of a plain string. */
static inline bool plain_byte(unsigned char c) { return (unsigned char)(c - 0x20) < 0x60 && c != '"' && c != '\\'; }

/* A JSON string. The text must be UTF-8: the output has to be readable back. Names are nearly
 * always printable ASCII with nothing to escape: one pass finds that and copies them whole. */
void gm_jw_str(gm_jw *w, const char *s)
{
    gm_jw_item(w);
    gm_jw_str_text(w, s);
}

void gm_jw_str_text(gm_jw *w, const char *s)
{
    size_t n = 0;
    while (plain_byte((unsigned char)s[n])) n++;
    bool plain = !s[n];
    if (!plain) n += strlen(s + n);
    if (!plain) {
        if (!gm_utf8_valid(s, n, NULL)) {
            gm_jw_fail(w, "a name or string is not valid UTF-8");
            return;
        }
        gm_jw_put(w, "\"", 1);
        put_escaped(w, s, n);
        gm_jw_put(w, "\"", 1);
        return;
    }
    if (!gm_jw_room(w, n + 2)) return;
    w->buf[w->len++] = '"';
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len++] = '"';
    w->buf[w->len] = '\0';
}

void gm_jw_key(gm_jw *w, const char *k)
{
    gm_jw_str(w, k);
    if (w->wrap_depth && w->depth > w->wrap_depth) gm_jw_put(w, ":", 1);
    else gm_jw_put(w, ": ", 2);
    w->after_key = true;
}

/* Decimal digits by hand: snprintf's format parsing was a tenth of writing a big plan. */
size_t gm_jw_digits(char b[GM_JW_DIGITS], int64_t v)
{
    size_t k = GM_JW_DIGITS;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        b[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) b[--k] = '-';
    return k;
}

void gm_jw_int(gm_jw *w, int64_t v)
{
    char b[GM_JW_DIGITS];
    size_t k = gm_jw_digits(b, v);
    gm_jw_item(w);
    gm_jw_put(w, b + k, sizeof b - k);
}

void gm_jw_bool(gm_jw *w, bool v)
{
    gm_jw_item(w);
    gm_jw_puts(w, v ? "true" : "false");
}

/* The shortest %g text that reads back to exactly v, always with a '.' or an exponent so
 * that it reads back as a float, not an int. */
void gm_jw_float(gm_jw *w, double v)
{
    if (isnan(v)) {
        gm_jw_fail(w, "NaN cannot be written in JSON");
        return;
    }
    gm_jw_item(w);
    if (isinf(v)) {
        gm_jw_puts(w, v > 0 ? "1e999" : "-1e999");
        return;
    }
    char b[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(b, sizeof b, "%.*g", prec, v);
        if (strtod(b, NULL) == v) break;
    }
    if (!strpbrk(b, ".eE")) strcat(b, ".0");
    gm_jw_puts(w, b);
}

void gm_jw_kv_str(gm_jw *w, const char *k, const char *v)
{
    gm_jw_key(w, k);
    gm_jw_str(w, v);
}

void gm_jw_kv_int(gm_jw *w, const char *k, int64_t v)
{
    gm_jw_key(w, k);
    gm_jw_int(w, v);
}

/* ---- base64 ---------------------------------------------------------------------------- */

void gm_jw_base64(gm_jw *w, const unsigned char *p, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    gm_jw_item(w);
    gm_jw_put(w, "\"", 1);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        char q[4] = {a[v >> 18 & 63], a[v >> 12 & 63], i + 1 < n ? a[v >> 6 & 63] : '=', i + 2 < n ? a[v & 63] : '='};
        gm_jw_put(w, q, 4);
    }
    gm_jw_put(w, "\"", 1);
}

void gm_jw_null(gm_jw *w)
{
    gm_jw_item(w);
    gm_jw_puts(w, "null");
}

void gm_jw_done(gm_jw *w)
{
    if (w->reader) stop_reader(w); /* not let go as done: the text may not stay */
    gm_free(w->count);
    w->count = NULL;
}
