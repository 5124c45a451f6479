/*
 * scenario_check.c — checks one scenario file (docs/scenario-format.md): validates the file's
 * own shape, reads its graph with the JSON reader, runs the passes it names and evaluates each
 * expectation on the model that comes out. Every problem becomes one line of text in a buffer,
 * so the driver (test_scenarios.c, which #includes this file; tests/CMakeLists.txt builds each
 * test_*.c as its own program, so a helper must not carry that prefix) can run every file and
 * report them all at the end.
 *
 * Nodes are remembered by NAME from the model as read, never by pointer: passes may remove
 * nodes (gm_edit_isolate_and_remove frees them at the next sort), and an expectation about a
 * removed node must fail with a message, not read freed memory.
 *
 * The graph is handed to the reader re-serialized by cJSON_PrintUnformatted, so a number with
 * more than 15 significant digits reaches the reader in exponent form (1e+16): scenarios that
 * need huge integers must keep them to 15 digits.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "graphmem/graph.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"

/* ---- scenario files (shared by every runner) ------------------------------------------------ */

static int scn_cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every <prefix>*.json in dir ("" = all), sorted by name so runs are deterministic. NULL with
 * *count 0 when the folder cannot be read. Free with scn_free_list. */
static char **scn_list_files(const char *dir, const char *prefix, size_t *count)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t n = 0, cap = 0, plen = strlen(prefix);
    *count = 0;
    if (!d) return NULL;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, plen) != 0 || len < plen + 6 ||
            strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nv = realloc(v, cap * sizeof *v);
            if (!nv) break;
            v = nv;
        }
        if (!(v[n] = strdup(e->d_name))) break;
        n++;
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, scn_cmp_str);
    *count = n;
    return v;
}

static void scn_free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* The text of dir/name, NUL-terminated (free with free()), or NULL. */
static char *scn_slurp(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = NULL;
    gm_error err;
    return gm_read_file(path, &text, len, &err) == GM_OK ? text : NULL;
}

/* (inline: not every runner that includes this file uses them.)
 * The model of a scenario file's "graph", with its "options" set; NULL (and *why filled)
 * when the file or its graph does not read. For direct tests of one pass. */
static inline gm_model *scn_load_graph(const char *dir, const char *name, char *why, size_t cap)
{
    size_t len = 0;
    char *text = scn_slurp(dir, name, &len);
    if (!text) {
        snprintf(why, cap, "cannot read %s/%s", dir, name);
        return NULL;
    }
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    char *g = root ? cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(root, "graph")) : NULL;
    gm_model *m = NULL;
    gm_error err;
    if (!g) {
        snprintf(why, cap, "%s: no graph", name);
    } else if (gm_model_read_json(g, strlen(g), name, &m, &err) != GM_OK) {
        snprintf(why, cap, "%s", err.message);
    } else {
        const cJSON *opts = cJSON_GetObjectItemCaseSensitive(root, "options");
        for (const cJSON *o = opts ? opts->child : NULL; o; o = o->next) {
            if (!cJSON_IsString(o) || gm_model_set_option(m, o->string, o->valuestring) != GM_OK) {
                snprintf(why, cap, "%s: option %s", name, o->string);
                gm_model_free(m);
                m = NULL;
                break;
            }
        }
    }
    cJSON_free(g);
    cJSON_Delete(root);
    return m;
}

/* A model from an inline JSON text in which ' stands for " (readable C strings). */
static inline gm_model *scn_load_quoted(const char *text, char *why, size_t cap)
{
    char *s = strdup(text);
    if (!s) return NULL;
    for (char *p = s; *p; p++)
        if (*p == '\'') *p = '"';
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(s, strlen(s), "inline.json", &m, &err) != GM_OK) snprintf(why, cap, "%s", err.message);
    free(s);
    return m;
}

/* ---- a growable text buffer for failure reports ------------------------------------------ */

typedef struct scn_buf {
    char *s;
    size_t len, cap;
} scn_buf;

static void scn_buf_vprintf(scn_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) return; /* a lost report line is better than a crash in the harness */
        b->s = s;
        b->cap = cap;
    }
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

