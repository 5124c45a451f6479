/*
 * cmd_run.c — `graphmem run [MODEL]`: the compiler passes, the streams assigned, a verified
 * plan for them (or, with --dynamic, no plan: the runtime allocator), then the graph executed
 * on a device backend with every read checked; prints what ran, the tensors before and after the
 * passes (how many of run-time size, counted as info and plan count them), the allocator's
 * statistics in dynamic mode, the regions, device peak and events in static mode, the placement
 * copies by kind in both, and whether any memory was reused too early or a continuous group found
 * broken (exit 1 if so).
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "graphmem/executor.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "runtime/bg_condition.h"

static unsigned long long u(uint64_t v) { return (unsigned long long)v; }

/* The runtime allocator's side of a dynamic run. */
static void print_alloc_text(const gm_run_alloc_stats *a)
{
    printf("  %-26s dynamic: runtime allocator (caching L1, per-stream L2, cross-stream borrowing)\n", "memory");
    printf("  %-26s %llu bytes in %llu blocks; peak %llu bytes in use, %llu reserved by the L2 pools, %llu on "
           "the device\n",
           "allocated", u(a->allocated_bytes), u(a->mallocs), u(a->peak_bytes), u(a->reserved_bytes),
           u(a->device_peak_bytes));
    printf("  %-26s %llu borrow hits, %llu cross-stream references\n", "borrowed", u(a->borrow_hits),
           u(a->cross_stream_accesses));
    printf("  %-26s %llu birth, %llu borrow, %llu local\n", "recycles", u(a->birth_recycles), u(a->borrow_recycles),
           u(a->local_recycles));
    printf("  %-26s %llu sent, %llu waited; %llu messages applied, %llu stale; %llu blocks returned home; %llu "
           "internal dependencies\n",
           "allocator events", u(a->events_sent), u(a->events_waited), u(a->messages_sent), u(a->stale_messages),
           u(a->returned_home), u(a->internal_events));
    if (a->growth_recycles || a->settles)
        printf("  %-26s %llu (--memory-first: every stream synchronized, its idle memory back to L1); %llu "
               "releases settled (every stream synchronized, every release known)\n",
               "recycles before growing", u(a->growth_recycles), u(a->settles));
    if (a->plans_learned)
        printf("  %-26s %llu learned (region %llu bytes); %llu iterations kept to it, %llu departed; %llu mallocs "
               "answered by it, %llu internal dependencies added (--learn-plan)\n",
               "learned plan", u(a->plans_learned), u(a->plan_region_bytes), u(a->plan_iterations),
               u(a->plan_departures), u(a->planned_mallocs), u(a->plan_orders));
    if (a->assumed_sizes)
        printf("  %-26s %llu buffers of run-time size (holding tensors of run-time size, none declaring bytes), "
               "given 4 KiB each\n",
               "assumed sizes", u(a->assumed_sizes));
    printf("  %-26s %llu bytes still in use, %llu blocks leaked\n", "at the end", u(a->live_bytes),
           u(a->leaked_blocks));
}

static void add_alloc_json(cJSON *j, const gm_run_alloc_stats *a)
{
    cJSON *o = cJSON_AddObjectToObject(j, "allocator");
    if (!o) return;
    const struct {
        const char *key;
        uint64_t v;
    } f[] = {{"allocated_bytes", a->allocated_bytes}, {"mallocs", a->mallocs}, {"peak_bytes", a->peak_bytes},
             {"reserved_bytes", a->reserved_bytes}, {"device_peak_bytes", a->device_peak_bytes},
             {"borrow_hits", a->borrow_hits}, {"birth_recycles", a->birth_recycles},
             {"borrow_recycles", a->borrow_recycles}, {"local_recycles", a->local_recycles},
             {"cross_stream_accesses", a->cross_stream_accesses}, {"events_sent", a->events_sent},
             {"events_waited", a->events_waited}, {"messages_applied", a->messages_sent},
             {"stale_messages", a->stale_messages}, {"returned_home", a->returned_home},
             {"internal_events", a->internal_events}, {"growth_recycles", a->growth_recycles}, {"settles", a->settles},
             {"assumed_sizes", a->assumed_sizes}, {"live_bytes", a->live_bytes}, {"leaked_blocks", a->leaked_blocks},
             {"plans_learned", a->plans_learned}, {"plan_iterations", a->plan_iterations},
             {"plan_departures", a->plan_departures}, {"planned_mallocs", a->planned_mallocs},
             {"plan_orders", a->plan_orders}, {"plan_region_bytes", a->plan_region_bytes}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) cJSON_AddNumberToObject(o, f[i].key, (double)f[i].v);
}

