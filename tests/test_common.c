#include "common/common.h"
#include "profile/tables.h"
#include "testhelp.h"

#include <cjson/cJSON.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_error_message(void)
{
    int rc = psi_error(PS_E_INPUT, "ops.csv:%d:%d: %s", 12, 7, "bad number");
    CHECK(rc == PS_E_INPUT);
    CHECK(strcmp(ps_last_error(), "ops.csv:12:7: bad number") == 0);
    psi_error_prefix(rc, "train");
    CHECK(strcmp(ps_last_error(), "train: ops.csv:12:7: bad number") == 0);
    CHECK(strcmp(ps_errstr(PS_E_NOMEM), "out of memory") == 0);
}

static void test_atomic_commit_and_abort(void)
{
    char path[] = "/tmp/psi_test_atomicXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);

    psi_atomic_t *a = NULL;
    CHECK_OK(psi_atomic_open(path, &a));
    fputs("new", psi_atomic_stream(a));
    CHECK_OK(psi_atomic_commit(a));
    char buf[16] = {0};
    FILE *f = fopen(path, "r");
    CHECK(f && fread(buf, 1, sizeof buf - 1, f) == 3);
    fclose(f);
    CHECK(strcmp(buf, "new") == 0);

    /* An aborted write leaves the old file untouched. */
    CHECK_OK(psi_atomic_open(path, &a));
    fputs("partial", psi_atomic_stream(a));
    psi_atomic_abort(a);
    f = fopen(path, "r");
    memset(buf, 0, sizeof buf);
    CHECK(f && fread(buf, 1, sizeof buf - 1, f) == 3);
    fclose(f);
    CHECK(strcmp(buf, "new") == 0);
    remove(path);

    CHECK(psi_atomic_open("/nonexistent-dir/x.csv", &a) == PS_E_IO);
    CHECK(a == NULL);
    CHECK(strstr(ps_last_error(), "/nonexistent-dir/x.csv") != NULL);
}

/* Bounds that must not overflow or let a typo through (issue 11). */
static void test_bounds(void)
{
    CHECK(segment_fits(0, 1, 1) && segment_fits(3, 17, 20) && !segment_fits(3, 18, 20));
    CHECK(!segment_fits(2147483647, 8, 175) && !segment_fits(23, 2147483647, 175));
    CHECK(!segment_fits(2147483647, 2147483647, 2147483647) && segment_fits(0, 2147483647, 2147483647));
    CHECK(!segment_fits(-1, 2, 5) && !segment_fits(0, 0, 5) && !segment_fits(0, -3, 5));
    int lim = psi_thread_limit();
    CHECK(lim >= THREADS_MIN_LIMIT);
    CHECK(psi_thread_check("t", 0) == PS_OK && psi_thread_check("t", lim) == PS_OK);
    CHECK(psi_thread_check("t", lim + 1L) == PS_E_ARG && strstr(ps_last_error(), "t ") == ps_last_error());
    CHECK(psi_thread_check("t", 100000) == PS_E_ARG && psi_thread_check("t", -1) == PS_E_ARG);
    ps_train_params_t p = ps_train_default_params();
    p.nthread = 100000;
    ps_model_t *m = NULL;
    ps_ops_t *ops = ps_ops_new();
    ps_coexec_t *cx = ps_coexec_new();
    CHECK(ps_model_train(ops, cx, &p, &m) == PS_E_ARG && m == NULL);
    CHECK(strstr(ps_last_error(), "nthread 100000 is outside") != NULL);
    ps_ops_free(ops);
    ps_coexec_free(cx);
}

/* Files are written and read in the C locale whatever the process's: under
 * de_DE ("1,5"), a table saved and loaded keeps 1.5 (issue 11). The locale
 * is built with localedef where it is not installed. */
