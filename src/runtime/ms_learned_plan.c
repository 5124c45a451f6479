/* ms_learned_plan.c — recording an iteration and replaying its plan (ms_learned_plan.h). */
#include "runtime/ms_learned_plan.h"

#include <string.h>

#include "graphmem/log.h"
#include "runtime/ms_internal.h"
#include "util/alloc.h"

/* What every cursor points at while no plan answers (and a stream the group does not have always):
 * a call that matches no call's word, so that a hit needs no test of the mode first. */
const gm_ms_plan_call gm_ms_no_call = {GM_PLAN_END, 0};

void gm_ms_cursors_init(gm_ms_cursors *c)
{
    for (uint32_t s = 0; s < GM_MAX_STREAMS; s++) c->at[s] = &gm_ms_no_call;
    c->iter = 0;
}

/* Each stream's cursor to its sequence's start on a plan, else to gm_ms_no_call (the cursors of
 * the streams the group does not have stay there). */
static void point_cursors(gm_ms_plan *p)
{
    const bool on = p->mode == GM_MS_PLAN_ON;
    for (uint32_t s = 0; s < p->n; s++) p->c->at[s] = on ? p->seq[s] : &gm_ms_no_call;
}

void gm_ms_plan_init(gm_ms_plan *p, gm_ms_group *g, const gm_mem_source *l1, size_t page)
{
    memset(p, 0, sizeof *p);
    p->g = g;
    p->n = g->n;
    p->l1 = *l1;
    p->page = page;
    p->order = g->order;
    p->order_ctx = g->order_ctx;
    p->c = &g->cursors; /* every cursor at gm_ms_no_call since the group's creation */
    p->c->iter = 1;
    p->mode = GM_MS_PLAN_RECORD;
}

/* ---- recording ------------------------------------------------------------------------------ */

static void log_op(gm_ms_plan *p, gm_ms_plan_op op, uint32_t stream, uint64_t arg)
{
    if (p->spoiled) return;
    if (p->nlog == p->caplog && gm_grow((void **)&p->log, sizeof *p->log, p->nlog + 1, &p->caplog)) {
        p->spoiled = true; /* a recording with a hole cannot be planned */
        return;
    }
    p->log[p->nlog++] = (gm_ms_plan_rec){.op = (uint8_t)op, .stream = stream, .arg = arg};
    p->cur[stream]++;
}

void gm_ms_plan_record_malloc(gm_ms_plan *p, uint32_t stream, gm_ms_block *b, size_t size)
{
    if (!b || (p->nslots == p->capslots && gm_grow((void **)&p->slots, sizeof *p->slots, p->nslots + 1, &p->capslots))) {
        p->spoiled = true;
        return;
    }
    const size_t bytes = (size + GM_MS_PLAN_ALIGN - 1) / GM_MS_PLAN_ALIGN * GM_MS_PLAN_ALIGN;
    p->slots[p->nslots] = (gm_ms_plan_slot){.req = size, .bytes = bytes ? bytes : GM_MS_PLAN_ALIGN, .stream = stream, .refs = 1};
    b->plan_slot = (uint32_t)p->nslots++;
    b->plan_iter = p->c->iter;
    log_op(p, GM_PLAN_ALLOC, stream, b->plan_slot);
}

/* A block malloc'ed before the recording began cannot be planned (it lives across iterations). */
static bool recorded(gm_ms_plan *p, const gm_ms_block *b)
{
    if (b->plan_iter == p->c->iter && b->plan_slot < p->nslots) return true;
    p->spoiled = true;
    return false;
}

void gm_ms_plan_record_ref(gm_ms_plan *p, gm_ms_block *b, uint32_t stream, gm_ms_plan_op op)
{
    if (!recorded(p, b)) return;
    if (op == GM_PLAN_ACCESS) p->slots[b->plan_slot].refs++;
    else p->slots[b->plan_slot].refs--;
    log_op(p, op, stream, b->plan_slot);
}

