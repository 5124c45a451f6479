/*
 * test_executor_dynamic.c — the dynamic executor (src/runtime/executor_dynamic.c): graphs run
 * with no plan, every buffer from GE's runtime allocator, on 1 to 8 host streams. A correct run
 * finds every pattern intact, recycles across streams (borrow and local recycles, events with
 * payloads) and leaks nothing; an allocator use that frees too early is caught by the checks.
 *
 * What it costs: every read checks its tensor's pattern byte by byte, so a run costs the model's
 * bytes times its iterations (unoptimized and sanitized, resnet18 about 1 s an iteration and
 * transformer LM about 2 s, every small graph here together a few seconds). How much of the matrix
 * runs is therefore chosen by scale() below: the full matrix in an optimized build without
 * sanitizers (the Release build: ctest -R test_executor_dynamic there), fewer repeats of the same
 * shape under the sanitizers. GM_EXEC_FULL=1 asks for the full matrix anywhere, GM_EXEC_FULL=0 for
 * the reduced one; GM_TEST_FILTER picks cases by name (cmocka's pattern, e.g. "*learned*").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graphmem/executor.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "exec_test_util.h"
#include "random_graph.h"
#include "runtime/executor_internal.h"
#include "util/alloc.h"

static void passes(gm_model *m, const char *what)
{
    gm_error err;
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    if (gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, &err) != GM_OK) fail_msg("%s: passes: %s", what, err.message);
    gm_pass_report_free(&rep);
}

static bool g_memory_first; /* the runs below use gm_run_options.memory_first */
static bool g_learn_plan;   /* and gm_run_options.learn_plan */
static size_t g_granule;    /* and gm_run_options.vm_granularity */

/* What the current case ran (its progress line, see case_setup). */
static unsigned long g_runs, g_iterations, g_reused;
static unsigned long long g_stream_mask; /* bit s-1: a run on s streams */

/* ---- how much runs ------------------------------------------------------------------------ */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GM_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GM_TEST_SANITIZED 1
#endif
#endif
#if defined(GM_TEST_SANITIZED) || !defined(__OPTIMIZE__)
#define GM_TEST_DEFAULT_SCALE SCALE_REDUCED
#else
#define GM_TEST_DEFAULT_SCALE SCALE_FULL
#endif

/* FULL: every case on 1, 2, 4 and 8 streams, every model, the iterations each case was written
 * with. REDUCED (the default when sanitized or unoptimized): the small graphs (embedded example,
 * control flow, MLP, loop, groups, random graphs) still on 1 to 8 streams, the big models (resnet18,
 * transformer LM) on 4 streams, where every multi-stream path runs (events, borrow and local
 * recycles, settles, stale news) and the comparisons with memory first are made, plus the
 * one-stream memory-first run each comparison is bounded by; their default and memory-first runs
 * two iterations (the cold one, and a warm one recycling what the first cached: a third repeats
 * the second), every run the cases share made once; the learned plan three iterations (one
 * recorded, two answered). Transformer LM (twice resnet18's time an iteration) runs once, clean
 * on 4 streams; its memory-first and learned-plan comparisons are FULL's, and below FULL the MLP
 * training step (the same kind of graph, a quarter of the bytes) stands in, on 1 to 8 streams.
 * QUICK (GM_EXEC_QUICK=1, ThreadSanitizer, four to ten times slower):
 * REDUCED with the small graphs on 1 and 4 streams, fewer random graphs, no transformer LM, the
 * shared models' runs two iterations and the learned plans two (one recorded, one answered): the
 * same code paths, less repetition. */
enum scale { SCALE_QUICK, SCALE_REDUCED, SCALE_FULL };

static enum scale scale(void)
{
    static int s = -1;
    if (s < 0) {
        const char *full = getenv("GM_EXEC_FULL"), *q = getenv("GM_EXEC_QUICK");
        if (full && *full) s = *full == '1' ? SCALE_FULL : SCALE_REDUCED;
        else if (q && *q == '1') s = SCALE_QUICK;
        else s = GM_TEST_DEFAULT_SCALE;
    }
    return (enum scale)s;
}

