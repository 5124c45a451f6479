/*
 * graphmem/log.h — the library's log. GE's `[MemConflict]` lines go out at info level
 * (`graphmem -v` shows them); errors always; `-q` keeps only errors.
 *
 * Thread safety: the level and the stream are process-wide settings, plain variables: set them
 * before starting threads that use the library. gm_log itself may be called from any thread;
 * each call writes one line, but lines from threads writing at once may interleave.
 */
#ifndef GRAPHMEM_LOG_H
#define GRAPHMEM_LOG_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Severity, most severe first: a message is written when its level <= the set level. */
typedef enum gm_log_level { GM_LOG_ERROR = 0, GM_LOG_WARN, GM_LOG_INFO, GM_LOG_DEBUG } gm_log_level;

/* Messages at or below `level` are written; default GM_LOG_WARN. */
void gm_log_set_level(gm_log_level level);
gm_log_level gm_log_get_level(void);
/* Where messages go (default stderr; NULL: back to stderr). The stream stays the caller's: it
 * must stay open while the library may log. */
void gm_log_set_stream(FILE *f);
/* Writes one message (printf format, a newline appended) when level is enabled. */
void gm_log(gm_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
