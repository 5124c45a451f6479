/* cmd_convert.c — `graphmem convert IN OUT`: read any format, write the one OUT names (or --to). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "graphmem/io.h"

int gm_cmd_convert(const gm_cli_opts *o)
{
    gm_error err;
    gm_error_clear(&err);
    if (o->n_positional != 2) {
        gm_error_set(&err, GM_ERR_USAGE, "convert: needs IN and OUT (graphmem convert IN OUT [--to json|onnx|ge])");
        return gm_cli_fail(&err);
    }
    const char *out_path = o->positional[1];
    gm_format fmt = o->to ? gm_format_from_name(o->to) : gm_format_from_path(out_path);
    if (fmt == GM_FORMAT_UNKNOWN) {
        gm_error_set(&err, GM_ERR_USAGE,
                     "convert: cannot tell the format of '%s' from its name (.json, .onnx, .txt); use --to", out_path);
        return gm_cli_fail(&err);
    }
    if (fmt == GM_FORMAT_GE_OM) {
        gm_error_set(&err, GM_ERR_USAGE,
                     "convert: '%s': graphmem reads GE offline models (.om) but does not write them; write a GE text "
                     "dump (.txt) instead",
                     out_path);
        return gm_cli_fail(&err);
    }
    gm_cli_outputs outs;
    if (gm_cli_outputs_begin(&outs, o, &err) != GM_OK) return gm_cli_fail(&err);
    gm_model *m = NULL;
    gm_cli_progress_start(o, "reading the model");
    gm_status st = gm_cli_load(o, false, &m, &err);
    size_t nodes = 0;
    if (st == GM_OK) {
        gm_cli_progress_stage("writing");
        void *bytes = NULL;
        size_t n = 0;
        st = gm_model_write_buffer(m, fmt, &bytes, &n, &err);
        if (st == GM_OK) st = gm_cli_outputs_add(&outs, out_path, gm_format_name(fmt), bytes, n, &err);
        if (st == GM_OK) st = gm_cli_outputs_commit(&outs, &err);
        free(bytes);
        nodes = gm_model_node_count(m);
    }
    gm_cli_outputs_end(&outs);
    gm_model_free(m);
    gm_cli_progress_stop();
    if (st != GM_OK) return gm_cli_fail(&err);
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "input", o->positional[0]);
        cJSON_AddStringToObject(j, "wrote", out_path);
        cJSON_AddStringToObject(j, "format", gm_format_name(fmt));
        cJSON_AddNumberToObject(j, "nodes", (double)nodes);
        return gm_cli_print_json(j);
    }
    if (o->verbosity >= 0) printf("wrote %s (%s, %zu nodes)\n", out_path, gm_format_name(fmt), nodes);
    return 0;
}