static bool quick(void) { return scale() == SCALE_QUICK; }
static const char *scale_name(void) { return quick() ? "quick" : scale() == SCALE_FULL ? "full" : "reduced"; }

static bool is_big(const char *file) { return !strcmp(file, "resnet18.onnx") || strstr(file, "transformer_lm"); }

static const unsigned k_streams[] = {1, 2, 4, 8};

/* Whether file's model runs on k_streams[i] streams in the matrices below. */
static bool wanted(const char *file, size_t i)
{
    if (scale() == SCALE_FULL) return true;
    if (!is_big(file)) return !quick() || k_streams[i] == 1 || k_streams[i] == 4;
    return k_streams[i] == 4 && !(quick() && strstr(file, "transformer_lm"));
}

static bool stream_count_wanted(size_t i) { return wanted("small", i); }

/* The iterations of a default or memory-first run of file's model: 2 below FULL for the big
 * models, in QUICK for every model. */
static unsigned iterations_of(const char *file, unsigned full)
{
    return scale() == SCALE_FULL || (scale() == SCALE_REDUCED && !is_big(file)) ? full : 2;
}

/* ---- the runs ----------------------------------------------------------------------------- */

static gm_run_stats run_fault(gm_model *m, unsigned streams, unsigned iterations, uint64_t limit, gm_run_fault fault,
                              const char *what)
{
    gm_error err;
    gm_run_assign_streams(m, streams);
    gm_run_options o;
    gm_run_options_init(&o);
    o.streams = streams, o.iterations = iterations, o.memory_limit = limit, o.memory_first = g_memory_first;
    o.learn_plan = g_learn_plan;
    o.vm_granularity = g_granule;
    gm_run_stats s;
    if (gm_run_dynamic_fault(m, &o, fault, &s, &err) != GM_OK) fail_msg("%s: run: %s", what, err.message);
    g_runs++, g_iterations += iterations;
    if (streams >= 1 && streams <= 64) g_stream_mask |= 1ull << (streams - 1);
    return s;
}

static gm_run_stats run(gm_model *m, unsigned streams, unsigned iterations, const char *what)
{
    gm_run_stats s = run_fault(m, streams, iterations, 0, GM_RUN_FAULT_NONE, what);
    const gm_run_alloc_stats *a = &s.alloc;
    print_message("  %-40s streams %u  reads %5llu  corrupted %llu  recycles %llu/%llu/%llu  events %llu"
                  "  stale %llu %s\n",
                  what, streams, (unsigned long long)s.reads_checked, (unsigned long long)s.corrupted_reads,
                  (unsigned long long)a->birth_recycles, (unsigned long long)a->borrow_recycles,
                  (unsigned long long)a->local_recycles, (unsigned long long)a->events_sent,
                  (unsigned long long)a->stale_messages, s.first_corruption);
    return s;
}

/* What every correct run must show. */
static void check_clean(const gm_run_stats *s, unsigned streams, const char *what)
{
    if (s->corrupted_reads) fail_msg("%s on %u streams: %s", what, streams, s->first_corruption);
    if (s->contiguity_violations) fail_msg("%s on %u streams: %s", what, streams, s->first_violation);
    assert_true(s->dynamic);
    assert_true(s->reads_checked > 0);
    assert_true(s->alloc.mallocs > 0);
    assert_int_equal(s->alloc.live_bytes, 0);
    assert_int_equal(s->alloc.leaked_blocks, 0);
    assert_int_equal(s->alloc.sync_violations, 0);
    assert_true(s->first_iteration_ns > 0); /* timed (never compared: a measurement) */
    assert_true(s->median_iteration_ns > 0);
    if (streams > 1) {
        /* memory crossed streams: references, news by events, blocks recycled off their birth stream */
        assert_true(s->alloc.cross_stream_accesses > 0);
        assert_true(s->alloc.local_recycles > 0);
        assert_true(s->alloc.borrow_recycles > 0);
        assert_true(s->alloc.events_sent > 0);
        assert_int_equal(s->alloc.events_sent, s->alloc.events_waited);
    } else {
        assert_int_equal(s->alloc.local_recycles + s->alloc.borrow_recycles + s->alloc.events_sent, 0);
    }
}

