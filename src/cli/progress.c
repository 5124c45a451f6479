/*
 * progress.c — a line on stderr saying what a long command is doing ("graphmem: planning:
 * packing ... 3.4 s"), for work over a second, and only when stderr is a terminal: a pipe or a
 * log file gets nothing, so scripts see exactly the output they always saw.
 *
 * A thread wakes every 100 ms and redraws the line when the work has lasted a second (or
 * GM_PROGRESS_AFTER seconds, from the environment; 0 draws from the first tick); the
 * stage is published by the working thread with one atomic store. When the work ends the line
 * is erased, so what follows starts on a clean line.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

static struct {
    pthread_t thread;
    bool running;
    _Atomic(const char *) stage;
    atomic_bool stop, drawn;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct timespec t0;
    double after; /* seconds of work before the line appears */
} g_progress = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void *draw(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_progress.mu);
    /* the first tick runs even when the work already ended (a loaded machine may start this
     * thread late): GM_PROGRESS_AFTER=0 promises a line */
    for (bool first = true; first || !g_progress.stop; first = false) {
        double s = since(&g_progress.t0);
        if (s >= g_progress.after) {
            fprintf(stderr, "\r\033[Kgraphmem: %s ... %.1f s", (const char *)g_progress.stage, s);
            fflush(stderr);
            g_progress.drawn = true;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&g_progress.cv, &g_progress.mu, &until);
    }
    pthread_mutex_unlock(&g_progress.mu);
    return NULL;
}

void gm_cli_progress_start(const gm_cli_opts *o, const char *stage)
{
    g_progress.stage = stage;
    if (g_progress.running || o->verbosity < 0 || !isatty(STDERR_FILENO)) return;
    clock_gettime(CLOCK_MONOTONIC, &g_progress.t0);
    const char *env = getenv("GM_PROGRESS_AFTER");
    char *end = NULL;
    double after = env ? strtod(env, &end) : 1.0;
    g_progress.after = env && end != env && after >= 0 ? after : 1.0;
    g_progress.stop = false;
    g_progress.drawn = false;
    g_progress.running = pthread_create(&g_progress.thread, NULL, draw, NULL) == 0;
}

void gm_cli_progress_stage(const char *stage) { g_progress.stage = stage; }

void gm_cli_progress_stop(void)
{
    if (!g_progress.running) return;
    pthread_mutex_lock(&g_progress.mu);
    g_progress.stop = true;
    pthread_cond_signal(&g_progress.cv);
    pthread_mutex_unlock(&g_progress.mu);
    pthread_join(g_progress.thread, NULL);
    g_progress.running = false;
    if (g_progress.drawn) fprintf(stderr, "\r\033[K");
}
