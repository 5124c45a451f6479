/*
 * test_backend.c — the device backends (include/graphmem/runtime.h): host streams run in
 * order, events order work across streams and devices, copies of every kind, data patterns,
 * failure injection, virtual memory and its quiet fallback, closing a device with work and
 * memory left over, bad arguments. The CUDA section runs only where a GPU is present.
 *
 * Also run under ThreadSanitizer (`make tsan`, label "tsan").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <pthread.h>

#include "graphmem/log.h"
#include "graphmem/runtime.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A log that host functions append to from worker threads. */
typedef struct test_log {
    pthread_mutex_t mu;
    int items[256];
    int n;
} test_log;

typedef struct log_entry {
    test_log *log;
    int value;
    long sleep_ms;
} log_entry;

static void append_fn(void *arg)
{
    log_entry *e = arg;
    if (e->sleep_ms) sleep_ms(e->sleep_ms);
    pthread_mutex_lock(&e->log->mu);
    if (e->log->n < 256) e->log->items[e->log->n++] = e->value;
    pthread_mutex_unlock(&e->log->mu);
}

/* A gate a host function blocks on until the test opens it: stream work that cannot finish
 * before the test says so, without timing assumptions. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;
} gate;

static void gate_init(gate *g)
{
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = false;
}

static void gate_fn(void *arg)
{
    gate *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void gate_open(gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void gate_fini(gate *g)
{
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
}

static gm_device *open_dev(gm_backend_kind kind, int id)
{
    gm_device *dev = NULL;
    gm_error err;
    gm_status st = gm_device_open(kind, id, &dev, &err);
    if (st != GM_OK) fail_msg("gm_device_open(%s, %d): %s", gm_backend_name(kind), id, err.message);
    return dev;
}

#define OK(call)                                                        \
    do {                                                                \
        gm_error err_;                                                  \
        gm_status st_ = (call);                                         \
        if (st_ != GM_OK) fail_msg("%s: %s", #call, err_.message);      \
    } while (0)
/* OK() needs the call to use `&err_` as its error argument. */
#define E (&err_)

/* Captures the library log in a temporary file, to check what was (not) logged. */
static FILE *capture_log(void)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    gm_log_set_stream(f);
    return f;
}

static long end_capture(FILE *f, char *buf, size_t cap)
{
    gm_log_set_stream(NULL);
    long n = ftell(f);
    rewind(f);
    size_t got = fread(buf, 1, cap - 1, f);
    buf[got] = '\0';
    fclose(f);
    return n;
}

/* Writes the pattern of `seed` over [p, p+size) on s and checks that it reads back. */
static void write_read_back(gm_stream *s, void *p, size_t size, uint64_t seed)
{
    uint64_t bad = 1;
    OK(gm_fill_pattern_async(s, p, size, seed, E));
    OK(gm_verify_pattern_async(s, p, size, seed, &bad, E));
    OK(gm_stream_synchronize(s, E));
    assert_int_equal(bad, 0);
}

/* ---- backends ---------------------------------------------------------------------------------- */

static void test_backend_names(void **state)
{
    assert_true(gm_backend_available(GM_BACKEND_HOST));
    assert_int_equal(gm_backend_device_count(GM_BACKEND_HOST), GM_HOST_MAX_DEVICES);
    assert_string_equal(gm_backend_name(GM_BACKEND_CUDA), "cuda");
    gm_backend_kind k;
    assert_true(gm_backend_from_name("host", &k));
    assert_int_equal(k, GM_BACKEND_HOST);
    assert_false(gm_backend_from_name("tpu", &k));
    assert_string_equal(gm_copy_kind_name(GM_COPY_P2P), "P2P");

    gm_device *dev = open_dev(GM_BACKEND_HOST, 3);
    gm_device_props p;
    OK(gm_device_get_props(dev, &p, E));
    assert_int_equal(p.kind, GM_BACKEND_HOST);
    assert_int_equal(p.id, 3);
    assert_string_equal(p.name, "host:3");
    assert_true(p.total_memory > 0);
    assert_true(p.virtual_memory);
    assert_true(p.vm_granularity >= 4096);
    assert_int_equal(gm_device_id(dev), 3);
    gm_device_close(dev);
}

/* ---- streams and events ---------------------------------------------------------------------- */

static void test_stream_runs_in_order(void **state)
{
    gm_device *dev = open_dev(GM_BACKEND_HOST, 0);
    gm_stream *s;
    OK(gm_stream_create(dev, &s, E));
    test_log log = {.n = 0};
    pthread_mutex_init(&log.mu, NULL);
    log_entry entries[20];
    for (int i = 0; i < 20; i++) {
        /* Early entries sleep longest: a queue that ran them out of order would show it. */
        entries[i] = (log_entry){&log, i, i < 3 ? 5 : 0};
        OK(gm_stream_launch_host_fn(s, append_fn, &entries[i], E));
    }
    OK(gm_stream_synchronize(s, E));
    assert_int_equal(log.n, 20);
    for (int i = 0; i < 20; i++) assert_int_equal(log.items[i], i);
    OK(gm_stream_destroy(s, E));
    pthread_mutex_destroy(&log.mu);
    gm_device_close(dev);
}