static gm_model *read_model(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/%s", GM_TEST_DATA_DIR, file);
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_file(path, &m, &err) != GM_OK) fail_msg("%s", err.message);
    passes(m, file);
    return m;
}

/* A run of file's model in the current modes (g_memory_first, g_learn_plan, g_granule), made
 * once: the cases that need the same run share it (the default runs test_shared_models_clean
 * checks are the ones test_memory_first_clean compares with; its memory-first runs are the
 * learned plan's and the coarse granule's yardsticks). Whichever case runs first makes it, so a
 * case run alone (GM_TEST_FILTER) still has it. */
typedef struct cached_run {
    const char *file;
    unsigned streams, iterations;
    bool memory_first, learn_plan;
    size_t granule;
    gm_run_stats s;
} cached_run;

static cached_run g_cache[48];
static size_t g_cached;

static gm_run_stats run_file(const char *file, unsigned streams, unsigned iterations)
{
    for (size_t i = 0; i < g_cached; i++) {
        const cached_run *c = &g_cache[i];
        if (!strcmp(c->file, file) && c->streams == streams && c->iterations == iterations &&
            c->memory_first == g_memory_first && c->learn_plan == g_learn_plan && c->granule == g_granule) {
            print_message("  %-40s streams %u  (made before: the same run)\n", file, streams);
            g_reused++;
            return c->s;
        }
    }
    gm_model *m = read_model(file);
    gm_run_stats s = run(m, streams, iterations, file);
    gm_model_free(m);
    if (g_cached < sizeof g_cache / sizeof *g_cache)
        g_cache[g_cached++] = (cached_run){file, streams, iterations, g_memory_first, g_learn_plan, g_granule, s};
    return s;
}

/* A memory-first run of file's model (run_file with memory_first on). */
static gm_run_stats run_file_memory_first(const char *file, unsigned streams, unsigned iterations)
{
    g_memory_first = true;
    gm_run_stats s = run_file(file, streams, iterations);
    g_memory_first = false;
    return s;
}

static void test_embedded_example_clean(void **state)
{
    (void)state;
    for (size_t i = 0; i < 4; i++) {
        if (!stream_count_wanted(i)) continue;
        gm_model *m = NULL;
        gm_error err;
        assert_int_equal(gm_model_read_embedded_example(&m, &err), GM_OK);
        passes(m, "embedded example");
        gm_run_stats s = run(m, k_streams[i], 3, "embedded example");
        check_clean(&s, k_streams[i], "embedded example");
        gm_model_free(m);
    }
}

static const char *const k_models[] = {"resnet18.onnx", "control_flow.onnx", "mlp_train_step.graphmem.json",
                                       "transformer_lm_train_step.graphmem.json"};

static void test_shared_models_clean(void **state)
{
    (void)state;
    for (size_t f = 0; f < sizeof k_models / sizeof *k_models; f++)
        for (size_t i = 0; i < 4; i++) {
            if (!wanted(k_models[f], i)) continue;
            gm_run_stats s = run_file(k_models[f], k_streams[i], iterations_of(k_models[f], 3));
            check_clean(&s, k_streams[i], k_models[f]);
            if (!strcmp(k_models[f], "control_flow.onnx")) assert_true(s.alloc.assumed_sizes > 0);
        }
}

