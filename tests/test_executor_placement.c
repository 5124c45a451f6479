/*
 * test_executor_placement.c — placement copies of both executors
 * (src/runtime/executor_placement.c, and executor_dyn_place.c for the dynamic one): host
 * tensors read by device nodes (H2D), a host node reading a device tensor (SyncStream, then
 * D2H), two devices (P2P), each clean on 1 and 2+ streams over 2 iterations, with a static plan
 * and with the runtime allocators (one stack per device); and the broken variants (no
 * SyncStream, P2P before the producer's event) caught as corruption where the race is forced
 * (the producer held until the early copy has run).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/executor.h"
#include "graphmem/io.h"
#include "graphmem/plan.h"
#include "runtime/executor_placement.h"

#define F256 "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[256]}]"
#define H256 "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[256],\"memory_type\":\"host\"}]"
#define HEAD(name) "{\"graphmem\":1,\"name\":\"" name "\",\"graphs\":[{\"name\":\"root\",\"nodes\":["

/* x is a host input, b writes a host tensor: a, b and c read host memory on the device. */
static const char k_h2d[] = HEAD("h2d")
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," H256 "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F256 "},"
    "{\"name\":\"b\",\"type\":\"Sigmoid\",\"inputs\":[\"x:0\"]," H256 "},"
    "{\"name\":\"c\",\"type\":\"Add\",\"inputs\":[\"a:0\",\"b:0\"]," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"c:0\"]}]}]}";

/* h runs on the host and reads a (device); round robin on 2 streams puts a on stream 1, h on 0. */
static const char k_d2h[] = HEAD("d2h")
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F256 "},"
    "{\"name\":\"h\",\"type\":\"Relu\",\"inputs\":[\"a:0\"],\"attrs\":{\"_placement\":\"host\"}," F256 "},"
    "{\"name\":\"c\",\"type\":\"Relu\",\"inputs\":[\"h:0\"]," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"c:0\"]}]}]}";

/* b runs on device 1 between a and c on device 0. */
static const char k_p2p[] = HEAD("p2p")
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F256 "},"
    "{\"name\":\"b\",\"type\":\"Sigmoid\",\"inputs\":[\"a:0\"],\"attrs\":{\"_device\":1}," F256 "},"
    "{\"name\":\"c\",\"type\":\"Add\",\"inputs\":[\"a:0\",\"b:0\"]," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"c:0\"]}]}]}";

/* m writes a (in place) on device 1, but a's block is device 0's. */
static const char k_remote_write[] = HEAD("remote_write")
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F256 "},"
    "{\"name\":\"m\",\"type\":\"HcomAllReduce\",\"inputs\":[\"a:0\"],"
    "\"attrs\":{\"_input_mutable\":true,\"reduction\":\"sum\",\"_device\":1}," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"m:0\"]}]}]}";

static gm_run_stats run(const char *json, unsigned streams, unsigned devices, gm_place_fault fault, const char *what)
{
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(json, strlen(json), "p.json", &m, &err) != GM_OK) fail_msg("%s: read: %s", what, err.message);
    gm_run_assign_streams(m, streams);
    gm_plan *p = NULL;
    if (gm_plan_build(m, NULL, &p, &err) != GM_OK) fail_msg("%s: plan: %s", what, err.message);
    assert_int_equal(p->unresolved, 0);
    gm_run_options o;
    gm_run_options_init(&o);
    o.streams = streams, o.iterations = 2, o.devices = devices;
    gm_run_stats s;
    if (gm_run_static_fault(m, p, &o, fault, &s, &err) != GM_OK) fail_msg("%s: run: %s", what, err.message);
    print_message("  %-22s streams %u devices %u  reads %3llu  H2D %llu D2H %llu P2P %llu  syncs %llu  corrupted %llu %s\n",
                  what, streams, devices, (unsigned long long)s.reads_checked,
                  (unsigned long long)s.copies[GM_COPY_H2D], (unsigned long long)s.copies[GM_COPY_D2H],
                  (unsigned long long)s.copies[GM_COPY_P2P], (unsigned long long)s.host_syncs,
                  (unsigned long long)s.corrupted_reads, s.first_corruption);
    gm_plan_free(p);
    gm_model_free(m);
    return s;
}