/* Record on A + wait on B: B's later work runs after A's earlier work, within a device and
 * across two devices. A is held at a gate, so without the wait B would run first. */
static void check_event_orders(gm_device *dev_a, gm_device *dev_b)
{
    gm_stream *a, *b;
    gm_event *e;
    OK(gm_stream_create(dev_a, &a, E));
    OK(gm_stream_create(dev_b, &b, E));
    OK(gm_event_create(dev_a, &e, E));
    test_log log = {.n = 0};
    pthread_mutex_init(&log.mu, NULL);
    gate g;
    gate_init(&g);
    log_entry first = {&log, 1, 0}, second = {&log, 2, 0};

    OK(gm_stream_launch_host_fn(a, gate_fn, &g, E));
    OK(gm_stream_launch_host_fn(a, append_fn, &first, E));
    OK(gm_event_record(e, a, E));
    OK(gm_stream_wait_event(b, e, E));
    OK(gm_stream_launch_host_fn(b, append_fn, &second, E));

    bool done = true;
    OK(gm_event_query(e, &done, E));
    assert_false(done); /* A is held at the gate */
    sleep_ms(20);       /* time for B to run ahead if the wait were not real */
    pthread_mutex_lock(&log.mu);
    assert_int_equal(log.n, 0);
    pthread_mutex_unlock(&log.mu);
    gate_open(&g);

    OK(gm_stream_synchronize(b, E));
    assert_int_equal(log.n, 2);
    assert_int_equal(log.items[0], 1);
    assert_int_equal(log.items[1], 2);
    OK(gm_event_query(e, &done, E));
    assert_true(done);

    OK(gm_event_destroy(e, E));
    OK(gm_stream_destroy(a, E));
    OK(gm_stream_destroy(b, E));
    gate_fini(&g);
    pthread_mutex_destroy(&log.mu);
}

static void test_event_orders_streams(void **state)
{
    gm_device *d0 = open_dev(GM_BACKEND_HOST, 0);
    gm_device *d1 = open_dev(GM_BACKEND_HOST, 1);
    check_event_orders(d0, d0);
    check_event_orders(d0, d1);
    gm_device_close(d1);
    gm_device_close(d0);
}

static void test_event_query_and_sync(void **state)
{
    gm_device *dev = open_dev(GM_BACKEND_HOST, 0);
    gm_stream *s;
    gm_event *e;
    OK(gm_stream_create(dev, &s, E));
    OK(gm_event_create(dev, &e, E));
    bool done = false;
    OK(gm_event_query(e, &done, E));
    assert_true(done); /* never recorded: complete */
    OK(gm_event_synchronize(e, E));

    gate g;
    gate_init(&g);
    OK(gm_stream_launch_host_fn(s, gate_fn, &g, E));
    OK(gm_event_record(e, s, E));
    OK(gm_event_query(e, &done, E));
    assert_false(done);
    gate_open(&g);
    OK(gm_event_synchronize(e, E));
    OK(gm_event_query(e, &done, E));
    assert_true(done);

    /* Re-record: a new point, pending again until the stream reaches it. */
    gate g2;
    gate_init(&g2);
    OK(gm_stream_launch_host_fn(s, gate_fn, &g2, E));
    OK(gm_event_record(e, s, E));
    OK(gm_event_query(e, &done, E));
    assert_false(done);
    gate_open(&g2);
    OK(gm_device_synchronize(dev, E));
    OK(gm_event_query(e, &done, E));
    assert_true(done);

    OK(gm_event_destroy(e, E));
    OK(gm_stream_destroy(s, E));
    gate_fini(&g);
    gate_fini(&g2);
    gm_device_close(dev);
}

/* An event destroyed while a wait on it is still queued: the wait still works. */
static void test_event_destroy_while_pending(void **state)
{
    gm_device *dev = open_dev(GM_BACKEND_HOST, 0);
    gm_stream *a, *b;
    gm_event *e;
    OK(gm_stream_create(dev, &a, E));
    OK(gm_stream_create(dev, &b, E));
    OK(gm_event_create(dev, &e, E));
    test_log log = {.n = 0};
    pthread_mutex_init(&log.mu, NULL);
    gate g;
    gate_init(&g);
    log_entry first = {&log, 1, 0}, second = {&log, 2, 0};
    OK(gm_stream_launch_host_fn(a, gate_fn, &g, E));
    OK(gm_stream_launch_host_fn(a, append_fn, &first, E));
    OK(gm_event_record(e, a, E));
    OK(gm_stream_wait_event(b, e, E));
    OK(gm_stream_launch_host_fn(b, append_fn, &second, E));
    OK(gm_event_destroy(e, E));
    gate_open(&g);
    OK(gm_stream_synchronize(b, E));
    assert_int_equal(log.n, 2);
    assert_int_equal(log.items[0], 1);
    assert_int_equal(log.items[1], 2);
    OK(gm_stream_destroy(a, E));
    OK(gm_stream_destroy(b, E));
    gate_fini(&g);
    pthread_mutex_destroy(&log.mu);
    gm_device_close(dev);
}