/* A send is known by its place in its stream's sequence (the host may interleave the streams
 * differently in the next iteration; each stream's own order is what must repeat). */
void gm_ms_plan_record_send(gm_ms_plan *p, uint32_t src, uint32_t dst, uint64_t *wait, uint32_t *send_iter)
{
    gm_ms_plan_mark_send(p->c, gm_ms_plan_wait_word(src, p->cur[src]), wait, send_iter);
    log_op(p, GM_PLAN_SEND, src, dst);
}

void gm_ms_plan_record_wait(gm_ms_plan *p, uint32_t dst, uint64_t wait, uint32_t *send_iter)
{
    log_op(p, GM_PLAN_WAIT, dst, gm_ms_plan_wait_want(p->c, wait, *send_iter) >> 3);
    *send_iter = 0; /* consumed */
}

/* ---- counting what the plan answered ------------------------------------------------------- */

/* On the plan, a call only moves its stream's cursor; what the cursors passed is counted when the
 * iteration leaves the plan or ends (or the statistics are read). */
typedef struct answered {
    size_t sent, waited, mallocs;
    size_t on_blocks; /* mallocs, accesses and frees, stand-ins' included */
} answered;

static bool stood_in(const gm_ms_plan *p, uint64_t word) { return p->slots[word >> 3].stood_in == p->c->iter; }

/* What the cursors passed: on the plan only. */
static answered passed(const gm_ms_plan *p)
{
    answered a = {0};
    for (uint32_t t = 0; t < p->n; t++)
        for (const gm_ms_plan_call *c = p->seq[t]; c < p->c->at[t]; c++) {
            const uint64_t op = c->word & 7;
            a.sent += op == GM_PLAN_SEND;
            a.waited += op == GM_PLAN_WAIT;
            a.mallocs += op == GM_PLAN_ALLOC && !stood_in(p, c->word);
            a.on_blocks += op == GM_PLAN_ALLOC || op == GM_PLAN_ACCESS || op == GM_PLAN_FREE;
        }
    return a;
}

static void count(gm_ms_plan *p, answered a)
{
    p->g->st.events_sent += a.sent;
    p->g->st.events_waited += a.waited;
    p->st.planned_mallocs += a.mallocs;
}

/* Each planned block's references as the passed calls left them, and the blocks out: off the plan
 * they are counted call by call from here. */
static void count_refs(gm_ms_plan *p)
{
    for (size_t j = 0; j < p->nslots; j++) p->slots[j].refs = 0;
    for (uint32_t t = 0; t < p->n; t++)
        for (const gm_ms_plan_call *c = p->seq[t]; c < p->c->at[t]; c++) {
            const uint64_t op = c->word & 7;
            if ((op != GM_PLAN_ALLOC && op != GM_PLAN_ACCESS && op != GM_PLAN_FREE) || stood_in(p, c->word)) continue;
            gm_ms_plan_slot *s = &p->slots[c->word >> 3];
            if (op == GM_PLAN_FREE) s->refs--; /* after its malloc on the host: the sum is never below 0 */
            else s->refs++;
        }
    p->out = 0;
    for (size_t j = 0; j < p->nslots; j++) p->out += p->slots[j].refs != 0;
}

/* The iteration leaves its plan where it is, counted. */
static void leave_plan(gm_ms_plan *p)
{
    if (p->mode == GM_MS_PLAN_ON) {
        count(p, passed(p));
        count_refs(p);
    }
    p->mode = GM_MS_PLAN_OFF;
    point_cursors(p);
}

size_t gm_ms_plan_stop(gm_ms_plan *p)
{
    if (p->mode == GM_MS_PLAN_ON) leave_plan(p);
    return p->out;
}

void gm_ms_plan_uncounted(const gm_ms_plan *p, size_t *sent, size_t *waited, size_t *mallocs)
{
    if (p->mode != GM_MS_PLAN_ON) return;
    const answered a = passed(p);
    *sent += a.sent, *waited += a.waited, *mallocs += a.mallocs;
}

