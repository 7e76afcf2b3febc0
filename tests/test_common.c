#include "common/common.h"
#include "testhelp.h"

#include <unistd.h>

static void test_error_message(void)
{
    int rc = ps_error(PS_E_INPUT, "ops.csv:%d:%d: %s", 12, 7, "bad number");
    CHECK(rc == PS_E_INPUT);
    CHECK(strcmp(ps_last_error(), "ops.csv:12:7: bad number") == 0);
    ps_error_prefix(rc, "train");
    CHECK(strcmp(ps_last_error(), "train: ops.csv:12:7: bad number") == 0);
    CHECK(strcmp(ps_errstr(PS_E_NOMEM), "out of memory") == 0);
}

static void test_atomic_commit_and_abort(void)
{
    char path[] = "/tmp/ps_test_atomicXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);

    ps_atomic_t *a = NULL;
    CHECK_OK(ps_atomic_open(path, &a));
    fputs("new", ps_atomic_stream(a));
    CHECK_OK(ps_atomic_commit(a));
    char buf[16] = {0};
    FILE *f = fopen(path, "r");
    CHECK(f && fread(buf, 1, sizeof buf - 1, f) == 3);
    fclose(f);
    CHECK(strcmp(buf, "new") == 0);

    /* An aborted write leaves the old file untouched. */
    CHECK_OK(ps_atomic_open(path, &a));
    fputs("partial", ps_atomic_stream(a));
    ps_atomic_abort(a);
    f = fopen(path, "r");
    memset(buf, 0, sizeof buf);
    CHECK(f && fread(buf, 1, sizeof buf - 1, f) == 3);
    fclose(f);
    CHECK(strcmp(buf, "new") == 0);
    remove(path);

    CHECK(ps_atomic_open("/nonexistent-dir/x.csv", &a) == PS_E_IO);
    CHECK(a == NULL);
    CHECK(strstr(ps_last_error(), "/nonexistent-dir/x.csv") != NULL);
}

TH_MAIN(TEST(test_error_message), TEST(test_atomic_commit_and_abort))