/* A static run's memory: each region allocated (bytes, on each device), the device peak. */
static void print_static_text(const gm_plan *p, const gm_run_stats *s)
{
    printf("  %-26s static plan: %lld feature-map bytes (lower bound %lld), %llu bytes allocated\n", "memory",
           (long long)p->feature_map_bytes, (long long)p->lower_bound_bytes, u(s->device_bytes));
    for (int r = 0; r < GM_PLAN_R_COUNT; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
            if (!s->region_bytes[r][mt]) continue;
            char label[64];
            snprintf(label, sizeof label, "region %s/%s", gm_plan_region_name((gm_plan_region_kind)r),
                     gm_mem_type_name((gm_mem_type)mt));
            printf("  %-26s %llu bytes\n", label, u(s->region_bytes[r][mt]));
        }
    printf("  %-26s %llu bytes (regions and staging, all devices)\n", "device peak", u(s->device_peak_bytes));
}

/* The tensors: the model as read and the graph run (after the passes and the lowering). */
typedef struct run_tensors {
    gm_model_stats before, after;
} run_tensors;

static void print_text(const gm_model *m, const gm_run_options *ro, const gm_plan *p, const gm_run_stats *s,
                       const run_tensors *tc)
{
    const char *source = *gm_model_source(m) ? gm_model_source(m) : "<embedded example>";
    printf("graphmem run: %s (%s)\n", gm_model_name(m), source);
    printf("  %-26s %s, device %d, %u stream%s, %u iteration%s", "backend", gm_backend_name(ro->backend),
           ro->device_id, ro->streams, ro->streams == 1 ? "" : "s", ro->iterations, ro->iterations == 1 ? "" : "s");
    if (ro->devices > 1) printf(", %u devices", ro->devices);
    printf("\n");
    gm_cli_print_tensors(2, 27, "tensors before / after", &tc->before, &tc->after);
    if (p) print_static_text(p, s);
    else print_alloc_text(&s->alloc);
    if (s->driver_peak_bytes)
        printf("  %-26s %llu bytes at most, as the driver counts (whole pages and granules, and what it took "
               "for streams and kernels)\n",
               "device, driver's count", u(s->driver_peak_bytes));
    printf("  %-26s %llu tasks, %llu cross-stream waits\n", "executed", u(s->tasks), u(s->events));
    printf("  %-26s first iteration %.3f ms", "time", (double)s->first_iteration_ns / 1e6);
    if (ro->iterations == 2) printf(", then %.3f ms (the second)", (double)s->median_iteration_ns / 1e6);
    if (ro->iterations > 2)
        printf(", then %.3f ms (the median of the other %u)", (double)s->median_iteration_ns / 1e6, ro->iterations - 1);
    printf("\n");
    if (p) /* the dynamic run's events are the allocator's, above */
        printf("  %-26s %llu recorded, %llu waited on streams, %llu host syncs\n", "events", u(s->events_recorded),
               u(s->events), u(s->host_syncs));
    printf("  %-26s %llu reads, %llu bytes", "checked", u(s->reads_checked), u(s->bytes_checked));
    if (s->skipped_dynamic) printf(" (%llu reads of run-time size not checked)", u(s->skipped_dynamic));
    printf("\n");
    printf("  %-26s %llu H2D, %llu D2H, %llu P2P (%llu bytes); %llu staging bytes\n", "placement copies",
           u(s->copies[GM_COPY_H2D]), u(s->copies[GM_COPY_D2H]), u(s->copies[GM_COPY_P2P]), u(s->copy_bytes),
           u(s->staging_bytes));
    if (s->contiguity_violations)
        printf("  %-26s NO: %llu continuous-group members not adjacent; first: %s\n", "contiguous",
               u(s->contiguity_violations), s->first_violation);
    if (s->corrupted_reads)
        printf("  %-26s NO: %llu reads found another tensor's data (%llu bytes); first: %s\n", "verified",
               u(s->corrupted_reads), u(s->corrupted_bytes), s->first_corruption);
    else if (s->contiguity_violations)
        printf("  %-26s NO: a continuous group is broken\n", "verified");
    else
        printf("  %-26s yes: every read found its writer's data\n", "verified");
}

static void add_static_json(cJSON *j, const gm_plan *p, const gm_run_stats *s)
{
    cJSON_AddNumberToObject(j, "feature_map_bytes", (double)p->feature_map_bytes);
    cJSON_AddNumberToObject(j, "device_bytes", (double)s->device_bytes);
    cJSON_AddNumberToObject(j, "device_peak_bytes", (double)s->device_peak_bytes);
    cJSON *regions = cJSON_AddArrayToObject(j, "regions");
    for (int r = 0; regions && r < GM_PLAN_R_COUNT; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
            if (!s->region_bytes[r][mt]) continue;
            cJSON *o = cJSON_CreateObject();
            if (!o) return;
            cJSON_AddStringToObject(o, "region", gm_plan_region_name((gm_plan_region_kind)r));
            cJSON_AddStringToObject(o, "memory_type", gm_mem_type_name((gm_mem_type)mt));
            cJSON_AddNumberToObject(o, "bytes", (double)s->region_bytes[r][mt]);
            cJSON_AddItemToArray(regions, o);
        }
}