/* A Loop with a stacked output (tests/data/loop_stacked.json, ops/op_table.h): the loop writes
 * loop:1 and reads the body's row at its exit, so row stays allocated until then. Clean on 1 to 8
 * streams, nothing leaked; and the exit's read is one read an iteration more than the same loop
 * with every output carried (where post reads row itself). */
static void test_loop_stacked_output(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = NULL;
    gm_error err;
    if (gm_read_file(GM_TEST_DATA_DIR "/loop_stacked.json", &text, &len, &err) != GM_OK) fail_msg("%s", err.message);
    char *attr = strstr(text, "\"_gm_carried_outputs\": 1");
    assert_non_null(attr);
    uint64_t reads[2] = {0, 0};
    for (int carried = 0; carried < 2; carried++) {
        attr[strlen("\"_gm_carried_outputs\": ")] = carried ? '2' : '1'; /* 2: both outputs carried */
        for (size_t i = 0; i < 4; i++) {
            if (!stream_count_wanted(i) || (carried && k_streams[i] != 1)) continue;
            gm_model *m = NULL;
            if (gm_model_read_json(text, len, "loop_stacked.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
            gm_run_stats s = run(m, k_streams[i], 3, carried ? "loop, all carried" : "loop_stacked.json");
            if (s.corrupted_reads) fail_msg("%u streams: %s", k_streams[i], s.first_corruption);
            assert_int_equal(s.alloc.live_bytes, 0);
            assert_int_equal(s.alloc.leaked_blocks, 0);
            assert_int_equal(s.alloc.sync_violations, 0);
            if (k_streams[i] == 1) reads[carried] = s.reads_checked;
            gm_model_free(m);
        }
    }
    assert_int_equal(reads[0], reads[1] + 3);
    free(text);
}

/* Memory first (an expandable L1 over the host device's virtual memory, the pools recycling before
 * it grows, the releases settled before it grows): every read still intact, on 1 to 8 streams,
 * never more device memory than the default, on several streams less; and no more than on one
 * stream, where no release waits for an event. (resnet18, the MLP and transformer LM training
 * steps; control flow's few pages do not fit the 5 % slack.) */
static void test_memory_first_clean(void **state)
{
    (void)state;
    static const char *const files[] = {"resnet18.onnx", "mlp_train_step.graphmem.json",
                                        "transformer_lm_train_step.graphmem.json"};
    uint64_t recycles = 0, settles = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        if (strstr(files[f], "transformer_lm") && scale() != SCALE_FULL) continue; /* the MLP step stands in */
        const unsigned iterations = iterations_of(files[f], 3);
        const gm_run_stats one = run_file_memory_first(files[f], 1, iterations);
        check_clean(&one, 1, files[f]);
        const uint64_t one_stream = one.alloc.device_peak_bytes;
        for (size_t i = 0; i < 4; i++) {
            if (!wanted(files[f], i)) continue;
            gm_run_stats dflt = run_file(files[f], k_streams[i], iterations);
            gm_run_stats s = run_file_memory_first(files[f], k_streams[i], iterations);
            check_clean(&dflt, k_streams[i], files[f]);
            check_clean(&s, k_streams[i], files[f]);
            print_message("  %-40s streams %u  device peak %llu (default %llu, one stream %llu), %llu recycles before "
                          "growing, %llu settles\n",
                          files[f], k_streams[i], (unsigned long long)s.alloc.device_peak_bytes,
                          (unsigned long long)dflt.alloc.device_peak_bytes, (unsigned long long)one_stream,
                          (unsigned long long)s.alloc.growth_recycles, (unsigned long long)s.alloc.settles);
            assert_true(s.alloc.device_peak_bytes <= dflt.alloc.device_peak_bytes);
            if (k_streams[i] == 4) assert_true(s.alloc.device_peak_bytes < dflt.alloc.device_peak_bytes);
            /* (the host threads' timing moves the pools' fragments: 5 % of slack; without the
             * settling, resnet18 held 1.085x its one-stream peak on 8 streams, transformer LM 1.070x) */
            assert_true(s.alloc.device_peak_bytes <= one_stream + one_stream / 20);
            recycles += s.alloc.growth_recycles, settles += s.alloc.settles;
        }
    }
    assert_true(recycles > 0);
    assert_true(settles > 0);
    /* and under a device limit that GE's mode cannot run within (it needs 56.4 MB here) */
    gm_model *m = read_model("resnet18.onnx");
    g_memory_first = true;
    gm_run_stats s = run_fault(m, 4, 2, 55500000, GM_RUN_FAULT_NONE, "resnet18 under 55.5 MB, memory first");
    g_memory_first = false;
    check_clean(&s, 4, "resnet18 under 55.5 MB, memory first");
    assert_true(s.alloc.device_peak_bytes <= 55500000);
    gm_model_free(m);
}

/* A GPU's 2 MiB granule on the host device: memory first and the learned plan still read every
 * tensor intact, the device holds whole granules, and memory first holds the live peak in whole
 * granules, give or take one, iteration after iteration: the pools give their idle memory back at
 * the end of each (gm_ms_config.l1_maps_granules; keeping it, as with 4 KiB granules, stranded
 * pieces of granules and held 58 MiB after three iterations here, 66 after six, on the H200
 * too). The plan's region, rounded up to granules, is the most the device holds with a plan.
 * (The 4 KiB peak is the one-stream memory-first run's, made once with test_memory_first_clean's.
 * Memory first keeps its three iterations here in REDUCED too, where a stranded granule shows;
 * QUICK, for races, runs two of each.) */
static void test_coarse_granule_clean(void **state)
{
    (void)state;
    const size_t granule = (size_t)2 << 20;
    const uint64_t fine_peak = run_file_memory_first("resnet18.onnx", 1, iterations_of("resnet18.onnx", 3))
                                   .alloc.device_peak_bytes;
    const uint64_t in_granules = (fine_peak + granule - 1) / granule * granule;
    const unsigned first = quick() ? 2 : 3, planned = scale() == SCALE_FULL ? 4 : quick() ? 2 : 3;
    for (size_t i = 0; i < 4; i++) {
        if (!wanted("resnet18.onnx", i)) continue;
        gm_model *m = read_model("resnet18.onnx");
        g_memory_first = true, g_granule = granule;
        gm_run_stats mf = run(m, k_streams[i], first, "resnet18, 2 MiB granule, memory first");
        g_learn_plan = true;
        gm_run_stats s = run(m, k_streams[i], planned, "resnet18, 2 MiB granule, learned plan");
        g_memory_first = g_learn_plan = false, g_granule = 0;
        gm_run_stats fine = run(m, k_streams[i], 1, "resnet18, default"); /* the granule goes with the run */
        check_clean(&mf, k_streams[i], "memory first, 2 MiB granule");
        check_clean(&s, k_streams[i], "learned plan, 2 MiB granule");
        const uint64_t region = (s.alloc.plan_region_bytes + granule - 1) / granule * granule;
        print_message("  streams %u  device peak: memory first %llu (4 KiB pages %llu, in granules %llu), learned plan "
                      "%llu (region %llu, in granules %llu)\n",
                      k_streams[i], (unsigned long long)mf.alloc.device_peak_bytes, (unsigned long long)fine_peak,
                      (unsigned long long)in_granules, (unsigned long long)s.alloc.device_peak_bytes,
                      (unsigned long long)s.alloc.plan_region_bytes, (unsigned long long)region);
        assert_true(mf.alloc.device_peak_bytes <= in_granules + granule);
        assert_int_equal(mf.alloc.device_peak_bytes % granule, 0);
        assert_int_equal(s.alloc.device_peak_bytes % granule, 0);
        assert_int_equal(s.alloc.plan_iterations, planned - 1);
        assert_true(s.alloc.device_peak_bytes <= mf.alloc.device_peak_bytes);
        assert_true(s.alloc.device_peak_bytes <= region + granule);
        assert_int_equal(s.driver_peak_bytes, 0); /* the host has no driver to ask */
        assert_true(fine.alloc.device_peak_bytes % granule != 0);
        gm_model_free(m);
    }
}

/* The learned plan (memory first, the first iteration recorded, the others answered from the
 * packed plan): every read intact on 1 to 8 streams, the host streams running as threads; every
 * iteration after the first kept to the plan; the device never held more than memory first did or
 * the region needs (the recorded iteration's pages went back before the region was taken). */
static void test_learned_plan_clean(void **state)
{
    (void)state;
    uint64_t orders = 0;
    const unsigned planned = scale() == SCALE_FULL ? 5 : quick() ? 2 : 3;
    for (size_t f = 0; f < sizeof k_models / sizeof *k_models; f++)
        for (size_t i = 0; i < 4; i++) {
            const char *file = k_models[f];
            if (!wanted(file, i) || (strstr(file, "transformer_lm") && scale() != SCALE_FULL)) continue;
            /* (below FULL, resnet18's two memory-first iterations are test_memory_first_clean's) */
            gm_run_stats mf = run_file_memory_first(file, k_streams[i], 2);
            g_memory_first = g_learn_plan = true;
            gm_run_stats s = run_file(file, k_streams[i], planned);
            g_memory_first = g_learn_plan = false;
            check_clean(&s, k_streams[i], file);
            const gm_run_alloc_stats *a = &s.alloc;
            print_message("  %-40s streams %u  plan region %llu, device peak %llu (memory first %llu), %llu "
                          "dependencies\n",
                          file, k_streams[i], (unsigned long long)a->plan_region_bytes,
                          (unsigned long long)a->device_peak_bytes, (unsigned long long)mf.alloc.device_peak_bytes,
                          (unsigned long long)a->plan_orders);
            assert_int_equal(a->plans_learned, 1);
            assert_int_equal(a->plan_iterations, planned - 1);
            assert_int_equal(a->plan_departures, 0);
            assert_int_equal(a->planned_mallocs * planned, a->mallocs * (planned - 1)); /* every malloc after the first iteration */
            assert_true(a->plan_region_bytes > 0);
            /* the recorded iteration ran as memory first does (whose later iterations may hold
             * more); the region came after its pages went */
            const uint64_t region = (a->plan_region_bytes + 65535) / 65536 * 65536;
            assert_true(a->device_peak_bytes <= (mf.alloc.device_peak_bytes > region ? mf.alloc.device_peak_bytes : region));
            orders += a->plan_orders;
        }
    if (!quick()) assert_true(orders > 0);
    /* a bug in the caller (a tensor freed right after its producer) is still caught with a plan */
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_embedded_example(&m, &err), GM_OK);
    passes(m, "embedded example");
    g_learn_plan = true;
    gm_run_stats s = run_fault(m, 1, 3, 0, GM_RUN_FAULT_EARLY_FREE, "embedded example, early free, learned plan");
    g_learn_plan = false;
    assert_true(s.corrupted_reads > 0);
    assert_true(s.alloc.planned_mallocs > 0);
    gm_model_free(m);
}