static void scn_buf_printf(scn_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void scn_buf_printf(scn_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    scn_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

static const char *scn_buf_str(const scn_buf *b) { return b->s ? b->s : ""; }

static void scn_buf_free(scn_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

/* ---- the model as read: names, inputs and output counts ---------------------------------- */

typedef struct scn_orig_in {
    char *src;   /* producer name; NULL = unconnected */
    int32_t idx; /* producer output index */
} scn_orig_in;

typedef struct scn_orig_node {
    char *name;
    char *graph;
    scn_orig_in *in;
    size_t n_in;
    size_t n_out;
} scn_orig_node;

typedef struct scn_orig {
    scn_orig_node *v; /* sorted by name, for bsearch */
    size_t n;
} scn_orig;

static int scn_orig_cmp(const void *a, const void *b)
{
    return strcmp(((const scn_orig_node *)a)->name, ((const scn_orig_node *)b)->name);
}

static void scn_orig_free(scn_orig *o)
{
    for (size_t i = 0; i < o->n; i++) {
        for (size_t j = 0; j < o->v[i].n_in; j++) free(o->v[i].in[j].src);
        free(o->v[i].in);
        free(o->v[i].name);
        free(o->v[i].graph);
    }
    free(o->v);
    o->v = NULL;
    o->n = 0;
}

static char *scn_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Returns false when out of memory (o is then freed). */
static bool scn_orig_record(scn_orig *o, const gm_model *m)
{
    size_t n = gm_model_node_count(m);
    o->v = calloc(n ? n : 1, sizeof *o->v);
    o->n = 0;
    if (!o->v) return false;
    for (size_t i = 0; i < n; i++) {
        const gm_node *nd = gm_model_node_at(m, i);
        scn_orig_node *r = &o->v[o->n++];
        r->name = scn_strdup(gm_node_name(nd));
        r->graph = scn_strdup(gm_graph_name(gm_node_graph(nd)));
        r->n_in = gm_node_input_count(nd);
        r->n_out = gm_node_output_count(nd);
        r->in = calloc(r->n_in ? r->n_in : 1, sizeof *r->in);
        if (!r->name || !r->graph || !r->in) goto oom;
        for (size_t k = 0; k < r->n_in; k++) {
            int32_t idx = 0;
            const gm_node *src = gm_node_input(nd, k, &idx);
            if (src) {
                r->in[k].src = scn_strdup(gm_node_name(src));
                if (!r->in[k].src) goto oom;
            }
            r->in[k].idx = idx;
        }
    }
    qsort(o->v, o->n, sizeof *o->v, scn_orig_cmp);
    return true;
oom:
    scn_orig_free(o);
    return false;
}

static const scn_orig_node *scn_orig_find(const scn_orig *o, const char *name)
{
    scn_orig_node key = {.name = (char *)name};
    return o->n ? bsearch(&key, o->v, o->n, sizeof *o->v, scn_orig_cmp) : NULL;
}

/* "Inserted" = a node whose name was not in the model as read. */
static bool scn_is_inserted(const scn_orig *o, const gm_node *n)
{
    return scn_orig_find(o, gm_node_name(n)) == NULL;
}

/* ---- one scenario's check state ---------------------------------------------------------- */

typedef struct scn_ctx {
    const char *file;
    const char *name;  /* "scenario" value, or NULL */
    const char *about; /* or NULL */
    scn_buf *out;
    size_t failures;
    const char *note; /* printed once after the failures (e.g. passes not implemented yet) */
} scn_ctx;

static void scn_fail(scn_ctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The first failure of a scenario prints its header, so a reader sees which file and which
 * behaviour broke before the details. */
static void scn_fail(scn_ctx *c, const char *fmt, ...)
{
    if (c->failures == 0) {
        scn_buf_printf(c->out, "FAIL %s (scenario \"%s\"", c->file, c->name ? c->name : "?");
        if (c->about) scn_buf_printf(c->out, ": %s", c->about);
        scn_buf_printf(c->out, ")\n");
    }
    c->failures++;
    scn_buf_printf(c->out, "  ");
    va_list ap;
    va_start(ap, fmt);
    scn_buf_vprintf(c->out, fmt, ap);
    va_end(ap);
    scn_buf_printf(c->out, "\n");
}

/* ---- validating the scenario file itself ------------------------------------------------- */

static const char *const k_top_keys[] = {"scenario", "about", "options", "run", "graph", "expect"};
static const char *const k_expect_keys[] = {
    "copy_before", "no_copy_before", "copy_after", "inserted", "inserted_in", "skip_rw_conflict",
    "lint", "same_offset", "follows", "ordered", "edges", "error"};

static bool scn_in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0) return true;
    return false;
}

/* Parses "name:index" (the last ':' splits, so names may contain ':'). The name is copied into
 * buf. */
static bool scn_parse_ref(const char *s, char *buf, size_t cap, long *index)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= cap) return false;
    const char *p = colon + 1;
    if (!*p) return false;
    long v = 0;
    for (; *p; p++) {
        if (!isdigit((unsigned char)*p) || v > 1000000) return false;
        v = v * 10 + (*p - '0');
    }
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = '\0';
    *index = v;
    return true;
}

static bool scn_is_count(const cJSON *j)
{
    return cJSON_IsNumber(j) && j->valuedouble >= 0 && j->valuedouble <= 1e9 &&
           j->valuedouble == (double)(long)j->valuedouble;
}

/* Checks that every key of obj is allowed and none repeats (cJSON keeps both copies of a
 * repeated key and lookups see only the first, so a repeat would silently hide a value). */
static void scn_check_keys(scn_ctx *c, const cJSON *obj, const char *where,
                           const char *const *allowed, size_t n_allowed)
{
    for (const cJSON *k = obj->child; k; k = k->next) {
        if (!scn_in_list(k->string, allowed, n_allowed))
            scn_fail(c, "%sunknown key \"%s\"", where, k->string);
        for (const cJSON *e = obj->child; e != k; e = e->next)
            if (strcmp(e->string, k->string) == 0) {
                scn_fail(c, "%skey \"%s\" appears twice", where, k->string);
                break;
            }
    }
}

