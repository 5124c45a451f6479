/*
 * backend_host_stream.c — host streams and events.
 *
 * A stream is a worker thread that runs its queue in order. An event is a pair of generation
 * counters under a mutex: `recorded` counts records made (the caller's side), `completed` is
 * the newest record a worker has reached. A wait captures `recorded` when it is enqueued and
 * blocks its worker until `completed` catches up, so work after the wait really runs after the
 * work before the record, on whatever thread.
 *
 * An event's state outlives its handle while records or waits of it are queued: each queued
 * operation holds a reference.
 */
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "runtime/backend_host.h"
#include "runtime/backend_pattern.h"

typedef struct host_event {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t recorded, completed;
    int refs; /* the handle + each queued record/wait */
} host_event;

typedef enum op_kind { OP_COPY, OP_FN, OP_FILL, OP_VERIFY, OP_RECORD, OP_WAIT } op_kind;

typedef struct host_op {
    struct host_op *next;
    op_kind kind;
    void *dst;
    const void *src;
    size_t size;
    uint64_t seed;       /* FILL/VERIFY; the generation for RECORD/WAIT */
    uint64_t *result;    /* VERIFY */
    gm_host_fn fn;       /* FN */
    void *user;          /* FN */
    host_event *event;   /* RECORD/WAIT */
} host_op;

typedef struct host_stream {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work; /* the worker waits here for ops (or stop) */
    pthread_cond_t idle; /* synchronize waits here for `finished` */
    host_op *head, *tail;
    uint64_t submitted, finished;
    bool stop;
} host_stream;

/* ---- events ---------------------------------------------------------------------------------- */

static void event_unref(host_event *ev)
{
    pthread_mutex_lock(&ev->mu);
    bool last = --ev->refs == 0;
    pthread_mutex_unlock(&ev->mu);
    if (!last) return;
    pthread_cond_destroy(&ev->cv);
    pthread_mutex_destroy(&ev->mu);
    gm_free(ev);
}

gm_status gm_host_event_create(gm_event *e, gm_error *err)
{
    host_event *ev = gm_calloc(1, sizeof *ev);
    if (!ev) return gm_error_set(err, GM_ERR_NOMEM, "gm_event_create: out of memory");
    if (pthread_mutex_init(&ev->mu, NULL)) {
        gm_free(ev);
        return gm_error_set(err, GM_ERR_NOMEM, "gm_event_create: cannot create a mutex");
    }
    if (pthread_cond_init(&ev->cv, NULL)) {
        pthread_mutex_destroy(&ev->mu);
        gm_free(ev);
        return gm_error_set(err, GM_ERR_NOMEM, "gm_event_create: cannot create a condition variable");
    }
    ev->refs = 1;
    e->impl = ev;
    return GM_OK;
}

void gm_host_event_destroy(gm_event *e) { event_unref(e->impl); }

gm_status gm_host_event_query(gm_event *e, bool *done, gm_error *err)
{
    host_event *ev = e->impl;
    pthread_mutex_lock(&ev->mu);
    *done = ev->completed >= ev->recorded;
    pthread_mutex_unlock(&ev->mu);
    return GM_OK;
}

static void event_wait_for(host_event *ev, uint64_t gen)
{
    pthread_mutex_lock(&ev->mu);
    while (ev->completed < gen) pthread_cond_wait(&ev->cv, &ev->mu);
    pthread_mutex_unlock(&ev->mu);
}

gm_status gm_host_event_sync(gm_event *e, gm_error *err)
{
    host_event *ev = e->impl;
    pthread_mutex_lock(&ev->mu);
    uint64_t gen = ev->recorded;
    pthread_mutex_unlock(&ev->mu);
    event_wait_for(ev, gen);
    return GM_OK;
}

static void event_complete(host_event *ev, uint64_t gen)
{
    pthread_mutex_lock(&ev->mu);
    if (gen > ev->completed) ev->completed = gen;
    pthread_cond_broadcast(&ev->cv);
    pthread_mutex_unlock(&ev->mu);
}

/* ---- the worker -------------------------------------------------------------------------------- */

static void run_op(host_op *op)
{
    switch (op->kind) {
    case OP_COPY: memcpy(op->dst, op->src, op->size); break;
    case OP_FN: op->fn(op->user); break;
    case OP_FILL: {
        uint8_t *d = op->dst;
        for (size_t i = 0; i < op->size; i++) d[i] = gm_pattern_byte_at(op->seed, i);
        break;
    }
    case OP_VERIFY: {
        const uint8_t *d = op->src;
        uint64_t bad = 0;
        for (size_t i = 0; i < op->size; i++) bad += d[i] != gm_pattern_byte_at(op->seed, i);
        *op->result = bad;
        break;
    }
    case OP_RECORD:
        event_complete(op->event, op->seed);
        event_unref(op->event);
        break;
    case OP_WAIT:
        event_wait_for(op->event, op->seed);
        event_unref(op->event);
        break;
    }
}

static void *worker(void *arg)
{
    host_stream *hs = arg;
    pthread_mutex_lock(&hs->mu);
    for (;;) {
        while (!hs->head && !hs->stop) pthread_cond_wait(&hs->work, &hs->mu);
        if (!hs->head) break; /* stopped with nothing left */
        host_op *op = hs->head;
        hs->head = op->next;
        if (!hs->head) hs->tail = NULL;
        pthread_mutex_unlock(&hs->mu);
        run_op(op);
        gm_free(op);
        pthread_mutex_lock(&hs->mu);
        hs->finished++;
        pthread_cond_broadcast(&hs->idle);
    }
    pthread_mutex_unlock(&hs->mu);
    return NULL;
}

