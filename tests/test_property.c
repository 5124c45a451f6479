/*
 * test_property.c — the whole pipeline on random graphs (tests/random_graph.h): for each, the
 * graph after the passes is still valid (written and read back), the plan verifies, the plan
 * is the same byte for byte with 1 and with 4 threads, and the executor finds every read
 * intact on the host backend with the graph's streams. GM_PROPERTY_GRAPHS sets how many
 * (default 200; the long run is 10,000).
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
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "random_graph.h"

static gm_plan *plan_with(const gm_model *m, unsigned threads, const char *what)
{
    gm_plan_options o;
    gm_plan_options_init(&o);
    o.threads = threads;
    o.reproducible = true;
    gm_plan *p = NULL;
    gm_error err;
    if (gm_plan_build(m, &o, &p, &err) != GM_OK) fail_msg("%s: plan: %s", what, err.message);
    if (p->unresolved) fail_msg("%s: the plan does not verify (%zu problems)", what, p->unresolved);
    return p;
}

static void check_graph(uint64_t seed)
{
    char what[64];
    snprintf(what, sizeof what, "random graph %llu", (unsigned long long)seed);
    int streams = 1 + (int)(seed % 3);
    char *text = rg_graph(seed, 12 + (int)(seed % 40), streams);
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(text, strlen(text), what, &m, &err) != GM_OK) fail_msg("%s: read: %s\n%s", what, err.message, text);
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    if (gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, &err) != GM_OK) fail_msg("%s: passes: %s", what, err.message);
    gm_pass_report_free(&rep);
    /* still a valid graph: written out and read back through validation */
    char *after = NULL;
    size_t len = 0;
    gm_model *back = NULL;
    if (gm_model_write_json(m, &after, &len, &err) != GM_OK) fail_msg("%s: write: %s", what, err.message);
    if (gm_model_read_json(after, len, what, &back, &err) != GM_OK) fail_msg("%s: after the passes: %s", what, err.message);
    gm_model_free(back);
    gm_plan *one = plan_with(m, 1, what), *four = plan_with(m, 4, what);
    if (one->text_len != four->text_len || memcmp(one->text, four->text, one->text_len))
        fail_msg("%s: the plan differs between 1 and 4 threads", what);
    gm_run_options ro;
    gm_run_options_init(&ro);
    ro.streams = (unsigned)streams;
    ro.iterations = 2;
    gm_run_stats s;
    if (gm_run_static(m, one, &ro, &s, &err) != GM_OK) fail_msg("%s: run: %s", what, err.message);
    if (s.corrupted_reads) fail_msg("%s: %s\n%s", what, s.first_corruption, text);
    gm_plan_free(one);
    gm_plan_free(four);
    free(after);
    gm_model_free(m);
    free(text);
}

static void test_random_graphs(void **state)
{
    (void)state;
    const char *env = getenv("GM_PROPERTY_GRAPHS");
    long n = env ? strtol(env, NULL, 10) : 200;
    for (long i = 0; i < n; i++) check_graph((uint64_t)i);
    print_message("  %ld random graphs: valid after the passes, plans verified and thread-independent, runs clean\n", n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_graphs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