static void scn_check_ref_list(scn_ctx *c, const cJSON *v, const char *key)
{
    if (!cJSON_IsArray(v)) {
        scn_fail(c, "expect.%s: must be a list of \"node:index\" strings", key);
        return;
    }
    char name[512];
    long idx;
    for (const cJSON *e = v->child; e; e = e->next)
        if (!cJSON_IsString(e) || !scn_parse_ref(e->valuestring, name, sizeof name, &idx))
            scn_fail(c, "expect.%s: each entry must be a \"node:index\" string", key);
}

static void scn_check_name_list(scn_ctx *c, const cJSON *v, const char *key)
{
    bool ok = cJSON_IsArray(v);
    for (const cJSON *e = ok ? v->child : NULL; e; e = e->next)
        if (!cJSON_IsString(e) || !*e->valuestring) ok = false;
    if (!ok) scn_fail(c, "expect.%s: must be a list of non-empty strings", key);
}

static void scn_check_pair_list(scn_ctx *c, const cJSON *v, const char *key)
{
    bool ok = cJSON_IsArray(v);
    char name[512];
    long idx;
    for (const cJSON *e = ok ? v->child : NULL; e; e = e->next) {
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2) {
            ok = false;
            continue;
        }
        for (const cJSON *r = e->child; r; r = r->next)
            if (!cJSON_IsString(r) || !scn_parse_ref(r->valuestring, name, sizeof name, &idx))
                ok = false;
    }
    if (!ok) scn_fail(c, "expect.%s: must be a list of [\"node:index\", \"node:index\"] pairs", key);
}

static void scn_check_node_pairs(scn_ctx *c, const cJSON *v, const char *key)
{
    bool ok = cJSON_IsArray(v);
    for (const cJSON *e = ok ? v->child : NULL; e; e = e->next) {
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2) {
            ok = false;
            continue;
        }
        for (const cJSON *r = e->child; r; r = r->next)
            if (!cJSON_IsString(r) || !*r->valuestring) ok = false;
    }
    if (!ok) scn_fail(c, "expect.%s: must be a list of [\"from\", \"to\"] node-name pairs", key);
}

/* Validates the file's structure; failures are reported into c. */
static void scn_validate(scn_ctx *c, const cJSON *root)
{
    scn_check_keys(c, root, "", k_top_keys, sizeof k_top_keys / sizeof *k_top_keys);

    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "scenario");
    if (!cJSON_IsString(v) || !*v->valuestring) scn_fail(c, "\"scenario\": required, a non-empty string");
    v = cJSON_GetObjectItemCaseSensitive(root, "about");
    if (v && !cJSON_IsString(v)) scn_fail(c, "\"about\": must be a string");

    v = cJSON_GetObjectItemCaseSensitive(root, "options");
    if (v) {
        if (!cJSON_IsObject(v)) {
            scn_fail(c, "\"options\": must be an object of strings");
        } else {
            for (const cJSON *o = v->child; o; o = o->next)
                if (!cJSON_IsString(o))
                    scn_fail(c, "\"options\": value of \"%s\" must be a string", o->string);
        }
    }

    v = cJSON_GetObjectItemCaseSensitive(root, "run");
    if (cJSON_IsString(v)) {
        if (strcmp(v->valuestring, "all") != 0)
            scn_fail(c, "\"run\": \"%s\": must be \"all\" or a list of pass names", v->valuestring);
    } else if (cJSON_IsArray(v)) {
        for (const cJSON *p = v->child; p; p = p->next) {
            gm_pass_id id;
            if (!cJSON_IsString(p))
                scn_fail(c, "\"run\": each entry must be a pass name string");
            else if (!gm_pass_from_name(p->valuestring, &id))
                scn_fail(c, "\"run\": unknown pass \"%s\"", p->valuestring);
        }
    } else {
        scn_fail(c, "\"run\": required, \"all\" or a list of pass names");
    }

    v = cJSON_GetObjectItemCaseSensitive(root, "graph");
    if (!cJSON_IsObject(v)) scn_fail(c, "\"graph\": required, an object (docs/graph-format.md)");

    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(root, "expect");
    if (!cJSON_IsObject(ex)) {
        scn_fail(c, "\"expect\": required, an object");
        return;
    }
    /* A scenario that expects nothing passes whatever happens: surely a mistake. */
    if (!ex->child) scn_fail(c, "\"expect\": empty; a scenario must expect something");
    scn_check_keys(c, ex, "expect: ", k_expect_keys, sizeof k_expect_keys / sizeof *k_expect_keys);
    for (const cJSON *e = ex->child; e; e = e->next) {
        const char *k = e->string;
        if (!strcmp(k, "copy_before") || !strcmp(k, "no_copy_before") || !strcmp(k, "copy_after")) {
            scn_check_ref_list(c, e, k);
        } else if (!strcmp(k, "inserted")) {
            if (!scn_is_count(e)) scn_fail(c, "expect.inserted: must be a non-negative integer");
        } else if (!strcmp(k, "inserted_in")) {
            bool ok = cJSON_IsObject(e);
            for (const cJSON *g = ok ? e->child : NULL; g; g = g->next)
                if (!scn_is_count(g)) ok = false;
            if (!ok) scn_fail(c, "expect.inserted_in: must map graph names to non-negative integers");
        } else if (!strcmp(k, "skip_rw_conflict") || !strcmp(k, "lint")) {
            scn_check_name_list(c, e, k);
        } else if (!strcmp(k, "same_offset") || !strcmp(k, "follows")) {
            scn_check_pair_list(c, e, k);
        } else if (!strcmp(k, "ordered")) {
            scn_check_node_pairs(c, e, k);
        } else if (!strcmp(k, "edges")) {
            if (!scn_is_count(e)) scn_fail(c, "expect.edges: must be a non-negative integer");
        } else if (!strcmp(k, "error")) {
            if (!cJSON_IsString(e) || !*e->valuestring)
                scn_fail(c, "expect.error: must be a non-empty string");
            /* A failing run leaves no model to look at, so nothing else can be expected. */
            if (ex->child != e || e->next)
                scn_fail(c, "expect.error: cannot be combined with other expectations");
        }
    }
}