/* Under a device limit the pools run dry, synchronize and recycle, and the allocators lend
 * each other blocks parked on their streams (borrow hits) — still with every read intact. */
static void test_memory_pressure_borrows(void **state)
{
    (void)state;
    gm_model *m = read_model("resnet18.onnx");
    gm_run_stats s = run_fault(m, 4, 2, 60u << 20, GM_RUN_FAULT_NONE, "resnet18 under 60 MiB");
    check_clean(&s, 4, "resnet18 under 60 MiB");
    assert_true(s.alloc.borrow_hits > 0);
    assert_true(s.alloc.device_peak_bytes <= 60u << 20);
    /* far too little: a clean error naming the buffer, nothing leaked (ASan checks the rest) */
    gm_run_options o;
    gm_run_options_init(&o);
    o.streams = 4, o.memory_limit = 1 << 20;
    gm_error err;
    assert_int_equal(gm_run_dynamic(m, &o, &s, &err), GM_ERR_NOMEM);
    assert_non_null(strstr(err.message, "has no"));
    gm_model_free(m);
}


/* Freeing on the producer's stream right after the producer (no reference for later readers)
 * lets a take x's memory, and b then reads a's data where x was: caught. One stream, so the overwrite is ordered
 * before the read and the catch is certain (and there is no data race for TSan). */
