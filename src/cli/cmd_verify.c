/* cmd_verify.c — `graphmem verify MODEL PLAN`: check a plan (ours or another tool's) against
 * a graph, independently of the planner (src/plan/verify.c). Exit 0 valid, 1 wrong, 2 bad
 * usage or input. --json: the verdict as one JSON object. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graphmem/io.h"
#include "graphmem/plan.h"

static int print_json(const char *plan, const char *model, const gm_plan_verdict *v, const gm_plan_rerun *rr)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "plan", plan);
    cJSON_AddStringToObject(j, "model", model);
    if (v->plan_model[0]) cJSON_AddStringToObject(j, "plan_model", v->plan_model);
    cJSON_AddNumberToObject(j, "order_nodes", (double)v->order_nodes);
    cJSON_AddNumberToObject(j, "order_nodes_not_in_model", (double)v->order_unknown);
    cJSON_AddBoolToObject(j, "passes_run_again", rr->ran);
    if (rr->ran) {
        cJSON_AddNumberToObject(j, "passes", (double)rr->passes);
        cJSON_AddNumberToObject(j, "passes_inserted_nodes", (double)rr->nodes);
        cJSON_AddNumberToObject(j, "passes_inserted_edges", (double)rr->edges);
    }
    cJSON_AddBoolToObject(j, "ok", gm_plan_verdict_ok(v));
    cJSON_AddNumberToObject(j, "symbols", (double)v->symbols);
    cJSON_AddNumberToObject(j, "extent_bytes", (double)v->extent_bytes);
    cJSON_AddNumberToObject(j, "symbol_bytes", (double)v->bytes);
    cJSON_AddNumberToObject(j, "region_bytes", (double)v->region_bytes);
    cJSON_AddNumberToObject(j, "ordered_pairs", (double)v->overlap_checks);
    cJSON *by = cJSON_AddObjectToObject(j, "problems_by_kind");
    for (int k = 0; k < GM_PLAN_P_KIND_COUNT; k++)
        if (v->by_kind[k]) cJSON_AddNumberToObject(by, gm_plan_problem_kind_name((gm_plan_problem_kind)k), (double)v->by_kind[k]);
    cJSON *list = cJSON_AddArrayToObject(j, "problems");
    for (size_t i = 0; i < v->n_problems; i++) {
        const gm_plan_problem *p = &v->problems[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "kind", gm_plan_problem_kind_name(p->kind));
        if (p->sym_a[0]) cJSON_AddStringToObject(e, "symbol", p->sym_a);
        if (p->sym_b[0]) cJSON_AddStringToObject(e, "other_symbol", p->sym_b);
        if (p->node[0]) cJSON_AddStringToObject(e, "node", p->node);
        cJSON_AddStringToObject(e, "message", p->message);
        cJSON_AddItemToArray(list, e);
    }
    cJSON_AddNumberToObject(j, "problems_dropped", (double)v->dropped);
    return gm_cli_print_json(j);
}

/* Whether the --dim lists a and b hold the same dims, in any order. */
static bool same_dims(const char *const *a, const char *const *b)
{
    size_t na = 0, nb = 0;
    while (a && a[na]) na++;
    while (b && b[nb]) nb++;
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++) found = !strcmp(a[i], b[j]);
        if (!found) return false;
    }
    return true;
}

static void join_dims(char *buf, size_t cap, const char *const *d)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; d && d[i] && n < cap; i++) n += (size_t)snprintf(buf + n, cap - n, " --dim %s", d[i]);
}

/* The model is read with the dims the plan was made with ("dims", docs/plan-format.md): the user's
 * --dim when given (they must be the plan's when it records some; a plan that records none,
 * written before plans did, takes them as they are), else the plan's own. */
static gm_status model_dims(const gm_cli_opts *o, gm_cli_opts *mo, char *const *plan_dims, gm_error *err)
{
    *mo = *o;
    const char *const *pd = (const char *const *)plan_dims;
    if (o->n_dims && pd && !same_dims(o->dims, pd)) {
        char given[512], want[512];
        join_dims(given, sizeof given, o->dims);
        join_dims(want, sizeof want, pd);
        return gm_error_set(err, GM_ERR_USAGE, "verify: %s was made with%s, and the model is read here with%s: give "
                            "the plan's dims, or none to take them",
                            o->positional[1], want, given);
    }
    if (!o->n_dims && pd) {
        int n = 0;
        for (; pd[n] && n < (int)(sizeof mo->dims / sizeof *mo->dims) - 1; n++) mo->dims[n] = pd[n];
        mo->dims[n] = NULL;
        mo->n_dims = n;
    }
    return GM_OK;
}