/* ---- evaluating expectations ------------------------------------------------------------- */

/* Case-insensitive substring search (strcasestr is not C11/POSIX). */
static bool scn_contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n) return true;
    }
    return n == 0;
}

/* Follows the producer of dst:in backwards through inserted nodes until an original node (or
 * an unconnected input). An inserted node reached through its output k is followed through its
 * input k when it has as many inputs as outputs (IdentityN-like copies pair input j with output
 * j), else through input 0 (Identity, MemcpyAsync ...). Returns the original producer (NULL =
 * unconnected or a loop), its output index, the number of inserted nodes crossed and the
 * first of them (the one feeding dst). `path` receives a description for messages. */
static const gm_node *scn_trace_back(const scn_orig *o, const gm_model *m, const gm_node *dst,
                                     size_t in, int32_t *idx, size_t *hops,
                                     const gm_node **first_inserted, scn_buf *path)
{
    size_t limit = gm_model_node_count(m) + 1;
    *hops = 0;
    *first_inserted = NULL;
    int32_t k = 0;
    const gm_node *p = gm_node_input(dst, in, &k);
    while (p && scn_is_inserted(o, p)) {
        if (!*first_inserted) *first_inserted = p;
        scn_buf_printf(path, "inserted %s '%s':%d <- ", gm_node_type(p), gm_node_name(p), (int)k);
        if (++*hops > limit) {
            scn_buf_printf(path, "(loop)");
            return NULL;
        }
        size_t next = 0;
        if (gm_node_input_count(p) == gm_node_output_count(p) && (size_t)k < gm_node_input_count(p))
            next = (size_t)k;
        if (gm_node_input_count(p) == 0) {
            p = NULL;
            break;
        }
        p = gm_node_input(p, next, &k);
    }
    if (p)
        scn_buf_printf(path, "'%s':%d", gm_node_name(p), (int)k);
    else
        scn_buf_printf(path, "(unconnected)");
    *idx = k;
    return p;
}

/* Looks up "n:i" for an input expectation: the node must exist both as read and now, and the
 * index must be an input it had. Reports and returns false otherwise. */
static bool scn_lookup_input(scn_ctx *c, const scn_orig *o, const gm_model *m, const char *key,
                             const char *ref, const scn_orig_node **orig, gm_node **now,
                             size_t *in)
{
    char name[512];
    long idx = 0;
    scn_parse_ref(ref, name, sizeof name, &idx); /* validated already */
    *orig = scn_orig_find(o, name);
    if (!*orig) {
        scn_fail(c, "expect.%s \"%s\": the graph has no node '%s'", key, ref, name);
        return false;
    }
    if ((size_t)idx >= (*orig)->n_in) {
        scn_fail(c, "expect.%s \"%s\": node '%s' has %zu inputs", key, ref, name, (*orig)->n_in);
        return false;
    }
    *now = gm_model_find_node(m, name);
    if (!*now) {
        scn_fail(c, "expect.%s \"%s\": node '%s' is gone after the run", key, ref, name);
        return false;
    }
    if ((size_t)idx >= gm_node_input_count(*now)) {
        scn_fail(c, "expect.%s \"%s\": node '%s' has only %zu inputs after the run", key, ref, name,
                 gm_node_input_count(*now));
        return false;
    }
    *in = (size_t)idx;
    return true;
}