static void test_early_free_is_caught(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_json(k_diamond, strlen(k_diamond), "d.json", &m, &err), GM_OK);
    gm_run_stats s = run_fault(m, 1, 1, 0, GM_RUN_FAULT_EARLY_FREE, "diamond, early free");
    assert_true(s.corrupted_reads > 0);
    assert_non_null(strstr(s.first_corruption, "node 'b' read 'x_out_0'"));
    assert_int_equal(s.alloc.leaked_blocks, 0);
    s = run_fault(m, 1, 1, 0, GM_RUN_FAULT_NONE, "diamond");
    gm_model_free(m);
    assert_int_equal(s.corrupted_reads, 0);
    assert_int_equal(gm_model_read_embedded_example(&m, &err), GM_OK);
    passes(m, "embedded example");
    s = run_fault(m, 1, 2, 0, GM_RUN_FAULT_EARLY_FREE, "embedded example, early free");
    assert_true(s.corrupted_reads > 0);
    gm_model_free(m);
}

/* Every allocation the run makes may fail: each failure is a clean error, with nothing leaked. */
static void test_alloc_failures(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_json(k_diamond, strlen(k_diamond), "d.json", &m, &err), GM_OK);
    gm_run_assign_streams(m, 2);
    gm_run_options o;
    gm_run_options_init(&o);
    o.streams = 2, o.iterations = 2;
    gm_run_stats s;
    gm_status st = GM_ERR_NOMEM;
    long n = 0;
    for (; st != GM_OK && n < 100000; n++) {
        gm_alloc_fail_after(n);
        st = gm_run_dynamic(m, &o, &s, &err);
        gm_alloc_fail_after(-1);
        if (st != GM_OK) assert_int_not_equal(err.code, GM_OK);
    }
    assert_int_equal(st, GM_OK);
    assert_int_equal(s.corrupted_reads, 0);
    print_message("  the run survives each of its first %ld allocations failing\n", n - 1);
    gm_model_free(m);
}

