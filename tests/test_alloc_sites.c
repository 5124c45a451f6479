/*
 * test_alloc_sites.c — failure injection proven for every allocation site of the library.
 *
 * Every allocation in src/ goes through gm_malloc & co. (src/util/alloc.h), macros that pass
 * their call site along. This test
 *   1. lists the sites statically: every line of src/ that calls one of them;
 *   2. runs a set of workloads (every reader, the passes over every scenario, the planner, the
 *      verifier, every writer, the pictures, the DSA packers, both executors with the runtime
 *      allocators)
 *      once each with an observer, recording at which allocation index each site is first
 *      reached;
 *   3. for each site reached, runs the workload again with that allocation made to fail (and
 *      every later one: the failure cascades as a real out-of-memory would), and demands a clean
 *      result — GM_OK, or an error with a message — with no crash (ASan/UBSan) and no leak
 *      (LeakSanitizer is asked after every run);
 *   4. demands that every static site has failed in some run, except those listed in
 *      tests/alloc_sites_exempt.txt with the reason they cannot be reached here.
 *
 * A failure is attributed to the site that actually failed first (gm_alloc_first_failure), so
 * threaded workloads (the planner's strategies, the host streams) count only what really
 * happened.
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include "io_test_util.h"
#include <cjson/cJSON.h>

#include "onnx.pb-c.h"
#include "onnx_build.h"

#include "graphmem/dsa.h"
#include "graphmem/executor.h"
#include "graphmem/graph.h"
#include "graphmem/io.h"
#include "graphmem/log.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "graphmem/report.h"
#include "graphmem/runtime.h"
#include "fake_mem_source.h"
#include "random_graph.h"
#include "runtime/bg_condition.h"
#include "runtime/caching_allocator.h"
#include "runtime/io_reuse_check.h"
#include "util/alloc.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

/* ---- sites: "dir/file.c:line" relative to src/ --------------------------------------------- */

typedef struct site {
    char *key;
    long first; /* allocation index of its first reach in the current workload; -1: not reached */
    bool failed; /* made to fail in some run, handled cleanly */
    bool is_static; /* found in the source */
} site;

typedef struct site_set {
    site *v;
    size_t n, cap;
    pthread_mutex_t mu;
    long counter; /* allocations seen by the observer in the current recording */
} site_set;

static site_set g_sites = {.mu = PTHREAD_MUTEX_INITIALIZER};

static char *site_key(const char *file, int line)
{
    const char *s = strstr(file, "/src/");
    s = s ? s + 5 : file;
    size_t n = strlen(s) + 16;
    char *k = malloc(n);
    snprintf(k, n, "%s:%d", s, line);
    return k;
}

static site *site_find(const char *key)
{
    for (size_t i = 0; i < g_sites.n; i++)
        if (!strcmp(g_sites.v[i].key, key)) return &g_sites.v[i];
    return NULL;
}

/* Takes ownership of key. */
static site *site_add(char *key)
{
    site *s = site_find(key);
    if (s) {
        free(key);
        return s;
    }
    if (g_sites.n == g_sites.cap) {
        g_sites.cap = g_sites.cap ? 2 * g_sites.cap : 1024;
        g_sites.v = realloc(g_sites.v, g_sites.cap * sizeof *g_sites.v);
    }
    s = &g_sites.v[g_sites.n++];
    *s = (site){.key = key, .first = -1};
    return s;
}

/* The site of (file, line), by the __FILE__ pointer the macro passed: every allocation of a
 * recording comes here, so the key text and the search over all sites are made once per call
 * site, not once per allocation. */
typedef struct site_slot {
    const char *file;
    int line;
    size_t idx;
} site_slot;

static site_slot g_slots[1 << 13];

static site *site_of(const char *file, int line)
{
    size_t mask = sizeof g_slots / sizeof *g_slots - 1;
    size_t h = (((uintptr_t)file >> 3) * 31u + (size_t)line) & mask;
    for (; g_slots[h].file; h = (h + 1) & mask)
        if (g_slots[h].file == file && g_slots[h].line == line) return &g_sites.v[g_slots[h].idx];
    site *s = site_add(site_key(file, line));
    g_slots[h] = (site_slot){file, line, (size_t)(s - g_sites.v)};
    return s;
}

static void observe(const char *file, int line, void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&g_sites.mu);
    site *s = site_of(file, line);
    if (s->first < 0) s->first = g_sites.counter;
    g_sites.counter++;
    pthread_mutex_unlock(&g_sites.mu);
}

/* ---- the static list ----------------------------------------------------------------------- */

static const char *const k_calls[] = {"gm_malloc(", "gm_calloc(", "gm_realloc(", "gm_grow(", "gm_strdup(",
                                      "gm_strndup("};