/* ---- copies and patterns ----------------------------------------------------------------------- */

static void test_copies_every_kind(void **state)
{
    enum { N = 4096 };
    gm_device *d0 = open_dev(GM_BACKEND_HOST, 0);
    gm_device *d1 = open_dev(GM_BACKEND_HOST, 1);
    gm_stream *s0, *s1;
    OK(gm_stream_create(d0, &s0, E));
    OK(gm_stream_create(d1, &s1, E));
    void *a, *a2, *b;
    OK(gm_device_malloc(d0, N, &a, E));
    OK(gm_device_malloc(d0, N, &a2, E));
    OK(gm_device_malloc(d1, N, &b, E));
    assert_int_equal((uintptr_t)a % 256, 0);
    assert_true(gm_device_owns(d0, a, N));
    assert_false(gm_device_owns(d1, a, 1));

    unsigned char in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 7 + 1);
    memset(out, 0, sizeof out);
    gm_event *e;
    OK(gm_event_create(d0, &e, E));
    OK(gm_memcpy_async(s0, a, in, N, GM_COPY_H2D, E));
    OK(gm_memcpy_async(s0, a2, a, N, GM_COPY_D2D, E));
    OK(gm_event_record(e, s0, E));
    OK(gm_stream_wait_event(s1, e, E));
    OK(gm_memcpy_peer_async(s1, d1, b, d0, a2, N, E));
    OK(gm_memcpy_async(s1, out, b, N, GM_COPY_D2H, E));
    OK(gm_stream_synchronize(s1, E));
    assert_memory_equal(in, out, N);

    /* Each device counts its own memory. */
    gm_device_counters c0, c1;
    gm_device_get_counters(d0, &c0);
    gm_device_get_counters(d1, &c1);
    assert_int_equal(c0.allocs, 2);
    assert_int_equal(c0.bytes_in_use, 2 * N);
    assert_int_equal(c1.allocs, 1);
    assert_int_equal(c1.bytes_in_use, N);
    OK(gm_device_free(d0, a, E));
    OK(gm_device_free(d0, a2, E));
    OK(gm_device_free(d1, b, E));
    gm_device_get_counters(d0, &c0);
    assert_int_equal(c0.frees, 2);
    assert_int_equal(c0.bytes_in_use, 0);
    assert_int_equal(c0.peak_bytes, 2 * N);

    OK(gm_event_destroy(e, E));
    OK(gm_stream_destroy(s0, E));
    OK(gm_stream_destroy(s1, E));
    gm_device_close(d0);
    gm_device_close(d1);
}

static void test_fill_verify_pattern(void **state)
{
    enum { N = 1000 };
    gm_device *dev = open_dev(GM_BACKEND_HOST, 0);
    gm_stream *s;
    OK(gm_stream_create(dev, &s, E));
    void *p;
    OK(gm_device_malloc(dev, N, &p, E));
    uint64_t bad = 99;
    OK(gm_fill_pattern_async(s, p, N, 42, E));
    OK(gm_verify_pattern_async(s, p, N, 42, &bad, E));
    OK(gm_stream_synchronize(s, E));
    assert_int_equal(bad, 0);

    unsigned char host[N];
    OK(gm_memcpy_async(s, host, p, N, GM_COPY_D2H, E));
    OK(gm_stream_synchronize(s, E));
    for (int i = 0; i < N; i++) assert_int_equal(host[i], gm_pattern_byte(42, (uint64_t)i));

    unsigned char wrong[3] = {(unsigned char)~host[10], (unsigned char)~host[11], (unsigned char)~host[12]};
    OK(gm_memcpy_async(s, (char *)p + 10, wrong, 3, GM_COPY_H2D, E));
    OK(gm_verify_pattern_async(s, p, N, 42, &bad, E));
    OK(gm_stream_synchronize(s, E));
    assert_int_equal(bad, 3);
    OK(gm_verify_pattern_async(s, p, N, 43, &bad, E)); /* another seed: nearly every byte */
    OK(gm_stream_synchronize(s, E));
    assert_true(bad > N / 2);
    OK(gm_device_free(dev, p, E));
    OK(gm_stream_destroy(s, E));
    gm_device_close(dev);
}

/* ---- failure injection, limits ----------------------------------------------------------------- */

