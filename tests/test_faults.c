/* Error paths under fault injection (built with PS_FAULT_INJECTION, as
 * scripts/test.sh --sanitize does; ASan then finds any leak): the n-th
 * allocation fails in load, save and train, and the n-th atomic write fails
 * in save. Each call returns PS_E_NOMEM or PS_E_IO with a message, gives no
 * half-made handle and leaves no output or temporary file. */
#include "common/common.h"
#include "testhelp.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *OUT = "/tmp/psi_test_faults.out";

/* Nothing at OUT and no "OUT.tmp.<pid>" beside it. */
static int no_output(void)
{
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", OUT, (long)getpid());
    return access(OUT, F_OK) != 0 && access(tmp, F_OK) != 0;
}

static int failed_well(int rc)
{
    return (rc == PS_E_NOMEM || rc == PS_E_IO) && ps_last_error()[0] != '\0';
}

static void test_table_load_and_save(void)
{
    int n, ok = 0;
    for (n = 1; n < 500 && !ok; n++) {
        ps_ops_t *t = (ps_ops_t *)1;
        fault_inject(n, 0);
        int rc = ps_ops_load("tests/data/ops_small.csv", &t);
        fault_inject(0, 0);
        if (rc == PS_OK) {
            ok = 1;
            ps_ops_free(t);
        } else {
            CHECK_MSG(failed_well(rc) && t == NULL, "allocation %d: rc %d", n, rc);
        }
    }
    printf("  ops load: allocations 1..%d failed cleanly, then it loads\n", n - 2);
    CHECK(ok && n > 3);
    ps_ops_t *t = NULL;
    CHECK_OK(ps_ops_load("tests/data/ops_small.csv", &t));
    remove(OUT);
    for (n = 1, ok = 0; n < 500 && !ok && t; n++) {
        fault_inject(n, 0);
        int rc = ps_ops_save(t, OUT);
        fault_inject(0, 0);
        if (rc == PS_OK)
            ok = 1;
        else
            CHECK_MSG(failed_well(rc) && no_output(), "save, allocation %d: rc %d", n, rc);
    }
    CHECK(ok);
    remove(OUT);
    fault_inject(0, 1);
    CHECK(ps_ops_save(t, OUT) == PS_E_IO && strstr(ps_last_error(), "write failed") && no_output());
    fault_inject(0, 0);
    ps_ops_free(t);
}

static void test_model_train_save_load(void)
{
    ps_sim_params_t sp = ps_sim_default_params();
    sp.experiments = 8;
    sp.runs = 2;
    sp.threads = 1;
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    CHECK_OK(ps_sim_run(&sp, &ops, &cx));
    ps_train_params_t p = ps_train_default_params();
    p.nthread = 1;
    p.max_rounds = 3;
    p.n_depths = 1;
    p.n_etas = 1;
    ps_model_t *m = NULL;
    int ok = 0, tried = 0;
    /* Every allocation up to 64, then every 7th: a train makes thousands. */
    for (int n = 1; n < 20000 && !ok && ops; n += n < 64 ? 1 : 7, tried++) {
        m = (ps_model_t *)1;
        fault_inject(n, 0);
        int rc = ps_model_train(ops, cx, &p, &m);
        fault_inject(0, 0);
        if (rc == PS_OK)
            ok = 1;
        else
            CHECK_MSG(failed_well(rc) && m == NULL, "train, allocation %d: rc %d: %s", n, rc, ps_last_error());
    }
    printf("  train: %d failing allocations tried\n", tried);
    CHECK(ok);
    remove(OUT);
    fault_inject(0, 1);
    CHECK(m && ps_model_save(m, OUT) == PS_E_IO && no_output());
    fault_inject(0, 0);
    CHECK_OK(ps_model_save(m, OUT));
    for (int n = 1, done = 0; n < 5000 && !done; n++) {
        ps_model_t *back = (ps_model_t *)1;
        fault_inject(n, 0);
        int rc = ps_model_load(OUT, &back);
        fault_inject(0, 0);
        if (rc == PS_OK) {
            done = 1;
            ps_model_free(back);
        } else {
            CHECK_MSG(failed_well(rc) && back == NULL, "load, allocation %d: rc %d", n, rc);
        }
    }
    remove(OUT);
    ps_model_free(m);
    ps_ops_free(ops);
    ps_coexec_free(cx);
}

TH_MAIN(TEST(test_table_load_and_save), TEST(test_model_train_save_load))
