/*
 * verify_read.c — the plan text into the verifier's compact structs (verify_internal.h).
 *
 * Why not one cJSON tree: a plan lists every tensor and every node, so at a million nodes the
 * tree of its text is ~1.7 GB of small items, the largest allocation of a whole planning run,
 * and building then freeing them (malloc, malloc_consolidate) costs seconds. So the text is
 * split (io/json_split.h) at its big arrays — "symbols", "order" and the summary's
 * "lower_bound_witness" — and cJSON parses the rest (the skeleton, small) in one go and each
 * element of those arrays on its own: a symbol becomes a gm_vfy_sym and its anchors right away
 * and its tree is freed before the next is parsed; "order" and the witness are walked the same
 * way when their checks run (gm_vfy_each). A string element without escapes (every name the
 * writer emits) is taken straight from the text, no tree at all.
 *
 * Errors. The split reading is exact for a good plan; for a bad one its first error could
 * differ from the whole reading's (a syntax error late in the text behind a content error
 * early in it). So whenever the split reading fails on the input, verify.c reads the text again
 * whole (split = false), and that reading's message — file, symbol number and id, field — is
 * the one reported, exactly as before the split existed. The split is also not used when the
 * scan gives up, the skeleton does not parse, or a split key occurs twice in its object (cJSON
 * would take the first, the scan cannot tell which).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "graphmem/io.h"
#include "graphmem/plan.h"
#include "ir/ir.h"
#include "plan/verify_internal.h"
#include "util/alloc.h"
#include "util/parallel.h"

enum { STRING_BLOCK = 1 << 16 };

/* The big arrays, by their path from the root (gm_json_split_scan_paths). */
enum { P_SYMBOLS, P_ORDER, P_WITNESS, P_COUNT };
static const char *const k_paths[P_COUNT] = {"symbols", "order", "summary/lower_bound_witness"};

/* ---- kept strings ------------------------------------------------------------------------ */

/* A copy of s[0, n) (NUL-terminated) that lives as long as the verifier: strings are packed
 * into blocks, so a million ids cost a few dozen allocations, not a million. NULL when out of
 * memory. */
const char *gm_vfy_keep(gm_vfy *c, const char *s, size_t n)
{
    gm_vfy_strings *k = &c->strs;
    if (!n) return "";
    if (n + 1 > k->room - k->used || !k->n_blocks) {
        size_t room = n + 1 > STRING_BLOCK ? n + 1 : STRING_BLOCK;
        if (k->n_blocks == k->cap_blocks &&
            gm_grow((void **)&k->blocks, sizeof *k->blocks, k->n_blocks + 1, &k->cap_blocks))
            return NULL;
        char *b = gm_malloc(room);
        if (!b) return NULL;
        k->blocks[k->n_blocks++] = b;
        k->used = 0;
        k->room = room;
    }
    char *out = k->blocks[k->n_blocks - 1] + k->used;
    memcpy(out, s, n);
    out[n] = '\0';
    k->used += n + 1;
    return out;
}

static const char *keep(gm_vfy *c, const char *s) { return gm_vfy_keep(c, s, strlen(s)); }

char *gm_vfy_scratch(gm_vfy *c, const char *s, size_t n)
{
    if (gm_grow((void **)&c->scratch, 1, n + 1, &c->cap_scratch)) return NULL;
    memcpy(c->scratch, s, n);
    c->scratch[n] = '\0';
    return c->scratch;
}

gm_vfy_anchor *gm_vfy_new_anchor(gm_vfy *c)
{
    /* a part's stretch of the shared array does not grow: a part finding more anchors than
     * counted stops there, as if out of memory, and the array is read on one thread */
    if (c->n_anc == c->cap_anc &&
        (c->anc_fixed || gm_grow((void **)&c->anc, sizeof *c->anc, c->n_anc + 1, &c->cap_anc)))
        return NULL;
    return &c->anc[c->n_anc];
}