static void test_c_locale_pinned(void)
{
    if (!setlocale(LC_ALL, "de_DE.UTF-8")) {
        if (system("mkdir -p /tmp/psi_test_loc && localedef -i de_DE -f UTF-8 /tmp/psi_test_loc/de_DE.UTF-8 "
                   ">/dev/null 2>&1") == 0)
            setenv("LOCPATH", "/tmp/psi_test_loc", 1);
        if (!setlocale(LC_ALL, "de_DE.UTF-8")) {
            printf("  no de_DE locale and no localedef: not checked\n");
            return;
        }
    }
    char b[32];
    snprintf(b, sizeof b, "%.1f", 1.5);
    CHECK(strcmp(b, "1,5") == 0);
    ps_scaling_t *s = ps_scaling_new(), *back = NULL;
    psi_scaling_row_t r = {"G", "w_batch1-inf", 50, 1.5};
    CHECK_OK(ps_scaling_append(s, &r));
    const char *path = "/tmp/psi_test_locale.csv";
    CHECK_OK(ps_scaling_save(s, path));
    CHECK_OK(ps_scaling_load(path, &back));
    CHECK(back && back->n == 1 && back->rows[0].tput == 1.5);
    FILE *f = fopen(path, "r");
    char text[256] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    CHECK_MSG(strstr(text, ",50,1.5") != NULL, "%s", text);
    snprintf(b, sizeof b, "%.1f", 1.5); /* the caller's locale is left as it was */
    CHECK(strcmp(b, "1,5") == 0);
    ps_scaling_free(s);
    ps_scaling_free(back);
    remove(path);
    setlocale(LC_ALL, "C");
}

/* The one JSON number format: integers plain, other doubles with 17 digits,
 * which read back exactly (cJSON's printer kept 15 digits that read back
 * only within an epsilon), non-finite as null; and the writer. */
static void test_json_numbers(void)
{
    char b[40];
    static const double vals[] = {0.1, 1.0 / 3, 2.0 / 3 * 1e-300, 123456.789, 9007199254740993.0, 1e300, -0.5};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        CHECK(ps_json_number(vals[i], b, sizeof b) == PS_OK);
        CHECK(strtod(b, NULL) == vals[i]);
    }
    ps_json_number(0.9, b, sizeof b);
    CHECK(strcmp(b, "0.90000000000000002") == 0);
    ps_json_number(9007199254740991.0, b, sizeof b);
    CHECK(strcmp(b, "9007199254740991") == 0);
    ps_json_number(0.30000000000000004, b, sizeof b);
    CHECK(strcmp(b, "0.30000000000000004") == 0);
    ps_json_number(NAN, b, sizeof b);
    CHECK(strcmp(b, "null") == 0);
    CHECK(ps_json_number(1, b, 8) == PS_E_ARG);
    /* Its own digits for 1 <= |v| < 2^53 are printf's "%.17g" exactly:
     * random doubles over that range (every binade), exact ties at the 17th
     * digit (ties to even), and carries into a new whole digit. */
    static const double edge[] = {1234567890123456.25,
                                  1234567890123456.75,
                                  1234567890123457.25,
                                  99.999999999999999,
                                  9.9999999999999982,
                                  1.0000000000000002,
                                  -2.5,
                                  4503599627370495.5,
                                  1.5,
                                  -1234567.1234567};
    int bad = 0;
    uint64_t h = 7;
    for (int i = 0; i < 300000 + (int)PS_ARRAY_LEN(edge); i++) {
        h = psi_mix64(h);
        double v = i < (int)PS_ARRAY_LEN(edge) ? edge[i] : ldexp(1 + (double)(h >> 12) * 0x1p-52, (int)(h % 53));
        char want[40];
        snprintf(want, sizeof want, v == floor(v) ? "%.0f" : "%.17g", v);
        ps_json_number(v, b, sizeof b);
        bad += strcmp(b, want) != 0;
        if (strcmp(b, want) != 0 && bad < 5)
            fprintf(stderr, "ps_json_number(%a): %s, printf %s\n", v, b, want);
    }
    CHECK_MSG(bad == 0, "%d numbers differ from printf", bad);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "x", 0.1 + 0.2);
    cJSON_AddStringToObject(o, "s", "a\"b\n\xff");
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    CHECK(f && ps_json_write(o, f) == PS_OK);
    fclose(f);
    CHECK(text && strcmp(text, "{\"x\":0.30000000000000004,\"s\":\"a\\\"b\\n\\ufffd\"}") == 0);
    free(text);
    cJSON_Delete(o);
}

/* One reader, one string writer: the service's buffer and the library's
 * printer write a string the same way, and the reader gives it back. */