static bool line_allocates(const char *line)
{
    const char *t = line + strspn(line, " \t");
    if (!strncmp(t, "#define", 7) || !strncmp(t, "*", 1) || !strncmp(t, "/*", 2) || !strncmp(t, "//", 2))
        return false;
    for (size_t i = 0; i < sizeof k_calls / sizeof *k_calls; i++) {
        const char *p = strstr(line, k_calls[i]);
        /* a call, not a longer name that ends the same way (my_gm_malloc) */
        if (p && (p == line || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z'))))
            return true;
    }
    return false;
}

static void scan_file(const char *path, const char *rel)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int no = 0;
    bool in_macro = false; /* a #define's continuation lines: its expansions are the sites */
    while (fgets(line, sizeof line, f)) {
        no++;
        size_t l = strlen(line);
        while (l && (line[l - 1] == '\n' || line[l - 1] == ' ')) l--;
        bool continued = l && line[l - 1] == '\\';
        bool skip = in_macro;
        in_macro = continued && (in_macro || !strncmp(line + strspn(line, " \t"), "#define", 7));
        if (skip || !line_allocates(line)) continue;
        char key[600];
        snprintf(key, sizeof key, "%s:%d", rel, no);
        site_add(strdup(key))->is_static = true;
    }
    fclose(f);
}

static void scan_dir(const char *dir, const char *rel)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024], sub[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (strcmp(e->d_name, "cli") != 0) scan_dir(path, sub); /* the command is not the library */
            continue;
        }
        size_t n = strlen(e->d_name);
        bool src = n > 2 && (!strcmp(e->d_name + n - 2, ".c") || !strcmp(e->d_name + n - 2, ".h"));
        if (src && strcmp(sub, "util/alloc.c") != 0 && strcmp(sub, "util/alloc.h") != 0) scan_file(path, sub);
    }
    closedir(d);
}

/* ---- inputs, read once before any injection (the test's own allocations stay out of it) ---- */

typedef struct input {
    char *name;
    char *data;
    size_t len;
    gm_format fmt;
    char *options; /* "key\0value\0...\0" for scenario graphs */
} input;

typedef struct inputs {
    input *v;
    size_t n, cap;
} inputs;

static inputs g_inputs;

static void add_input(const char *name, char *data, size_t len, gm_format fmt, char *options)
{
    if (g_inputs.n == g_inputs.cap) {
        g_inputs.cap = g_inputs.cap ? 2 * g_inputs.cap : 64;
        g_inputs.v = realloc(g_inputs.v, g_inputs.cap * sizeof *g_inputs.v);
    }
    g_inputs.v[g_inputs.n++] = (input){strdup(name), data, len, fmt, options};
}

static void add_file(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    char *d = slurp(path, &len);
    assert_non_null(d);
    add_input(name, d, len, gm_format_from_path(path), NULL);
}

/* A scenario file's graph, re-serialized, and its options. */
static void add_scenario(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    char *text = slurp(path, &len);
    assert_non_null(text);
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!root) return;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "graph");
    char *gs = g ? cJSON_PrintUnformatted(g) : NULL;
    if (gs) {
        size_t olen = 1, ocap = 1;
        char *opts = calloc(1, 1);
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "options");
        for (const cJSON *e = o ? o->child : NULL; e; e = e->next) {
            if (!cJSON_IsString(e)) continue;
            size_t a = strlen(e->string) + 1, b = strlen(e->valuestring) + 1;
            ocap = olen + a + b;
            opts = realloc(opts, ocap);
            memcpy(opts + olen - 1, e->string, a);
            memcpy(opts + olen - 1 + a, e->valuestring, b);
            olen += a + b;
            opts[olen - 1] = '\0';
        }
        char *copy = strdup(gs);
        add_input(name, copy, strlen(copy), GM_FORMAT_JSON, opts);
        cJSON_free(gs);
    }
    cJSON_Delete(root);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void add_dir(const char *dir, const char *suffix, bool scenario)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[1024];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 1024) {
        size_t l = strlen(e->d_name), s = strlen(suffix);
        if (l > s && !strcmp(e->d_name + l - s, suffix)) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (scenario) add_scenario(dir, names[i]);
        else add_file(dir, names[i]);
        free(names[i]);
    }
}

/* ---- workloads ----------------------------------------------------------------------------- */

typedef gm_status (*workload_fn)(const input *in, gm_error *err);

static gm_status read_input(const input *in, gm_model **m, gm_error *err)
{
    if (!in) return gm_model_read_embedded_example(m, err);
    gm_status st = gm_model_read_buffer(in->data, in->len, in->fmt, in->name, m, err);
    for (const char *o = in->options; st == GM_OK && o && *o; o += strlen(o) + 1) {
        const char *v = o + strlen(o) + 1;
        st = gm_model_set_option(*m, o, v);
        if (st != GM_OK) gm_error_set(err, st, "%s: option %s", in->name, o);
        o = v;
    }
    if (st != GM_OK) {
        gm_model_free(*m);
        *m = NULL;
    }
    return st;
}

static gm_status passes(gm_model *m, gm_error *err)
{
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    gm_status st = gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, err);
    gm_pass_report_free(&rep);
    return st;
}

static gm_status plan(const gm_model *m, gm_plan **p, gm_error *err)
{
    gm_plan_options o;
    gm_plan_options_init(&o);
    o.threads = 1;
    o.reproducible = true;
    return gm_plan_build(m, &o, p, err);
}

/* A written model read back (the readers' paths for what graphmem itself writes). */
static gm_status read_back(const void *data, size_t len, gm_format fmt, gm_error *err)
{
    gm_model *m = NULL;
    gm_status st = gm_model_read_buffer(data, len, fmt, "written", &m, err);
    gm_model_free(m);
    return st;
}