static void test_failure_injection(void **state)
{
    gm_device *dev = open_dev(GM_BACKEND_HOST, 0);
    gm_device_fail_allocs_after(dev, 2);
    void *p[3] = {NULL, NULL, NULL};
    gm_error err;
    assert_int_equal(gm_device_malloc(dev, 100, &p[0], &err), GM_OK);
    assert_int_equal(gm_device_malloc(dev, 100, &p[1], &err), GM_OK);
    assert_int_equal(gm_device_malloc(dev, 100, &p[2], &err), GM_ERR_NOMEM);
    assert_null(p[2]);
    assert_non_null(strstr(err.message, "injected"));
    assert_int_equal(gm_device_malloc(dev, 100, &p[2], &err), GM_ERR_NOMEM); /* stays failing */
    gm_device_counters c;
    gm_device_get_counters(dev, &c);
    assert_int_equal(c.allocs, 2);
    assert_int_equal(c.failed_allocs, 2);
    assert_int_equal(c.bytes_in_use, 200);

    /* The allocators' ladder: free (recycle), turn injection off, retry. */
    OK(gm_device_free(dev, p[0], E));
    gm_device_fail_allocs_after(dev, -1);
    assert_int_equal(gm_device_malloc(dev, 100, &p[2], &err), GM_OK);
    OK(gm_device_free(dev, p[1], E));
    OK(gm_device_free(dev, p[2], E));

    /* Never-failing is the default; 0 fails at once. */
    gm_device_fail_allocs_after(dev, 0);
    assert_int_equal(gm_device_malloc(dev, 1, &p[0], &err), GM_ERR_NOMEM);
    gm_device_fail_allocs_after(dev, -1);

    gm_device_set_memory_limit(dev, 1000);
    assert_int_equal(gm_device_malloc(dev, 600, &p[0], &err), GM_OK);
    assert_int_equal(gm_device_malloc(dev, 600, &p[1], &err), GM_ERR_NOMEM);
    assert_non_null(strstr(err.message, "limit"));
    assert_int_equal(gm_device_malloc(dev, 400, &p[1], &err), GM_OK);
    OK(gm_device_free(dev, p[0], E));
    OK(gm_device_free(dev, p[1], E));
    gm_device_set_memory_limit(dev, 0);
    gm_device_close(dev);
}

/* ---- virtual memory ------------------------------------------------------------------------------ */

static void test_virtual_memory(void **state)
{
    gm_device *dev = open_dev(GM_BACKEND_HOST, 0);
    gm_device_props props;
    OK(gm_device_get_props(dev, &props, E));
    size_t g = props.vm_granularity;
    gm_stream *s;
    OK(gm_stream_create(dev, &s, E));
    void *base;
    OK(gm_device_reserve(dev, 3 * g - 5, &base, E)); /* rounded up to 3 granules */
    char *mid = (char *)base + g;
    assert_false(gm_device_owns(dev, mid, 1)); /* reserved is not mapped */
    OK(gm_device_map(dev, mid, g, E));
    assert_true(gm_device_owns(dev, mid, g));
    write_read_back(s, mid, g, 7);

    gm_error err;
    assert_int_equal(gm_device_map(dev, mid, g, &err), GM_ERR_INPUT); /* already mapped */
    assert_int_equal(gm_device_map(dev, (char *)base + 3 * g, g, &err), GM_ERR_INPUT); /* outside */
    assert_int_equal(gm_device_map(dev, mid + 1, g, &err), GM_ERR_INPUT); /* unaligned */
    assert_int_equal(gm_device_release(dev, base, &err), GM_ERR_INPUT);   /* still mapped */
    assert_int_equal(gm_device_free(dev, mid, &err), GM_ERR_INPUT);       /* map, not malloc */
    assert_int_equal(gm_device_unmap(dev, mid, 2 * g, &err), GM_ERR_INPUT);

    gm_device_counters c;
    gm_device_get_counters(dev, &c);
    assert_int_equal(c.allocs, 1);
    assert_int_equal(c.bytes_in_use, g);
    assert_int_equal(c.reservations, 1);

    /* Injected failures reach map too. */
    gm_device_fail_allocs_after(dev, 0);
    assert_int_equal(gm_device_map(dev, base, g, &err), GM_ERR_NOMEM);
    gm_device_fail_allocs_after(dev, -1);

    OK(gm_device_unmap(dev, mid, g, E));
    OK(gm_device_release(dev, base, E));
    gm_device_get_counters(dev, &c);
    assert_int_equal(c.bytes_in_use, 0);
    assert_int_equal(c.reservations, 0);
    OK(gm_stream_destroy(s, E));
    gm_device_close(dev);
}

/* A coarser granule (a GPU's, on the host): reservations aligned to it, maps in whole granules,
 * and the setter's refusals. */