/* ---- numbers and regions ------------------------------------------------------------------- */

/* JSON numbers are doubles: accept only integral values that a double holds exactly. */
static bool json_int(const cJSON *o, int64_t *out)
{
    if (!cJSON_IsNumber(o)) return false;
    double d = o->valuedouble;
    if (!isfinite(d) || d != floor(d) || fabs(d) > 9007199254740992.0) return false;
    *out = (int64_t)d;
    return true;
}

static int region_kind(const char *name)
{
    if (!strcmp(name, "feature_map")) return GM_VFY_R_FM;
    if (!strcmp(name, "zero_copy")) return GM_VFY_R_ZC;
    if (!strcmp(name, "fixed")) return GM_VFY_R_FIXED;
    if (!strcmp(name, "dynamic")) return GM_VFY_R_DYN;
    return -1;
}

/* The region a symbol names: listed ones by (name, memory type); one not listed gets GE's
 * default alignment and no size bound (a plan need not list the fixed or dynamic region).
 * Regions are few: a linear search. -2 when out of memory. */
int32_t gm_vfy_find_region(gm_vfy *c, const char *name, gm_mem_type mt)
{
    for (size_t i = 0; i < c->n_regs; i++)
        if (c->regs[i].mt == mt && !strcmp(c->regs[i].name, name)) return (int32_t)i;
    if (c->regs_fixed) return -3;
    const char *kept = keep(c, name);
    if (!kept) return -2;
    if (c->n_regs == c->cap_regs) {
        size_t cap = c->cap_regs;
        if (gm_grow((void **)&c->regs, sizeof *c->regs, c->n_regs + 1, &cap)) return -2;
        c->cap_regs = cap;
    }
    c->regs[c->n_regs] = (gm_vfy_region){kept, mt, 0, 512, region_kind(name), false, 0};
    return (int32_t)c->n_regs++;
}

static gm_status parse_regions(gm_vfy *c, const cJSON *regions, gm_error *err)
{
    if (!regions) return GM_OK;
    if (!cJSON_IsArray(regions)) return gm_error_set(err, GM_ERR_INPUT, "%s: \"regions\" must be an array", c->src);
    size_t i = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, regions) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(r, "name");
        const cJSON *mtj = cJSON_GetObjectItemCaseSensitive(r, "memory_type");
        gm_mem_type mt = GM_MEM_HBM;
        int64_t size = 0, align = 512;
        if (!cJSON_IsString(name))
            return gm_error_set(err, GM_ERR_INPUT, "%s: region %zu has no string \"name\"", c->src, i);
        if (mtj && (!cJSON_IsString(mtj) || !gm_mem_type_from_name(mtj->valuestring, &mt)))
            return gm_error_set(err, GM_ERR_INPUT, "%s: region %zu: unknown \"memory_type\"", c->src, i);
        const cJSON *sz = cJSON_GetObjectItemCaseSensitive(r, "size");
        const cJSON *al = cJSON_GetObjectItemCaseSensitive(r, "align");
        if (sz && (!json_int(sz, &size) || size < 0))
            return gm_error_set(err, GM_ERR_INPUT, "%s: region %zu: \"size\" must be a non-negative integer",
                                c->src, i);
        if (al && (!json_int(al, &align) || align <= 0))
            return gm_error_set(err, GM_ERR_INPUT, "%s: region %zu: \"align\" must be a positive integer", c->src, i);
        int32_t k = gm_vfy_find_region(c, name->valuestring, mt);
        if (k < 0) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        c->regs[k].size = size;
        c->regs[k].align = align;
        c->regs[k].listed = true;
        c->v->region_bytes += size;
        i++;
    }
    return GM_OK;
}

/* ---- symbols ------------------------------------------------------------------------------- */

