/*
 * report_text.h — the growing text the picture writers print into: printf-style appends and
 * the two escapings they need (XML character data and attributes; DOT quoted strings).
 * Failures are sticky: after the first failed allocation everything is dropped and `failed`
 * stays set, so a writer prints straight through and checks once at the end.
 */
#ifndef GM_REPORT_TEXT_H
#define GM_REPORT_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gm_rtext {
    char *buf; /* gm_malloc'd, NUL-terminated when len > 0 */
    size_t len, cap;
    bool failed;
} gm_rtext;

void gm_rt_put(gm_rtext *t, const char *s, size_t n);
void gm_rt_puts(gm_rtext *t, const char *s);
void gm_rt_printf(gm_rtext *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* s escaped for XML text and attribute values (& < > " '); characters XML 1.0 forbids (C0
 * controls other than tab, newline, CR) become '?'. */
void gm_rt_xml(gm_rtext *t, const char *s);
/* s escaped for the inside of a DOT "quoted string": " and \ escaped, newlines as \n. */
void gm_rt_dot(gm_rtext *t, const char *s);
/* Bytes in human units: "512 B", "1.5 KiB", "3.25 MiB". */
void gm_rt_bytes(gm_rtext *t, long long bytes);
/* Hands the text over (NUL-terminated; never NULL unless failed) and resets t. */
char *gm_rt_take(gm_rtext *t, size_t *len);
void gm_rt_free(gm_rtext *t);

#endif
