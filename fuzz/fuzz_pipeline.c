/*
 * fuzz_pipeline.c — everything after the reader, on models the JSON reader accepts: all
 * compiler passes in GE's order, the planner, the plan written as JSON and checked by the
 * independent verifier. A plan that does not verify is not a crash here (the planner may
 * legitimately give up); a crash, leak, UB or a verifier *error* on our own plan is.
 *
 * Inputs over 64 KiB are skipped and the DSA search is held to a small node limit, so one
 * input stays well under libFuzzer's one-second timeout.
 */
#include <string.h>

#include "fuzz_common.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"

static void plan_and_verify(const gm_model *m)
{
    gm_plan_options po;
    gm_plan_options_init(&po);
    po.search_node_limit = 2000;
    po.repair_rounds = 4;
    gm_plan *p = NULL;
    char *text = NULL;
    size_t len = 0;
    gm_error err;
    gm_error_clear(&err);
    if (gm_plan_build(m, &po, &p, &err) == GM_OK && gm_plan_write_json(m, p, &text, &len, &err) == GM_OK) {
        gm_plan_verdict v;
        memset(&v, 0, sizeof v);
        gm_status st = gm_plan_verify_json(m, text, len, "<the plan>", &v, &err);
        /* Our own plan is well-formed JSON of format version 1 by construction; the verifier
         * refusing it outright means the writer and the verifier disagree on the format. */
        if (st != GM_OK && st != GM_ERR_NOMEM) {
            fprintf(stderr, "verifier rejected our plan: %s\n", err.message);
            abort();
        }
        gm_plan_verdict_free(&v);
    }
    free(text);
    gm_plan_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return -1; /* -1: libFuzzer keeps it out of the corpus */
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    if (gm_model_read_json((const char *)data, size, "fuzz.json", &m, &err) != GM_OK) return 0;
    gm_pass_report rep;
    memset(&rep, 0, sizeof rep);
    gm_pass_set available = 0;
    if (gm_passes_run(m, GM_PASS_SET_ALL, &rep, &available, &err) == GM_OK) plan_and_verify(m);
    gm_pass_report_free(&rep);
    gm_model_free(m);
    return 0;
}