/* A malformed symbol: the file, the symbol's id and number, what is wrong. */
static gm_status sym_bad(const gm_vfy *c, gm_error *err, size_t i, const char *id, const char *what)
{
    return gm_error_set(err, GM_ERR_INPUT, "%s: symbol '%s' (number %zu)%s", c->src, id, i, what);
}

/* An anchor, its node looked up now (the element's strings go with its tree). */
static gm_status parse_anchor(gm_vfy *c, const cJSON *a, size_t si, gm_vfy_anchor *out, gm_error *err)
{
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(a, "node");
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(a, "out");
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(a, "in");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(a, "offset");
    int64_t idx;
    if (!cJSON_IsString(node))
        return sym_bad(c, err, si, c->syms[si].id, ": an anchor has no string \"node\"");
    if ((o != NULL) == (in != NULL) || !json_int(o ? o : in, &idx) || idx < 0 || idx > INT32_MAX)
        return sym_bad(c, err, si, c->syms[si].id, ": an anchor needs one non-negative \"out\" or \"in\"");
    memset(out, 0, sizeof *out);
    out->node = gm_model_find_node(c->m, node->valuestring);
    out->name = out->node ? out->node->name : keep(c, node->valuestring);
    if (!out->name) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    out->index = (uint32_t)idx;
    out->out = o != NULL;
    out->sym = (int32_t)si;
    if (off && !cJSON_IsNull(off)) {
        if (!json_int(off, &out->offset) || out->offset < 0)
            return sym_bad(c, err, si, c->syms[si].id, ": an anchor's \"offset\" must be a non-negative integer");
        out->has_offset = true;
    }
    return GM_OK;
}

static gm_status parse_symbol(gm_vfy *c, const cJSON *s, size_t i, void *ctx)
{
    gm_error *err = ctx;
    gm_vfy_sym *y = &c->syms[i];
    memset(y, 0, sizeof *y);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(s, "id");
    if (!cJSON_IsObject(s) || !cJSON_IsString(id))
        return gm_error_set(err, GM_ERR_INPUT, "%s: symbol %zu has no string \"id\"", c->src, i);
    if (!(y->id = keep(c, id->valuestring))) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    c->n_syms = i + 1; /* its id names it in the messages below */
    const cJSON *region = cJSON_GetObjectItemCaseSensitive(s, "region");
    const cJSON *mtj = cJSON_GetObjectItemCaseSensitive(s, "memory_type");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(s, "offset");
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(s, "size");
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(s, "batch_label");
    const cJSON *anc = cJSON_GetObjectItemCaseSensitive(s, "anchors");
    gm_mem_type mt = GM_MEM_HBM;
    if (!cJSON_IsString(region)) return sym_bad(c, err, i, y->id, " has no string \"region\"");
    if (mtj && (!cJSON_IsString(mtj) || !gm_mem_type_from_name(mtj->valuestring, &mt)))
        return sym_bad(c, err, i, y->id, ": unknown \"memory_type\"");
    if (!json_int(size, &y->size) || y->size < 0)
        return sym_bad(c, err, i, y->id, ": \"size\" must be a non-negative integer");
    if (off && !cJSON_IsNull(off)) {
        if (!json_int(off, &y->offset) || y->offset < 0)
            return sym_bad(c, err, i, y->id, ": \"offset\" must be a non-negative integer");
        y->has_offset = true;
    }
    if (label && !cJSON_IsString(label) && !cJSON_IsNull(label))
        return sym_bad(c, err, i, y->id, ": \"batch_label\" must be a string");
    y->label = cJSON_IsString(label) ? keep(c, label->valuestring) : "";
    if (!y->label) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    if (!cJSON_IsArray(anc)) return sym_bad(c, err, i, y->id, " has no \"anchors\" array");
    y->region = gm_vfy_find_region(c, region->valuestring, mt);
    if (y->region < 0) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    y->first_anchor = (uint32_t)c->n_anc;
    const cJSON *a;
    cJSON_ArrayForEach(a, anc) {
        gm_vfy_anchor *x = gm_vfy_new_anchor(c);
        if (!x) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        gm_status st = parse_anchor(c, a, i, x, err);
        if (st != GM_OK) return st;
        c->n_anc++;
    }
    y->n_anchors = (uint32_t)(c->n_anc - y->first_anchor);
    return GM_OK;
}