static void scn_expect_copy_before(scn_ctx *c, const scn_orig *o, const gm_model *m,
                                   const char *ref, bool want_copy)
{
    const char *key = want_copy ? "copy_before" : "no_copy_before";
    const scn_orig_node *orig;
    gm_node *now;
    size_t in;
    if (!scn_lookup_input(c, o, m, key, ref, &orig, &now, &in)) return;
    const scn_orig_in *was = &orig->in[in];
    scn_buf path = {0};
    int32_t idx = 0;
    size_t hops = 0;
    const gm_node *first = NULL;
    const gm_node *src = scn_trace_back(o, m, now, in, &idx, &hops, &first, &path);
    bool same_src = was->src ? (src && strcmp(gm_node_name(src), was->src) == 0 && idx == was->idx)
                             : (src == NULL && hops == 0);
    char orig_desc[600];
    if (was->src)
        snprintf(orig_desc, sizeof orig_desc, "'%s':%d", was->src, (int)was->idx);
    else
        snprintf(orig_desc, sizeof orig_desc, "(unconnected)");
    if (want_copy) {
        if (!was->src)
            scn_fail(c, "expect.copy_before \"%s\": that input was unconnected as read", ref);
        else if (hops == 0 || !same_src)
            scn_fail(c, "expect.copy_before \"%s\": wanted an inserted node fed by %s; found %s", ref,
                     orig_desc, scn_buf_str(&path));
    } else if (hops != 0 || !same_src) {
        scn_fail(c, "expect.no_copy_before \"%s\": wanted it still fed by %s; found %s", ref,
                 orig_desc, scn_buf_str(&path));
    }
    scn_buf_free(&path);
}

static void scn_expect_copy_after(scn_ctx *c, const scn_orig *o, const gm_model *m, const char *ref)
{
    char name[512];
    long k = 0;
    scn_parse_ref(ref, name, sizeof name, &k);
    const scn_orig_node *orig = scn_orig_find(o, name);
    if (!orig) {
        scn_fail(c, "expect.copy_after \"%s\": the graph has no node '%s'", ref, name);
        return;
    }
    if ((size_t)k >= orig->n_out) {
        scn_fail(c, "expect.copy_after \"%s\": node '%s' has %zu outputs", ref, name, orig->n_out);
        return;
    }
    /* The original consumers of name:k, from the recorded inputs of every node as read. */
    size_t n_cons = 0;
    for (size_t i = 0; i < o->n; i++)
        for (size_t j = 0; j < o->v[i].n_in; j++)
            if (o->v[i].in[j].src && !strcmp(o->v[i].in[j].src, name) && o->v[i].in[j].idx == k)
                n_cons++;
    if (n_cons == 0) {
        scn_fail(c, "expect.copy_after \"%s\": that output had no consumers as read", ref);
        return;
    }
    const gm_node *now = gm_model_find_node(m, name);
    if (!now) {
        scn_fail(c, "expect.copy_after \"%s\": node '%s' is gone after the run", ref, name);
        return;
    }
    size_t cnt = (size_t)k < gm_node_output_count(now) ? gm_node_consumer_count(now, (size_t)k) : 0;
    int32_t din = 0;
    const gm_node *cons = cnt == 1 ? gm_node_consumer(now, (size_t)k, 0, &din) : NULL;
    if (cnt != 1 || !cons || !scn_is_inserted(o, cons)) {
        scn_buf found = {0};
        for (size_t j = 0; j < cnt; j++) {
            const gm_node *d = gm_node_consumer(now, (size_t)k, j, &din);
            scn_buf_printf(&found, "%s%s'%s':%d", j ? ", " : "", scn_is_inserted(o, d) ? "inserted " : "",
                           gm_node_name(d), (int)din);
        }
        scn_fail(c, "expect.copy_after \"%s\": wanted one inserted node as its only consumer; "
                    "found %zu consumer(s): %s", ref, cnt, cnt ? scn_buf_str(&found) : "none");
        scn_buf_free(&found);
        return;
    }
    /* Every original consumer must now reach name:k only through inserted nodes. */
    for (size_t i = 0; i < o->n; i++) {
        for (size_t j = 0; j < o->v[i].n_in; j++) {
            const scn_orig_in *w = &o->v[i].in[j];
            if (!w->src || strcmp(w->src, name) != 0 || w->idx != k) continue;
            const gm_node *d = gm_model_find_node(m, o->v[i].name);
            if (!d || j >= gm_node_input_count(d)) {
                scn_fail(c, "expect.copy_after \"%s\": consumer '%s':%zu is gone after the run", ref,
                         o->v[i].name, j);
                continue;
            }
            scn_buf path = {0};
            int32_t idx = 0;
            size_t hops = 0;
            const gm_node *first = NULL;
            const gm_node *src = scn_trace_back(o, m, d, j, &idx, &hops, &first, &path);
            if (hops == 0 || !src || strcmp(gm_node_name(src), name) != 0 || idx != k)
                scn_fail(c, "expect.copy_after \"%s\": consumer '%s':%zu should be fed through the "
                            "inserted '%s'; found %s", ref, o->v[i].name, j, gm_node_name(cons),
                         scn_buf_str(&path));
            scn_buf_free(&path);
        }
    }
}