static void test_coarser_granule(void **state)
{
    gm_device *dev = open_dev(GM_BACKEND_HOST, 0);
    gm_device_props props;
    OK(gm_device_get_props(dev, &props, E));
    const size_t own = props.vm_granularity, g = (size_t)2 << 20;
    gm_error err;
    assert_int_equal(gm_device_set_vm_granularity(dev, g + own, &err), GM_ERR_INPUT); /* not a power of two */
    assert_non_null(strstr(err.message, "power of two"));
    assert_int_equal(gm_device_set_vm_granularity(dev, own / 2, &err), GM_ERR_INPUT); /* finer than its own */
    OK(gm_device_set_vm_granularity(dev, g, E));
    OK(gm_device_get_props(dev, &props, E));
    assert_int_equal(props.vm_granularity, g);
    gm_stream *s;
    OK(gm_stream_create(dev, &s, E));
    void *base[3];
    for (int i = 0; i < 3; i++) { /* mmap alone would align to the page only */
        OK(gm_device_reserve(dev, g + 1, &base[i], E)); /* rounded up to 2 granules */
        assert_int_equal((uintptr_t)base[i] % g, 0);
    }
    char *second = (char *)base[1] + g;
    assert_int_equal(gm_device_map(dev, second, own, &err), GM_ERR_INPUT); /* a page is not a granule */
    assert_int_equal(gm_device_map(dev, (char *)base[1] + own, g, &err), GM_ERR_INPUT);
    OK(gm_device_map(dev, second, g, E));
    write_read_back(s, second, g, 11);
    assert_false(gm_device_owns(dev, base[1], 1));
    assert_int_equal(gm_device_set_vm_granularity(dev, 0, &err), GM_ERR_INPUT); /* reservations exist */
    OK(gm_device_unmap(dev, second, g, E));
    for (int i = 0; i < 3; i++) OK(gm_device_release(dev, base[i], E));
    OK(gm_device_set_vm_granularity(dev, 0, E)); /* its own again */
    OK(gm_device_get_props(dev, &props, E));
    assert_int_equal(props.vm_granularity, own);
    gm_device_counters c;
    gm_device_get_counters(dev, &c);
    assert_int_equal(c.peak_bytes, g);
    assert_int_equal(c.driver_peak_bytes, 0); /* the host has no driver to ask */
    gm_device_disable_virtual_memory(dev);
    assert_int_equal(gm_device_set_vm_granularity(dev, g, &err), GM_ERR_UNSUPPORTED);
    OK(gm_stream_destroy(s, E));
    gm_device_close(dev);
}

/* Where reserving fails, the caller falls back to physical memory, and nothing is logged. */
static void test_virtual_memory_fallback_is_quiet(void **state)
{
    gm_device *dev = open_dev(GM_BACKEND_HOST, 1);
    gm_device_disable_virtual_memory(dev);
    gm_device_props props;
    OK(gm_device_get_props(dev, &props, E));
    assert_false(props.virtual_memory);

    gm_log_level old = gm_log_get_level();
    gm_log_set_level(GM_LOG_DEBUG);
    FILE *f = capture_log();
    gm_error err;
    void *base = (void *)1, *p = NULL;
    gm_status st = gm_device_reserve(dev, 1 << 20, &base, &err);
    if (st == GM_ERR_UNSUPPORTED) st = gm_device_malloc(dev, 1 << 20, &p, &err); /* the fallback */
    char text[512];
    long logged = end_capture(f, text, sizeof text);
    gm_log_set_level(old);
    assert_int_equal(st, GM_OK);
    assert_null(base);
    assert_non_null(p);
    assert_int_equal(logged, 0);
    assert_int_equal(gm_device_map(dev, p, 4096, &err), GM_ERR_UNSUPPORTED);
    OK(gm_device_free(dev, p, E));
    gm_device_close(dev);
}

/* ---- close ------------------------------------------------------------------------------------------ */

typedef struct slow_work {
    long ms;
    int ran; /* written by the worker, read after close: close's stream sync orders them */
} slow_work;

static void slow_fn(void *arg)
{
    slow_work *w = arg;
    sleep_ms(w->ms);
    w->ran = 1;
}

static void test_close_with_leftovers(void **state)
{
    gm_device *dev = open_dev(GM_BACKEND_HOST, 5);
    gm_stream *s1, *s2;
    gm_event *e;
    OK(gm_stream_create(dev, &s1, E));
    OK(gm_stream_create(dev, &s2, E));
    OK(gm_event_create(dev, &e, E));
    void *a, *b, *base;
    OK(gm_device_malloc(dev, 1 << 16, &a, E));
    OK(gm_device_malloc(dev, 100, &b, E));
    OK(gm_device_reserve(dev, 1 << 16, &base, E));
    OK(gm_device_map(dev, base, 4096, E));
    slow_work w = {20, 0};
    OK(gm_stream_launch_host_fn(s1, slow_fn, &w, E));
    OK(gm_fill_pattern_async(s1, a, 1 << 16, 1, E));
    OK(gm_event_record(e, s1, E));
    OK(gm_stream_wait_event(s2, e, E));
    OK(gm_memcpy_async(s2, b, a, 100, GM_COPY_D2D, E));

    FILE *f = capture_log();
    gm_device_close(dev); /* streams synced, memory freed, then closed; ASan checks for leaks */
    char text[1024];
    end_capture(f, text, sizeof text);
    assert_int_equal(w.ran, 1);
    assert_non_null(strstr(text, "host:5"));
    assert_non_null(strstr(text, "4 allocations")); /* 2 mallocs, 1 mapping, 1 reservation */
    assert_non_null(strstr(text, "outstanding"));
}

