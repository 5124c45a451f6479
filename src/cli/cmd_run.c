/*
 * cmd_run.c — `graphmem run [MODEL]`: the compiler passes, the streams assigned, a verified
 * plan for them, then the graph executed on a device backend with every read checked; prints
 * what ran and whether any memory was reused too early (exit 1 if so).
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "graphmem/executor.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"

static void print_text(const gm_model *m, const gm_run_options *ro, const gm_plan *p, const gm_run_stats *s)
{
    printf("graphmem run: %s (%s)\n", gm_model_name(m), *gm_model_source(m) ? gm_model_source(m) : "<embedded example>");
    printf("  %-26s %s, device %d, %u stream%s, %u iteration%s\n", "backend", gm_backend_name(ro->backend),
           ro->device_id, ro->streams, ro->streams == 1 ? "" : "s", ro->iterations, ro->iterations == 1 ? "" : "s");
    printf("  %-26s static plan: %lld feature-map bytes (lower bound %lld), %llu bytes allocated\n", "memory",
           (long long)p->feature_map_bytes, (long long)p->lower_bound_bytes, (unsigned long long)s->device_bytes);
    printf("  %-26s %llu tasks, %llu cross-stream waits\n", "executed", (unsigned long long)s->tasks,
           (unsigned long long)s->events);
    printf("  %-26s %llu reads, %llu bytes", "checked", (unsigned long long)s->reads_checked,
           (unsigned long long)s->bytes_checked);
    if (s->skipped_dynamic) printf(" (%llu reads of run-time size not checked)", (unsigned long long)s->skipped_dynamic);
    printf("\n");
    if (s->corrupted_reads)
        printf("  %-26s NO: %llu reads found another tensor's data (%llu bytes); first: %s\n", "verified",
               (unsigned long long)s->corrupted_reads, (unsigned long long)s->corrupted_bytes, s->first_corruption);
    else
        printf("  %-26s yes: every read found its writer's data\n", "verified");
}

static int print_json(const gm_model *m, const gm_run_options *ro, const gm_plan *p, const gm_run_stats *s)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) return 2;
    cJSON_AddStringToObject(j, "model", gm_model_name(m));
    cJSON_AddStringToObject(j, "backend", gm_backend_name(ro->backend));
    cJSON_AddNumberToObject(j, "streams", ro->streams);
    cJSON_AddNumberToObject(j, "iterations", ro->iterations);
    cJSON_AddNumberToObject(j, "feature_map_bytes", (double)p->feature_map_bytes);
    cJSON_AddNumberToObject(j, "device_bytes", (double)s->device_bytes);
    cJSON_AddNumberToObject(j, "tasks", (double)s->tasks);
    cJSON_AddNumberToObject(j, "events", (double)s->events);
    cJSON_AddNumberToObject(j, "reads_checked", (double)s->reads_checked);
    cJSON_AddNumberToObject(j, "corrupted_reads", (double)s->corrupted_reads);
    cJSON_AddBoolToObject(j, "verified", s->corrupted_reads == 0);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    if (!text) return 2;
    printf("%s\n", text);
    cJSON_free(text);
    return 0;
}

int gm_cmd_run(const gm_cli_opts *o)
{
    gm_error err;
    gm_error_clear(&err);
    gm_run_options ro;
    gm_run_options_init(&ro);
    if (!gm_backend_from_name(o->backend, &ro.backend))
        return gm_error_set(&err, GM_ERR_USAGE, "run: unknown backend '%s'", o->backend), gm_cli_fail(&err);
    ro.device_id = o->device, ro.streams = o->streams, ro.iterations = o->iterations;
    if (!gm_backend_available(ro.backend)) {
        gm_error_set(&err, GM_ERR_USAGE, "run: the %s backend is not available here%s", o->backend,
                     ro.backend == GM_BACKEND_CUDA ? " (no CUDA toolkit at build time, or no GPU)" : "");
        return gm_cli_fail(&err);
    }
    gm_model *m = NULL;
    if (gm_cli_load(o, true, &m, &err) != GM_OK) return gm_cli_fail(&err);
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    gm_plan *p = NULL;
    int rc = 0;
    gm_status st = gm_passes_run(m, o->passes, &rep, &avail, &err);
    if (st == GM_OK) {
        gm_run_assign_streams(m, ro.streams);
        st = gm_plan_build(m, NULL, &p, &err);
    }
    if (st == GM_OK && p->unresolved) {
        fprintf(stderr, "graphmem: run: no valid plan for this graph (see graphmem plan)\n");
        rc = 1;
    }
    gm_run_stats s;
    if (st == GM_OK && !rc) st = gm_run_static(m, p, &ro, &s, &err);
    if (st != GM_OK) rc = gm_cli_fail(&err);
    else if (!rc) {
        if (o->json) rc = print_json(m, &ro, p, &s);
        else if (o->verbosity >= 0) print_text(m, &ro, p, &s);
        if (!rc && s.corrupted_reads) rc = 1;
    }
    gm_plan_free(p);
    gm_pass_report_free(&rep);
    gm_model_free(m);
    return rc;
}