static int print_json(const gm_model *m, const gm_run_options *ro, const gm_plan *p, const gm_run_stats *s,
                      const run_tensors *tc)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) return gm_status_exit_code(GM_ERR_NOMEM);
    cJSON_AddStringToObject(j, "model", gm_model_name(m));
    cJSON_AddStringToObject(j, "backend", gm_backend_name(ro->backend));
    cJSON_AddNumberToObject(j, "streams", ro->streams);
    cJSON_AddNumberToObject(j, "iterations", ro->iterations);
    cJSON_AddStringToObject(j, "memory", p ? "static" : "dynamic");
    cJSON_AddNumberToObject(j, "devices", ro->devices);
    gm_cli_json_tensors(j, &tc->before, &tc->after);
    if (p) add_static_json(j, p, s);
    else add_alloc_json(j, &s->alloc);
    cJSON_AddNumberToObject(j, "driver_peak_bytes", (double)s->driver_peak_bytes);
    cJSON_AddNumberToObject(j, "first_iteration_ns", (double)s->first_iteration_ns);
    cJSON_AddNumberToObject(j, "median_iteration_ns", (double)s->median_iteration_ns);
    cJSON_AddNumberToObject(j, "tasks", (double)s->tasks);
    cJSON_AddNumberToObject(j, "events", (double)s->events);
    cJSON_AddNumberToObject(j, "events_recorded", (double)s->events_recorded);
    cJSON_AddNumberToObject(j, "reads_checked", (double)s->reads_checked);
    cJSON_AddNumberToObject(j, "copies_h2d", (double)s->copies[GM_COPY_H2D]);
    cJSON_AddNumberToObject(j, "copies_d2h", (double)s->copies[GM_COPY_D2H]);
    cJSON_AddNumberToObject(j, "copies_p2p", (double)s->copies[GM_COPY_P2P]);
    cJSON_AddNumberToObject(j, "copy_bytes", (double)s->copy_bytes);
    cJSON_AddNumberToObject(j, "host_syncs", (double)s->host_syncs);
    cJSON_AddNumberToObject(j, "corrupted_reads", (double)s->corrupted_reads);
    cJSON_AddNumberToObject(j, "contiguity_violations", (double)s->contiguity_violations);
    cJSON_AddBoolToObject(j, "verified", s->corrupted_reads == 0 && s->contiguity_violations == 0);
    return gm_cli_print_json(j); /* out of memory: 3, as everywhere */
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
    ro.devices = o->devices;
    ro.memory_limit = o->memory_limit;
    ro.vm_granularity = (size_t)o->vm_granularity;
    ro.memory_first = o->memory_first;
    ro.learn_plan = o->learn_plan;
    if (!gm_backend_available(ro.backend)) {
        gm_error_set(&err, GM_ERR_USAGE, "run: the %s backend is not available here%s", o->backend,
                     ro.backend == GM_BACKEND_CUDA ? " (no CUDA toolkit at build time, or no GPU)" : "");
        return gm_cli_fail(&err);
    }
    gm_model *m = NULL;
    gm_cli_progress_start(o, "reading the model");
    if (gm_cli_load(o, true, &m, &err) != GM_OK) return gm_cli_fail(&err);
    run_tensors tc;
    memset(&tc, 0, sizeof tc);
    gm_model_get_stats(m, &tc.before);
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    gm_plan *p = NULL;
    int rc = 0;
    /* streams first: the passes decide in-place reuse and the copies before in-place writers on
     * the streams the graph will run on */
    gm_run_assign_streams(m, ro.streams);
    gm_cli_progress_stage("running the passes");
    gm_status st = gm_passes_run(m, o->passes, &rep, &avail, &err);
    /* lowering for the runtime, as GE's execute graph does: each If/Case branch gets its own
     * output where branches disagree on which input they return (PointFromInputs) */
    if (st == GM_OK) st = gm_bg_condition_prepare_model(m, GM_BG_SHAPE_AUTO, &err);
    if (st == GM_OK) gm_model_get_stats(m, &tc.after);
    if (st == GM_OK) {
        gm_cli_progress_stage("planning");
        if (!o->dynamic) st = gm_plan_build(m, NULL, &p, &err);
    }
    if (st == GM_OK && p && p->unresolved) {
        gm_cli_progress_stop();
        fprintf(stderr, "graphmem: run: no valid plan for this graph (see graphmem plan)\n");
        rc = 1;
    }
    gm_run_stats s;
    gm_cli_progress_stage("running");
    if (st == GM_OK && !rc) st = p ? gm_run_static(m, p, &ro, &s, &err) : gm_run_dynamic(m, &ro, &s, &err);
    gm_cli_progress_stop();
    if (st != GM_OK) rc = gm_cli_fail(&err);
    else if (!rc) {
        if (o->json) rc = print_json(m, &ro, p, &s, &tc);
        else if (o->verbosity >= 0) print_text(m, &ro, p, &s, &tc);
        if (!rc && (s.corrupted_reads || s.contiguity_violations)) rc = 1;
    }
    gm_plan_free(p);
    gm_pass_report_free(&rep);
    gm_model_free(m);
    return rc;
}
