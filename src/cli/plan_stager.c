/*
 * plan_stager.c — `plan -o`: the plan's file is staged while the verifier proves its text.
 *
 * At a million nodes the text is ~300 MB; writing it beside its target and flushing it to disk
 * took about a second after the planner had returned. The planner shows its text as soon as it
 * is written (gm_plan_options.on_text), and a thread stages it from there, while the verifier
 * reads the same bytes. Staging is not committing: nothing reaches the target until the command
 * has succeeded (outputs.c), so a plan that fails to verify is still never written. A text the
 * planner withdraws (a repair writes a new one) has its staged file removed before it goes.
 */
#include <pthread.h>
#include <string.h>

#include "cli/cli.h"

/* Smaller texts are staged after planning, on the calling thread: a thread would cost more
 * than the overlap saves. */
enum { STAGE_AHEAD_FROM = 4 << 20 };

static void *stage(void *arg)
{
    gm_cli_plan_stager *s = arg;
    s->st = gm_cli_outputs_add(s->outs, s->path, "plan", s->text, s->len, &s->err);
    return NULL;
}

/* Waits for the staging thread; a staged file whose text is withdrawn goes with it. */
static void settle(gm_cli_plan_stager *s, bool withdraw)
{
    if (s->running) {
        pthread_join(s->tid, NULL);
        s->running = false;
        s->staged = s->st == GM_OK;
    }
    if (withdraw && s->staged) {
        gm_cli_outputs_drop_last(s->outs);
        s->staged = false;
    }
    if (withdraw) {
        s->text = NULL;
        s->len = 0;
        s->st = GM_OK;
    }
}

void gm_cli_plan_stager_init(gm_cli_plan_stager *s, gm_cli_outputs *outs, const char *path)
{
    memset(s, 0, sizeof *s);
    s->outs = outs;
    s->path = path;
    gm_error_clear(&s->err);
}

void gm_cli_plan_stager_on_text(const char *text, size_t len, void *ctx)
{
    gm_cli_plan_stager *s = ctx;
    settle(s, true);
    if (!text || !s->path || len < STAGE_AHEAD_FROM) return;
    s->text = text;
    s->len = len;
    /* where no thread starts, the text is staged after planning, as a small one is */
    s->running = pthread_create(&s->tid, NULL, stage, s) == 0;
    if (!s->running) s->text = NULL, s->len = 0;
}

gm_status gm_cli_plan_stager_finish(gm_cli_plan_stager *s, const char *text, size_t len, gm_error *err)
{
    settle(s, false);
    if (s->st != GM_OK) {
        if (err) *err = s->err;
        return s->st;
    }
    /* The planner withdraws every text but the last, so a staged one is this text. */
    if (s->staged && s->text == text && s->len == len) return GM_OK;
    settle(s, true);
    return s->path && text ? gm_cli_outputs_add(s->outs, s->path, "plan", text, len, err) : GM_OK;
}

void gm_cli_plan_stager_discard(gm_cli_plan_stager *s)
{
    settle(s, true);
}