/* The same, dynamic: no plan, every buffer from the runtime allocators. */
static gm_run_stats run_dyn(const char *json, unsigned streams, unsigned devices, gm_place_fault fault, const char *what)
{
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(json, strlen(json), "p.json", &m, &err) != GM_OK) fail_msg("%s: read: %s", what, err.message);
    gm_run_assign_streams(m, streams);
    gm_run_options o;
    gm_run_options_init(&o);
    o.streams = streams, o.iterations = 2, o.devices = devices;
    gm_run_stats s;
    if (gm_run_dynamic_faults(m, &o, GM_RUN_FAULT_NONE, fault, &s, &err) != GM_OK)
        fail_msg("%s: run: %s", what, err.message);
    print_message("  %-22s dynamic streams %u devices %u  reads %3llu  H2D %llu D2H %llu P2P %llu  syncs %llu  corrupted "
                  "%llu %s\n",
                  what, streams, devices, (unsigned long long)s.reads_checked,
                  (unsigned long long)s.copies[GM_COPY_H2D], (unsigned long long)s.copies[GM_COPY_D2H],
                  (unsigned long long)s.copies[GM_COPY_P2P], (unsigned long long)s.host_syncs,
                  (unsigned long long)s.corrupted_reads, s.first_corruption);
    /* the allocators gave everything back, on both devices */
    assert_int_equal(s.alloc.live_bytes, 0);
    assert_int_equal(s.alloc.leaked_blocks, 0);
    assert_int_equal(s.alloc.sync_violations, 0);
    gm_model_free(m);
    return s;
}

static const unsigned k_streams[] = {1, 2, 3};

static void test_h2d_clean(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        gm_run_stats s = run(k_h2d, k_streams[i], 1, GM_PLACE_FAULT_NONE, "host tensors");
        /* a and b read x, c reads b: three H2D per iteration */
        assert_int_equal(s.copies[GM_COPY_H2D], 6);
        assert_int_equal(s.copies[GM_COPY_D2H] + s.copies[GM_COPY_P2P], 0);
        assert_true(s.staging_bytes > 0);
        assert_int_equal(s.corrupted_reads, 0);
    }
}

static void test_d2h_clean(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        gm_run_stats s = run(k_d2h, k_streams[i], 1, GM_PLACE_FAULT_NONE, "host node");
        assert_int_equal(s.copies[GM_COPY_D2H], 2);
        assert_int_equal(s.copies[GM_COPY_H2D] + s.copies[GM_COPY_P2P], 0);
        /* on one stream stream order suffices; on more, h waits for a's stream */
        if (k_streams[i] > 1) assert_int_equal(s.host_syncs, 2);
        else assert_int_equal(s.host_syncs, 0);
        assert_int_equal(s.corrupted_reads, 0);
    }
}

static void test_p2p_clean(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        gm_run_stats s = run(k_p2p, k_streams[i], 2, GM_PLACE_FAULT_NONE, "two devices");
        /* b reads a from device 0, c reads b from device 1 */
        assert_int_equal(s.copies[GM_COPY_P2P], 4);
        assert_int_equal(s.corrupted_reads, 0);
        assert_true(s.events > 0);
    }
    /* one device: "_device" is ignored, nothing to copy */
    gm_run_stats s = run(k_p2p, 2, 1, GM_PLACE_FAULT_NONE, "one device");
    assert_int_equal(s.copies[GM_COPY_P2P], 0);
    assert_int_equal(s.corrupted_reads, 0);
}

/* No SyncStream: h's D2H runs while a (on the other stream) is held before its write. */
static void test_d2h_without_sync_is_caught(void **state)
{
    (void)state;
    gm_run_stats s = run(k_d2h, 2, 1, GM_PLACE_FAULT_NO_SYNC, "host node, no sync");
    assert_int_equal(s.host_syncs, 0);
    assert_true(s.corrupted_reads >= 2); /* both iterations */
    assert_non_null(strstr(s.first_corruption, "node 'h' read 'a_out_0'"));
}

/* P2P before the producer's event: b copies a while a is held before its write. */
/* Both reads in k_p2p go through a P2P copy (a to device 1 for b, b back to device 0 for c);
 * without the wait either may come first, whichever copy the timing left unfinished. */
static bool p2p_read(const char *first_corruption)
{
    return strstr(first_corruption, "node 'b' read 'a_out_0'") || strstr(first_corruption, "node 'c' read 'b_out_0'");
}

static void test_p2p_before_event_is_caught(void **state)
{
    (void)state;
    for (unsigned streams = 1; streams <= 2; streams++) {
        gm_run_stats s = run(k_p2p, streams, 2, GM_PLACE_FAULT_P2P_NO_WAIT, "P2P, no wait");
        assert_true(s.corrupted_reads >= 2);
        assert_true(p2p_read(s.first_corruption));
    }
}

/* ---- dynamic mode ------------------------------------------------------------------------ */