static host_op *new_op(op_kind kind, gm_error *err)
{
    host_op *op = gm_calloc(1, sizeof *op);
    if (!op) gm_error_set(err, GM_ERR_NOMEM, "host stream: out of memory for a queue entry");
    else op->kind = kind;
    return op;
}

static void enqueue(gm_stream *s, host_op *op)
{
    host_stream *hs = s->impl;
    pthread_mutex_lock(&hs->mu);
    if (hs->tail) hs->tail->next = op;
    else hs->head = op;
    hs->tail = op;
    hs->submitted++;
    pthread_cond_signal(&hs->work);
    pthread_mutex_unlock(&hs->mu);
}

/* ---- streams -------------------------------------------------------------------------------- */

gm_status gm_host_stream_create(gm_stream *s, gm_error *err)
{
    host_stream *hs = gm_calloc(1, sizeof *hs);
    if (!hs) return gm_error_set(err, GM_ERR_NOMEM, "gm_stream_create: out of memory");
    if (pthread_mutex_init(&hs->mu, NULL)) goto fail_mu;
    if (pthread_cond_init(&hs->work, NULL)) goto fail_work;
    if (pthread_cond_init(&hs->idle, NULL)) goto fail_idle;
    if (pthread_create(&hs->thread, NULL, worker, hs)) goto fail_thread;
    s->impl = hs;
    return GM_OK;
fail_thread:
    pthread_cond_destroy(&hs->idle);
fail_idle:
    pthread_cond_destroy(&hs->work);
fail_work:
    pthread_mutex_destroy(&hs->mu);
fail_mu:
    gm_free(hs);
    return gm_error_set(err, GM_ERR_NOMEM, "gm_stream_create: cannot start the worker thread of a "
                        GM_DEV_FMT " stream", GM_DEV_ARGS(s->dev));
}

gm_status gm_host_stream_sync(gm_stream *s, gm_error *err)
{
    host_stream *hs = s->impl;
    pthread_mutex_lock(&hs->mu);
    uint64_t target = hs->submitted;
    while (hs->finished < target) pthread_cond_wait(&hs->idle, &hs->mu);
    pthread_mutex_unlock(&hs->mu);
    return GM_OK;
}

void gm_host_stream_destroy(gm_stream *s)
{
    host_stream *hs = s->impl;
    pthread_mutex_lock(&hs->mu);
    hs->stop = true;
    pthread_cond_signal(&hs->work);
    pthread_mutex_unlock(&hs->mu);
    pthread_join(hs->thread, NULL); /* the worker drains what is left first */
    pthread_cond_destroy(&hs->idle);
    pthread_cond_destroy(&hs->work);
    pthread_mutex_destroy(&hs->mu);
    gm_free(hs);
}

gm_status gm_host_copy(gm_stream *s, void *dst, gm_device *dst_dev, const void *src,
                       gm_device *src_dev, size_t size, gm_copy_kind kind, gm_error *err)
{
    host_op *op = new_op(OP_COPY, err);
    if (!op) return GM_ERR_NOMEM;
    op->dst = dst;
    op->src = src;
    op->size = size;
    enqueue(s, op);
    return GM_OK;
}

gm_status gm_host_host_fn(gm_stream *s, gm_host_fn fn, void *user, gm_error *err)
{
    host_op *op = new_op(OP_FN, err);
    if (!op) return GM_ERR_NOMEM;
    op->fn = fn;
    op->user = user;
    enqueue(s, op);
    return GM_OK;
}

gm_status gm_host_fill(gm_stream *s, void *dst, size_t size, uint64_t seed, gm_error *err)
{
    host_op *op = new_op(OP_FILL, err);
    if (!op) return GM_ERR_NOMEM;
    op->dst = dst;
    op->size = size;
    op->seed = seed;
    enqueue(s, op);
    return GM_OK;
}

gm_status gm_host_verify(gm_stream *s, const void *src, size_t size, uint64_t seed,
                         uint64_t *mismatches, gm_error *err)
{
    host_op *op = new_op(OP_VERIFY, err);
    if (!op) return GM_ERR_NOMEM;
    op->src = src;
    op->size = size;
    op->seed = seed;
    op->result = mismatches;
    enqueue(s, op);
    return GM_OK;
}

gm_status gm_host_event_record(gm_event *e, gm_stream *s, gm_error *err)
{
    host_op *op = new_op(OP_RECORD, err); /* before the generation moves: a record that cannot */
    if (!op) return GM_ERR_NOMEM;         /* be queued must not leave the event pending forever */
    host_event *ev = e->impl;
    pthread_mutex_lock(&ev->mu);
    op->seed = ++ev->recorded;
    ev->refs++;
    pthread_mutex_unlock(&ev->mu);
    op->event = ev;
    enqueue(s, op);
    return GM_OK;
}

gm_status gm_host_stream_wait(gm_stream *s, gm_event *e, gm_error *err)
{
    host_op *op = new_op(OP_WAIT, err);
    if (!op) return GM_ERR_NOMEM;
    host_event *ev = e->impl;
    pthread_mutex_lock(&ev->mu);
    op->seed = ev->recorded;
    ev->refs++;
    pthread_mutex_unlock(&ev->mu);
    op->event = ev;
    enqueue(s, op);
    return GM_OK;
}