/* ---- replay --------------------------------------------------------------------------------- */

void gm_ms_plan_depart(gm_ms_plan *p)
{
    leave_plan(p);
    p->st.departures++;
    p->relearns++;
}

/* Slot g went this iteration: every stream's cursor passed its frees (each after its malloc on the
 * host), or the dynamic allocator stood in for it (its place stayed empty). */
static bool gone(const gm_ms_plan *p, const gm_ms_plan_slot *g)
{
    if (g->stood_in == p->c->iter) return true;
    for (uint32_t i = 0; i < g->nfrees; i++) {
        const uint64_t f = p->frees[g->free0 + i];
        if (p->c->at[f >> 32] <= p->seq[f >> 32] + (uint32_t)f) return false;
    }
    return true;
}

static bool guards_hold(const gm_ms_plan *p, const gm_ms_plan_slot *s)
{
    for (uint32_t i = 0; i < s->nguards; i++)
        if (!gone(p, &p->slots[p->guards[s->guard0 + i]])) return false;
    return true;
}

static bool add_orders(gm_ms_plan *p, const gm_ms_plan_slot *s)
{
    for (uint64_t m = s->order_mask; m; m &= m - 1) {
        if (p->order(p->order_ctx, (uint32_t)__builtin_ctzll(m), s->stream)) return false;
        p->st.orders++;
    }
    return true;
}

/* The slot stream's next call mallocs, if it asks for size. */
static gm_ms_plan_slot *expected_slot(gm_ms_plan *p, uint32_t stream, size_t size)
{
    const uint64_t next = p->c->at[stream]->word;
    gm_ms_plan_slot *s = (next & 7) == GM_PLAN_ALLOC ? &p->slots[next >> 3] : NULL;
    return s && s->req == size ? s : NULL;
}

gm_ms_block *gm_ms_plan_malloc_slow(gm_ms_plan *p, uint32_t stream, size_t size)
{
    gm_ms_plan_slot *s = expected_slot(p, stream, size);
    if (!s && gm_ms_plan_miss(p, stream, GM_PLAN_ALLOC, size)) s = expected_slot(p, stream, size); /* another shape's */
    if (!s) {
        if (p->mode == GM_MS_PLAN_ON) gm_ms_plan_depart(p);
        return NULL;
    }
    if (!s->nguards) return gm_ms_plan_malloc_hit(&p->c->at[stream], size);
    /* a block placed by the second rule (ms_plan_pack.c): the blocks it shares with must be gone
     * on the host by now, and its stream ordered after the streams that released them; where
     * not, the dynamic allocator serves this one malloc, and its place in the region stays empty
     * (so the blocks guarded by it need not wait for it) */
    p->c->at[stream]++;
    if (!guards_hold(p, s) || !add_orders(p, s)) {
        s->stood_in = p->c->iter;
        p->stand_in = (uint32_t)(s - p->slots) + 1;
        p->st.stand_ins++, p->stand_ins_now++;
        return NULL;
    }
    return s->block;
}

void gm_ms_plan_dynamic_block(gm_ms_plan *p, gm_ms_block *b)
{
    const uint32_t slot = p->stand_in;
    p->stand_in = 0;
    if (slot && !b) gm_ms_plan_depart(p); /* the calls naming it will not come */
    if (!b) return;
    b->plan_iter = slot ? p->c->iter : 0; /* a wrapper used before must not pass for a stand-in */
    b->plan_slot = slot - 1;
}

/* ---- iterations ----------------------------------------------------------------------------- */

static void give_region_back(gm_ms_plan *p)
{
    if (!p->region) return;
    p->l1.free(p->l1.ctx, p->region);
    p->region = NULL;
    p->region_bytes = p->st.region_bytes = 0;
}