/* Lists the inserted nodes (all, or of one graph) for messages. */
static size_t scn_list_inserted(const scn_orig *o, const gm_model *m, const char *graph, scn_buf *b)
{
    size_t n = 0;
    for (size_t i = 0; i < gm_model_node_count(m); i++) {
        const gm_node *nd = gm_model_node_at(m, i);
        if (!scn_is_inserted(o, nd)) continue;
        const char *g = gm_graph_name(gm_node_graph(nd));
        if (graph && strcmp(graph, g) != 0) continue;
        if (b) scn_buf_printf(b, "%s'%s' (%s in %s)", n ? ", " : "", gm_node_name(nd), gm_node_type(nd), g);
        n++;
    }
    return n;
}

static void scn_expect_skip_rw(scn_ctx *c, const gm_model *m, const cJSON *list)
{
    for (const cJSON *e = list->child; e; e = e->next) {
        gm_node *n = gm_model_find_node(m, e->valuestring);
        if (!n)
            scn_fail(c, "expect.skip_rw_conflict \"%s\": no such node after the run", e->valuestring);
        else if (!gm_attrs_get_bool(*gm_node_attrs(n), "_skip_rw_conflict", false))
            scn_fail(c, "expect.skip_rw_conflict \"%s\": the node does not carry _skip_rw_conflict=true",
                     e->valuestring);
    }
    /* The list is the whole set: a node marked but not listed is a failure too. */
    for (size_t i = 0; i < gm_model_node_count(m); i++) {
        gm_node *n = gm_model_node_at(m, i);
        if (!gm_attrs_get_bool(*gm_node_attrs(n), "_skip_rw_conflict", false)) continue;
        bool listed = false;
        for (const cJSON *e = list->child; e && !listed; e = e->next)
            listed = strcmp(e->valuestring, gm_node_name(n)) == 0;
        if (!listed)
            scn_fail(c, "expect.skip_rw_conflict: node '%s' carries _skip_rw_conflict=true but is not listed",
                     gm_node_name(n));
    }
}

/* The planned symbol holding output "n:k", or NULL; *addr / *end: where the output starts and
 * ends — a view inside its symbol (a no-padding member) at its own offset for its real size,
 * otherwise the symbol's reserved, aligned extent. */
static const gm_plan_symbol *scn_plan_output(const gm_plan *p, const char *ref, int64_t *addr, int64_t *end)
{
    char name[512];
    long k;
    if (!scn_parse_ref(ref, name, sizeof name, &k)) return NULL;
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        for (size_t a = 0; a < y->n_anchors; a++) {
            const gm_plan_anchor *x = &y->anchors[a];
            if (!x->out || (long)x->index != k || strcmp(gm_node_name(x->node), name)) continue;
            *addr = y->offset + (x->offset >= 0 ? x->offset : 0);
            *end = x->offset >= 0 ? *addr + gm_desc_size(gm_node_output_desc(x->node, x->index)) : y->offset + y->size;
            return y;
        }
    }
    return NULL;
}

/* same_offset [["a:0","b:0"]]: one address; follows [["b:0","a:0"]]: b starts where a ends
 * (see scn_plan_output). The model is planned as `graphmem plan` would, and the plan must pass
 * the planner's own verification. */
static void scn_expect_plan_facts(scn_ctx *c, const gm_model *m, const cJSON *e, bool follows)
{
    gm_plan *p = NULL;
    gm_error err;
    gm_error_clear(&err);
    if (gm_plan_build(m, NULL, &p, &err) != GM_OK) {
        scn_fail(c, "expect.%s: planning failed: %s", follows ? "follows" : "same_offset", err.message);
        return;
    }
    /* A fact about a plan that does not verify proves nothing (spec: "all" plans and verifies). */
    if (p->unresolved)
        scn_fail(c, "expect.%s: the plan does not verify (%zu problem(s) left; `graphmem plan` lists them)",
                 follows ? "follows" : "same_offset", p->unresolved);
    for (const cJSON *pr = e->child; pr; pr = pr->next) {
        const char *ra = pr->child->valuestring, *rb = pr->child->next->valuestring;
        int64_t a_at = 0, a_end = 0, b_at = 0, b_end = 0;
        const gm_plan_symbol *a = scn_plan_output(p, ra, &a_at, &a_end), *b = scn_plan_output(p, rb, &b_at, &b_end);
        if (!a || !b) {
            scn_fail(c, "expect.%s [%s, %s]: %s has no planned symbol", follows ? "follows" : "same_offset", ra, rb,
                     a ? rb : ra);
            continue;
        }
        bool same_region = a->region == b->region && a->mem_type == b->mem_type;
        if (!follows && !(same_region && a_at == b_at))
            scn_fail(c, "expect.same_offset [%s, %s]: offsets %lld and %lld (%s, %s)", ra, rb, (long long)a_at,
                     (long long)b_at, gm_plan_region_name(a->region), gm_plan_region_name(b->region));
        if (follows && !(same_region && a_at == b_end))
            scn_fail(c, "expect.follows [%s, %s]: %s is at %lld, %s ends at %lld", ra, rb, ra, (long long)a_at, rb,
                     (long long)b_end);
    }
    gm_plan_free(p);
}