int gm_cmd_verify(const gm_cli_opts *o)
{
    gm_error err;
    gm_error_clear(&err);
    if (o->n_positional != 2) {
        gm_error_set(&err, GM_ERR_USAGE, "verify: needs MODEL and PLAN (graphmem verify MODEL PLAN)");
        return gm_cli_fail(&err);
    }
    char *text = NULL, **plan_dims = NULL;
    size_t len = 0;
    gm_cli_opts mo;
    gm_status st = gm_read_file(o->positional[1], &text, &len, &err);
    if (st == GM_OK) st = gm_plan_json_dims(text, len, o->positional[1], &plan_dims, &err);
    if (st == GM_OK) st = model_dims(o, &mo, plan_dims, &err);
    gm_model *m = NULL;
    gm_cli_progress_start(o, "reading the model");
    if (st == GM_OK) st = gm_cli_load(&mo, false, &m, &err);
    free(plan_dims);
    if (st != GM_OK) {
        gm_cli_progress_stop();
        free(text);
        return gm_cli_fail(&err);
    }
    gm_cli_progress_stage("verifying");
    gm_plan_verdict v;
    gm_plan_rerun rr;
    /* the user's model as it was: the passes the plan records run on it again first */
    st = gm_plan_verify_json_original(m, text, len, o->positional[1], &v, &rr, &err);
    free(text);
    char model[256];
    snprintf(model, sizeof model, "%s", gm_model_name(m));
    gm_model_free(m);
    gm_cli_progress_stop();
    if (st != GM_OK) return gm_cli_fail(&err);
    /* A plan made for another model fails in hundreds of ways that all say one thing: say it
     * first, and list only the first problems after it. */
    bool renamed = v.plan_model[0] && strcmp(v.plan_model, model) != 0;
    bool strangers = v.order_unknown * 2 > v.order_nodes && v.order_nodes > 0;
    bool other = renamed || strangers;
    size_t shown = other && v.n_problems > 10 ? 10 : v.n_problems;
    int rc = 0;
    if (other && !o->json && o->verbosity >= 0) {
        if (renamed)
            printf("%s: a plan for another model: it names model '%s', and %s is model '%s'\n", o->positional[1],
                   v.plan_model, o->positional[0], model);
        else
            printf("%s: a plan for another model: %zu of the %zu nodes it orders are not in %s (model '%s')\n",
                   o->positional[1], v.order_unknown, v.order_nodes, o->positional[0], model);
    }
    if (o->json) {
        rc = print_json(o->positional[1], model, &v, &rr);
        if (!rc && !gm_plan_verdict_ok(&v)) rc = 1;
    } else if (gm_plan_verdict_ok(&v)) {
        if (o->verbosity >= 0)
            printf("plan OK: %zu symbols, %lld bytes (%lld bytes of symbols placed, regions list %lld), "
                   "%zu address-sharing pairs ordered\n",
                   v.symbols, (long long)v.extent_bytes, (long long)v.bytes, (long long)v.region_bytes,
                   v.overlap_checks);
        if (rr.ran && o->verbosity >= 0)
            printf("  against %s after the plan's %zu passes, run again: %zu nodes and %zu control edges inserted, "
                   "as the plan lists\n",
                   o->positional[0], rr.passes, rr.nodes, rr.edges);
    } else {
        for (size_t i = 0; i < shown; i++)
            printf("%s: %s: %s\n", o->positional[1], gm_plan_problem_kind_name(v.problems[i].kind),
                   v.problems[i].message);
        if (v.dropped + v.n_problems - shown)
            printf("... and %zu more problems%s\n", v.dropped + v.n_problems - shown,
                   other ? " (the plan is for another model)" : "");
        printf("plan WRONG: %zu problem(s) in %zu symbols:", v.n_problems + v.dropped, v.symbols);
        for (int k = 0; k < GM_PLAN_P_KIND_COUNT; k++)
            if (v.by_kind[k]) printf(" %s %zu", gm_plan_problem_kind_name((gm_plan_problem_kind)k), v.by_kind[k]);
        printf("\n");
        rc = 1;
    }
    gm_plan_verdict_free(&v);
    return rc;
}
