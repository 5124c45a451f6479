/*
 * plan_model.c — the graphmem C API in one small program: load a model, run GE's memory-conflict
 * passes, plan its memory, and print the plan.
 *
 *   plan_model [MODEL [PLAN.json]]
 *
 * MODEL is a JSON graph, an ONNX model or a GE text dump (detected from the content); without
 * it the embedded example (a small training step) is planned. PLAN.json, when given, receives
 * the plan in docs/plan-format.md form, which `graphmem verify MODEL PLAN.json` checks.
 *
 * Exit status as the graphmem command's: 0 success, 1 the plan did not verify, 2 bad usage or
 * bad input (the message names the file and the place).
 *
 * It uses only the installed public headers. Build it against an installed graphmem with
 *   cc plan_model.c $(pkg-config --cflags --libs --static graphmem) -o plan_model
 * or with CMake (find_package(graphmem), see CMakeLists.txt beside this file).
 */
#include <stdio.h>
#include <stdlib.h>

#include <graphmem/graph.h>
#include <graphmem/io.h>
#include <graphmem/passes.h>
#include <graphmem/plan.h>

/* Every library call that can fail fills a gm_error whose message already names the file and
 * the place; the program only prefixes its own name and maps the status to an exit code. */
static int fail(const gm_error *err)
{
    fprintf(stderr, "plan_model: %s\n", err->message[0] ? err->message : gm_status_name(err->code));
    return gm_status_exit_code(err->code);
}

/* A model from a file, or the example compiled into the library. Readers return a model that
 * is already validated and topologically sorted (finalized), ready for the passes. */
static gm_status load(const char *path, gm_model **m, gm_error *err)
{
    if (path) return gm_model_read_file(path, m, err);
    return gm_model_read_embedded_example(m, err);
}

static size_t total_inserted(const gm_pass_report *r)
{
    size_t n = 0;
    for (int i = 0; i < GM_PASS_COUNT; i++) n += r->inserted[i];
    return n;
}

/* The plan's totals, then one line per symbol: a symbol is a block of memory that one or more
 * tensors share for their whole lives (GE's symbol table), placed at an offset of its region. */
static void print_plan(const gm_model *m, size_t nodes_before, const gm_pass_report *r, const gm_plan *p)
{
    printf("model: %s (%s)\n", gm_model_name(m), gm_model_source(m));
    printf("nodes: %zu before the passes, %zu after (%zu inserted, %zu lint warnings)\n", nodes_before,
           gm_model_node_count(m), total_inserted(r), r->n_warnings);
    printf("feature-map bytes: %lld\n", (long long)p->feature_map_bytes);
    printf("lower bound bytes: %lld\n", (long long)p->lower_bound_bytes);
    printf("zero-copy bytes: %lld\n", (long long)p->zero_copy_bytes);
    printf("fixed bytes: %lld\n", (long long)p->fixed_bytes);
    printf("strategy: %s\n", p->strategy ? p->strategy : "-");
    printf("symbols: %zu\n", p->n_symbols);
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *s = &p->symbols[i];
        /* The dynamic region has no offset or size: they are known only at run time. */
        printf("  %-11s %-4s offset %10lld size %10lld  %s\n", gm_plan_region_name(s->region),
               gm_mem_type_name(s->mem_type), (long long)s->offset, (long long)s->size, s->id);
    }
}

/* Writes the plan as docs/plan-format.md JSON. */
static gm_status write_plan(const gm_model *m, const gm_plan *p, const char *path, gm_error *err)
{
    char *text = NULL;
    size_t len = 0;
    gm_status st = gm_plan_write_json(m, p, &text, &len, err);
    if (st == GM_OK) st = gm_write_file(path, text, len, err);
    free(text); /* the writer's buffer is the caller's to free */
    return st;
}

int main(int argc, char **argv)
{
    if (argc > 3) {
        fprintf(stderr, "usage: plan_model [MODEL [PLAN.json]]\n");
        return 2;
    }
    gm_error err;
    gm_error_clear(&err);

    gm_model *m = NULL;
    if (load(argc > 1 ? argv[1] : NULL, &m, &err) != GM_OK) return fail(&err);
    size_t nodes_before = gm_model_node_count(m);

    /* The passes edit the model in place (inserting copies where tensors would conflict) and
     * report what they inserted; the report must be freed even when they fail. */
    gm_pass_report report = {0};
    gm_pass_set available = 0;
    gm_plan *plan = NULL;
    gm_status st = gm_passes_run(m, GM_PASS_SET_ALL, &report, &available, &err);

    if (st == GM_OK) {
        gm_plan_options opts;
        gm_plan_options_init(&opts);
        opts.report = &report;     /* the inserted nodes go into the plan file */
        opts.reproducible = true;  /* no timings in the plan file: equal inputs, equal bytes */
        st = gm_plan_build(m, &opts, &plan, &err);
    }
    int rc = 0;
    if (st != GM_OK) {
        rc = fail(&err);
    } else if (plan->unresolved) {
        /* The planner checks its plan with the independent verifier; a plan it could not make
         * sound is returned for inspection but must not be used. */
        fprintf(stderr, "plan_model: %s: the plan did not verify (%zu problems)\n", gm_model_source(m),
                plan->unresolved);
        rc = 1;
    } else {
        print_plan(m, nodes_before, &report, plan);
        if (argc > 2 && write_plan(m, plan, argv[2], &err) != GM_OK) rc = fail(&err);
    }
    gm_plan_free(plan); /* NULL is fine */
    gm_pass_report_free(&report);
    gm_model_free(m);
    return rc;
}