/* ---- bad arguments ------------------------------------------------------------------------------ */

static void test_bad_arguments(void **state)
{
    gm_error err;
    gm_device *dev = NULL;
    assert_int_equal(gm_device_open(GM_BACKEND_HOST, -1, &dev, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "out of range"));
    assert_int_equal(gm_device_open(GM_BACKEND_HOST, GM_HOST_MAX_DEVICES, &dev, &err), GM_ERR_INPUT);
    assert_int_equal(gm_device_open((gm_backend_kind)7, 0, &dev, &err), GM_ERR_INPUT);
    assert_int_equal(gm_device_open(GM_BACKEND_HOST, 0, NULL, &err), GM_ERR_INPUT);
    assert_null(dev);

    dev = open_dev(GM_BACKEND_HOST, 0);
    gm_device *other = open_dev(GM_BACKEND_HOST, 1);
    gm_stream *s, *so;
    gm_event *e, *eo;
    OK(gm_stream_create(dev, &s, E));
    OK(gm_stream_create(other, &so, E));
    OK(gm_event_create(dev, &e, E));
    OK(gm_event_create(other, &eo, E));
    void *p, *q;
    OK(gm_device_malloc(dev, 64, &p, E));
    OK(gm_device_malloc(other, 64, &q, E));
    char host[128];
    static char not_device[64];

    assert_int_equal(gm_device_malloc(NULL, 64, &p, &err), GM_ERR_INPUT);
    assert_non_null(p); /* a failed call with a NULL device leaves out alone ... */
    void *z = (void *)1;
    assert_int_equal(gm_device_malloc(dev, 0, &z, &err), GM_ERR_INPUT);
    assert_null(z);     /* ... a checked one clears it */
    assert_int_equal(gm_device_free(dev, not_device, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "not an allocation"));
    assert_int_equal(gm_device_free(dev, (char *)p + 1, &err), GM_ERR_INPUT);
    assert_int_equal(gm_device_free(dev, q, &err), GM_ERR_INPUT); /* the other device's */
    assert_int_equal(gm_device_free(dev, NULL, &err), GM_OK);

    assert_int_equal(gm_memcpy_async(s, p, host, 65, GM_COPY_H2D, &err), GM_ERR_INPUT); /* too long */
    assert_int_equal(gm_memcpy_async(s, not_device, host, 8, GM_COPY_H2D, &err), GM_ERR_INPUT);
    assert_int_equal(gm_memcpy_async(s, host, not_device, 8, GM_COPY_D2H, &err), GM_ERR_INPUT);
    assert_int_equal(gm_memcpy_async(s, p, q, 8, GM_COPY_D2D, &err), GM_ERR_INPUT);
    assert_int_equal(gm_memcpy_async(s, p, (char *)p + 4, 8, GM_COPY_D2D, &err), GM_ERR_INPUT);
    assert_int_equal(gm_memcpy_async(s, p, q, 8, GM_COPY_P2P, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "gm_memcpy_peer_async"));
    assert_int_equal(gm_memcpy_async(s, p, host, 8, (gm_copy_kind)9, &err), GM_ERR_INPUT);
    assert_int_equal(gm_memcpy_async(NULL, p, host, 8, GM_COPY_H2D, &err), GM_ERR_INPUT);
    assert_int_equal(gm_memcpy_peer_async(s, other, p, dev, q, 8, &err), GM_ERR_INPUT); /* swapped */
    gm_device *third = open_dev(GM_BACKEND_HOST, 2);
    gm_stream *st3;
    OK(gm_stream_create(third, &st3, E));
    assert_int_equal(gm_memcpy_peer_async(st3, other, q, dev, p, 8, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "neither"));
    OK(gm_stream_destroy(st3, E));
    gm_device_close(third);

    assert_int_equal(gm_fill_pattern_async(s, q, 8, 1, &err), GM_ERR_INPUT);
    uint64_t bad;
    assert_int_equal(gm_verify_pattern_async(s, p, 8, 1, NULL, &err), GM_ERR_INPUT);
    assert_int_equal(gm_verify_pattern_async(s, not_device, 8, 1, &bad, &err), GM_ERR_INPUT);
    assert_int_equal(gm_stream_launch_host_fn(s, NULL, NULL, &err), GM_ERR_INPUT);

    assert_int_equal(gm_event_record(eo, s, &err), GM_ERR_INPUT); /* event of another device */
    assert_non_null(strstr(err.message, "host:1"));
    assert_int_equal(gm_event_record(NULL, s, &err), GM_ERR_INPUT);
    assert_int_equal(gm_stream_wait_event(s, NULL, &err), GM_ERR_INPUT);
    bool done;
    assert_int_equal(gm_event_query(e, NULL, &err), GM_ERR_INPUT);
    assert_int_equal(gm_event_query(NULL, &done, &err), GM_ERR_INPUT);
    assert_int_equal(gm_event_synchronize(NULL, &err), GM_ERR_INPUT);
    assert_int_equal(gm_stream_synchronize(NULL, &err), GM_ERR_INPUT);
    assert_int_equal(gm_stream_create(NULL, &s, &err), GM_ERR_INPUT);
    assert_int_equal(gm_device_get_props(NULL, NULL, &err), GM_ERR_INPUT);
    assert_int_equal(gm_device_reserve(dev, 0, &z, &err), GM_ERR_INPUT);
    assert_int_equal(gm_device_unmap(dev, p, 64, &err), GM_ERR_INPUT);
    assert_int_equal(gm_device_release(dev, p, &err), GM_ERR_INPUT);
    assert_int_equal(gm_device_synchronize(NULL, &err), GM_ERR_INPUT);
    /* NULL handles are no-ops where the API says so; err may be NULL. */
    assert_int_equal(gm_stream_destroy(NULL, NULL), GM_OK);
    assert_int_equal(gm_event_destroy(NULL, NULL), GM_OK);
    assert_int_equal(gm_device_free(NULL, p, NULL), GM_ERR_INPUT);
    gm_device_close(NULL);

    OK(gm_device_free(dev, p, E));
    OK(gm_device_free(other, q, E));
    gm_device_close(dev); /* s, e: closed with the device */
    gm_device_close(other);
}

