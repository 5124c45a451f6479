/* json_read_ahead.c — a split model's nodes parsed ahead on a thread (json_read_ahead.h). */
#include "io/json_read_ahead.h"

#include <pthread.h>
#include <stdbool.h>

#include "ir/ir.h"
#include "util/alloc.h"
#include "util/parallel.h"

/* Elements are handed over in batches, so the two threads meet once per BATCH nodes; SLOTS
 * batches in flight bound the trees held (a few hundred nodes). */
enum { BATCH = 64, SLOTS = 8, MIN_ELEMENTS = 4096 };

typedef struct batch {
    cJSON *node[BATCH]; /* lent to the reader, deleted when the slot is filled again; NULL where
                           the element was read the fast way */
    gm_json_nums nums[BATCH];
    gm_jr_fast fast[BATCH]; /* the fast way's (json_read_fast.h): its node given to the reader */
    gm_jr_links links;      /* the fast nodes' inputs, control inputs and input names */
    size_t n;        /* elements ready, the batch's first n */
    gm_status st;    /* the element after them failed (GM_OK: none did) */
    gm_error err;
    int kind;
    bool parsed;
} batch;

struct gm_jr_ahead {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t produced, consumed; /* batches */
    bool stop;
    jr wr; /* the thread's own reader state: its own error and kind */
    gm_error werr;
    const gm_json_array_split *a;
    batch *cur; /* the reader's batch, and its next element */
    size_t pos;
    batch slot[SLOTS];
};

/* The thread waits for a free slot; false when told to stop. */
static bool wait_free(gm_jr_ahead *h)
{
    pthread_mutex_lock(&h->mu);
    while (h->produced - h->consumed == SLOTS && !h->stop) pthread_cond_wait(&h->cv, &h->mu);
    bool go = !h->stop;
    pthread_mutex_unlock(&h->mu);
    return go;
}

static void fill(gm_jr_ahead *h, batch *b, size_t first)
{
    /* the trees the reader has read are deleted here, on the thread that made them: cJSON's
     * frees were a fifth of the reader's time */
    for (size_t i = 0; i < b->n; i++) {
        cJSON_Delete(b->node[i]);
        b->node[i] = NULL;
    }
    b->n = 0;
    b->st = GM_OK;
    b->links.n = 0;
    size_t end = first + BATCH < h->a->count ? first + BATCH : h->a->count;
    for (size_t i = first; i < end; i++) {
        size_t tb, te;
        gm_json_split_element(h->wr.split, h->a, i, &tb, &te);
        if (gm_jr_fast_node(&h->wr, tb, te, &b->links, &b->nums[b->n], &b->fast[b->n])) {
            b->node[b->n++] = NULL;
            continue;
        }
        gm_error_clear(&h->werr); /* what the fast way met is cJSON's and the walk's to tell */
        cJSON *node = NULL;
        bool parsed = false;
        gm_status st = gm_jr_parse_element(&h->wr, tb, te, &node, &b->nums[b->n], &parsed);
        if (st != GM_OK) {
            b->st = st;
            b->err = h->werr;
            b->kind = h->wr.kind;
            b->parsed = parsed;
            return;
        }
        b->node[b->n++] = node;
    }
}

static void *produce(void *arg)
{
    gm_jr_ahead *h = arg;
    for (size_t first = 0; first < h->a->count && wait_free(h); first += BATCH) {
        batch *b = &h->slot[h->produced % SLOTS];
        fill(h, b, first);
        pthread_mutex_lock(&h->mu);
        h->produced++;
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->mu);
        if (b->st != GM_OK) break;
    }
    return NULL;
}

gm_jr_ahead *gm_jr_ahead_start(const jr *r, const gm_json_array_split *a)
{
    if (a->count < MIN_ELEMENTS || gm_parallel_parts(0, 2) < 2) return NULL;
    gm_jr_ahead *h = gm_calloc(1, sizeof *h);
    if (!h) return NULL;
    h->a = a;
    h->wr = *r;
    h->wr.err = &h->werr;
    gm_error_clear(&h->werr);
    h->wr.m = NULL; /* the thread only parses */
    if (pthread_mutex_init(&h->mu, NULL)) goto fail_mu;
    if (pthread_cond_init(&h->cv, NULL)) goto fail_cv;
    if (pthread_create(&h->tid, NULL, produce, h)) goto fail_thread;
    return h;
fail_thread:
    pthread_cond_destroy(&h->cv);
fail_cv:
    pthread_mutex_destroy(&h->mu);
fail_mu:
    gm_free(h);
    return NULL;
}

gm_status gm_jr_ahead_next(gm_jr_ahead *h, jr *r, cJSON **node, gm_json_nums **nums, gm_jr_fast *fast,
                           const gm_jr_links **links, bool *parsed)
{
    *node = NULL;
    fast->node = NULL;
    if (h->cur && h->pos == h->cur->n && h->cur->st == GM_OK) {
        pthread_mutex_lock(&h->mu);
        h->consumed++;
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->mu);
        h->cur = NULL;
    }
    if (!h->cur) {
        pthread_mutex_lock(&h->mu);
        while (h->produced == h->consumed) pthread_cond_wait(&h->cv, &h->mu);
        pthread_mutex_unlock(&h->mu);
        h->cur = &h->slot[h->consumed % SLOTS];
        h->pos = 0;
    }
    batch *b = h->cur;
    if (h->pos < b->n) {
        *node = b->node[h->pos];
        if (!*node) { /* read the fast way: its node the reader's now */
            *fast = b->fast[h->pos];
            b->fast[h->pos].node = NULL;
        }
        *links = &b->links;
        *nums = &b->nums[h->pos++];
        *parsed = true;
        return GM_OK;
    }
    if (r->err) *r->err = b->err;
    r->kind = b->kind;
    *parsed = b->parsed;
    return b->st;
}

bool gm_jr_ahead_peek(const gm_jr_ahead *h, const cJSON **node, const gm_jr_fast **fast, const gm_jr_links **links)
{
    /* the reader's batch is complete and its own until it is handed back */
    if (!h || !h->cur || h->pos >= h->cur->n) return false;
    *node = h->cur->node[h->pos];
    *fast = *node ? NULL : &h->cur->fast[h->pos];
    *links = &h->cur->links;
    return true;
}

void gm_jr_ahead_stop(gm_jr_ahead *h)
{
    if (!h) return;
    pthread_mutex_lock(&h->mu);
    h->stop = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->tid, NULL);
    for (size_t s = 0; s < SLOTS; s++) {
        batch *b = &h->slot[s];
        for (size_t i = 0; i < BATCH; i++) {
            gm_node_free(b->fast[i].node); /* read the fast way and not taken (taken: NULL) */
            cJSON_Delete(b->node[i]);
            gm_free(b->nums[i].v);
        }
        gm_free(b->links.v);
    }
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    gm_free(h);
}