/* Read, passes, plan (self-verified), the verifier again on the text, every writer. */
static gm_status wl_pipeline(const input *in, gm_error *err)
{
    gm_model *m = NULL;
    gm_status st = read_input(in, &m, err);
    if (st != GM_OK) return st;
    gm_plan *p = NULL;
    if ((st = passes(m, err)) == GM_OK && (st = plan(m, &p, err)) == GM_OK && p->text) {
        gm_plan_verdict v = {0};
        if ((st = gm_plan_verify_json(m, p->text, p->text_len, "plan", &v, err)) == GM_OK)
            gm_plan_verdict_free(&v);
    }
    char *text = NULL;
    void *bin = NULL;
    size_t len = 0;
    if (st == GM_OK && (st = gm_model_write_json(m, &text, &len, err)) == GM_OK) st = read_back(text, len, GM_FORMAT_JSON, err);
    free(text);
    if (st == GM_OK && (st = gm_model_write_onnx(m, &bin, &len, err)) == GM_OK) st = read_back(bin, len, GM_FORMAT_ONNX, err);
    free(bin);
    text = NULL;
    if (st == GM_OK && (st = gm_model_write_ge_text(m, &text, &len, err)) == GM_OK) st = read_back(text, len, GM_FORMAT_GE_TEXT, err);
    free(text);
    if (st == GM_OK && !in) { /* a file written through its temporary name */
        char path[64];
        snprintf(path, sizeof path, "/tmp/gm_alloc_sites_%ld.json", (long)getpid());
        st = gm_model_write_file(m, path, GM_FORMAT_JSON, err);
        unlink(path);
    }
    gm_plan_free(p);
    gm_model_free(m);
    return st;
}

/* The pictures: the SVG timeline (aggregating, with tiny limits) and the DOT graph. */
static gm_status wl_report(const input *in, gm_error *err)
{
    gm_model *m = NULL;
    gm_status st = read_input(in, &m, err);
    if (st != GM_OK) return st;
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    gm_plan *p = NULL;
    if ((st = gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, err)) == GM_OK && (st = plan(m, &p, err)) == GM_OK &&
        p->text) {
        gm_svg_options so;
        gm_svg_options_init(&so);
        for (int k = 0; k < 2 && st == GM_OK; k++) { /* drawn one by one, then aggregated */
            if (k) so.aggregate_above = 4, so.max_boxes = 2;
            char *svg = NULL;
            size_t len = 0;
            st = gm_report_svg_timeline(m, p->text, p->text_len, "plan", &so, &svg, &len, err);
            gm_report_free(svg);
        }
    }
    if (st == GM_OK) {
        char *dot = NULL;
        size_t len = 0;
        st = gm_report_dot_graph(m, &rep, &dot, &len, err);
        gm_report_free(dot);
    }
    gm_pass_report_free(&rep);
    gm_plan_free(p);
    gm_model_free(m);
    return st;
}

/* The scenarios: read, passes, plan (the passes and the planner on every kind of conflict). */
static gm_status wl_scenario(const input *in, gm_error *err)
{
    gm_model *m = NULL;
    gm_status st = read_input(in, &m, err);
    if (st != GM_OK) return st;
    gm_plan *p = NULL;
    if ((st = passes(m, err)) == GM_OK) st = plan(m, &p, err);
    gm_plan_free(p);
    gm_model_free(m);
    return st;
}

/* The verifier on a plan file (the data's plans: one right, one with an overlap). */
static gm_status wl_verify_file(const input *in, gm_error *err)
{
    (void)in;
    gm_model *m = NULL;
    gm_status st = gm_model_read_file(GM_TEST_DATA_DIR "/plans/relu.json", &m, err);
    if (st != GM_OK) return st;
    static const char *const plans[] = {GM_TEST_DATA_DIR "/plans/relu.plan.json",
                                        GM_TEST_DATA_DIR "/plans/relu_overlap.plan.json"};
    for (size_t i = 0; st == GM_OK && i < 2; i++) {
        gm_plan_verdict v = {0};
        if ((st = gm_plan_verify_file(m, plans[i], &v, err)) == GM_OK) gm_plan_verdict_free(&v);
    }
    gm_model_free(m);
    return st;
}

/* An ONNX model read with --dim values, which the model keeps and a plan records, and the
 * dims read back from a plan's text (verify takes them). */
static gm_status wl_dims(const input *in, gm_error *err)
{
    (void)in;
    static const char *const dims[] = {"N=1", "H=32", "W=32", NULL};
    gm_model *m = NULL;
    gm_status st = gm_model_read_file_dims(GM_TEST_DATA_DIR "/runtime_sizes.onnx", dims, &m, err);
    gm_model_free(m);
    static const char plan[] = "{\"graphmem_plan\": 1, \"dims\": [\"N=1\", \"H=32\"], \"symbols\": []}";
    char **d = NULL;
    if (st == GM_OK) st = gm_plan_json_dims(plan, sizeof plan - 1, "p.json", &d, err);
    free(d);
    return st;
}

/* A file big enough to go to the disk past the page cache: its bounce buffer (file_set.c). */
static gm_status wl_big_file(const input *in, gm_error *err)
{
    (void)in;
    enum { BIG = (8 << 20) + 1 };
    char *data = calloc(1, BIG);
    if (!data) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    char path[64];
    snprintf(path, sizeof path, "/tmp/gm_alloc_sites_big_%ld.out", (long)getpid());
    gm_status st = gm_write_file(path, data, BIG, err);
    unlink(path);
    free(data);
    return st;
}

/* A command's outputs, all or none (gm_files: a regular file staged and renamed, a device kept
 * and written at the commit), and a plan verified against the model as it was: the passes it
 * records run again, and a plan whose recorded passes differ has the mismatch listed first. */