/* The recording starts afresh (the shapes own their slots). */
static void begin_recording(gm_ms_plan *p)
{
    if (p->capslots) gm_free(p->slots);
    p->slots = NULL;
    p->nslots = p->capslots = p->nlog = 0;
    p->spoiled = false;
    p->mode = GM_MS_PLAN_RECORD;
    point_cursors(p);
}

static void give_up(gm_ms_plan *p)
{
    give_region_back(p);
    gm_ms_plan_drop_shapes(p);
    begin_recording(p);
    gm_free(p->log);
    p->log = NULL, p->caplog = 0;
    p->out = 0;
    p->mode = GM_MS_PLAN_NONE;
    p->st.gave_up = true;
}

/* The region for every shape: the pools' idle memory given back and L1 trimmed first, so that
 * what L1 held for the recorded iteration serves it. */
static bool take_region(gm_ms_plan *p)
{
    size_t bytes = 0;
    for (uint32_t j = 0; j < p->nshapes; j++)
        if (p->shape[j].height > bytes) bytes = p->shape[j].height;
    for (uint32_t s = 0; s < p->n; s++) gm_ms_l2_recycle_free_mem(p->g->alloc[s]);
    if (p->l1.trim) p->l1.trim(p->l1.ctx);
    if (p->l1.alloc(p->l1.ctx, bytes, &p->region)) {
        p->region = NULL;
        return false;
    }
    p->region_bytes = p->st.region_bytes = bytes;
    gm_ms_plan_place_shapes(p);
    return true;
}

/* The recording is whole: pack it into a shape, add that to the others, take the region. False:
 * no plan (the caller gives up). */
static bool activate(gm_ms_plan *p)
{
    gm_error err;
    gm_ms_plan_shape sh = {0};
    if (!p->nslots || gm_ms_plan_pack(p, &sh, &err) != GM_OK) return false;
    sh.slots = p->slots, sh.nslots = p->nslots;
    p->capslots = 0; /* the shape's now */
    const int j = gm_ms_plan_add_shape(p, &sh);
    if (j < 0 || !take_region(p)) return false;
    gm_ms_plan_use_shape(p, (uint32_t)j);
    p->st.learned++;
    return true;
}

static void next_iteration(gm_ms_plan *p)
{
    p->c->iter = p->c->iter == UINT32_MAX ? 1 : p->c->iter + 1;
    memset(p->cur, 0, p->n * sizeof *p->cur);
    p->stand_ins_now = 0;
    if (p->mode == GM_MS_PLAN_ON) p->shape[p->cur_shape].used = p->c->iter;
    point_cursors(p);
}

/* The sync of every stream that must come before memory the device may still use leaves. */
static void sync_all(gm_ms_group *g)
{
    for (uint32_t s = 0; g->sync && s < g->n; s++) g->sync(g->sync_ctx, (int)s);
}

/* An iteration on the plan ends: it kept to it only if every stream made all its calls (then
 * every planned block went: a recording is whole only if each block's references all went, so
 * one that outlives its iteration, which would meet its successor, never keeps to the plan). */
static void end_on_plan(gm_ms_plan *p)
{
    for (uint32_t s = 0; s < p->n && p->mode == GM_MS_PLAN_ON; s++)
        if ((p->c->at[s]->word & 7) != GM_PLAN_END) gm_ms_plan_depart(p);
    if (p->mode == GM_MS_PLAN_ON) {
        const gm_ms_plan_shape *sh = &p->shape[p->cur_shape];
        count(p, (answered){.sent = sh->sends, .waited = sh->waits, .mallocs = sh->mallocs - p->stand_ins_now});
        p->st.iterations_on++;
        p->relearns = 0;
    }
}

/* An iteration that departed ends: once no planned block is out, the region goes and the next
 * iteration is recorded (the shapes stay), unless too many in a row departed. False: given up. */
static bool end_off_plan(gm_ms_plan *p)
{
    if (p->out) return true; /* planned blocks still out keep the region */
    sync_all(p->g);
    give_region_back(p);
    if (p->relearns >= GM_MS_PLAN_RELEARNS) {
        give_up(p);
        gm_log(GM_LOG_INFO, "learned plan: %u iterations in a row departed from their plan; the dynamic allocator serves alone",
               GM_MS_PLAN_RELEARNS);
        return false;
    }
    begin_recording(p);
    return true;
}

