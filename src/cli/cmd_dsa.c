/*
 * cmd_dsa.c — `graphmem plan --dsa FILE.csv`: the offset problem behind static memory planning
 * on its own (MiniMalloc's CSV), so the packer can be measured on published instances: the lower
 * bound, the best-fit height, the search's height, the independent check, and -o the offsets.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "graphmem/dsa.h"
#include "util/clock.h"

int gm_cmd_plan_dsa(const gm_cli_opts *o)
{
    gm_error err;
    gm_error_clear(&err);
    gm_cli_outputs outs;
    if (gm_cli_outputs_begin(&outs, o, &err) != GM_OK) return gm_cli_fail(&err);
    gm_dsa_buffer *b = NULL;
    size_t n = 0;
    if (gm_dsa_read_csv(o->dsa, &b, &n, &err) != GM_OK) {
        gm_cli_outputs_end(&outs);
        return gm_cli_fail(&err);
    }
    int64_t lb = gm_dsa_lower_bound(b, n), fit = 0, best = 0;
    double t0 = gm_clock_ms();
    gm_status st = gm_dsa_best_fit(b, n, &fit, &err);
    double t1 = gm_clock_ms();
    bool optimal = false;
    gm_dsa_search_opts so = {.budget_s = o->budget_s, .node_limit = 0};
    if (st == GM_OK) st = gm_dsa_search(b, n, &so, &best, &optimal, &err);
    double t2 = gm_clock_ms();
    char why[512] = "";
    bool ok = st == GM_OK && gm_dsa_check(b, n, best, why, sizeof why);
    if (st == GM_OK && ok && o->output) {
        char *csv = NULL;
        size_t len = 0;
        st = gm_dsa_csv_text(b, n, &csv, &len, &err);
        if (st == GM_OK) st = gm_cli_outputs_add(&outs, o->output, "offsets, csv", csv, len, &err);
        if (st == GM_OK) st = gm_cli_outputs_commit(&outs, &err);
        free(csv);
    }
    if (st != GM_OK) {
        gm_cli_outputs_end(&outs);
        gm_dsa_free(b);
        return gm_cli_fail(&err);
    }
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "dsa", o->dsa);
        cJSON_AddNumberToObject(j, "buffers", (double)n);
        cJSON_AddNumberToObject(j, "lower_bound", (double)lb);
        cJSON_AddNumberToObject(j, "best_fit", (double)fit);
        cJSON_AddNumberToObject(j, "best_fit_ms", t1 - t0);
        cJSON_AddNumberToObject(j, "search", (double)best);
        cJSON_AddNumberToObject(j, "search_ms", t2 - t1);
        cJSON_AddBoolToObject(j, "optimal", optimal);
        cJSON_AddBoolToObject(j, "checked", ok);
        if (!ok) cJSON_AddStringToObject(j, "why", why);
        gm_cli_outputs_json(&outs, j);
        gm_cli_outputs_end(&outs);
        gm_dsa_free(b);
        int rc = gm_cli_print_json(j);
        return rc ? rc : ok ? 0 : 1;
    }
    if (o->verbosity >= 0) {
        printf("graphmem plan --dsa: %s\n", o->dsa);
        printf("  %-22s %zu\n", "buffers", n);
        printf("  %-22s %lld\n", "lower bound", (long long)lb);
        printf("  %-22s %lld (%.4f x bound, %.1f ms)\n", "best fit", (long long)fit, lb ? (double)fit / (double)lb : 1.0,
               t1 - t0);
        printf("  %-22s %lld (%.4f x bound, %.1f ms)%s\n", "search", (long long)best,
               lb ? (double)best / (double)lb : 1.0, t2 - t1, optimal ? ", optimal" : "");
        printf("  %-22s %s%s\n", "checked", ok ? "yes" : "NO: ", ok ? "" : why);
        gm_cli_outputs_print(&outs, o);
    }
    gm_cli_outputs_end(&outs);
    gm_dsa_free(b);
    return ok ? 0 : 1;
}
