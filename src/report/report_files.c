/* report_files.c — the pictures of graphmem/report.h written to files (safely, by gm_write_file). */
#include "graphmem/io.h"
#include "graphmem/report.h"

gm_status gm_report_write_svg_file(const gm_model *m, const char *plan, size_t len, const char *path, gm_error *err)
{
    char *svg = NULL;
    size_t n = 0;
    gm_status st = gm_report_svg_timeline(m, plan, len, "<the plan>", NULL, &svg, &n, err);
    if (st == GM_OK) st = gm_write_file(path, svg, n, err);
    gm_report_free(svg);
    return st;
}

gm_status gm_report_write_dot_file(const gm_model *m, const gm_pass_report *report, const char *path, gm_error *err)
{
    char *dot = NULL;
    size_t n = 0;
    gm_status st = gm_report_dot_graph(m, report, &dot, &n, err);
    if (st == GM_OK) st = gm_write_file(path, dot, n, err);
    gm_report_free(dot);
    return st;
}