void gm_ms_plan_iteration_end(gm_ms_plan *p)
{
    if (p->mode == GM_MS_PLAN_NONE) return;
    if (p->mode == GM_MS_PLAN_RECORD) {
        bool whole = !p->spoiled;
        for (size_t j = 0; whole && j < p->nslots; j++) whole = p->slots[j].refs == 0;
        if (!whole || !activate(p)) {
            give_up(p);
            return;
        }
        p->mode = GM_MS_PLAN_ON;
    } else if (p->mode == GM_MS_PLAN_ON) {
        end_on_plan(p);
    }
    if (p->mode == GM_MS_PLAN_OFF && !end_off_plan(p)) return;
    next_iteration(p);
}

/* ---- a call no shape expected -------------------------------------------------------------- */

/* The iteration has had nothing from a plan but sends and waits: another shape may take over. */
static bool fresh(const gm_ms_plan *p)
{
    return !p->stand_ins_now && !p->stand_in && !passed(p).on_blocks;
}

/* The calls the plan answered so far this iteration (sends and waits only: fresh) go into the
 * log in an order the host could have made them: each wait after the send it stands for. */
static void log_answered(gm_ms_plan *p, const uint32_t *k)
{
    uint32_t done[GM_MAX_STREAMS] = {0};
    for (bool progress = true; progress;) {
        progress = false;
        for (uint32_t t = 0; t < p->n; t++) {
            while (done[t] < k[t]) {
                const uint64_t w = p->seq[t][done[t]].word, arg = w >> 3;
                const bool ready = (w & 7) == GM_PLAN_SEND || arg == GM_PLAN_NOTHING ||
                                   done[(uint32_t)(arg >> 32)] > (uint32_t)arg;
                if (!ready) break;
                log_op(p, (gm_ms_plan_op)(w & 7), t, arg);
                done[t]++, progress = true;
            }
        }
    }
    for (uint32_t t = 0; t < p->n; t++)
        if (done[t] < k[t]) p->spoiled = true; /* cannot be: the host made them in some order */
}

/* A new shape, from its start: this iteration becomes its recording (the device synchronized,
 * the region given back, so that the dynamic allocator may serve from the memory it had). */
static void record_from_here(gm_ms_plan *p)
{
    uint32_t k[GM_MAX_STREAMS];
    for (uint32_t t = 0; t < p->n; t++) k[t] = (uint32_t)(p->c->at[t] - p->seq[t]);
    count(p, passed(p));
    p->st.departures++;
    p->relearns++;
    sync_all(p->g);
    give_region_back(p);
    begin_recording(p);
    log_answered(p, k); /* from the current shape's sequences, still held */
}

bool gm_ms_plan_miss(gm_ms_plan *p, uint32_t stream, uint64_t want, size_t size)
{
    if (p->mode != GM_MS_PLAN_ON) return false; /* nothing to leave */
    if (fresh(p)) {
        if (gm_ms_plan_switch_shape(p, stream, want, size)) {
            p->st.switches++;
            return true;
        }
        const uint64_t op = want & 7;
        if ((op == GM_PLAN_ALLOC || op == GM_PLAN_SEND || op == GM_PLAN_WAIT) && p->relearns < GM_MS_PLAN_SHAPES) {
            record_from_here(p);
            return false;
        }
    }
    gm_ms_plan_depart(p);
    return false;
}

void gm_ms_plan_fini(gm_ms_plan *p)
{
    give_region_back(p);
    gm_ms_plan_drop_shapes(p);
    if (p->capslots) gm_free(p->slots);
    gm_free(p->log);
    gm_ms_cursors_init(p->c); /* nothing of the plan's left to point at */
    memset(p, 0, sizeof *p);
}