/* ---- several threads on one device ---------------------------------------------------------- */

typedef struct worker_arg {
    gm_device *dev;
    int index;
    int failures;
} worker_arg;

/* Each thread: its own stream, allocations on the shared device, patterns, an event handed to
 * the next round. Checks the device lock and the queues under ThreadSanitizer. */
static void *thread_body(void *arg)
{
    worker_arg *w = arg;
    gm_error err;
    gm_stream *s;
    gm_event *e;
    if (gm_stream_create(w->dev, &s, &err) != GM_OK || gm_event_create(w->dev, &e, &err) != GM_OK) {
        w->failures++;
        return NULL;
    }
    for (int round = 0; round < 50; round++) {
        void *p;
        size_t size = 64 + (size_t)(round * 37 + w->index * 11) % 4000;
        uint64_t bad = 1;
        if (gm_device_malloc(w->dev, size, &p, &err) != GM_OK) {
            w->failures++;
            continue;
        }
        gm_fill_pattern_async(s, p, size, (uint64_t)round, &err);
        gm_event_record(e, s, &err);
        gm_stream_wait_event(s, e, &err);
        gm_verify_pattern_async(s, p, size, (uint64_t)round, &bad, &err);
        gm_stream_synchronize(s, &err);
        if (bad) w->failures++;
        if (gm_device_free(w->dev, p, &err) != GM_OK) w->failures++;
    }
    gm_event_destroy(e, &err);
    gm_stream_destroy(s, &err);
    return NULL;
}

