/* The streaming tokenizer and the number parser on their own: records that
 * straddle the tokenizer's buffer at every kind of position (CRLF, doubled
 * quotes, embedded newlines), skipped prefix lines, and the exact fast path
 * for decimals against strtod. */
#include "common/common.h"
#include "profile/profile_internal.h"
#include "testhelp.h"

#include <stdint.h>
#include <unistd.h>

/* Field i of row r in the generated file: lengths vary so that every
 * special sequence lands on a buffer boundary somewhere. */
static void make_field(int r, int i, char *buf, size_t n)
{
    int len = (r * 7 + i * 13) % 41;
    size_t k = 0;
    for (int j = 0; j < len && k + 2 < n; j++) {
        int kind = (r + j + i) % 11;
        buf[k++] = kind == 0 ? '"' : kind == 1 ? ',' : kind == 2 ? '\n' : (char)('a' + kind);
    }
    buf[k] = '\0';
}

static void test_boundaries(void)
{
    char path[] = "/tmp/psi_test_csvXXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "wb");
    const int rows = 6000, cols = 3;
    char field[64];
    size_t lines = 1;
    for (int r = 0; r < rows; r++) {
        for (int i = 0; i < cols; i++) {
            make_field(r, i, field, sizeof field);
            fputc('"', f);
            for (char *p = field; *p; p++) {
                if (*p == '"')
                    fputc('"', f);
                lines += *p == '\n';
                fputc(*p, f);
            }
            fputc('"', f);
            fputs(i + 1 < cols ? "," : r % 2 ? "\r\n" : "\n", f);
        }
        lines++;
    }
    fclose(f);
    psi_csv_t *c = NULL;
    CHECK_OK(psi_csv_open(path, &c));
    int r = 0, bad = 0, rc;
    size_t last_line = 0;
    while (c && (rc = psi_csv_next(c)) == 1) {
        if (psi_csv_nfields(c) != cols || psi_csv_line(c) <= last_line)
            bad++;
        last_line = psi_csv_line(c);
        for (int i = 0; i < cols && i < psi_csv_nfields(c); i++) {
            make_field(r, i, field, sizeof field);
            if (strcmp(psi_csv_field(c, i), field) != 0)
                bad++;
        }
        r++;
    }
    CHECK_MSG(bad == 0, "%d bad records", bad);
    CHECK(r == rows);
    CHECK_MSG(last_line < lines, "last record at line %zu of %zu", last_line, lines);
    psi_csv_close(c);
    remove(path);
}

static void test_prefix_and_comments(void)
{
    static const char text[] = "# comment\n"
                               "==PROF== Connected\n"
                               "h1,h2\n"
                               "==PROF== in the middle\n"
                               "=x,# not a comment now\n"
                               "==,\"q\"\n";
    psi_csv_t *c = NULL;
    CHECK_OK(psi_csv_open_mem(text, sizeof text - 1, "mem", &c));
    psi_csv_skip_prefix(c, "==P");
    CHECK(psi_csv_next(c) == 1 && strcmp(psi_csv_field(c, 0), "h1") == 0 && psi_csv_line(c) == 3);
    CHECK(psi_csv_next(c) == 1 && strcmp(psi_csv_field(c, 0), "=x") == 0 && psi_csv_line(c) == 5);
    CHECK(strcmp(psi_csv_field(c, 1), "# not a comment now") == 0);
    /* A partial prefix match is ordinary text. */
    CHECK(psi_csv_next(c) == 1 && strcmp(psi_csv_field(c, 0), "==") == 0);
    CHECK(strcmp(psi_csv_field(c, 1), "q") == 0 && psi_csv_field_len(c, 1) == 1);
    CHECK(psi_csv_next(c) == 0);
    CHECK(psi_csv_next(c) == 0);
    psi_csv_close(c);

    /* Errors name the input, line and field. */
    static const char bad[] = "a,b\n1,\"2\nx\n";
    CHECK_OK(psi_csv_open_mem(bad, sizeof bad - 1, "mem.csv", &c));
    CHECK(psi_csv_next(c) == 1);
    CHECK(psi_csv_next(c) == PS_E_INPUT);
    CHECK_MSG(strcmp(ps_last_error(), "mem.csv:2:2: unterminated quoted field") == 0, "%s",
              ps_last_error());
    psi_csv_close(c);
    psi_csv_close(NULL);
}

/* The fast path must give bit-for-bit what strtod gives. */
static void test_parse_double_exact(void)
{
    uint64_t s = 88172645463325252ULL;
    int mismatches = 0;
    char buf[64];
    for (int i = 0; i < 200000; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        int intd = (int)(s % 12), fracd = (int)((s >> 8) % 14);
        size_t k = 0;
        if ((s >> 20) & 1)
            buf[k++] = '-';
        uint64_t t = s >> 24;
        for (int j = 0; j < intd; j++, t /= 10)
            buf[k++] = (char)('0' + t % 10);
        if (fracd || !intd) {
            buf[k++] = '.';
            t = s * 2654435761u;
            for (int j = 0; j < fracd + !intd; j++, t /= 10)
                buf[k++] = (char)('0' + t % 10);
        }
        buf[k] = '\0';
        double a, b = strtod(buf, NULL);
        const char *why;
        if (psi_parse_double(buf, &a, &why) != 0 || memcmp(&a, &b, sizeof a) != 0) {
            if (mismatches++ < 5)
                fprintf(stderr, "'%s': %.17g vs strtod %.17g\n", buf, a, b);
        }
    }
    CHECK(mismatches == 0);
    double v;
    const char *why = NULL;
    CHECK(psi_parse_double("1e3", &v, &why) == 0 && v == 1000);
    CHECK(psi_parse_double("0.1", &v, &why) == 0 && v == 0.1);
    CHECK(psi_parse_double("123456789012345678", &v, &why) == 0 && v == 123456789012345678.0);
    CHECK(psi_parse_double(".", &v, &why) == -1);
    CHECK(psi_parse_double("1.2.3", &v, &why) == -1);
    CHECK(psi_parse_double("--1", &v, &why) == -1);
    CHECK(psi_parse_double("Inf", &v, &why) == -1 && strstr(why, "infinity"));
    CHECK(psi_parse_double("-nan", &v, &why) == -1 && strstr(why, "NaN"));
}

TH_MAIN(TEST(test_boundaries), TEST(test_prefix_and_comments), TEST(test_parse_double_exact))