/* ---- symbol ids ------------------------------------------------------------------------------ */

static uint32_t id_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Symbol ids name the problems: two symbols with one id would make every message ambiguous. */
gm_status gm_vfy_index_ids(gm_vfy *c)
{
    size_t cap = 16;
    while (cap < 2 * c->n_syms) cap *= 2;
    c->id_tab = gm_malloc(cap * sizeof *c->id_tab);
    if (!c->id_tab) return GM_ERR_NOMEM;
    c->id_cap = cap;
    for (size_t i = 0; i < cap; i++) c->id_tab[i] = -1;
    for (size_t s = 0; s < c->n_syms; s++) {
        gm_vfy_sym *y = &c->syms[s];
        y->id_hash = id_hash(y->id);
        size_t h = y->id_hash & (cap - 1);
        for (int32_t t; (t = c->id_tab[h]) >= 0; h = (h + 1) & (cap - 1))
            if (c->syms[t].id_hash == y->id_hash && !strcmp(c->syms[t].id, y->id)) break;
        if (c->id_tab[h] < 0) {
            c->id_tab[h] = (int32_t)s;
            continue;
        }
        if (gm_vfy_problem(c, GM_PLAN_P_DUPLICATE, c->id_tab[h], (int32_t)s, NULL, -1, false,
                           "two symbols (numbers %d and %zu) have the id '%s'", c->id_tab[h], s, y->id) != GM_OK)
            return GM_ERR_NOMEM;
    }
    return GM_OK;
}

int32_t gm_vfy_find_sym(const gm_vfy *c, const char *id)
{
    if (!c->id_cap) return -1;
    uint32_t hash = id_hash(id);
    for (size_t h = hash & (c->id_cap - 1); c->id_tab[h] >= 0; h = (h + 1) & (c->id_cap - 1)) {
        const gm_vfy_sym *y = &c->syms[c->id_tab[h]];
        if (y->id_hash == hash && !strcmp(y->id, id)) return c->id_tab[h];
    }
    return -1;
}

/* ---- elements ------------------------------------------------------------------------------- */

size_t gm_vfy_count(const gm_vfy_array *a)
{
    if (a->split) return a->split->count;
    return a->item ? (size_t)cJSON_GetArraySize(a->item) : 0;
}

static bool blank(const char *t, size_t b, size_t e)
{
    while (b < e && (unsigned char)t[b] <= ' ') b++;
    return b == e;
}

/* A string element with no escape, taken from the text into c->scratch and presented as a
 * cJSON string item (`tmp`): what cJSON would make of it. false when it is anything else. */
static bool plain_string(gm_vfy *c, size_t b, size_t e, cJSON *tmp, bool *nomem)
{
    const char *t = c->text;
    if (t[b] != '"') return false;
    const char *q = memchr(t + b + 1, '"', e - b - 1);
    if (!q) return false;
    size_t n = (size_t)(q - (t + b + 1));
    if (memchr(t + b + 1, '\\', n) || !blank(t, (size_t)(q - t) + 1, e)) return false;
    if (!gm_vfy_scratch(c, t + b + 1, n)) return *nomem = true, false;
    memset(tmp, 0, sizeof *tmp);
    tmp->type = cJSON_String;
    tmp->valuestring = c->scratch;
    return true;
}

/* Element text[b, e) of a split array parsed on its own; *out NULL when it is not exactly one
 * JSON value (the whole reading then says where and why). */
