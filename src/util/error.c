/* error.c — gm_error: one status code plus a message that names the file and the place. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graphmem/graph.h"

void gm_error_clear(gm_error *err)
{
    if (!err) return;
    err->code = GM_OK;
    err->message[0] = '\0';
}

gm_status gm_error_set(gm_error *err, gm_status code, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

int gm_status_exit_code(gm_status st)
{
    switch (st) {
    case GM_OK: return 0;
    case GM_ERR_PROBLEM: return 1;
    case GM_ERR_INPUT:
    case GM_ERR_USAGE:
    case GM_ERR_IO: return 2;
    case GM_ERR_NOMEM:
    case GM_ERR_INTERNAL:
    case GM_ERR_UNSUPPORTED:
    case GM_ERR_DEVICE: break;
    }
    return 3; /* out of memory or a bug: neither the user's input nor a finding */
}

const char *gm_status_name(gm_status st)
{
    static const char *const names[] = {"ok", "bad input", "bad usage", "i/o error",
                                        "out of memory", "problem found", "internal error",
                                        "unsupported", "device error"};
    return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "?";
}