/* Each [from, to]: the model now has the control edge from -> to, and the report records it. */
static void scn_expect_ordered(scn_ctx *c, const gm_model *m, const gm_pass_report *rep, const cJSON *e)
{
    for (const cJSON *pair = e->child; pair; pair = pair->next) {
        const char *from = pair->child->valuestring, *to = pair->child->next->valuestring;
        gm_node *a = gm_model_find_node(m, from), *b = gm_model_find_node(m, to);
        if (!a || !b) {
            scn_fail(c, "expect.ordered [%s, %s]: the model has no node '%s'", from, to, a ? to : from);
            continue;
        }
        bool edge = false, recorded = false;
        for (size_t i = 0; i < gm_node_control_input_count(b); i++) edge |= gm_node_control_input(b, i) == a;
        for (size_t i = 0; i < rep->n_edges; i++)
            recorded |= !strcmp(rep->edges[i].from, from) && !strcmp(rep->edges[i].to, to);
        if (!edge || !recorded)
            scn_fail(c, "expect.ordered [%s, %s]: %s", from, to,
                     !edge ? "no control edge between them" : "the edge is not in the report's edges");
    }
}

static void scn_evaluate(scn_ctx *c, const cJSON *ex, const scn_orig *o, const gm_model *m,
                         const gm_pass_report *rep)
{
    for (const cJSON *e = ex->child; e; e = e->next) {
        const char *k = e->string;
        if (!strcmp(k, "copy_before") || !strcmp(k, "no_copy_before")) {
            for (const cJSON *r = e->child; r; r = r->next)
                scn_expect_copy_before(c, o, m, r->valuestring, !strcmp(k, "copy_before"));
        } else if (!strcmp(k, "copy_after")) {
            for (const cJSON *r = e->child; r; r = r->next) scn_expect_copy_after(c, o, m, r->valuestring);
        } else if (!strcmp(k, "inserted")) {
            scn_buf b = {0};
            size_t n = scn_list_inserted(o, m, NULL, &b);
            if (n != (size_t)e->valuedouble)
                scn_fail(c, "expect.inserted %d: found %zu%s%s", (int)e->valuedouble, n, n ? ": " : "",
                         scn_buf_str(&b));
            scn_buf_free(&b);
        } else if (!strcmp(k, "inserted_in")) {
            for (const cJSON *g = e->child; g; g = g->next) {
                if (!gm_model_find_graph(m, g->string)) {
                    scn_fail(c, "expect.inserted_in \"%s\": the model has no such graph", g->string);
                    continue;
                }
                scn_buf b = {0};
                size_t n = scn_list_inserted(o, m, g->string, &b);
                if (n != (size_t)g->valuedouble)
                    scn_fail(c, "expect.inserted_in \"%s\": %d: found %zu%s%s", g->string,
                             (int)g->valuedouble, n, n ? ": " : "", scn_buf_str(&b));
                scn_buf_free(&b);
            }
        } else if (!strcmp(k, "skip_rw_conflict")) {
            scn_expect_skip_rw(c, m, e);
        } else if (!strcmp(k, "lint")) {
            /* The codes reported, in order, must be exactly the ones listed. */
            size_t want = (size_t)cJSON_GetArraySize(e);
            bool same = want == rep->n_warnings;
            for (size_t i = 0; same && i < want; i++)
                same = !strcmp(cJSON_GetArrayItem(e, (int)i)->valuestring, rep->warnings[i].code);
            if (!same) {
                scn_buf b = {0};
                for (size_t i = 0; i < rep->n_warnings; i++)
                    scn_buf_printf(&b, "%s%s (%s)", i ? ", " : "", rep->warnings[i].code, rep->warnings[i].message);
                scn_fail(c, "expect.lint: wanted %zu warning(s); the run reported %zu%s%s", want, rep->n_warnings,
                         rep->n_warnings ? ": " : "", scn_buf_str(&b));
                scn_buf_free(&b);
            }
        } else if (!strcmp(k, "same_offset") || !strcmp(k, "follows")) {
            scn_expect_plan_facts(c, m, e, !strcmp(k, "follows"));
        } else if (!strcmp(k, "ordered")) {
            scn_expect_ordered(c, m, rep, e);
        } else if (!strcmp(k, "edges") && rep->n_edges != (size_t)e->valuedouble) {
            scn_buf b = {0};
            for (size_t i = 0; i < rep->n_edges; i++)
                scn_buf_printf(&b, "%s%s -> %s", i ? ", " : "", rep->edges[i].from, rep->edges[i].to);
            scn_fail(c, "expect.edges %d: the passes added %zu%s%s", (int)e->valuedouble, rep->n_edges,
                     rep->n_edges ? ": " : "", scn_buf_str(&b));
            scn_buf_free(&b);
        }
    }
}

/* ---- one scenario, end to end ------------------------------------------------------------ */

/* How the passes are run: gm_passes_run in the suite; the harness's own tests substitute a fake
 * that edits the graph, to check the expectations without depending on real passes. */
typedef gm_status (*scn_run_fn)(gm_model *m, gm_pass_set set, gm_pass_report *rep,
                                gm_pass_set *available, gm_error *err, void *ctx);