static gm_status wl_outputs_and_original(const input *in, gm_error *err)
{
    (void)in;
    gm_files *fs = gm_files_new();
    if (!fs) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    char path[64];
    snprintf(path, sizeof path, "/tmp/gm_alloc_sites_%ld.out", (long)getpid());
    gm_status st = gm_files_add(fs, path, "x", 1, err);
    if (st == GM_OK) st = gm_files_add(fs, "/dev/zero", "y", 1, err); /* a device (a sandbox's /dev/null may be a file) */
    if (st == GM_OK) st = gm_files_commit(fs, err);
    gm_files_free(fs);
    unlink(path);
    gm_model *m = NULL;
    if (st == GM_OK) st = gm_model_read_embedded_example(&m, err);
    gm_pass_report rep = {0};
    gm_plan *p = NULL;
    if (st == GM_OK) st = gm_passes_run(m, GM_PASS_SET_ALL, &rep, NULL, err);
    if (st == GM_OK) {
        gm_plan_options o;
        gm_plan_options_init(&o);
        o.threads = 1;
        o.reproducible = true;
        o.report = &rep; /* the plan records its passes */
        st = gm_plan_build(m, &o, &p, err);
    }
    /* the plan as made, and with its subgraph pass left out (what the passes insert differs) */
    char *text = st == GM_OK && p->text ? strdup(p->text) : NULL;
    char *sub = text ? strstr(text, "\"subgraph\",") : NULL;
    if (sub) memset(sub, ' ', strlen("\"subgraph\","));
    for (int k = 0; k < 2 && st == GM_OK && text; k++) {
        gm_model *orig = NULL;
        if ((st = gm_model_read_embedded_example(&orig, err)) != GM_OK) break;
        gm_plan_verdict v = {0};
        gm_plan_rerun rr;
        st = gm_plan_verify_json_original(orig, k ? text : p->text, p->text_len, "plan", &v, &rr, err);
        if (st == GM_OK) gm_plan_verdict_free(&v);
        gm_model_free(orig);
    }
    free(text);
    gm_plan_free(p);
    gm_pass_report_free(&rep);
    gm_model_free(m);
    return st;
}

/* The DSA reader, every packer and the writer. */
static gm_status wl_dsa(const input *in, gm_error *err)
{
    (void)in;
    gm_dsa_buffer *b = NULL;
    size_t n = 0;
    gm_status st = gm_dsa_read_csv(GM_TEST_DATA_DIR "/dsa_small.csv", &b, &n, err);
    if (st != GM_OK) return st;
    int64_t h = 0;
    for (int o = 0; st == GM_OK && o < GM_DSA_ORDER_COUNT; o++) st = gm_dsa_best_fit_order(b, n, (gm_dsa_order)o, &h, err);
    bool optimal = false;
    gm_dsa_search_opts so = {.node_limit = 20000};
    if (st == GM_OK) st = gm_dsa_search(b, n, &so, &h, &optimal, err);
    char why[256];
    if (st == GM_OK && !gm_dsa_check(b, n, h, why, sizeof why)) st = gm_error_set(err, GM_ERR_INTERNAL, "%s", why);
    if (st == GM_OK) st = gm_dsa_write_csv("/dev/null", b, n, err);
    gm_dsa_free(b);
    return st;
}

/* A DSA instance above the search's 4,000 buffers (its windows around the peak). */
static gm_status wl_dsa_large(const input *in, gm_error *err)
{
    gm_dsa_buffer *b = NULL;
    size_t n = 0;
    gm_status st = gm_dsa_parse_csv(in->data, in->len, in->name, &b, &n, err);
    if (st != GM_OK) return st;
    int64_t h = 0;
    bool optimal = false;
    gm_dsa_search_opts so = {.node_limit = 2000};
    st = gm_dsa_search(b, n, &so, &h, &optimal, err);
    gm_dsa_free(b);
    return st;
}

/* Best fit on 70,000 buffers: its size order then comes from radix sorts (dsa_bestfit.c). */
static gm_status wl_best_fit_big(const input *in, gm_error *err)
{
    (void)in;
    enum { N = 70000 };
    gm_dsa_buffer *b = calloc(N, sizeof *b);
    if (!b) return gm_error_set(err, GM_ERR_NOMEM, "test: out of memory");
    for (size_t i = 0; i < N; i++)
        b[i] = (gm_dsa_buffer){(int64_t)i, (int64_t)(i % 5000), (int64_t)(i % 5000) + 3, 64 * (1 + (int64_t)(i % 7)), 64, -1, NULL};
    int64_t h = 0;
    gm_status st = gm_dsa_best_fit(b, N, &h, err);
    free(b);
    return st;
}

/* 4,500 buffers of random lifetimes and sizes, as CSV text (read before the sweep). */
static void add_dsa_large(void)
{
    size_t cap = 4500 * 48 + 64, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t, cap, "id,lower,upper,size\n");
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 4500; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int lo = (int)(x % 3000), span = 1 + (int)((x >> 20) % 200), size = 1 + (int)((x >> 40) % 1000);
        len += (size_t)snprintf(t + len, cap - len, "%d,%d,%d,%d\n", i, lo, lo + span, size);
    }
    add_input("dsa_4500.csv", t, len, GM_FORMAT_UNKNOWN, NULL);
}

/* A JSON chain long enough for the reader to parse its nodes ahead on a second thread
 * (io/json_read_ahead.c reads arrays of 4096 nodes and more that way). */
static void add_long_chain(void)
{
    char *t = chain_json(4500, 16);
    add_input("chain_4500.json", t, strlen(t), GM_FORMAT_JSON, NULL);
}