static void test_threads_share_a_device(void **state)
{
    gm_device *dev = open_dev(GM_BACKEND_HOST, 0);
    pthread_t t[4];
    worker_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (worker_arg){dev, i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, thread_body, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    gm_device_counters c;
    gm_device_get_counters(dev, &c);
    assert_int_equal(c.allocs, 200);
    assert_int_equal(c.frees, 200);
    assert_int_equal(c.bytes_in_use, 0);
    gm_device_close(dev);
}

/* ---- CUDA ------------------------------------------------------------------------------------------ */

static void test_cuda_unavailable_is_clear(void **state)
{
    if (gm_backend_available(GM_BACKEND_CUDA)) skip();
    gm_error err;
    gm_device *dev = (gm_device *)1;
    assert_int_equal(gm_device_open(GM_BACKEND_CUDA, 0, &dev, &err), GM_ERR_UNSUPPORTED);
    assert_null(dev);
    assert_non_null(strstr(err.message, "cuda"));
    assert_int_equal(gm_backend_device_count(GM_BACKEND_CUDA), 0);
}

static void test_cuda_device(void **state)
{
    if (!gm_backend_available(GM_BACKEND_CUDA)) skip();
    enum { N = 1 << 20 };
    int ndev = gm_backend_device_count(GM_BACKEND_CUDA);
    gm_device *dev = open_dev(GM_BACKEND_CUDA, ndev - 1); /* not 0: ids are honoured */
    gm_device_props props;
    OK(gm_device_get_props(dev, &props, E));
    assert_true(props.total_memory > 0);
    void *base;
    gm_error err;
    if (props.virtual_memory) { /* the driver's: a granule mapped inside a range, written, read back */
        const size_t g = props.vm_granularity;
        gm_stream *v;
        OK(gm_stream_create(dev, &v, E));
        OK(gm_device_reserve(dev, 3 * g, &base, E));
        char *mid = (char *)base + g;
        OK(gm_device_map(dev, mid, g, E));
        assert_true(gm_device_owns(dev, mid, g));
        write_read_back(v, mid, g, 9);
        OK(gm_device_unmap(dev, mid, g, E));
        OK(gm_device_map(dev, base, 2 * g, E)); /* mapped again elsewhere, longer */
        write_read_back(v, base, 2 * g, 3);
        OK(gm_device_unmap(dev, base, 2 * g, E));
        OK(gm_device_release(dev, base, E));
        /* A coarser granule: the driver's reservation aligned to it, a map of one whole granule. */
        OK(gm_device_set_vm_granularity(dev, 2 * g, E));
        OK(gm_device_reserve(dev, 3 * g, &base, E));
        assert_int_equal((uintptr_t)base % (2 * g), 0);
        OK(gm_device_map(dev, (char *)base + 2 * g, 2 * g, E));
        write_read_back(v, (char *)base + 2 * g, 2 * g, 4);
        OK(gm_device_unmap(dev, (char *)base + 2 * g, 2 * g, E));
        OK(gm_device_release(dev, base, E));
        OK(gm_device_set_vm_granularity(dev, 0, E));
        OK(gm_stream_destroy(v, E));
    } else {
        assert_int_equal(gm_device_reserve(dev, N, &base, &err), GM_ERR_UNSUPPORTED);
    }

    gm_stream *a, *b;
    gm_event *e;
    OK(gm_stream_create(dev, &a, E));
    OK(gm_stream_create(dev, &b, E));
    OK(gm_event_create(dev, &e, E));
    void *p, *q;
    OK(gm_device_malloc(dev, N, &p, E));
    OK(gm_device_malloc(dev, N, &q, E));
    uint64_t bad = 1, bad2 = 1;
    OK(gm_fill_pattern_async(a, p, N, 5, E));
    OK(gm_event_record(e, a, E));
    OK(gm_stream_wait_event(b, e, E));
    OK(gm_memcpy_async(b, q, p, N, GM_COPY_D2D, E));
    OK(gm_verify_pattern_async(b, q, N, 5, &bad, E));
    OK(gm_verify_pattern_async(b, q, N, 6, &bad2, E));
    unsigned char *host = malloc(N);
    assert_non_null(host);
    OK(gm_memcpy_async(b, host, q, N, GM_COPY_D2H, E));
    test_log log = {.n = 0};
    pthread_mutex_init(&log.mu, NULL);
    log_entry entry = {&log, 7, 0};
    OK(gm_stream_launch_host_fn(b, append_fn, &entry, E));
    OK(gm_stream_synchronize(b, E));
    assert_int_equal(bad, 0);
    assert_true(bad2 > N / 2);
    assert_int_equal(log.n, 1);
    for (int i = 0; i < N; i += 4099) assert_int_equal(host[i], gm_pattern_byte(5, (uint64_t)i));
    OK(gm_memcpy_async(a, p, host, N, GM_COPY_H2D, E));
    OK(gm_stream_synchronize(a, E));
    gm_device_counters c;
    gm_device_get_counters(dev, &c); /* the driver's count: at least what p and q took */
    assert_true(c.driver_peak_bytes >= 2 * (uint64_t)N);

    gm_device_fail_allocs_after(dev, 0);
    assert_int_equal(gm_device_malloc(dev, N, &base, &err), GM_ERR_NOMEM);
    gm_device_fail_allocs_after(dev, -1);
    /* Real out-of-memory is GM_ERR_NOMEM too, and leaves the device usable. */
    void *huge = NULL;
    assert_int_equal(gm_device_malloc(dev, props.total_memory * 2, &huge, &err), GM_ERR_NOMEM);
    OK(gm_device_free(dev, q, E));

    if (ndev > 1) { /* P2P between two GPUs */
        gm_device *d0 = open_dev(GM_BACKEND_CUDA, 0);
        gm_stream *s0;
        void *r;
        OK(gm_stream_create(d0, &s0, E));
        OK(gm_device_malloc(d0, N, &r, E));
        OK(gm_memcpy_peer_async(s0, d0, r, dev, p, N, E));
        OK(gm_verify_pattern_async(s0, r, N, 5, &bad, E));
        OK(gm_stream_synchronize(s0, E));
        assert_int_equal(bad, 0);
        gm_device_close(d0);
    }
    free(host);
    pthread_mutex_destroy(&log.mu);
    gm_device_close(dev); /* p, the streams and the event: closed with the device */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend_names),
        cmocka_unit_test(test_stream_runs_in_order),
        cmocka_unit_test(test_event_orders_streams),
        cmocka_unit_test(test_event_query_and_sync),
        cmocka_unit_test(test_event_destroy_while_pending),
        cmocka_unit_test(test_copies_every_kind),
        cmocka_unit_test(test_fill_verify_pattern),
        cmocka_unit_test(test_failure_injection),
        cmocka_unit_test(test_virtual_memory),
        cmocka_unit_test(test_virtual_memory_fallback_is_quiet),
        cmocka_unit_test(test_coarser_granule),
        cmocka_unit_test(test_close_with_leftovers),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_threads_share_a_device),
        cmocka_unit_test(test_cuda_unavailable_is_clear),
        cmocka_unit_test(test_cuda_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
