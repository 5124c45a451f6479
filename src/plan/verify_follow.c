/*
 * verify_follow.c — the planner's self-check: the plan's text is written, then verified.
 *
 * On a big plan the verifier's first step, the structural scan that finds the elements of the
 * big arrays (json_split.c), reads ~300 MB at a million nodes, about as long as writing them.
 * Nothing needs it to wait for the whole text, so it runs on a second core behind the writer,
 * reading each stretch the writer shows it as final, and the verifier then starts from its
 * findings. The scan is the same scan over the same bytes: the verifier stays independent of
 * the writer, it only no longer waits for it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan/planner_internal.h"
#include "plan/verify_internal.h"
#include "util/parallel.h"

/* Plans with fewer symbols are written and scanned on one thread (a thread would cost more
 * than it saves). */
enum { FOLLOW_FROM = 65536 };
/* What the scan reads per hold of the reader's lock (the writer takes it to move the buffer). */
enum { SCAN_STRETCH = 4 << 20 };

typedef struct follow {
    const gm_model *m;
    const gm_plan *p;
    char *text;
    size_t len;
    gm_status st;
    gm_error err;
    gm_jw_reader rd;
    gm_json_split_scanner sc;
    gm_json_split split;
    gm_json_split_result r;
} follow;

static void write_part(follow *f)
{
    f->st = gm_plan_write_json_read(f->m, f->p, &f->text, &f->len, &f->rd, &f->err);
    if (f->st != GM_OK) { /* the text is gone (or never was): the scan stops */
        pthread_mutex_lock(&f->rd.lock);
        f->rd.moving = true;
        pthread_mutex_unlock(&f->rd.lock);
    }
}

/* Scans what the writer has shown until the text is done, the scan has its answer or the
 * writer moves the buffer (the rest is then scanned after the writing, from where this left). */
static void scan_part(follow *f)
{
    size_t at = 0;
    for (;;) {
        pthread_mutex_lock(&f->rd.lock);
        if (f->rd.moving) {
            pthread_mutex_unlock(&f->rd.lock);
            return;
        }
        bool done = atomic_load_explicit(&f->rd.done, memory_order_acquire);
        size_t shown = atomic_load_explicit(&f->rd.shown, memory_order_acquire);
        bool progress = shown > at || done;
        if (progress) {
            size_t upto = shown - at > SCAN_STRETCH ? at + SCAN_STRETCH : shown;
            f->r = gm_json_split_scanner_run(&f->sc, f->rd.buf, upto, done && upto == shown, &f->split);
            at = upto;
        }
        pthread_mutex_unlock(&f->rd.lock);
        if (f->r != GM_JSON_SPLIT_MORE) return;
        if (!progress) nanosleep(&(struct timespec){0, 20000}, NULL); /* the writer is ahead soon */
    }
}

static void run_part(void *ctx, unsigned part, unsigned parts)
{
    (void)parts;
    if (part == 0) write_part(ctx);
    else scan_part(ctx);
}

/* The text is final: whoever asked (o->on_text) may take it now, while the verifier reads it. */
static void show_text(const gm_plan_options *o, const gm_plan *p)
{
    if (o && o->on_text && p->text) o->on_text(p->text, p->text_len, o->text_ctx);
}

static gm_status write_and_scan(const gm_model *m, gm_plan *p, const gm_plan_options *o, gm_plan_verdict *v,
                                gm_error *err)
{
    follow f = {.m = m, .p = p, .r = GM_JSON_SPLIT_MORE};
    gm_error_clear(&f.err);
    if (pthread_mutex_init(&f.rd.lock, NULL)) return gm_error_set(err, GM_ERR_NOMEM, "out of threads");
    atomic_init(&f.rd.shown, 0);
    atomic_init(&f.rd.done, false);
    if (!gm_vfy_scanner_init(&f.sc)) {
        f.r = GM_JSON_SPLIT_GIVE_UP;
        write_part(&f);
    } else {
        gm_parallel_run(2, run_part, &f);
    }
    pthread_mutex_destroy(&f.rd.lock);
    if (f.st != GM_OK) {
        gm_json_split_free(&f.split);
        if (err) *err = f.err;
        return f.st;
    }
    p->text = f.text;
    p->text_len = f.len;
    show_text(o, p);
    /* the scan stopped where the buffer moved: the rest now, on the text as it ended */
    if (f.r == GM_JSON_SPLIT_MORE) f.r = gm_json_split_scanner_run(&f.sc, f.text, f.len, true, &f.split);
    return gm_vfy_verify_scanned(m, f.text, f.len, "planner self-check", f.r, &f.split, v, err);
}

gm_status gm_plan_write_verify(const gm_model *m, gm_plan *p, const gm_plan_options *o, gm_plan_verdict *v,
                               gm_error *err)
{
    if (p->n_symbols >= FOLLOW_FROM && gm_parallel_parts(0, 2) == 2) return write_and_scan(m, p, o, v, err);
    gm_status st = gm_plan_write_json(m, p, &p->text, &p->text_len, err);
    if (st != GM_OK) return st;
    show_text(o, p);
    return gm_plan_verify_json(m, p->text, p->text_len, "planner self-check", v, err);
}