/* A plan of 70,000 symbols and its model, made once before the sweeps: the verifier reads a
 * symbols array that long in parts on threads (verify_read.c). */
static gm_model *g_big_model;
static gm_plan *g_big_plan;

static void make_big_plan(void)
{
    char *t = chain_json(70000, 16);
    gm_error err;
    assert_int_equal(gm_model_read_json(t, strlen(t), "big.json", &g_big_model, &err), GM_OK);
    free(t);
    assert_int_equal(plan(g_big_model, &g_big_plan, &err), GM_OK);
}

static gm_status wl_verify_big(const input *in, gm_error *err)
{
    (void)in;
    gm_plan_verdict v = {0};
    gm_status st = gm_plan_verify_json(g_big_model, g_big_plan->text, g_big_plan->text_len, "big", &v, err);
    if (st == GM_OK) gm_plan_verdict_free(&v);
    return st;
}

static gm_status wl_read(const input *in, gm_error *err)
{
    gm_model *m = NULL;
    gm_status st = read_input(in, &m, err);
    gm_model_free(m);
    return st;
}

/* A foreign ONNX model (no graphmem metadata) with what the shared models lack: unnamed nodes,
 * a node named like a value, list-of-float and list-of-string attributes, an attribute whose GE
 * name wants another kind, two nodes of one name, a node and a branch graph named as graphmem
 * would name its own (NetOutput, "iff/then_branch"), and
 * a Scan. */
