/*
 * json_emit.h — a small JSON text emitter shared by the writers (models, plans): exact int64
 * numbers (cJSON prints from doubles, so values above 2^53 would change), strings escaped as
 * the readers expect, and a stable layout: one member per line with one-space indents down to
 * wrap_depth, compact below it, so output is deterministic and diffs well.
 *
 * Failures are sticky: the first one is kept in st (and why, for GM_ERR_INPUT) and everything
 * written after it is dropped, so a writer reads straight through and checks once at the end.
 */
#ifndef GM_JSON_EMIT_H
#define GM_JSON_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "graphmem/graph.h"

/* A reader on another thread reading the text as it is written (the planner's verifier scans
 * the plan's text this way). The writer shows it how far the text is final, every
 * GM_JW_SHOW_EVERY bytes and at the end; before the buffer moves or is freed, the writer takes
 * the lock and sets `moving`, and the reader, which reads only under the lock and only while
 * `moving` is false, reads no more. Nothing here waits for the reader to run at all. */
typedef struct gm_jw_reader {
    pthread_mutex_t lock;
    const char *buf;       /* the text, set when the writer attaches the reader */
    _Atomic size_t shown;  /* buf[0, shown) is final */
    atomic_bool done;      /* shown is the whole text */
    bool moving;           /* under the lock: the buffer is no longer there to read */
} gm_jw_reader;
enum { GM_JW_SHOW_EVERY = 256 * 1024 };

typedef struct gm_jw {
    char *buf;          /* gm_malloc'd, NUL-terminated */
    size_t len, cap;
    gm_status st;       /* first failure; later output is dropped */
    char why[512];      /* its message, for GM_ERR_INPUT */
    uint32_t *count;    /* members written so far, per open container */
    size_t depth, cap_depth;
    size_t wrap_depth;  /* containers nested deeper than this are written on one line; 0: all wrapped */
    bool after_key;     /* the next value follows "key": on the same line */
    const gm_model *m;  /* for messages: */
    const char *graph, *node, *what;
    gm_jw_reader *reader; /* NULL, or the reader following the text (gm_jw_attach) */
    size_t shown;         /* what the reader was last shown */
} gm_jw;

/* Attaches r to the text written so far (after the buffer is reserved: the reader lets go at
 * the first move); gm_jw_detach lets it go for good (before the buffer is freed, or at the end,
 * marking the text done when it is whole). */
void gm_jw_attach(gm_jw *w, gm_jw_reader *r);
void gm_jw_detach(gm_jw *w, bool done);

/* Room for n more bytes and the NUL after them; false (sticky failure) when there is none. */
bool gm_jw_room(gm_jw *w, size_t n);
void gm_jw_put(gm_jw *w, const char *s, size_t n);
void gm_jw_puts(gm_jw *w, const char *s);
/* Records a GM_ERR_INPUT failure that names the place being written (m, graph, node, what). */
void gm_jw_fail(gm_jw *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void gm_jw_newline(gm_jw *w);
/* Separator and line break before a member of the open container. */
void gm_jw_item(gm_jw *w);
void gm_jw_open(gm_jw *w, char c);
void gm_jw_close(gm_jw *w, char c);
/* A JSON string; s must be UTF-8 (else a GM_ERR_INPUT failure). */
void gm_jw_str(gm_jw *w, const char *s);
/* The same string text alone, with no separator or line break before it (a writer composing a
 * line itself). */
void gm_jw_str_text(gm_jw *w, const char *s);
void gm_jw_key(gm_jw *w, const char *k);
void gm_jw_int(gm_jw *w, int64_t v);
/* v's decimal text at the end of b: returns where it starts (it ends at GM_JW_DIGITS). */
#define GM_JW_DIGITS 24
size_t gm_jw_digits(char b[GM_JW_DIGITS], int64_t v);
void gm_jw_bool(gm_jw *w, bool v);
void gm_jw_null(gm_jw *w);
/* The shortest text that reads back to exactly v, always as a float. */
void gm_jw_float(gm_jw *w, double v);
void gm_jw_kv_str(gm_jw *w, const char *k, const char *v);
void gm_jw_kv_int(gm_jw *w, const char *k, int64_t v);
void gm_jw_base64(gm_jw *w, const unsigned char *p, size_t n);
/* Frees the scratch; the buffer stays with the caller (gm_free it). */
void gm_jw_done(gm_jw *w);

#endif