static gm_status parse_element(gm_vfy *c, size_t b, size_t e, cJSON *tmp, cJSON **out, gm_error *err)
{
    *out = NULL;
    while (b < e && (unsigned char)c->text[b] <= ' ') b++;
    /* empty ("[,]"), or a byte order mark, which cJSON skips only at the start of its buffer */
    if (b == e || (unsigned char)c->text[b] == 0xEF)
        return gm_error_set(err, GM_ERR_INPUT, "%s: not valid JSON (near byte %zu)", c->src, b);
    bool nomem = false;
    if (plain_string(c, b, e, tmp, &nomem)) {
        *out = tmp;
        return GM_OK;
    }
    if (nomem) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    const char *stop = NULL;
    cJSON *item = cJSON_ParseWithLengthOpts(c->text + b, e - b, &stop, false);
    if (!item || !stop || !blank(c->text, (size_t)(stop - c->text), e)) {
        cJSON_Delete(item);
        return gm_error_set(err, GM_ERR_INPUT, "%s: not valid JSON (near byte %zu)", c->src, b);
    }
    *out = item;
    return GM_OK;
}

/* Element i of a split array, parsed, given to fn, freed. */
static gm_status split_element(gm_vfy *c, const gm_vfy_array *a, size_t i, gm_vfy_elem_fn fn, void *ctx,
                               gm_error *err)
{
    size_t b, e;
    gm_json_split_element(&c->split, a->split, i, &b, &e);
    cJSON tmp, *el;
    gm_status st = parse_element(c, b, e, &tmp, &el, err);
    if (st != GM_OK) return st;
    st = fn(c, el, i, ctx);
    if (el != &tmp) cJSON_Delete(el);
    return st;
}