static void add_onnx_features(void)
{
    Onnx__GraphProto *g = bgraph("iff/then_branch"); /* the name the If's branch would take */
    g_in(g, vinfo("x", 1, 4));
    g_in(g, vinfo("c", 0));
    g_in(g, vinfo("init", 1, 2));
    g_in(g, vinfo("xs", 2, 5, 2));
    g_node(g, bnode("Relu", "", "x", "y"));
    g_node(g, bnode("Relu", "", "y", "z"));
    g_node(g, bnode("Identity", "dup", "z", "z1"));
    g_node(g, bnode("Identity", "dup", "z1", "z2"));
    g_node(g, bnode("Identity", "NetOutput", "z2", "z3")); /* the name the graph output would take */
    Onnx__NodeProto *lr = bnode("LeakyRelu", "y", "z", "w");
    Onnx__AttributeProto *a = battr(lr, "alphas", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    a->floats = keep(calloc(2, sizeof *a->floats));
    a->floats[0] = 0.5f, a->floats[1] = 0.25f, a->n_floats = 2;
    a = battr(lr, "tags", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    a->strings = keep(calloc(2, sizeof *a->strings));
    a->strings[0] = (ProtobufCBinaryData){1, (uint8_t *)kstr("a")};
    a->strings[1] = (ProtobufCBinaryData){1, (uint8_t *)kstr("b")};
    a->n_strings = 2;
    a = battr(lr, "index", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT); /* GE's "index" is an int */
    a->has_f = 1, a->f = 1.5f;
    g_node(g, lr);
    Onnx__GraphProto *then_g = bgraph("b"), *else_g = bgraph("b");
    g_node(then_g, bnode("Identity", "t", "w", "t_out"));
    g_out(then_g, vinfo("t_out", -1));
    g_node(else_g, bnode("Neg", "e", "w", "e_out"));
    g_out(else_g, vinfo("e_out", -1));
    Onnx__NodeProto *iff = bnode("If", "iff", "c", "r");
    battr_graph(iff, "then_branch", then_g);
    battr_graph(iff, "else_branch", else_g);
    g_node(g, iff);
    Onnx__GraphProto *body = scan_sum_body();
    Onnx__NodeProto *scan = bnode("Scan", "scan", "init,xs", "final,rows");
    battr_int(scan, "num_scan_inputs", 1);
    battr_graph(scan, "body", body);
    g_node(g, scan);
    g_out(g, vinfo("r", -1));
    g_out(g, vinfo("final", -1));
    g_out(g, vinfo("rows", -1));
    size_t len = 0;
    uint8_t *bytes = pack_model(g, &len);
    char *copy = malloc(len);
    memcpy(copy, bytes, len);
    free_kept();
    add_input("features.onnx", copy, len, GM_FORMAT_ONNX, NULL);
}

/* Random graphs with every feature (tests/random_graph.h), as JSON text. */
static void add_random_graphs(int first, int count, int nodes)
{
    for (int i = first; i < first + count; i++) {
        char *text = rg_graph(1000 + (uint64_t)i, nodes + i % 20, 1 + i % 4);
        char name[64];
        snprintf(name, sizeof name, "random_%d", i);
        add_input(name, text, strlen(text), GM_FORMAT_JSON, NULL);
    }
}

/* Both executors on two host streams: the runtime allocators, events, bg_condition. */
static gm_status wl_run(const input *in, gm_error *err)
{
    gm_model *m = NULL;
    gm_status st = read_input(in, &m, err);
    if (st != GM_OK) return st;
    gm_run_options ro;
    gm_run_options_init(&ro);
    ro.streams = 2;
    ro.iterations = 2;
    gm_run_stats stats;
    gm_plan *p = NULL;
    gm_io_reuse_pair *pairs = NULL;
    size_t n_pairs = 0;
    if ((st = gm_io_reuse_pairs_from_model(m, &pairs, &n_pairs, err)) == GM_OK) { /* the model's attribute */
        gm_free(pairs);
        pairs = NULL;
        if ((st = gm_io_reuse_parse_option("0,0|1,0", &pairs, &n_pairs, err)) == GM_OK) gm_free(pairs);
    }
    gm_run_assign_streams(m, ro.streams); /* before the passes, as graphmem run does */
    if (st == GM_OK) st = passes(m, err);
    if (st == GM_OK) st = gm_bg_condition_prepare_model(m, GM_BG_SHAPE_AUTO, err);
    if (st == GM_OK) st = gm_run_dynamic(m, &ro, &stats, err);
    if (st == GM_OK && (st = plan(m, &p, err)) == GM_OK && p->text) st = gm_run_static(m, p, &ro, &stats, err);
    gm_plan_free(p);
    gm_model_free(m);
    return st;
}

/* The runtime API on its own: a host device, streams, a reserved virtual range, a sync. */
static gm_status wl_device(const input *in, gm_error *err)
{
    (void)in;
    gm_device *dev = NULL;
    gm_status st = gm_device_open(GM_BACKEND_HOST, 0, &dev, err);
    if (st != GM_OK) return st;
    gm_stream *s[2] = {NULL, NULL};
    for (int i = 0; st == GM_OK && i < 2; i++) st = gm_stream_create(dev, &s[i], err);
    void *base[5] = {NULL};
    for (int i = 0; st == GM_OK && i < 5; i++) st = gm_device_reserve(dev, 1 << 20, &base[i], err);
    if (st == GM_OK) st = gm_device_synchronize(dev, err);
    gm_device_close(dev); /* releases what is left */
    return st;
}

/* Best fit on hand-built buffers with empty lifetimes (its path for degenerate input). */
static gm_status wl_dsa_degenerate(const input *in, gm_error *err)
{
    (void)in;
    gm_dsa_buffer b[3] = {{.id = 0, .lower = 0, .upper = 2, .size = 8},
                          {.id = 1, .lower = 1, .upper = 1, .size = 4},
                          {.id = 2, .lower = 1, .upper = 3, .size = 8}};
    int64_t h = 0;
    return gm_dsa_best_fit(b, 3, &h, err);
}

/* The expandable L1 and a pool over it giving back the idle parts of its chunks. */
static gm_status wl_expandable(const input *in, gm_error *err)
{
    (void)in;
    fake_src dev;
    fake_init(&dev, 64);
    gm_mem_source src = fake_source_vm(&dev, 1);
    gm_scalable_config c, l1c = fake_expandable_config(32);
    gm_scalable_config_default(&c, 0);
    gm_caching_allocator *l1 = gm_caching_create(&src, &l1c, NULL, NULL);
    gm_mem_source l1src = l1 ? gm_caching_as_source(l1) : src;
    gm_scalable_allocator *pool = l1 ? gm_scalable_create(&l1src, &c) : NULL;
    gm_span *whole = pool ? gm_scalable_alloc(pool, 9 * FAKE_PAGE) : NULL;
    gm_status st = whole ? GM_OK : gm_error_set(err, GM_ERR_NOMEM, "expandable: out of memory");
    gm_span *s[4] = {NULL};
    if (whole) {
        gm_scalable_free(pool, whole);
        for (int i = 0; i < 4; i++) s[i] = gm_scalable_alloc(pool, (i == 3 ? 1 : 2) * FAKE_PAGE);
        if (s[0]) gm_scalable_free(pool, s[0]);
        if (s[2]) gm_scalable_free(pool, s[2]);
        (void)gm_scalable_release_parts(pool); /* what it could not give back stays idle */
        if (s[1]) gm_scalable_free(pool, s[1]);
        if (s[3]) gm_scalable_free(pool, s[3]);
        if (!s[1] || !s[3]) st = gm_error_set(err, GM_ERR_NOMEM, "expandable: out of memory");
    }
    gm_scalable_destroy(pool);
    gm_caching_destroy(l1);
    fake_fini(&dev);
    return st;
}

/* The dynamic executor over in's model, with ro's streams and modes. */
static gm_status run_dynamic_with(const input *in, const gm_run_options *ro, gm_error *err)
{
    gm_model *m = NULL;
    gm_status st = read_input(in, &m, err);
    if (st != GM_OK) return st;
    gm_run_stats stats;
    gm_run_assign_streams(m, ro->streams);
    if ((st = passes(m, err)) == GM_OK) st = gm_run_dynamic(m, ro, &stats, err);
    gm_model_free(m);
    return st;
}

/* More streams than the allocator's inline stream sets hold. */
static gm_status wl_run_many_streams(const input *in, gm_error *err)
{
    gm_run_options ro;
    gm_run_options_init(&ro);
    ro.streams = 12;
    ro.memory_first = true; /* the expandable L1 over the host device's virtual memory */
    return run_dynamic_with(in, &ro, err);
}

/* The learned plan: an iteration recorded, packed (with internal dependencies where streams hear
 * of releases late), taken from L1, and the next ones answered from it. */
static gm_status wl_run_learned_plan(const input *in, gm_error *err)
{
    gm_run_options ro;
    gm_run_options_init(&ro);
    ro.streams = 3;
    ro.iterations = 3;
    ro.memory_first = true;
    ro.learn_plan = true;
    return run_dynamic_with(in, &ro, err);
}

/* The pipeline with every log line on (to nowhere): the passes' debug-only bookkeeping. */
static gm_status wl_logged(const input *in, gm_error *err)
{
    FILE *sink = fopen("/dev/null", "w");
    gm_log_level was = gm_log_get_level();
    gm_log_set_stream(sink);
    gm_log_set_level(GM_LOG_DEBUG);
    gm_status st = wl_pipeline(in, err);
    gm_log_set_level(was);
    gm_log_set_stream(stderr);
    fclose(sink);
    return st;
}

/* ---- the sweep ----------------------------------------------------------------------------- */

typedef struct sweep_totals {
    size_t runs, clean_errors, ok_anyway;
} sweep_totals;

static bool g_check_each; /* GM_ALLOC_SITES_CHECK_EACH=1: a leak check after every run */

static void record(workload_fn fn, const input *in)
{
    for (size_t i = 0; i < g_sites.n; i++) g_sites.v[i].first = -1;
    g_sites.counter = 0;
    gm_error err;
    gm_error_clear(&err);
    gm_alloc_set_observer(observe, NULL);
    gm_alloc_fail_after(-1);
    (void)fn(in, &err); /* bad inputs among the scenarios fail on their own: fine */
    gm_alloc_set_observer(NULL, NULL);
}

static void fail_at(workload_fn fn, const input *in, long index, const char *wname, sweep_totals *t)
{
    gm_error err;
    gm_error_clear(&err);
    gm_alloc_fail_after(index);
    gm_status st = fn(in, &err);
    const char *file = NULL;
    int line = 0;
    gm_alloc_first_failure(&file, &line);
    gm_alloc_fail_after(-1);
    t->runs++;
    if (st != GM_OK && !err.message[0])
        fail_msg("%s(%s): allocation %ld failed: status %d without a message", wname, in ? in->name : "example",
                 index, (int)st);
    if (g_check_each && LEAK_CHECK())
        fail_msg("%s(%s): a leak after allocation %ld (at %s:%d) failed", wname, in ? in->name : "example", index,
                 file ? file : "?", line);
    if (!file) return; /* the workload took another path this time (threads): nothing failed */
    if (st == GM_OK) t->ok_anyway++;
    else t->clean_errors++;
    pthread_mutex_lock(&g_sites.mu);
    site_add(site_key(file, line))->failed = true;
    pthread_mutex_unlock(&g_sites.mu);
}

/* Fails, in turn, the first reach of every site this workload reaches that no run failed yet. */
static void sweep(workload_fn fn, const input *in, const char *wname, sweep_totals *t)
{
    record(fn, in);
    size_t n = g_sites.n;
    long *idx = malloc((n + 1) * sizeof *idx);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (g_sites.v[i].first >= 0 && !g_sites.v[i].failed) idx[k++] = g_sites.v[i].first;
    for (size_t i = 0; i < k; i++) fail_at(fn, in, idx[i], wname, t);
    /* Leaked memory stays unreachable, so one leak check after the sweep's runs finds a leak of
     * any of them (LeakSanitizer's report names where the leaked block was allocated); a check
     * costs a walk of every chunk of the heap, tens of milliseconds, more than most runs.
     * GM_ALLOC_SITES_CHECK_EACH=1 checks after every run, naming the failed allocation. */
    if (k && !g_check_each && LEAK_CHECK()) {
        char list[256] = "";
        for (size_t i = 0; i < k && strlen(list) < sizeof list - 24; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%ld", i ? "," : "", idx[i]);
        fail_msg("%s(%s): a leak after one of the allocations %s%s failed (GM_ALLOC_SITES_CHECK_EACH=1 names which)",
                 wname, in ? in->name : "example", list, strlen(list) >= sizeof list - 24 ? ",..." : "");
    }
    free(idx);
}

/* ---- the exemptions ------------------------------------------------------------------------ */

/* tests/alloc_sites_exempt.txt: "FILE_PREFIX  reason" lines; a site whose key starts with the
 * prefix is exempt (e.g. the CUDA backend without a GPU). */
static bool exempt(const char *key, char (*pre)[256], size_t npre)
{
    for (size_t i = 0; i < npre; i++)
        if (!strncmp(key, pre[i], strlen(pre[i]))) return true;
    return false;
}

static size_t read_exempt(char (*pre)[256], size_t cap)
{
    FILE *f = fopen(GM_SOURCE_DIR "/tests/alloc_sites_exempt.txt", "r");
    if (!f) return 0;
    char line[1024];
    size_t n = 0;
    while (n < cap && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        size_t l = strcspn(line, " \t\n");
        if (l == 0 || l >= sizeof pre[0]) continue;
        memcpy(pre[n], line, l);
        pre[n++][l] = '\0';
    }
    fclose(f);
    return n;
}

/* ---- the test ------------------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A progress line on stderr for the sweeps since the last one. */
static void progress(const char *what, const sweep_totals *t, double *t0)
{
    static size_t runs_before;
    size_t failed = 0;
    for (size_t i = 0; i < g_sites.n; i++) failed += g_sites.v[i].failed;
    double now = now_s();
    fprintf(stderr, "test_alloc_sites: %-40s %4zu runs, %3zu sites failed so far (%.1f s)\n", what,
            t->runs - runs_before, failed, now - *t0);
    runs_before = t->runs, *t0 = now;
}

static void every_site_fails_cleanly(void **state)
{
    (void)state;
    scan_dir(GM_SOURCE_DIR "/src", "");
    size_t n_static = 0;
    for (size_t i = 0; i < g_sites.n; i++) n_static += g_sites.v[i].is_static;
    assert_true(n_static > 300); /* the scan found the library's allocations */

    add_dir(GM_TEST_DATA_DIR "/models", ".onnx", false);
    add_dir(GM_TEST_DATA_DIR "/models", ".json", false);
    size_t n_models = g_inputs.n;
    add_dir(GM_TEST_DATA_DIR "/ge", ".txt", false);
    add_dir(GM_TEST_DATA_DIR "/ge", ".om", false); /* the offline-model container, compressed names */
    add_file(GM_TEST_DATA_DIR "/onnx_loops", "loop13_seq.onnx"); /* sequence types kept for the writer */
    add_file(GM_TEST_DATA_DIR, "attr_kinds.json");
    add_file(GM_TEST_DATA_DIR, "bg_if_guarded.json");
    add_file(GM_TEST_DATA_DIR, "set_io_offset.json");
    add_file(GM_TEST_DATA_DIR, "subgraph_views.json");
    add_file(GM_TEST_DATA_DIR, "many_readers.json");
    add_onnx_features();
    size_t n_files = g_inputs.n;
    add_random_graphs(0, 24, 30);
    size_t n_random = g_inputs.n;

    add_dsa_large();
    size_t n_dsa = g_inputs.n;
    add_long_chain();
    size_t n_long = g_inputs.n;
    add_dir(GM_SCENARIO_DIR, ".json", true);
    gm_alloc_route_cjson(); /* from here on cJSON's allocations can fail too */

    const char *each = getenv("GM_ALLOC_SITES_CHECK_EACH");
    g_check_each = each && *each == '1';
    sweep_totals t = {0};
    double t0 = now_s();
    sweep(wl_pipeline, NULL, "pipeline", &t);
    sweep(wl_run, NULL, "run", &t);
    sweep(wl_logged, NULL, "logged", &t);
    sweep(wl_report, NULL, "report", &t);
    sweep(wl_verify_file, NULL, "verify_file", &t);
    sweep(wl_outputs_and_original, NULL, "outputs_and_original", &t);
    sweep(wl_big_file, NULL, "big_file", &t);
    sweep(wl_dims, NULL, "dims", &t);
    sweep(wl_dsa, NULL, "dsa", &t);
    sweep(wl_dsa_degenerate, NULL, "dsa_degenerate", &t);
    sweep(wl_best_fit_big, NULL, "best_fit_big", &t);
    sweep(wl_device, NULL, "device", &t);
    sweep(wl_run_many_streams, NULL, "run_many_streams", &t);
    sweep(wl_run_learned_plan, NULL, "run_learned_plan", &t);
    sweep(wl_expandable, NULL, "expandable", &t);
    progress("every workload on the embedded example", &t, &t0);
    make_big_plan();
    sweep(wl_verify_big, NULL, "verify_big", &t);
    gm_plan_free(g_big_plan);
    gm_model_free(g_big_model);
    progress("the verifier on 70,000 symbols", &t, &t0);
    for (size_t i = 0; i < n_files; i++) sweep(wl_pipeline, &g_inputs.v[i], "pipeline", &t);
    progress("the pipeline on every file", &t, &t0);
    for (size_t i = 0; i < n_files; i++) sweep(wl_report, &g_inputs.v[i], "report", &t);
    progress("the pictures of every file", &t, &t0);
    for (size_t i = n_files; i < n_random; i++) sweep(wl_run, &g_inputs.v[i], "run", &t);
    for (size_t i = n_files; i < n_random; i++) sweep(wl_run_learned_plan, &g_inputs.v[i], "run_learned_plan", &t);
    progress("the executors on the random graphs", &t, &t0);
    for (size_t i = n_random; i < n_dsa; i++) sweep(wl_dsa_large, &g_inputs.v[i], "dsa_large", &t);
    for (size_t i = n_dsa; i < n_long; i++) sweep(wl_read, &g_inputs.v[i], "read", &t);
    progress("the large DSA instance, the long chain", &t, &t0);
    for (size_t i = n_long; i < g_inputs.n; i++) sweep(wl_scenario, &g_inputs.v[i], "scenario", &t);
    progress("every scenario", &t, &t0);
    /* The executors on the data's JSON graphs; not on the shared models (tests/data/models), whose
     * runs check every tensor's pattern (seconds each under the sanitizers: transformer LM's two
     * executor runs took 13 s) and reach no site the graphs before them have not failed already:
     * test_executor and test_executor_dynamic run them. */
    for (size_t i = n_models; i < n_files; i++)
        if (g_inputs.v[i].fmt == GM_FORMAT_JSON) sweep(wl_run, &g_inputs.v[i], "run", &t);
    progress("the executors on the data's graphs", &t, &t0);

    static char pre[64][256];
    size_t npre = read_exempt(pre, 64);
    size_t covered = 0, exempted = 0, missing = 0;
    for (size_t i = 0; i < g_sites.n; i++) {
        const site *s = &g_sites.v[i];
        if (!s->is_static) continue;
        if (s->failed) covered++;
        else if (exempt(s->key, pre, npre)) exempted++;
        else {
            missing++;
            fprintf(stderr, "  never failed: %s\n", s->key);
        }
    }
    fprintf(stderr,
            "allocation sites: %zu in src/, %zu failed cleanly, %zu exempt, %zu never failed; %zu runs "
            "(%zu clean errors, %zu succeeded anyway)\n",
            n_static, covered, exempted, missing, t.runs, t.clean_errors, t.ok_anyway);
    assert_int_equal(missing, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_site_fails_cleanly)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
