/*
 * graphmem/log.h — the library's log. GE's `[MemConflict]` lines go out at info level
 * (`graphmem -v` shows them); errors always; `-q` keeps only errors.
 */
#ifndef GRAPHMEM_LOG_H
#define GRAPHMEM_LOG_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gm_log_level { GM_LOG_ERROR = 0, GM_LOG_WARN, GM_LOG_INFO, GM_LOG_DEBUG } gm_log_level;

/* Messages at or below `level` are written; default GM_LOG_WARN. */
void gm_log_set_level(gm_log_level level);
gm_log_level gm_log_get_level(void);
/* Where messages go (default stderr). */
void gm_log_set_stream(FILE *f);
void gm_log(gm_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