gm_status gm_vfy_each(gm_vfy *c, const gm_vfy_array *a, gm_vfy_elem_fn fn, void *ctx, gm_error *err)
{
    size_t i = 0;
    if (!a->split) {
        const cJSON *e;
        cJSON_ArrayForEach(e, a->item) {
            gm_status st = fn(c, e, i++, ctx);
            if (st != GM_OK) return st;
        }
        return GM_OK;
    }
    for (; i < a->split->count; i++) {
        gm_status st = split_element(c, a, i, fn, ctx, err);
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

/* ---- the symbols side by side -------------------------------------------------------------- */

/* A big split "symbols" array is read in parts on threads, each part with its own strings (a
 * copy of the verifier state that adds no region), then joined in order. Only when every symbol
 * takes the fast path (a plan as the planner writes it); otherwise the parts are dropped and the
 * array is read on one thread as before, so messages never depend on it.
 *
 * The parts write their anchors straight into one array, each into its own stretch, sized by
 * counting beforehand the anchors its text opens as the planner writes them ({"node": first).
 * At a million symbols the parts' own growing arrays and the copy joining them had cost a
 * third of the reading: 2.8 M anchors copied into 113 MB of new pages, 0.33-0.44 s on one
 * core. The count only places the stretches: a part that finds more anchors than counted
 * stops (the array is read on one thread), and fewer leave a gap that the join closes. */
enum { PARTS_FROM = 65536 };
/* How many symbols ahead a part asks for the name-map slots of the anchors it will look up. */
enum { PREFETCH_AHEAD = 2 };

typedef struct sym_parts {
    gm_vfy *c;
    gm_vfy part[GM_PARALLEL_MAX];
    int result[GM_PARALLEL_MAX]; /* 1 every symbol read, 0 one was not simple, -1 no memory */
    size_t counted[GM_PARALLEL_MAX]; /* anchors in the part's text, as the planner writes them */
    gm_vfy_anchor *anc;              /* every part's anchors, part p's from base(p) */
} sym_parts;

/* The anchor objects of text[b, e) that open with their node, as the planner writes them. */
static size_t count_anchors(const char *t, size_t b, size_t e)
{
    static const char key[] = "{\"node\":";
    const size_t kn = sizeof key - 1;
    size_t n = 0;
    const char *p = t + b, *end = t + e;
    while ((p = memchr(p, '{', (size_t)(end - p))) != NULL) {
        if ((size_t)(end - p) >= kn && memcmp(p, key, kn) == 0) n++;
        p++;
    }
    return n;
}

static void count_part(void *ctx, unsigned p, unsigned parts)
{
    sym_parts *j = ctx;
    const gm_vfy *c = j->c;
    size_t b, e, tb, te, ub, ue;
    gm_parallel_share(c->n_syms_planned, p, parts, &b, &e);
    j->counted[p] = 0;
    if (b == e) return;
    gm_json_split_element(&c->split, c->symbols.split, b, &tb, &te);
    gm_json_split_element(&c->split, c->symbols.split, e - 1, &ub, &ue);
    j->counted[p] = count_anchors(c->text, tb, ue);
}

static size_t part_base(const sym_parts *j, unsigned p)
{
    size_t at = 0;
    for (unsigned q = 0; q < p; q++) at += j->counted[q];
    return at;
}

static void read_part(void *ctx, unsigned p, unsigned parts)
{
    sym_parts *j = ctx;
    gm_vfy *pc = &j->part[p];
    size_t b, e;
    gm_parallel_share(j->c->n_syms_planned, p, parts, &b, &e);
    int r = 1;
    for (size_t i = b; i < e && r == 1; i++) {
        size_t tb, te;
        if (i + PREFETCH_AHEAD < e) { /* the name map is far from the cache on big models */
            gm_json_split_element(&pc->split, pc->symbols.split, i + PREFETCH_AHEAD, &tb, &te);
            gm_vfy_fast_prefetch(pc, tb, te);
        }
        gm_json_split_element(&pc->split, pc->symbols.split, i, &tb, &te);
        r = gm_vfy_fast_symbol(pc, tb, te, i);
    }
    j->result[p] = r;
}

static void part_free(gm_vfy *pc)
{
    for (size_t i = 0; i < pc->strs.n_blocks; i++) gm_free(pc->strs.blocks[i]);
    gm_free(pc->strs.blocks);
    gm_free(pc->scratch); /* its anchors are a stretch of the shared array */
}

/* Joins the parts into c: their anchors made one run (a stretch that holds fewer than counted
 * leaves a gap, closed by moving the later ones down), each symbol's first anchor moved by
 * where its part's now begin, string blocks adopted. False when out of memory (c unchanged). */
static bool join_parts(gm_vfy *c, sym_parts *j, unsigned parts)
{
    size_t blocks = c->strs.n_blocks;
    for (unsigned p = 0; p < parts; p++) blocks += j->part[p].strs.n_blocks;
    char **bl = gm_malloc((blocks ? blocks : 1) * sizeof *bl);
    if (!bl) return false;
    size_t at = 0, nb = c->strs.n_blocks;
    if (nb) memcpy(bl, c->strs.blocks, nb * sizeof *bl);
    for (unsigned p = 0; p < parts; p++) {
        gm_vfy *pc = &j->part[p];
        size_t base = part_base(j, p);
        if (base != at && pc->n_anc) memmove(j->anc + at, j->anc + base, pc->n_anc * sizeof *j->anc);
        size_t b, e;
        gm_parallel_share(c->n_syms_planned, p, parts, &b, &e);
        for (size_t i = b; i < e && at; i++) c->syms[i].first_anchor += (uint32_t)at;
        at += pc->n_anc;
        if (pc->strs.n_blocks) memcpy(bl + nb, pc->strs.blocks, pc->strs.n_blocks * sizeof *bl);
        nb += pc->strs.n_blocks;
        if (pc->strs.n_blocks) c->strs.used = pc->strs.used, c->strs.room = pc->strs.room;
        pc->strs.n_blocks = 0; /* adopted */
    }
    gm_free(c->anc);
    gm_free(c->strs.blocks);
    c->anc = j->anc;
    c->n_anc = at;
    c->cap_anc = part_base(j, parts);
    j->anc = NULL; /* adopted */
    c->strs.blocks = bl;
    c->strs.n_blocks = c->strs.cap_blocks = nb;
    c->n_syms = c->n_syms_planned;
    return true;
}

/* True when the parts read every symbol; false leaves c as it was (the caller reads them). */
static bool read_in_parts(gm_vfy *c, size_t n)
{
    unsigned parts = n >= PARTS_FROM && c->n_anc == 0 ? gm_parallel_parts(0, n / (PARTS_FROM / 2)) : 1;
    if (parts < 2) return false;
    sym_parts *j = gm_calloc(1, sizeof *j);
    if (!j) return false;
    j->c = c;
    c->n_syms_planned = n;
    gm_parallel_run(parts, count_part, j);
    size_t total = part_base(j, parts);
    j->anc = gm_malloc((total ? total : 1) * sizeof *j->anc);
    for (unsigned p = 0; j->anc && p < parts; p++) {
        gm_vfy *pc = &j->part[p];
        *pc = *c;
        pc->anc = j->anc + part_base(j, p);
        pc->n_anc = 0;
        pc->cap_anc = j->counted[p];
        pc->anc_fixed = true;
        memset(&pc->strs, 0, sizeof pc->strs);
        pc->scratch = NULL, pc->cap_scratch = 0;
        pc->regs_fixed = true;
    }
    if (j->anc) gm_parallel_run(parts, read_part, j);
    bool ok = j->anc != NULL;
    for (unsigned p = 0; p < parts; p++) ok = ok && j->result[p] == 1;
    ok = ok && join_parts(c, j, parts);
    for (unsigned p = 0; p < parts; p++) part_free(&j->part[p]);
    gm_free(j->anc); /* NULL when joined */
    gm_free(j);
    return ok;
}

static gm_status parse_symbols(gm_vfy *c, gm_error *err)
{
    if (!cJSON_IsArray(c->symbols.item))
        return gm_error_set(err, GM_ERR_INPUT, "%s: \"symbols\" is missing or not an array", c->src);
    /* the count is exact (the split counted the elements); anchors grow as they come */
    size_t n = gm_vfy_count(&c->symbols);
    if (n && gm_grow((void **)&c->syms, sizeof *c->syms, n, &c->cap_syms))
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    gm_status st = GM_OK;
    if (!c->symbols.split) st = gm_vfy_each(c, &c->symbols, parse_symbol, err, err);
    else if (read_in_parts(c, n)) n = 0; /* all read */
    for (size_t i = 0; c->symbols.split && i < n && st == GM_OK; i++) {
        /* as the planner writes it, straight from the text (verify_fast.c); else cJSON */
        size_t b, e;
        gm_json_split_element(&c->split, c->symbols.split, i, &b, &e);
        int r = gm_vfy_fast_symbol(c, b, e, i);
        if (r < 0) st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        else if (r == 0) st = split_element(c, &c->symbols, i, parse_symbol, err, err);
    }
    c->v->symbols = c->n_syms;
    return st;
}

/* ---- the text -------------------------------------------------------------------------------- */

static size_t key_count(const cJSON *obj, const char *key)
{
    size_t n = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, obj) n += x->string && !strcmp(x->string, key);
    return n;
}

bool gm_vfy_scanner_init(gm_json_split_scanner *sc) { return gm_json_split_scanner_init(sc, k_paths, P_COUNT); }

/* The skeleton's tree in c->root and the split arrays bound to its emptied ones; false (the
 * text then read whole) when the split cannot stand for the text. */
static bool read_split(gm_vfy *c, gm_status *st, gm_error *err)
{
    *st = GM_OK;
    gm_json_split_result r =
        c->scanned ? c->scan_result : gm_json_split_scan_paths(c->text, c->len, k_paths, P_COUNT, &c->split);
    if (r == GM_JSON_SPLIT_NOMEM) {
        *st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        return true;
    }
    if (r != GM_JSON_SPLIT_OK) return false;
    const gm_json_array_split *at[P_COUNT] = {NULL};
    for (size_t i = 0; i < c->split.n_arrays; i++) {
        const gm_json_array_split *a = &c->split.arrays[i];
        if (at[a->path]) return false; /* one key twice */
        at[a->path] = a;
    }
    size_t slen;
    char *sk = gm_json_split_skeleton(c->text, c->len, &c->split, &slen);
    if (!sk) {
        *st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        return true;
    }
    c->root = cJSON_ParseWithLength(sk, slen);
    gm_free(sk); /* cJSON copied what it keeps */
    if (!c->root || !cJSON_IsObject(c->root)) return false;
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(c->root, "summary");
    if (key_count(c->root, "symbols") > 1 || key_count(c->root, "order") > 1 || key_count(c->root, "summary") > 1 ||
        (summary && key_count(summary, "lower_bound_witness") > 1))
        return false;
    c->symbols.split = at[P_SYMBOLS];
    c->order.split = at[P_ORDER];
    c->witness.split = at[P_WITNESS];
    c->is_split = true;
    return true;
}

gm_status gm_vfy_read(gm_vfy *c, const char *text, size_t len, bool split, gm_error *err)
{
    c->text = text;
    c->len = len;
    gm_status st = GM_OK;
    if (!split || !read_split(c, &st, err)) {
        /* the whole text as one tree: no split arrays */
        cJSON_Delete(c->root);
        gm_json_split_free(&c->split);
        c->symbols.split = c->order.split = c->witness.split = NULL;
        c->is_split = false;
        c->root = cJSON_ParseWithLength(text, len);
        if (!c->root) {
            const char *at = cJSON_GetErrorPtr();
            size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : 0;
            return gm_error_set(err, GM_ERR_INPUT, "%s: not valid JSON (near byte %zu)", c->src, off);
        }
    }
    if (st != GM_OK) return st;
    int64_t version;
    if (!cJSON_IsObject(c->root) ||
        !json_int(cJSON_GetObjectItemCaseSensitive(c->root, "graphmem_plan"), &version) || version != 1)
        return gm_error_set(err, GM_ERR_INPUT, "%s: not a graphmem plan version 1 (\"graphmem_plan\": 1 expected)",
                            c->src);
    c->symbols.item = cJSON_GetObjectItemCaseSensitive(c->root, "symbols");
    c->order.item = cJSON_GetObjectItemCaseSensitive(c->root, "order");
    c->summary = cJSON_GetObjectItemCaseSensitive(c->root, "summary");
    c->witness.item = c->summary ? cJSON_GetObjectItemCaseSensitive(c->summary, "lower_bound_witness") : NULL;
    /* a split array is bound to an emptied array in the tree: anything else was not split */
    if (!cJSON_IsArray(c->symbols.item)) c->symbols.split = NULL;
    if (!cJSON_IsArray(c->order.item)) c->order.split = NULL;
    if (!cJSON_IsArray(c->witness.item)) c->witness.split = NULL;
    st = parse_regions(c, cJSON_GetObjectItemCaseSensitive(c->root, "regions"), err);
    if (st == GM_OK) st = parse_symbols(c, err);
    if (st == GM_OK && c->order.item && !cJSON_IsArray(c->order.item))
        st = gm_error_set(err, GM_ERR_INPUT, "%s: \"order\" must be an array of node names", c->src);
    return st;
}

void gm_vfy_read_free(gm_vfy *c)
{
    for (size_t i = 0; i < c->strs.n_blocks; i++) gm_free(c->strs.blocks[i]);
    gm_free(c->strs.blocks);
    gm_free(c->scratch);
    gm_free(c->id_tab);
    gm_free(c->syms);
    gm_free(c->anc);
    gm_free(c->regs);
    gm_json_split_free(&c->split);
    cJSON_Delete(c->root);
    c->root = NULL;
}
