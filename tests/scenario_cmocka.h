/*
 * scenario_cmocka.h — the loaders the direct pass tests share, failing the cmocka test with
 * the reader's message when a graph does not read. Include after <cmocka.h> and
 * "scenario_check.c".
 */
#ifndef GM_SCENARIO_CMOCKA_H
#define GM_SCENARIO_CMOCKA_H

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

#endif