static void check_random(uint64_t seed)
{
    char what[64];
    snprintf(what, sizeof what, "random graph %llu", (unsigned long long)seed);
    unsigned streams = 1 + (unsigned)(seed % 4);
    char *text = rg_graph(seed, 12 + (int)(seed % 40), (int)(1 + seed % 3));
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(text, strlen(text), what, &m, &err) != GM_OK) fail_msg("%s: read: %s", what, err.message);
    gm_run_assign_streams(m, streams); /* before the passes, as graphmem run does */
    passes(m, what);
    gm_run_stats s = run_fault(m, streams, 2, 0, GM_RUN_FAULT_NONE, what);
    if (s.corrupted_reads) fail_msg("%s on %u streams: %s\n%s", what, streams, s.first_corruption, text);
    if (s.contiguity_violations) fail_msg("%s on %u streams: %s\n%s", what, streams, s.first_violation, text);
    assert_int_equal(s.alloc.live_bytes, 0);
    assert_int_equal(s.alloc.leaked_blocks, 0);
    assert_int_equal(s.alloc.sync_violations, 0);
    gm_model_free(m);
    free(text);
}

static gm_model *read_text(const char *json, const char *what)
{
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(json, strlen(json), what, &m, &err) != GM_OK) fail_msg("%s: read: %s", what, err.message);
    return m;
}

