/*
 * test_bad_inputs.c — bad input files given to the command: every one must get exit status 2
 * and a message on stderr that names the file and says what is wrong, and nothing on stdout.
 *
 * The inputs: the graph of every error scenario (tests/scenarios/err_*.json, each with the
 * words its message must hold), written to a file of its own; and damaged files of the other
 * formats (ONNX, GE text dumps, DSA CSV, a plan for verify), each with the words expected.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include "io_test_util.h"
#include <cjson/cJSON.h>

static char g_tmp[256];

static void spit(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* Runs `graphmem ARGS` with stdout and stderr into files; returns the exit status. */
static int run_cli(const char *args, char **out, char **err)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s/out' 2>'%s/err'", GM_CLI, args, g_tmp, g_tmp);
    int rc = system(cmd);
    char path[512];
    size_t len;
    snprintf(path, sizeof path, "%s/out", g_tmp);
    *out = slurp(path, &len);
    snprintf(path, sizeof path, "%s/err", g_tmp);
    *err = slurp(path, &len);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static size_t g_checked;

/* `graphmem ARGS` on the bad file `file` must exit 2, say nothing on stdout, and name the file
 * and every word of `words` ('|'-separated alternatives, any one may match) on stderr. */
static void expect_refused(const char *args, const char *file, const char *words)
{
    char *out = NULL, *err = NULL;
    int rc = run_cli(args, &out, &err);
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    if (rc != 2) fail_msg("graphmem %s: exit %d, expected 2; stderr: %s", args, rc, err ? err : "");
    if (out && *out) fail_msg("graphmem %s: wrote to stdout: %s", args, out);
    if (!err || !strstr(err, base)) fail_msg("graphmem %s: the message does not name %s: %s", args, base, err ? err : "");
    bool found = words == NULL || *words == '\0';
    for (const char *w = words; w && *w && !found;) {
        const char *bar = strchr(w, '|');
        size_t n = bar ? (size_t)(bar - w) : strlen(w);
        for (const char *p = err; *p && !found; p++) found = strncasecmp(p, w, n) == 0;
        w = bar ? bar + 1 : w + n;
    }
    if (!found) fail_msg("graphmem %s: expected '%s' in: %s", args, words, err);
    g_checked++;
    free(out);
    free(err);
}

/* Every error scenario's graph in a file of its own, planned by the command. */
static size_t check_error_scenarios(void)
{
    DIR *d = opendir(GM_SCENARIO_DIR);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "err_", 4) != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", GM_SCENARIO_DIR, e->d_name);
        size_t len = 0;
        char *text = slurp(path, &len);
        assert_non_null(text);
        cJSON *root = cJSON_ParseWithLength(text, len);
        free(text);
        assert_non_null(root);
        const cJSON *graph = cJSON_GetObjectItemCaseSensitive(root, "graph");
        const cJSON *expect = cJSON_GetObjectItemCaseSensitive(root, "expect");
        const cJSON *error = expect ? cJSON_GetObjectItemCaseSensitive(expect, "error") : NULL;
        if (graph && cJSON_IsString(error)) {
            char *g = cJSON_PrintUnformatted(graph);
            char file[512], args[1024];
            snprintf(file, sizeof file, "%s/%s", g_tmp, e->d_name);
            spit(file, g, strlen(g));
            cJSON_free(g);
            snprintf(args, sizeof args, "plan '%s'", file);
            expect_refused(args, file, error->valuestring);
            n++;
        }
        cJSON_Delete(root);
    }
    closedir(d);
    return n;
}

typedef struct damaged {
    const char *name;    /* the file written */
    const char *command; /* graphmem COMMAND FILE */
    const char *text;    /* its content (NULL: the first `cut` bytes of `from`) */
    const char *from;
    size_t cut;
    const char *words;   /* expected on stderr */
} damaged;

