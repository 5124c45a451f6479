/*
 * outputs.c — the files a command writes (-o, --dump-graph, --svg, --dot, convert's OUT), all
 * or none. Two rules keep the user's files safe: an output never replaces one of the command's
 * inputs (`plan m.json -o m.json` would lose the model), and nothing is written unless the whole
 * command succeeds (each output is staged beside its target and the set renamed into place at
 * the end, gm_files). The checks run before any work, so a mistake costs nothing.
 */
/* realpath() is an XSI function: the build's _POSIX_C_SOURCE alone does not declare it. */
#define _XOPEN_SOURCE 700
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "graphmem/io.h"

/* A path's file, when it exists: its canonical name and identity (hard links share it); else
 * its directory's canonical name and its own last component. false when that directory does
 * not exist (the message then says so). */
typedef struct file_id {
    char name[PATH_MAX + NAME_MAX + 2];
    bool exists;
    dev_t dev;
    ino_t ino;
} file_id;

static bool identify(const char *path, file_id *id, char *missing_dir, size_t cap)
{
    memset(id, 0, sizeof *id);
    struct stat sb;
    char *real = realpath(path, NULL);
    if (real && stat(real, &sb) == 0) {
        snprintf(id->name, sizeof id->name, "%s", real);
        free(real);
        id->exists = true;
        id->dev = sb.st_dev;
        id->ino = sb.st_ino;
        return true;
    }
    free(real);
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char *rdir = realpath(dir, NULL);
    if (!rdir || stat(rdir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        free(rdir);
        snprintf(missing_dir, cap, "%s", dir);
        return false;
    }
    snprintf(id->name, sizeof id->name, "%s/%s", strcmp(rdir, "/") ? rdir : "", slash ? slash + 1 : path);
    free(rdir);
    return true;
}

static bool same(const file_id *a, const file_id *b)
{
    if (a->exists && b->exists) return a->dev == b->dev && a->ino == b->ino;
    return strcmp(a->name, b->name) == 0;
}

/* The outputs o names, with the flag that names each. */
static int collect(const gm_cli_opts *o, const char *flag[4], const char *path[4])
{
    int n = 0;
    if (!strcmp(o->cmd, "convert")) {
        if (o->n_positional == 2) flag[n] = "OUT", path[n++] = o->positional[1];
        return n;
    }
    if (o->output) flag[n] = "-o", path[n++] = o->output;
    if (o->dump_graph) flag[n] = "--dump-graph", path[n++] = o->dump_graph;
    if (o->svg) flag[n] = "--svg", path[n++] = o->svg;
    if (o->dot) flag[n] = "--dot", path[n++] = o->dot;
    return n;
}

gm_status gm_cli_outputs_begin(gm_cli_outputs *out, const gm_cli_opts *o, gm_error *err)
{
    memset(out, 0, sizeof *out);
    const char *flag[4], *path[4];
    int n = collect(o, flag, path);
    const char *in[3];
    int n_in = 0;
    if (o->n_positional > 0) in[n_in++] = o->positional[0];
    if (!strcmp(o->cmd, "verify") && o->n_positional > 1) in[n_in++] = o->positional[1];
    if (o->dsa) in[n_in++] = o->dsa;
    file_id ids[4], in_id;
    char dir[PATH_MAX];
    for (int i = 0; i < n; i++) {
        if (!identify(path[i], &ids[i], dir, sizeof dir))
            return gm_error_set(err, GM_ERR_IO, "%s: %s %s: cannot write: no directory '%s'", o->cmd, flag[i], path[i],
                                dir);
        for (int k = 0; k < n_in; k++)
            if (identify(in[k], &in_id, dir, sizeof dir) && same(&ids[i], &in_id))
                return gm_error_set(err, GM_ERR_USAGE,
                                    "%s: %s %s would overwrite the input %s: an output never replaces an input "
                                    "(choose another name)",
                                    o->cmd, flag[i], path[i], in[k]);
        for (int k = 0; k < i; k++)
            if (same(&ids[i], &ids[k]))
                return gm_error_set(err, GM_ERR_USAGE, "%s: %s and %s both name %s: give each output its own file",
                                    o->cmd, flag[k], flag[i], path[i]);
    }
    out->files = gm_files_new();
    if (!out->files) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    return GM_OK;
}

gm_status gm_cli_outputs_add(gm_cli_outputs *out, const char *path, const char *what, const void *data, size_t len,
                             gm_error *err)
{
    if (out->n == (int)(sizeof out->v / sizeof out->v[0]))
        return gm_error_set(err, GM_ERR_USAGE, "%s: too many outputs", path);
    gm_status st = gm_files_add(out->files, path, data, len, err);
    if (st != GM_OK) return st;
    out->v[out->n].path = path;
    out->v[out->n].what = what;
    out->v[out->n].bytes = len;
    out->n++;
    return GM_OK;
}

void gm_cli_outputs_drop_last(gm_cli_outputs *out)
{
    if (out->n == 0) return;
    gm_files_drop_last(out->files);
    out->n--;
}

gm_status gm_cli_outputs_commit(gm_cli_outputs *out, gm_error *err)
{
    return out->files ? gm_files_commit(out->files, err) : GM_OK;
}

void gm_cli_outputs_print(const gm_cli_outputs *out, const gm_cli_opts *o)
{
    if (o->verbosity < 0) return;
    for (int i = 0; i < out->n; i++)
        printf("wrote %s (%s, %zu bytes)\n", out->v[i].path, out->v[i].what, out->v[i].bytes);
}

void gm_cli_outputs_json(const gm_cli_outputs *out, cJSON *j)
{
    cJSON *list = cJSON_AddArrayToObject(j, "wrote");
    for (int i = 0; list && i < out->n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "path", out->v[i].path);
        cJSON_AddStringToObject(e, "what", out->v[i].what);
        cJSON_AddNumberToObject(e, "bytes", (double)out->v[i].bytes);
        cJSON_AddItemToArray(list, e);
    }
}

void gm_cli_outputs_end(gm_cli_outputs *out)
{
    gm_files_free(out->files); /* removes what was staged and not committed */
    out->files = NULL;
}
