/* report_text.c — the picture writers' output text (see report_text.h). */
#include "report/report_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"

static bool reserve(gm_rtext *t, size_t more)
{
    if (t->failed) return false;
    if (t->len + more + 1 <= t->cap) return true;
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + more + 1) cap *= 2;
    char *b = gm_realloc(t->buf, cap);
    if (!b) {
        t->failed = true;
        return false;
    }
    t->buf = b;
    t->cap = cap;
    return true;
}

void gm_rt_put(gm_rtext *t, const char *s, size_t n)
{
    if (!reserve(t, n)) return;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

void gm_rt_puts(gm_rtext *t, const char *s) { gm_rt_put(t, s, strlen(s)); }

void gm_rt_printf(gm_rtext *t, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        gm_rt_put(t, small, (size_t)n);
        return;
    }
    if (!reserve(t, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

void gm_rt_xml(gm_rtext *t, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *rep = NULL;
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&apos;"; break;
        default:
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') rep = "?";
        }
        if (!rep) continue;
        gm_rt_put(t, run, (size_t)(s - run));
        gm_rt_puts(t, rep);
        run = s + 1;
    }
    gm_rt_put(t, run, (size_t)(s - run));
}

void gm_rt_dot(gm_rtext *t, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        const char *rep = *s == '"' ? "\\\"" : *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" : *s == '\r' ? "" : NULL;
        if (!rep) continue;
        gm_rt_put(t, run, (size_t)(s - run));
        gm_rt_puts(t, rep);
        run = s + 1;
    }
    gm_rt_put(t, run, (size_t)(s - run));
}

void gm_rt_bytes(gm_rtext *t, long long bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (u < 4 && (v >= 1024.0 || v <= -1024.0)) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) gm_rt_printf(t, "%lld B", bytes);
    else gm_rt_printf(t, "%.3g %s", v, units[u]);
}

char *gm_rt_take(gm_rtext *t, size_t *len)
{
    if (t->failed) return NULL;
    if (!t->buf) gm_rt_put(t, "", 0);
    if (!reserve(t, 0)) return NULL;
    t->buf[t->len] = '\0';
    char *b = t->buf;
    if (len) *len = t->len;
    t->buf = NULL;
    t->len = t->cap = 0;
    return b;
}

void gm_rt_free(gm_rtext *t)
{
    gm_free(t->buf);
    t->buf = NULL;
    t->len = t->cap = 0;
}