/* Files of every format, damaged in the ways a user's files are. */
static size_t check_damaged_files(void)
{
    static const damaged k[] = {
        {"empty.json", "plan", "", NULL, 0, "empty|unknown model format"},
        {"not_json.json", "plan", "{\"graphmem\": 1, \"graphs\": [", NULL, 0, "json"},
        {"version.json", "plan", "{\"graphmem\": 9, \"graphs\": []}", NULL, 0, "version"},
        {"binary.json", "info", "\x01\x02\xff\xfe\x00garbage", NULL, 0, "unknown model format|not"},
        {"utf8.json", "info", "{\"graphmem\":1,\"graphs\":[{\"name\":\"r\xff\",\"nodes\":[]}]}", NULL, 0, "UTF-8"},
        {"cut.onnx", "plan", NULL, GM_TEST_DATA_DIR "/models/resnet18.onnx", 200, "ONNX|protobuf"},
        {"cut2.onnx", "info", NULL, GM_TEST_DATA_DIR "/models/control_flow.onnx", 1000, "ONNX|protobuf"},
        {"cut.txt", "plan", NULL, GM_TEST_DATA_DIR "/ge/small_all_kinds.txt", 700, ""},
        {"bad_field.txt", "info", "name: \"m\"\ngraph { name: \"g\" op { name: \"a\" typo: 3 } }\n", NULL, 0, "typo"},
        {"bad_dim.txt", "plan", "graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { shape { dim: 4 dim: -2 } } } }\n",
         NULL, 0, "dim 1 is -2"},
        {"ref_larger.txt", "plan",
         "graph { name: \"g\"\n op { name: \"var\" type: \"Variable\" output_desc { dtype: DT_FLOAT shape { dim: 512 } } }\n"
         " op { name: \"v\" type: \"Const\" output_desc { dtype: DT_FLOAT shape { dim: 4096 } } }\n"
         " op { name: \"upd\" type: \"Assign\" input: \"var:0\" input: \"v:0\" output_desc { dtype: DT_FLOAT shape { dim: 4096 } } } }\n",
         NULL, 0, "upd_out_0 (16384 bytes) is larger than its referent upd_in_0 (2048 bytes"},
        {"bad_csv.csv", "plan --dsa", "id,lower,upper,size\n0,5,2,8\n", NULL, 0, ":2"},
        {"neg_size.csv", "plan --dsa", "id,lower,upper,size\n0,0,2,-8\n", NULL, 0, "size"},
        {"no_header.csv", "plan --dsa", "1,2,3\n", NULL, 0, "header|id"},
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        char file[512], args[1024];
        snprintf(file, sizeof file, "%s/%s", g_tmp, k[i].name);
        if (k[i].text) {
            spit(file, k[i].text, strlen(k[i].text));
        } else {
            size_t len = 0;
            char *data = slurp(k[i].from, &len);
            assert_non_null(data);
            assert_true(len > k[i].cut);
            spit(file, data, k[i].cut);
            free(data);
        }
        snprintf(args, sizeof args, "%s '%s'", k[i].command, file);
        expect_refused(args, file, k[i].words);
        n++;
    }
    /* a plan that is not plan JSON, given to verify */
    char plan[512], args[1024];
    snprintf(plan, sizeof plan, "%s/not_a_plan.json", g_tmp);
    spit(plan, "{\"version\": 7}", 14);
    snprintf(args, sizeof args, "verify '%s/plans/relu.json' '%s'", GM_TEST_DATA_DIR, plan);
    expect_refused(args, plan, "version|plan");
    return n + 1;
}

static void bad_inputs_exit_2_and_say_why(void **state)
{
    (void)state;
    snprintf(g_tmp, sizeof g_tmp, "/tmp/gm_bad_inputs_XXXXXX");
    assert_non_null(mkdtemp(g_tmp));
    size_t scenarios = check_error_scenarios();
    size_t files = check_damaged_files();
    fprintf(stderr, "bad inputs refused with exit 2 and a message naming the file: %zu (%zu error scenarios, "
                    "%zu damaged files)\n", g_checked, scenarios, files);
    assert_true(g_checked >= 30);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(bad_inputs_exit_2_and_say_why)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
