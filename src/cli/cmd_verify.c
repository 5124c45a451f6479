/* cmd_verify.c — `graphmem verify MODEL PLAN`: check a plan (ours or another tool's) against
 * a graph, independently of the planner (src/plan/verify.c). Exit 0 valid, 1 wrong, 2 bad
 * usage or input. */
#include <stdio.h>

#include "cli/cli.h"
#include "graphmem/plan.h"

int gm_cmd_verify(const gm_cli_opts *o)
{
    gm_error err;
    gm_error_clear(&err);
    if (o->n_positional != 2) {
        gm_error_set(&err, GM_ERR_USAGE, "verify: needs MODEL and PLAN (graphmem verify MODEL PLAN)");
        return gm_cli_fail(&err);
    }
    gm_model *m = NULL;
    if (gm_cli_load(o, false, &m, &err) != GM_OK) return gm_cli_fail(&err);
    gm_plan_verdict v;
    gm_status st = gm_plan_verify_file(m, o->positional[1], &v, &err);
    gm_model_free(m);
    if (st != GM_OK) return gm_cli_fail(&err);
    int rc = 0;
    if (gm_plan_verdict_ok(&v)) {
        if (o->verbosity >= 0)
            printf("plan OK: %zu symbols, %lld bytes (%lld bytes of symbols placed, regions list %lld), "
                   "%zu address-sharing pairs ordered\n",
                   v.symbols, (long long)v.extent_bytes, (long long)v.bytes, (long long)v.region_bytes,
                   v.overlap_checks);
    } else {
        for (size_t i = 0; i < v.n_problems; i++)
            printf("%s: %s: %s\n", o->positional[1], gm_plan_problem_kind_name(v.problems[i].kind),
                   v.problems[i].message);
        if (v.dropped) printf("... and %zu more problems\n", v.dropped);
        printf("plan WRONG: %zu problem(s) in %zu symbols:", v.n_problems + v.dropped, v.symbols);
        for (int k = 0; k < GM_PLAN_P_KIND_COUNT; k++)
            if (v.by_kind[k]) printf(" %s %zu", gm_plan_problem_kind_name((gm_plan_problem_kind)k), v.by_kind[k]);
        printf("\n");
        rc = 1;
    }
    gm_plan_verdict_free(&v);
    return rc;
}