static void test_dynamic_h2d_clean(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        gm_run_stats s = run_dyn(k_h2d, k_streams[i], 1, GM_PLACE_FAULT_NONE, "host tensors");
        assert_int_equal(s.copies[GM_COPY_H2D], 6);
        assert_int_equal(s.copies[GM_COPY_D2H] + s.copies[GM_COPY_P2P], 0);
        assert_true(s.staging_bytes > 0);
        assert_int_equal(s.corrupted_reads, 0);
    }
}

static void test_dynamic_d2h_clean(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        gm_run_stats s = run_dyn(k_d2h, k_streams[i], 1, GM_PLACE_FAULT_NONE, "host node");
        assert_int_equal(s.copies[GM_COPY_D2H], 2);
        assert_int_equal(s.copies[GM_COPY_H2D] + s.copies[GM_COPY_P2P], 0);
        if (k_streams[i] > 1) assert_int_equal(s.host_syncs, 2);
        else assert_int_equal(s.host_syncs, 0);
        assert_int_equal(s.corrupted_reads, 0);
    }
}

static void test_dynamic_p2p_clean(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        gm_run_stats s = run_dyn(k_p2p, k_streams[i], 2, GM_PLACE_FAULT_NONE, "two devices");
        assert_int_equal(s.copies[GM_COPY_P2P], 4);
        assert_int_equal(s.corrupted_reads, 0);
        assert_true(s.events > 0);
        /* x, a, b, c: one block each, each iteration, from the two stacks together */
        assert_int_equal(s.alloc.mallocs, 2 * 4);
    }
    gm_run_stats two = run_dyn(k_p2p, 2, 2, GM_PLACE_FAULT_NONE, "two devices");
    gm_run_stats s = run_dyn(k_p2p, 2, 1, GM_PLACE_FAULT_NONE, "one device");
    assert_int_equal(s.copies[GM_COPY_P2P], 0);
    assert_int_equal(s.corrupted_reads, 0);
    /* device 1 held memory of its own (its allocator's pool, its staging) */
    assert_true(two.device_peak_bytes > s.device_peak_bytes);
}

static void test_dynamic_d2h_without_sync_is_caught(void **state)
{
    (void)state;
    gm_run_stats s = run_dyn(k_d2h, 2, 1, GM_PLACE_FAULT_NO_SYNC, "host node, no sync");
    assert_int_equal(s.host_syncs, 0);
    assert_true(s.corrupted_reads >= 2);
    assert_non_null(strstr(s.first_corruption, "node 'h' read 'a_out_0'"));
}

static void test_dynamic_p2p_before_event_is_caught(void **state)
{
    (void)state;
    for (unsigned streams = 1; streams <= 2; streams++) {
        gm_run_stats s = run_dyn(k_p2p, streams, 2, GM_PLACE_FAULT_P2P_NO_WAIT, "P2P, no wait");
        assert_true(s.corrupted_reads >= 2);
        assert_true(p2p_read(s.first_corruption));
    }
}

/* Dynamic mode keeps a tensor on one device: a write from the other is refused, by name. */
static void test_dynamic_remote_write_is_refused(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(k_remote_write, strlen(k_remote_write), "w.json", &m, &err) != GM_OK)
        fail_msg("%s", err.message);
    gm_run_assign_streams(m, 2);
    gm_run_options o;
    gm_run_options_init(&o);
    o.streams = 2, o.devices = 2;
    gm_run_stats s;
    assert_int_equal(gm_run_dynamic(m, &o, &s, &err), GM_ERR_INPUT);
    print_message("  %s\n", err.message);
    assert_non_null(strstr(err.message, "node 'm' on device 1 writes 'a_out_0', which lives on device 0"));
    o.devices = 1; /* one device: "_device" is ignored, the run is clean */
    assert_int_equal(gm_run_dynamic(m, &o, &s, &err), GM_OK);
    assert_int_equal(s.corrupted_reads, 0);
    gm_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h2d_clean),
        cmocka_unit_test(test_d2h_clean),
        cmocka_unit_test(test_p2p_clean),
        cmocka_unit_test(test_d2h_without_sync_is_caught),
        cmocka_unit_test(test_p2p_before_event_is_caught),
        cmocka_unit_test(test_dynamic_h2d_clean),
        cmocka_unit_test(test_dynamic_d2h_clean),
        cmocka_unit_test(test_dynamic_p2p_clean),
        cmocka_unit_test(test_dynamic_d2h_without_sync_is_caught),
        cmocka_unit_test(test_dynamic_p2p_before_event_is_caught),
        cmocka_unit_test(test_dynamic_remote_write_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
