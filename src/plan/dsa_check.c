/*
 * dsa_check.c — an independent verifier for offset assignments. It shares no code with the
 * packers: a sweep over time keeps the live buffers sorted by offset, and since the live set is
 * conflict-free before each birth, a newborn can only collide with its neighbours in that order.
 * Sorting is O(n log n); each insertion moves at most the live set (a memmove), never compares it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/dsa.h"
#include "util/alloc.h"

typedef struct event {
    int64_t t;
    int born; /* 0 death, 1 birth: deaths first at one instant (half-open lifetimes) */
    size_t i;
} event;

static int cmp_event(const void *a, const void *b)
{
    const event *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->born != y->born) return x->born - y->born;
    return (x->i > y->i) - (x->i < y->i);
}

static void say(char *why, size_t cap, const char *fmt, ...)
{
    if (!why || cap == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
}

static const char *label(const gm_dsa_buffer *x, char *tmp, size_t cap)
{
    if (x->name) return x->name;
    snprintf(tmp, cap, "%" PRId64, x->id);
    return tmp;
}

/* First position in live[0..k) whose offset is >= off. */
static size_t lower_pos(const gm_dsa_buffer *b, const size_t *live, size_t k, int64_t off)
{
    size_t lo = 0, hi = k;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[live[mid]].offset < off) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

bool gm_dsa_check(const gm_dsa_buffer *b, size_t n, int64_t height, char *why, size_t cap)
{
    char t1[32], t2[32];
    say(why, cap, "ok");
    for (size_t i = 0; i < n; i++) {
        const gm_dsa_buffer *x = &b[i];
        int64_t a = x->align > 0 ? x->align : 1;
        if (x->offset < 0) {
            say(why, cap, "buffer %s has no offset", label(x, t1, sizeof t1));
            return false;
        }
        if (x->offset % a) {
            say(why, cap, "buffer %s: offset %" PRId64 " not a multiple of its alignment %" PRId64,
                label(x, t1, sizeof t1), x->offset, a);
            return false;
        }
        if (height >= 0 && x->offset + x->size > height) {
            say(why, cap, "buffer %s: [%" PRId64 ", %" PRId64 ") exceeds the height %" PRId64,
                label(x, t1, sizeof t1), x->offset, x->offset + x->size, height);
            return false;
        }
    }
    event *ev = gm_malloc((2 * n + 1) * sizeof *ev);
    size_t *live = gm_malloc((n + 1) * sizeof *live);
    if (!ev || !live) {
        gm_free(ev);
        gm_free(live);
        say(why, cap, "out of memory");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        ev[2 * i] = (event){b[i].lower, 1, i};
        ev[2 * i + 1] = (event){b[i].upper, 0, i};
    }
    qsort(ev, 2 * n, sizeof *ev, cmp_event);
    size_t k = 0;
    bool ok = true;
    for (size_t e = 0; e < 2 * n && ok; e++) {
        size_t i = ev[e].i;
        size_t pos = lower_pos(b, live, k, b[i].offset);
        if (!ev[e].born) { /* offsets of live buffers are distinct, so pos finds i itself */
            while (pos < k && live[pos] != i) pos++;
            if (pos < k) {
                memmove(live + pos, live + pos + 1, (k - pos - 1) * sizeof *live);
                k--;
            }
            continue;
        }
        const gm_dsa_buffer *x = &b[i];
        const gm_dsa_buffer *clash = NULL;
        if (pos > 0 && b[live[pos - 1]].offset + b[live[pos - 1]].size > x->offset) clash = &b[live[pos - 1]];
        else if (pos < k && x->offset + x->size > b[live[pos]].offset) clash = &b[live[pos]];
        if (clash) {
            say(why, cap, "buffers %s and %s overlap: lifetimes [%" PRId64 ", %" PRId64 ") and [%" PRId64
                ", %" PRId64 "), addresses [%" PRId64 ", %" PRId64 ") and [%" PRId64 ", %" PRId64 ")",
                label(clash, t1, sizeof t1), label(x, t2, sizeof t2), clash->lower, clash->upper,
                x->lower, x->upper, clash->offset, clash->offset + clash->size, x->offset,
                x->offset + x->size);
            ok = false;
            break;
        }
        memmove(live + pos + 1, live + pos, (k - pos) * sizeof *live);
        live[pos] = i;
        k++;
    }
    gm_free(ev);
    gm_free(live);
    return ok;
}