static gm_status scn_run_real(gm_model *m, gm_pass_set set, gm_pass_report *rep,
                              gm_pass_set *available, gm_error *err, void *ctx)
{
    (void)ctx;
    return gm_passes_run(m, set, rep, available, err);
}

/* The requested passes that this version does not implement, for a note under failures. */
static void scn_missing_passes(gm_pass_set set, gm_pass_set available, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < GM_PASS_COUNT; i++) {
        if (!(set & (1u << i)) || (available & (1u << i))) continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", gm_pass_name((gm_pass_id)i));
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
}

/* Checks one scenario given as text. `file` names it in messages (and in the reader's source).
 * Failures are appended to `out`; returns their number (0 = the scenario holds). */
static size_t scn_check_text(const char *file, const char *text, size_t len, scn_run_fn run,
                             void *run_ctx, scn_buf *out)
{
    scn_ctx c = {.file = file, .out = out};
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root || !cJSON_IsObject(root)) {
        const char *at = root ? NULL : cJSON_GetErrorPtr();
        scn_fail(&c, "not a JSON object%s%.40s", at ? "; parse stopped at: " : "", at ? at : "");
        cJSON_Delete(root);
        return c.failures;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "scenario");
    c.name = cJSON_IsString(v) ? v->valuestring : NULL;
    v = cJSON_GetObjectItemCaseSensitive(root, "about");
    c.about = cJSON_IsString(v) ? v->valuestring : NULL;

    scn_validate(&c, root);
    if (c.failures) {
        cJSON_Delete(root);
        return c.failures;
    }

    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(root, "expect");
    const cJSON *want_err = cJSON_GetObjectItemCaseSensitive(ex, "error");
    const char *word = want_err ? want_err->valuestring : NULL;

    gm_pass_set set = 0;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "run");
    if (cJSON_IsString(r)) {
        set = GM_PASS_SET_ALL;
    } else {
        for (const cJSON *p = r->child; p; p = p->next) {
            gm_pass_id id;
            if (gm_pass_from_name(p->valuestring, &id)) set |= 1u << id;
        }
    }

    char source[600];
    snprintf(source, sizeof source, "%s: graph", file);
    char *gtext = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(root, "graph"));
    if (!gtext) {
        scn_fail(&c, "out of memory serializing \"graph\"");
        cJSON_Delete(root);
        return c.failures;
    }

    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    scn_orig orig = {0};
    gm_pass_report rep;
    memset(&rep, 0, sizeof rep);
    gm_pass_set available = 0;
    const char *stage = "read";
    gm_status st = gm_model_read_json(gtext, strlen(gtext), source, &m, &err);
    cJSON_free(gtext);
    if (st != GM_OK && m) {
        scn_fail(&c, "the reader failed (%s) yet returned a model", gm_status_name(st));
        gm_model_free(m);
        m = NULL;
    }
    if (st == GM_OK) {
        /* The scenario's options override the graph's own. */
        const cJSON *opts = cJSON_GetObjectItemCaseSensitive(root, "options");
        for (const cJSON *o = opts ? opts->child : NULL; o && st == GM_OK; o = o->next) {
            st = gm_model_set_option(m, o->string, o->valuestring);
            if (st != GM_OK) gm_error_set(&err, st, "setting option %s failed", o->string);
            stage = "options";
        }
    }
    if (st == GM_OK && !scn_orig_record(&orig, m)) {
        scn_fail(&c, "out of memory recording the model as read");
        gm_model_free(m);
        cJSON_Delete(root);
        return c.failures;
    }
    if (st == GM_OK) {
        stage = "run";
        st = run(m, set, &rep, &available, &err, run_ctx);
    }

    char missing[512] = "";
    if (st == GM_OK) scn_missing_passes(set, available, missing, sizeof missing);
    if (word) {
        /* GM_SCENARIO_VERBOSE=1 shows each message that satisfied its word, so a reviewer can see
         * that an error scenario fails for its own reason and not a coincidental one. */
        if (st != GM_OK && scn_contains_ci(err.message, word) && getenv("GM_SCENARIO_VERBOSE"))
            scn_buf_printf(out, "ok %s: \"%s\" in: %s\n", file, word, err.message);
        if (st == GM_OK)
            scn_fail(&c, "expect.error \"%s\": the read and the run succeeded", word);
        else if (!scn_contains_ci(err.message, word))
            scn_fail(&c, "expect.error \"%s\": the %s failed (%s) with a message without that word: %s",
                     word, stage, gm_status_name(st), err.message);
    } else if (st != GM_OK) {
        scn_fail(&c, "the %s failed (%s): %s", stage, gm_status_name(st), err.message);
    } else {
        scn_evaluate(&c, ex, &orig, m, &rep);
    }
    if (c.failures && !word && missing[0])
        scn_buf_printf(out, "  note: passes not implemented yet: %s\n", missing);

    scn_orig_free(&orig);
    gm_pass_report_free(&rep);
    gm_model_free(m);
    cJSON_Delete(root);
    return c.failures;
}
