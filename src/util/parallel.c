/* parallel.c — parts of one piece of work side by side (parallel.h). */
#include "util/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

typedef struct part_arg {
    gm_parallel_fn fn;
    void *ctx;
    unsigned part, parts;
} part_arg;

static void *run_part(void *arg)
{
    const part_arg *a = arg;
    a->fn(a->ctx, a->part, a->parts);
    return NULL;
}

void gm_parallel_run(unsigned parts, gm_parallel_fn fn, void *ctx)
{
    if (parts > GM_PARALLEL_MAX) parts = GM_PARALLEL_MAX;
    if (parts <= 1) {
        fn(ctx, 0, 1);
        return;
    }
    pthread_t tid[GM_PARALLEL_MAX];
    part_arg args[GM_PARALLEL_MAX];
    bool started[GM_PARALLEL_MAX] = {false};
    for (unsigned p = 1; p < parts; p++) {
        args[p] = (part_arg){fn, ctx, p, parts};
        started[p] = pthread_create(&tid[p], NULL, run_part, &args[p]) == 0;
    }
    fn(ctx, 0, parts);
    for (unsigned p = 1; p < parts; p++) {
        if (started[p]) pthread_join(tid[p], NULL);
        else fn(ctx, p, parts);
    }
}

unsigned gm_parallel_parts(unsigned threads, size_t work)
{
    if (threads == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    if (threads > GM_PARALLEL_MAX) threads = GM_PARALLEL_MAX;
    if (work < threads) threads = work ? (unsigned)work : 1;
    return threads;
}

void gm_parallel_share(size_t n, unsigned part, unsigned parts, size_t *begin, size_t *end)
{
    *begin = n / parts * part + (part < n % parts ? part : n % parts);
    *end = *begin + n / parts + (part < n % parts);
}

typedef struct chunks {
    gm_parallel_range_fn fn;
    void *ctx;
    size_t n, chunk;
    atomic_size_t next;
} chunks;

static void take_chunks(void *ctx, unsigned part, unsigned parts)
{
    (void)parts;
    chunks *c = ctx;
    for (;;) {
        size_t b = atomic_fetch_add_explicit(&c->next, c->chunk, memory_order_relaxed);
        if (b >= c->n) return;
        c->fn(c->ctx, part, b, b + c->chunk < c->n ? b + c->chunk : c->n);
    }
}

void gm_parallel_chunks(unsigned parts, size_t n, size_t chunk, gm_parallel_range_fn fn, void *ctx)
{
    chunks c = {fn, ctx, n, chunk ? chunk : 1, 0};
    atomic_init(&c.next, 0);
    gm_parallel_run(parts, take_chunks, &c);
}