static void test_json_reader_writer(void)
{
    static const char *const strs[] = {"",
                                       "plain",
                                       "a\"b\\c",
                                       "tab\there\nline",
                                       "\x01\x1f\x7f",
                                       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                                       "bad \xff \xc0\xaf \xed\xa0\x80"};
    for (size_t i = 0; i < PS_ARRAY_LEN(strs); i++) {
        ps_buf_t b = {0};
        ps_buf_json_str(&b, strs[i]);
        cJSON *c = cJSON_CreateString(strs[i]);
        char *printed = psi_json_print(c, 0);
        CHECK_MSG(b.s && printed && strcmp(b.s, printed) == 0, "string %zu: buffer %s, printer %s", i, b.s, printed);
        ps_json_doc_t d = {0};
        CHECK(b.s && ps_json_parse(&d, b.s, b.len) == PS_OK && d.tok[0].type == PS_JSON_STRING);
        if (d.n && i < 6)
            CHECK_MSG(strcmp(ps_json_str(&d, 0), strs[i]) == 0, "string %zu read back as %s", i, ps_json_str(&d, 0));
        ps_json_doc_free(&d);
        free(printed);
        cJSON_Delete(c);
        ps_buf_free(&b);
    }
    /* Refusals say why and where; text after the value only on request. */
    char bad[] = "{\"a\": 1,, \"b\": 2}", two[] = "[1] [2]";
    ps_json_doc_t d = {0};
    CHECK(ps_json_parse(&d, bad, strlen(bad)) == PS_E_INPUT && d.err_at == 8);
    CHECK_MSG(strstr(d.err, "expected a member name near byte 8"), "%s", d.err);
    CHECK(ps_json_parse(&d, two, strlen(two)) == PS_E_INPUT && strstr(d.err, "text after the JSON value"));
    d.allow_trailing = 1;
    CHECK(ps_json_parse(&d, two, strlen(two)) == PS_OK && d.end == 4 && d.tok[0].size == 1);
    ps_json_doc_free(&d);
    cJSON *o = NULL;
    CHECK(psi_json_parse(bad, strlen(bad), "thing", &o) == PS_E_INPUT && !o);
    CHECK_MSG(strstr(ps_last_error(), "thing is not valid JSON (expected a member name near byte 8)"), "%s",
              ps_last_error());
}

/* Integers read as strtol reads them (fractions, exponents and numbers out
 * of bounds refused; 19 digits and more through strtol itself), and a
 * column of numbers written as ps_buf_json_num writes each. */
static void test_json_ints_and_columns(void)
{
    char text[] = "[0, -0, 7, -42, 123456789012345678, 1.0, 1e2, -1E-2, 2147483647, 2147483648, "
                  "99999999999999999999, -9223372036854775809, 0.5]";
    static const int ok[] = {1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0};
    static const int want[] = {0, 0, 7, -42, 0, 0, 0, 0, 2147483647, 0, 0, 0, 0};
    ps_json_doc_t d = {0};
    CHECK(ps_json_parse(&d, text, strlen(text)) == PS_OK && d.tok[0].size == (int)PS_ARRAY_LEN(ok));
    for (int i = 0, t = 1; i < (int)PS_ARRAY_LEN(ok); i++, t = d.tok[t].next) {
        int v = -1, rc = ps_json_int(&d, t, -2147483647L - 1, 2147483647L, &v);
        CHECK_MSG((rc == PS_OK) == ok[i] && (!ok[i] || v == want[i]), "value %d: rc %d, %d", i, rc, v);
    }
    int v;
    CHECK(ps_json_int(&d, 3, 8, 100, &v) == PS_E_INPUT && ps_json_int(&d, 3, 7, 7, &v) == PS_OK && v == 7);
    ps_json_doc_free(&d);
    static const double col[] = {670692.37986292399, 0.9, -2.5, 3, 1e300, -1e-300};
    ps_buf_t one = {0}, all = {0};
    for (size_t i = 0; i < PS_ARRAY_LEN(col); i++) {
        if (i)
            ps_buf_putn(&one, ",", 1);
        ps_buf_json_num(&one, col[i]);
    }
    ps_buf_puts(&all, "[");
    ps_buf_json_nums(&all, col, PS_ARRAY_LEN(col));
    ps_buf_json_nums(&all, col, 0);
    CHECK_MSG(one.s && all.s && strcmp(all.s + 1, one.s) == 0 && all.len == one.len + 1, "%s against %s", all.s, one.s);
    ps_buf_free(&one);
    ps_buf_free(&all);
}

TH_MAIN(TEST(test_error_message), TEST(test_atomic_commit_and_abort), TEST(test_bounds), TEST(test_c_locale_pinned),
        TEST(test_json_numbers), TEST(test_json_reader_writer), TEST(test_json_ints_and_columns))
