/*
 * scenario_cmocka.h — what the direct pass tests share: loaders that fail the cmocka test with
 * the reader's message when a graph does not read, and the allocation-failure sweep. Include
 * after <cmocka.h> and "scenario_check.c".
 */
#ifndef GM_SCENARIO_CMOCKA_H
#define GM_SCENARIO_CMOCKA_H

#include "passes/pass_util.h"
#include "util/alloc.h"

/* A model from an inline JSON text in which ' stands for ". */
static inline gm_model *load_q(const char *text)
{
    char why[1024] = "";
    gm_model *m = scn_load_quoted(text, why, sizeof why);
    if (!m) fail_msg("%s", why);
    return m;
}

/* The graph (and options) of tests/scenarios/<name>. */
static inline gm_model *load_scenario(const char *name)
{
    char why[1024] = "";
    gm_model *m = scn_load_graph(GM_SCENARIO_DIR, name, why, sizeof why);
    if (!m) fail_msg("%s", why);
    return m;
}

/* A run that runs nothing: a scenario that still holds under it tests nothing. */
static inline gm_status run_nothing(gm_model *m, gm_pass_set set, gm_pass_report *rep, gm_pass_set *available,
                                    gm_error *err, void *ctx)
{
    (void)set;
    (void)ctx;
    memset(rep, 0, sizeof *rep);
    *available = GM_PASS_SET_ALL;
    return gm_model_toposort(m, err);
}

/* The text of tests/scenarios/<name>, or the test fails. */
static inline char *slurp_scenario(const char *name, size_t *len)
{
    char *text = scn_slurp(GM_SCENARIO_DIR, name, len);
    if (!text) fail_msg("cannot read %s/%s", GM_SCENARIO_DIR, name);
    return text;
}

/* Runs pass `fn` on the graph of scenario `file` again and again, making the n-th allocation
 * fail for n = 0, 1, ... until a run succeeds: each failed run must end in GM_ERR_NOMEM (no
 * crash, no leak: ASan watches) and leave a model that can be freed. Returns the number of
 * failed runs seen. */
static inline size_t fail_each_allocation(const char *file, gm_pass_id id, gm_status (*fn)(gm_pass_ctx *))
{
    size_t failures = 0;
    for (long n = 0;; n++) {
        gm_model *m = load_scenario(file);
        gm_pass_report rep = {0};
        gm_error err;
        gm_error_clear(&err);
        gm_pass_ctx c = {m, &rep, id, &err, NULL};
        gm_alloc_fail_after(n);
        gm_status st = fn(&c);
        gm_alloc_fail_after(-1);
        gm_pass_report_free(&rep);
        gm_model_free(m);
        if (st == GM_OK) return failures;
        if (st != GM_ERR_NOMEM) fail_msg("%s, allocation %ld: %s", file, n, err.message);
        failures++;
    }
}

#endif
