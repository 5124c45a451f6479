/* log.c — leveled logging to one stream; the level check comes first so disabled lines cost
 * one comparison. */
#include <stdarg.h>

#include "graphmem/log.h"

static gm_log_level g_level = GM_LOG_WARN;
static FILE *g_stream;

void gm_log_set_level(gm_log_level level) { g_level = level; }
gm_log_level gm_log_get_level(void) { return g_level; }
void gm_log_set_stream(FILE *f) { g_stream = f; }

void gm_log(gm_log_level level, const char *fmt, ...)
{
    if (level > g_level) return;
    FILE *f = g_stream ? g_stream : stderr;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
}