/* Continuous and no-padding groups get one block each, members adjacent in order: the
 * run-time check finds nothing, and every read (members written from different streams, the
 * no-padding wholes read after their members) finds its writer's data. */
static void test_groups_laid_out(void **state)
{
    (void)state;
    for (unsigned streams = 1; streams <= 4; streams++) {
        gm_model *m = read_text(k_groups, "groups");
        gm_run_stats s = run(m, streams, 3, "continuous groups");
        check_clean(&s, streams, "continuous groups");
        assert_int_equal(s.contiguity_violations, 0);
        assert_true(s.reads_checked >= 3 * 12);
        gm_model_free(m);
    }
}

/* The same graph laid out with a gap before every member but the first: the check at each
 * grouped node reports every displaced member, each iteration, and names the first. */
static void test_gapped_groups_are_caught(void **state)
{
    (void)state;
    for (unsigned streams = 1; streams <= 2; streams++) {
        gm_model *m = read_text(k_groups, "groups");
        gm_run_stats s = run_fault(m, streams, 2, 0, GM_RUN_FAULT_GAPPED_GROUPS, "gapped groups");
        print_message("  gapped groups, %u streams: %llu violations; first: %s\n", streams,
                      (unsigned long long)s.contiguity_violations, s.first_violation);
        assert_int_equal(s.contiguity_violations, 2 * GM_GROUPS_GAPPED_MEMBERS);
        assert_non_null(strstr(s.first_violation, "node 'cat' input 1 ('b_out_0')"));
        assert_int_equal(s.corrupted_reads, 0); /* the gaps move members, they overlap nothing */
        gm_model_free(m);
    }
}

static void test_random_graphs(void **state)
{
    (void)state;
    const char *env = getenv("GM_PROPERTY_GRAPHS");
    if (!env && quick()) env = "40";
    long n = env ? strtol(env, NULL, 10) : 300;
    for (long i = 0; i < n; i++) check_random((uint64_t)i);
    print_message("  %ld random graphs run clean in dynamic mode on 1 to 4 streams\n", n);
}

/* ---- the cases, each with a progress line on stderr ---------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double g_case_start;

static int case_setup(void **state)
{
    g_runs = g_iterations = g_reused = 0, g_stream_mask = 0;
    fprintf(stderr, "test_executor_dynamic: case %s (%s) ...\n", (const char *)*state, scale_name());
    g_case_start = now_s();
    return 0;
}

static int case_teardown(void **state)
{
    char streams[64] = "";
    for (unsigned s = 1; s <= 64; s++)
        if (g_stream_mask >> (s - 1) & 1)
            snprintf(streams + strlen(streams), sizeof streams - strlen(streams), "%s%u", *streams ? "," : "", s);
    fprintf(stderr, "test_executor_dynamic: case %s: %lu runs (%lu iterations, %lu made before), streams %s ... "
                    "done (%.1f s)\n",
            (const char *)*state, g_runs, g_iterations, g_reused, *streams ? streams : "-", now_s() - g_case_start);
    return 0;
}

#define CASE(f) cmocka_unit_test_prestate_setup_teardown(f, case_setup, case_teardown, (void *)#f)

int main(void)
{
    const struct CMUnitTest tests[] = {
        CASE(test_embedded_example_clean), CASE(test_shared_models_clean), CASE(test_memory_pressure_borrows),
        CASE(test_memory_first_clean),     CASE(test_learned_plan_clean),  CASE(test_coarse_granule_clean),
        CASE(test_loop_stacked_output),    CASE(test_early_free_is_caught), CASE(test_alloc_failures),
        CASE(test_random_graphs),          CASE(test_groups_laid_out),     CASE(test_gapped_groups_are_caught),
    };
    const char *filter = getenv("GM_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
