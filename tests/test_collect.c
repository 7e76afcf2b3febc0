/* Host logic of the collector: operator lists, planning, the campaign store,
 * and a campaign killed with SIGKILL mid-way that resumes with no lost or
 * duplicated row (fake backend: a deterministic simulated GPU). */
#include "collect/backend.h"
#include "profile/oplist.h"
#include "collect/plan.h"
#include "collect/store.h"
#include "common/common.h"

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testhelp.h" /* after sqlite3.h: th_query_long */

static char tmpdir[64];

static const char *tmp(const char *name) { return th_path(tmpdir, name); }

/* Parameters of a model from its operator list: weights of convolutions and
 * GEMMs, two per normalised channel, and the classifier's bias. */
static long long cnn_params(const psi_oplist_t *l)
{
    long long n = 1000; /* fc bias */
    for (int i = 0; i < l->n; i++) {
        long long in, w, out;
        psi_op_tensor_elems(&l->ops[i], &in, &w, &out);
        if (l->ops[i].kind == PS_OPK_CONV || l->ops[i].kind == PS_OPK_GEMM || l->ops[i].kind == PS_OPK_NORM)
            n += w;
    }
    return n;
}

static int count_kind(const psi_oplist_t *l, psi_opkind_t k)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += l->ops[i].kind == k;
    return n;
}

/* The operator lists reproduce the published parameter counts exactly
 * (torchvision: ResNet-50 25,557,032; ResNet-101 44,549,160; MobileNetV2
 * 3,504,872), which checks every channel count and stride of the lists. */
static void test_zoo_cnn_shapes(void)
{
    psi_oplist_t *l = NULL;
    CHECK_OK(psi_zoo_build("resnet50", 1, 0, &l));
    CHECK(l && l->n == 174);
    CHECK(l && count_kind(l, PS_OPK_CONV) == 53);
    CHECK(l && cnn_params(l) == 25557032);
    /* 4.1 GMAC per image (He et al.): 8.2 GFLOP in the convolutions and fc. */
    double f = 0;
    for (int i = 0; l && i < l->n; i++)
        if (l->ops[i].kind == PS_OPK_CONV || l->ops[i].kind == PS_OPK_GEMM)
            f += psi_op_flops(&l->ops[i]);
    CHECK_MSG(f > 8.0e9 && f < 8.4e9, "resnet50 flops %g", f);
    psi_oplist_free(l);

    CHECK_OK(psi_zoo_build("resnet101", 2, 0, &l));
    CHECK(l && l->n == 344);
    psi_oplist_free(l);
    CHECK_OK(psi_zoo_build("resnet101", 1, 0, &l));
    CHECK(l && cnn_params(l) == 44549160);
    psi_oplist_free(l);

    CHECK_OK(psi_zoo_build("mobilenetv2", 1, 0, &l));
    CHECK(l && l->n == 151);
    CHECK(l && cnn_params(l) == 3504872);
    psi_oplist_free(l);
}

/* Transformers: Llama-3.2-1B has 1.236 B parameters of which 128256 x 2048
 * are the (tied) embedding; the GEMM weights of its 16 layers are the rest
 * but the norms: 973,078,528. */
static void test_zoo_transformer_shapes(void)
{
    psi_oplist_t *l = NULL;
    CHECK_OK(psi_zoo_build("llama-3.2-1b", 1, 128, &l));
    CHECK(l && l->n == 1 + 16 * 15 + 2);
    long long w = 0;
    for (int i = 0; l && i < l->n; i++)
        if (l->ops[i].kind == PS_OPK_GEMM && strcmp(l->ops[i].name, "lm_head") != 0)
            w += l->ops[i].p[PG_K] * l->ops[i].p[PG_N];
    CHECK_MSG(w == 973078528LL, "llama-1b layer weights %lld", w);
    psi_oplist_free(l);

    CHECK_OK(psi_zoo_build("llama-3.2-3b", 2, 64, &l));
    CHECK(l && l->n == 1 + 28 * 15 + 2 && l->seq_len == 64);
    /* 24 query heads of 128 over 8 KV heads. */
    CHECK(l && l->ops[7].kind == PS_OPK_ATTN && l->ops[7].p[PA_HEADS] == 24 && l->ops[7].p[PA_KV_HEADS] == 8 &&
          l->ops[7].p[PA_HEAD_DIM] == 128);
    psi_oplist_free(l);

    /* BERT-base: 12 x (4 x 768^2 + 2 x 768 x 3072) weights in its layers. */
    CHECK_OK(psi_zoo_build("bert-base", 8, 128, &l));
    CHECK(l && l->n == 6 + 12 * 16 + 2);
    w = 0;
    for (int i = 0; l && i < l->n; i++)
        if (l->ops[i].kind == PS_OPK_GEMM && l->ops[i].p[PG_BATCH] == 1 && strncmp(l->ops[i].name, "layer", 5) == 0)
            w += l->ops[i].p[PG_K] * l->ops[i].p[PG_N];
    CHECK(w == 12LL * (4 * 768 * 768 + 2 * 768 * 3072));
    CHECK(l && l->ops[9].p[PG_BATCH] == 8 * 12); /* attention scores bmm */
    psi_oplist_free(l);

    CHECK(psi_zoo_build("gpt-5", 1, 0, &l) == PS_E_ARG && l == NULL);
    CHECK(strstr(ps_last_error(), "gpt-5") != NULL);
    CHECK(psi_zoo_build("bert-base", 1, 1024, &l) == PS_E_ARG);
    CHECK(psi_zoo_build("resnet50", 0, 0, &l) == PS_E_ARG);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_oplist_text_roundtrip(void)
{
    psi_oplist_t *l = NULL, *r = NULL;
    CHECK_OK(psi_zoo_build("mobilenetv2", 4, 0, &l));
    FILE *f = fopen(tmp("m.ops"), "w");
    CHECK(f && psi_oplist_write(l, f) == 0);
    if (f)
        fclose(f);
    CHECK_OK(psi_oplist_read(tmp("m.ops"), &r));
    CHECK(r && l && r->n == l->n && r->batch == 4 && strcmp(r->model, "mobilenetv2") == 0);
    int same = r && l;
    for (int i = 0; same && i < l->n; i++)
        same = l->ops[i].kind == r->ops[i].kind && l->ops[i].variant == r->ops[i].variant &&
               memcmp(l->ops[i].p, r->ops[i].p, sizeof l->ops[i].p) == 0 && strcmp(l->ops[i].name, r->ops[i].name) == 0;
    CHECK(same);
    psi_oplist_free(l);
    psi_oplist_free(r);
}

static void test_oplist_errors_name_line_and_column(void)
{
    psi_oplist_t *l = NULL;
    write_file(tmp("bad1.ops"), "# pairsight oplist 1\ngemm fc m=8 n=1000 k=2048\nconvv c1 n=1\n");
    CHECK(psi_oplist_read(tmp("bad1.ops"), &l) == PS_E_INPUT && l == NULL);
    CHECK_MSG(strstr(ps_last_error(), "bad1.ops:3:1: unknown operator kind 'convv'"), "%s", ps_last_error());
    write_file(tmp("bad2.ops"), "gemm fc m=8 n=x k=2048\n");
    CHECK(psi_oplist_read(tmp("bad2.ops"), &l) == PS_E_INPUT);
    CHECK_MSG(strstr(ps_last_error(), "bad2.ops:1:15: n: not a valid count"), "%s", ps_last_error());
    write_file(tmp("bad3.ops"), "norm n1 variant=group n=1\n");
    CHECK(psi_oplist_read(tmp("bad3.ops"), &l) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "no variant 'group'") != NULL);
    write_file(tmp("bad4.ops"), "pool p1 kernel=3\n");
    CHECK(psi_oplist_read(tmp("bad4.ops"), &l) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "bad4.ops:1:9: pool has no parameter 'kernel'") != NULL);
    write_file(tmp("bad5.ops"), "# only comments\n");
    CHECK(psi_oplist_read(tmp("bad5.ops"), &l) == PS_E_INPUT);
    CHECK(psi_oplist_read(tmp("absent.ops"), &l) == PS_E_IO);
    write_file(tmp("bad6.ops"), "gemm m=1\n");
    CHECK(psi_oplist_read(tmp("bad6.ops"), &l) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "missing operator name") != NULL);
}

/* Issue 41 item 10: every size product checked in 64 bits against 2^40
 * elements at FILE:LINE:COLUMN, the header's batch and ops= checked, one
 * header per list. Each case was accepted (or overflowed) before. */
static void test_oplist_bounds_and_header(void)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        /* 2^21 * 2^21 * 2^21: 2^63 wraps to a negative product */
        {"gemm g m=2097152 n=2097152 k=2097152\n", "o.ops:1:1: gemm g: its input batch*m*k passes 2^40"},
        {"eltwise e elems=4000000000000 inputs=1\n", "o.ops:1:17: elems: not a valid count in 1..2^40"},
        {"conv c n=65536 c=65536 h=65536 w=65536\n", "o.ops:1:1: conv c: its input n*c*h*w passes 2^40"},
        {"conv c n=1 c=3 h=8 w=8 k=4 groups=2\n", "o.ops:1:1: conv c: groups=2 does not divide c=3"},
        {"conv c n=1 c=1 h=1 w=1 k=1 r=1 s=1 pad=900000000000 stride=1\nnorm n\n",
         "conv c: its output n*k*out_h*out_w passes 2^40"},
        {"attn a batch=1048576 heads=1048576 seq_q=1048576\n", "o.ops:1:1: attn a: its query"},
        {"  embed t vocab=1099511627776 dim=2\n", "o.ops:1:3: embed t: its table vocab*dim passes 2^40"},
        {"pool p n=1099511627776 c=2\n", "pool p: its input n*c*h*w passes 2^40"},
        {"softmax s rows=-1\n", "o.ops:1:16: rows: not a valid count"},
        {"# model=m batch=99999999999 seq_len=0\ngemm g\n", "o.ops:1:17: batch: not a count in 1..1073741824"},
        {"# model=m batch=0 seq_len=0\ngemm g\n", "batch: not a count in 1.."},
        {"# model=m batch=8 seq_len=0 ops=3\ngemm g\ngemm h\n", "o.ops:1: the header says ops=3, the list has 2"},
        {"# model=m batch=8 seq_len=0 ops=1\ngemm g\n# model=x batch=64 seq_len=0\n",
         "o.ops:3:3: a second header (the list's is on line 1)"},
        {"# model=m batch=8\ngemm g\n", "o.ops:1:1: the header needs model=, batch= and seq_len="},
    };
    for (size_t i = 0; i < PS_ARRAY_LEN(bad); i++) {
        psi_oplist_t *l = NULL;
        write_file(tmp("o.ops"), bad[i].text);
        int rc = psi_oplist_read(tmp("o.ops"), &l);
        CHECK_MSG(rc == PS_E_INPUT && l == NULL && strstr(ps_last_error(), bad[i].want), "case %zu: rc %d: %s", i, rc,
                  ps_last_error());
        psi_oplist_free(l);
    }
    /* At the bound, and an ordinary comment after the header, still read. */
    psi_oplist_t *l = NULL;
    write_file(tmp("o.ops"), "# pairsight oplist 1\n# model=m batch=1073741824 seq_len=0 ops=2 extra=1\n"
                             "# captured by hand: dtype=fp16\neltwise e elems=1099511627776 inputs=1\n"
                             "gemm g m=1048576 n=1 k=1048576\n");
    CHECK_OK(psi_oplist_read(tmp("o.ops"), &l));
    CHECK(l && l->n == 2 && l->batch == 1 << 30 && strcmp(l->model, "m") == 0);
    CHECK(l && psi_op_bytes(&l->ops[0]) == 2.0 * 2.0 * 1099511627776.0);
    psi_oplist_free(l);
}

static ps_collect_device_t device(int sms, int min, int align)
{
    ps_collect_device_t d;
    memset(&d, 0, sizeof d);
    snprintf(d.gpu, sizeof d.gpu, "TEST");
    d.sm_count = sms;
    d.tpc_count = sms / 2;
    d.min_partition_sms = min;
    d.sm_alignment = align;
    return d;
}

static void test_plan_tpcs_and_splits(void)
{
    /* Hopper: at least 8 SMs, in multiples of 8; an H200 has 132 SMs, and
     * one side may also have all 66 TPCs (no partition). */
    ps_collect_device_t h = device(132, 8, 8);
    int v[128];
    int n = ps_collect_valid_tpcs(&h, v, 128);
    CHECK(n == 17 && v[0] == 4 && v[1] == 8 && v[15] == 64 && v[16] == 66);
    CHECK(psi_plan_check_tpcs(&h, (const int[]){66}, 1) == 0);
    CHECK(psi_plan_check_tpcs(&h, (const int[]){65}, 1) == PS_E_ARG);
    CHECK(psi_plan_check_tpcs(&h, (const int[]){4, 16}, 2) == 0);
    CHECK(psi_plan_check_tpcs(&h, (const int[]){4, 6}, 2) == PS_E_ARG);
    CHECK(strstr(ps_last_error(), "6 TPCs (12 SMs)") != NULL);
    CHECK(psi_plan_check_tpcs(&h, (const int[]){70}, 1) == PS_E_ARG);
    /* Ampere: at least 4 SMs in multiples of 2: every TPC count from 2. */
    ps_collect_device_t a = device(108, 4, 2);
    n = ps_collect_valid_tpcs(&a, v, 128);
    CHECK(n == 53 && v[0] == 2 && v[52] == 54);
    int hp[8], lp[8];
    n = psi_plan_splits(&a, (const int[]){10, 24, 30, 44}, 4, hp, lp, 8);
    /* 10 -> 44, 24 -> 30, 30 -> 24, 44 -> 10 */
    CHECK(n == 4 && hp[0] == 10 && lp[0] == 44 && hp[1] == 24 && lp[1] == 30 && lp[3] == 10);
    n = psi_plan_splits(&a, (const int[]){30, 40}, 2, hp, lp, 8);
    CHECK(n == 0);
}

static void test_plan_coexec_deterministic(void)
{
    ps_collect_device_t a = device(108, 4, 2);
    ps_coexec_plan_t p = ps_coexec_default_plan();
    p.hp_model = "resnet50";
    p.hp_batch = 8;
    p.lp_model = "bert-base";
    p.lp_batch = 8;
    p.experiments = 200;
    p.tpcs = (const int[]){8, 16, 27, 38, 46};
    p.n_tpcs = 5;
    psi_experiment_t *e1 = NULL, *e2 = NULL;
    int n1 = 0, n2 = 0;
    CHECK_OK(psi_plan_coexec(&p, &a, 174, 200, &e1, &n1));
    CHECK_OK(psi_plan_coexec(&p, &a, 174, 200, &e2, &n2));
    CHECK(n1 == 200 && n2 == 200 && e1 && e2 && memcmp(e1, e2, 200 * sizeof *e1) == 0);
    int ok = 1, seen_len1 = 0, seen_len16 = 0;
    for (int i = 0; e1 && i < n1; i++) {
        ok &= e1[i].hp_len >= 1 && e1[i].hp_len <= 16 && e1[i].lp_len >= 1 && e1[i].lp_len <= 16;
        ok &= e1[i].hp_start >= 0 && e1[i].hp_start + e1[i].hp_len <= 174;
        ok &= e1[i].lp_start >= 0 && e1[i].lp_start + e1[i].lp_len <= 200;
        ok &= e1[i].hp_tpcs + e1[i].lp_tpcs <= 54;
        seen_len1 |= e1[i].hp_len == 1;
        seen_len16 |= e1[i].hp_len == 16;
    }
    CHECK(ok && seen_len1 && seen_len16);
    CHECK(e1 && strcmp(e1[7].name, "resnet50.b8+bert-base.b8.s1.e00007") == 0);
    /* Another seed plans other experiments. */
    free(e2);
    e2 = NULL;
    p.seed = 2;
    CHECK_OK(psi_plan_coexec(&p, &a, 174, 200, &e2, &n2));
    int differ = 0;
    for (int i = 0; e1 && e2 && i < n1; i++)
        differ += e1[i].hp_start != e2[i].hp_start || e1[i].lp_start != e2[i].lp_start;
    CHECK(differ > n1 / 2);
    free(e2);
    e2 = NULL;
    p.seg_min = 5;
    p.seg_max = 3;
    CHECK(psi_plan_coexec(&p, &a, 174, 200, &e2, &n2) == PS_E_ARG && e2 == NULL);
    p.seg_min = 1;
    p.seg_max = 16;
    p.tpcs = (const int[]){40, 50};
    p.n_tpcs = 2;
    CHECK(psi_plan_coexec(&p, &a, 174, 200, &e2, &n2) == PS_E_ARG);
    free(e1);
}

static ps_collect_params_t fake_params(void)
{
    ps_collect_params_t p = ps_collect_default_params();
    p.backend = "fake";
    p.profile_runs = 5;
    p.seq_len = 32;
    return p;
}

static const int plan_tpcs[] = {6, 12, 20, 34, 42};

static ps_coexec_plan_t small_plan(void)
{
    ps_coexec_plan_t p = ps_coexec_default_plan();
    p.hp_model = "resnet50";
    p.hp_batch = 2;
    p.lp_model = "bert-base";
    p.lp_batch = 2;
    p.experiments = 60;
    p.runs = 4;
    p.tpcs = plan_tpcs;
    p.n_tpcs = 5;
    p.seed = 7;
    return p;
}

static const int prof_tpcs[] = {6, 12, 20, 34, 42, 48};

/* The whole campaign of the kill test: profiles of both sides, counters,
 * co-executions. */
static int run_campaign(const char *db, unsigned delay_us)
{
    ps_collect_params_t p = fake_params();
    p.fake_delay_us = delay_us;
    ps_campaign_t *c = NULL;
    int rc = ps_campaign_open(db, &p, &c);
    if (rc == 0)
        rc = ps_campaign_profile(c, "resnet50", 2, prof_tpcs, 6, NULL, NULL);
    if (rc == 0)
        rc = ps_campaign_profile(c, "bert-base", 2, prof_tpcs, 6, NULL, NULL);
    if (rc == 0)
        rc = ps_campaign_counters(c, "resnet50", 2);
    if (rc == 0) {
        ps_coexec_plan_t plan = small_plan();
        rc = ps_campaign_coexec(c, &plan, NULL, NULL);
    }
    ps_campaign_free(c);
    return rc;
}

/* Every row of a table, as one string (for comparing two databases). */
static char *dump(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    size_t cap = 1 << 16, n = 0;
    char *out = calloc(1, cap);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return out;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            const char *t = (const char *)sqlite3_column_text(st, i);
            size_t len = strlen(t ? t : "NULL") + 2;
            if (n + len + 1 > cap) {
                cap = 2 * (n + len + 1);
                out = realloc(out, cap);
            }
            n += (size_t)sprintf(out + n, "%s%c", t ? t : "NULL", i + 1 < sqlite3_column_count(st) ? ',' : '\n');
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

static void test_campaign_killed_and_resumed(void)
{
    const char *ref = tmp("ref.db"), *killed = tmp("killed.db");
    CHECK_OK(run_campaign(ref, 0));
    const long runs = 4, experiments = 60;
    long ops_rows = 6 * (174 + 200);

    pid_t pid = fork();
    if (pid == 0)
        _exit(run_campaign(killed, 5000) == 0 ? 0 : 1);
    CHECK(pid > 0);
    /* Let it get well into the co-executions, then kill it without warning. */
    sqlite3 *db = NULL;
    long rows = 0;
    double t0 = psi_now();
    while (psi_now() - t0 < 20) {
        if (!db && access(killed, F_OK) == 0)
            sqlite3_open_v2(killed, &db, SQLITE_OPEN_READONLY, NULL);
        if (db) {
            sqlite3_busy_timeout(db, 1000);
            rows = th_query_long(db, "SELECT COUNT(*) FROM coexec");
            if (rows >= 15 * runs)
                break;
        }
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    /* The dead campaign left whole tasks only, and not all of them. */
    if (db) {
        rows = th_query_long(db, "SELECT COUNT(*) FROM coexec");
        CHECK_MSG(rows >= 15 * runs && rows < experiments * runs, "killed at %ld rows", rows);
        CHECK(rows % runs == 0);
        CHECK(th_query_long(db, "SELECT COUNT(*) FROM (SELECT experiment FROM coexec GROUP BY "
                                "experiment HAVING COUNT(*) != 4)") == 0);
        CHECK(th_query_long(db, "SELECT COUNT(*) FROM tasks WHERE kind='coexec' AND done=1") == rows / runs);
        CHECK(th_query_long(db, "SELECT COUNT(*) FROM ops") == ops_rows);
        sqlite3_close(db);
    }

    /* Resume: the same call finishes the campaign. */
    CHECK_OK(run_campaign(killed, 0));
    ps_campaign_t *c = NULL;
    ps_campaign_status_t s;
    CHECK_OK(ps_campaign_open(killed, NULL, &c));
    CHECK_OK(ps_campaign_status(c, &s));
    CHECK(s.op_rows == ops_rows && s.coexec_rows == experiments * runs && s.counter_rows == 174);
    CHECK(s.tasks_total == 6 + 6 + 1 + experiments && s.tasks_done == s.tasks_total);
    CHECK(strcmp(s.gpu, "FAKE-GPU") == 0 && s.seq_len == 32);
    ps_campaign_free(c);

    /* Row for row what the uninterrupted campaign measured. */
    static const char *const q[] = {
        "SELECT * FROM ops ORDER BY gpu, model, batch, op, tpcs",
        "SELECT * FROM coexec ORDER BY experiment, run",
        "SELECT * FROM counters ORDER BY op",
        "SELECT key, spec, done FROM tasks ORDER BY key",
    };
    for (size_t i = 0; i < PS_ARRAY_LEN(q); i++) {
        char *a = dump(ref, q[i]), *b = dump(killed, q[i]);
        CHECK_MSG(strlen(a) > 100 && strcmp(a, b) == 0, "%s differs", q[i]);
        free(a);
        free(b);
    }
    /* A third run finds nothing to do and adds nothing. */
    CHECK_OK(run_campaign(killed, 0));
    char *a = dump(ref, q[1]), *b = dump(killed, q[1]);
    CHECK(strcmp(a, b) == 0);
    free(a);
    free(b);
}

static void test_campaign_refuses_mismatches(void)
{
    const char *db = tmp("mismatch.db");
    ps_collect_params_t p = fake_params();
    ps_campaign_t *c = NULL;
    CHECK_OK(ps_campaign_open(db, &p, &c));
    ps_coexec_plan_t plan = small_plan();
    plan.experiments = 3;
    CHECK_OK(ps_campaign_coexec(c, &plan, NULL, NULL));
    /* Same names, other segments: refused, nothing written. */
    plan.seg_max = 4;
    CHECK(ps_campaign_coexec(c, &plan, NULL, NULL) == PS_E_MISMATCH);
    CHECK(strstr(ps_last_error(), "another seed") != NULL);
    /* Invalid TPC counts for the device. */
    CHECK(ps_campaign_profile(c, "resnet50", 1, (const int[]){60}, 1, NULL, NULL) == PS_E_ARG);
    CHECK(ps_campaign_profile(c, "nosuchnet", 1, NULL, 0, NULL, NULL) == PS_E_ARG);
    ps_campaign_free(c);

    /* Another sequence length in the same database. */
    p.seq_len = 64;
    CHECK(ps_campaign_open(db, &p, &c) == PS_E_MISMATCH && c == NULL);
    CHECK(strstr(ps_last_error(), "seq_len 32, not 64") != NULL);
    /* Another GPU. */
    sqlite3 *raw = NULL;
    CHECK(sqlite3_open(db, &raw) == SQLITE_OK);
    CHECK(sqlite3_exec(raw, "UPDATE meta SET value='H200' WHERE key='gpu'", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(raw);
    p.seq_len = 32;
    CHECK(ps_campaign_open(db, &p, &c) == PS_E_MISMATCH);
    CHECK(strstr(ps_last_error(), "GPU H200, not FAKE-GPU") != NULL);
    /* Without a device: status works, measuring does not. */
    CHECK_OK(ps_campaign_open(db, NULL, &c));
    CHECK(ps_campaign_profile(c, "resnet50", 1, NULL, 0, NULL, NULL) == PS_E_ARG);
    ps_campaign_free(c);
    /* Not a database at all. */
    write_file(tmp("junk.db"), "this is not sqlite, it is a text file long enough to fail\n");
    CHECK(ps_campaign_open(tmp("junk.db"), NULL, &c) != 0 && c == NULL);
    p.backend = "quantum";
    CHECK(ps_campaign_open(db, &p, &c) == PS_E_ARG);
}

/* Export goes through the table writers: what it writes loads back, with
 * counters on each operator's row with the most TPCs only. */
static void test_export_tables(void)
{
    const char *db = tmp("export.db");
    ps_collect_params_t p = fake_params();
    ps_campaign_t *c = NULL;
    CHECK_OK(ps_campaign_open(db, &p, &c));
    /* Nothing measured yet: refused rather than an empty file. */
    CHECK(ps_campaign_export(c, tmp("empty.csv"), NULL) == PS_E_INPUT);
    CHECK(access(tmp("empty.csv"), F_OK) != 0);
    static const int t[] = {8, 20, 54};
    CHECK_OK(ps_campaign_profile(c, "mobilenetv2", 1, t, 3, NULL, NULL));
    CHECK_OK(ps_campaign_profile(c, "llama-3.2-1b", 1, t, 3, NULL, NULL));
    CHECK_OK(ps_campaign_counters(c, "mobilenetv2", 1));
    ps_coexec_plan_t plan = ps_coexec_default_plan();
    plan.hp_model = "mobilenetv2";
    plan.hp_batch = 1;
    plan.lp_model = "llama-3.2-1b";
    plan.lp_batch = 1;
    plan.experiments = 6;
    plan.runs = 3;
    plan.tpcs = t;
    plan.n_tpcs = 2; /* 8 and 20: LP gets 20 beside 8 and beside 20 */
    CHECK_OK(ps_campaign_coexec(c, &plan, NULL, NULL));
    CHECK(ps_campaign_coexec(c, &plan, NULL, NULL) == 0); /* nothing left to do */
    CHECK_OK(ps_campaign_export(c, tmp("ops.csv"), tmp("coexec.csv")));
    ps_campaign_free(c);

    ps_ops_t *ops = NULL;
    ps_coexec_t *co = NULL;
    CHECK_OK(ps_ops_load(tmp("ops.csv"), &ops));
    CHECK_OK(ps_coexec_load(tmp("coexec.csv"), &co));
    CHECK(ops && ps_ops_rows(ops) == 3 * (151 + 243));
    CHECK(co && ps_coexec_rows(co) == 18);
    const psi_op_group_t *g = ops ? psi_ops_find(ops, "FAKE-GPU", "mobilenetv2", 1) : NULL;
    CHECK(g && g->n_ops == 151 && g->n_tpcs == 3 && g->tpcs[2] == 54);
    /* Counters (fake roofline: dram_bytes = the op's estimated bytes) on the
     * 54-TPC row only, and the intensity they imply on every row. */
    int on_max = 0, elsewhere = 0, classified = 0;
    for (size_t i = 0; ops && i < ops->n; i++) {
        const psi_op_row_t *r = &ops->rows[i];
        if (strcmp(r->model, "mobilenetv2") != 0)
            continue;
        if (!isnan(r->c.dram_bytes))
            *(r->tpcs == 54 ? &on_max : &elsewhere) += 1;
        classified += r->intensity == PS_INTENSITY_COMPUTE || r->intensity == PS_INTENSITY_MEMORY;
    }
    CHECK_MSG(on_max == 151 && elsewhere == 0, "%d on max, %d elsewhere", on_max, elsewhere);
    CHECK(classified == 3 * 151);
    for (size_t i = 0; co && i < co->n; i++) {
        const psi_coexec_row_t *r = &co->rows[i];
        CHECK(r->hp_tpcs + r->lp_tpcs <= 54 && r->lp_tpcs == 20);
        CHECK(r->mechanism && strcmp(r->mechanism, "sim") == 0);
        CHECK(r->hp_ns > 0 && r->lp_ns > 0);
    }
    /* Every coexec segment lies inside its model's profile. */
    if (ops && co && co->n) {
        const psi_coexec_row_t *r = &co->rows[0];
        const psi_op_group_t *hg = psi_ops_find(ops, r->gpu, r->hp_model, r->hp_batch);
        CHECK(hg && !isnan(psi_group_segment_ns(hg, r->hp_start, r->hp_len, r->hp_tpcs)));
    }
    ps_check_result_t cr;
    CHECK_OK(ps_table_check(tmp("coexec.csv"), &cr));
    CHECK(cr.kind == PS_TABLE_COEXEC && cr.rows == 18);
    ps_ops_free(ops);
    ps_coexec_free(co);
}

/* Workload-level jobs run in processes of their own; on the fake backend a
 * larger MPS share gives more throughput, never less. */
static void test_mps_jobs(void)
{
    ps_collect_params_t p = fake_params();
    double t[3] = {0, 0, 0};
    char gpu[64] = "";
    const ps_mps_job_t jobs[3] = {{"mobilenetv2", 4, 20}, {"mobilenetv2", 4, 60}, {"bert-base", 2, 100}};
    CHECK_OK(ps_collect_mps_run(&p, jobs, 3, 0.01, t, gpu, sizeof gpu));
    CHECK(strcmp(gpu, "FAKE-GPU") == 0);
    CHECK_MSG(t[0] > 0 && t[1] > t[0] && t[2] > 0, "%g %g %g", t[0], t[1], t[2]);
    /* A failing job reports its error and holds no one back. */
    const ps_mps_job_t bad[2] = {{"mobilenetv2", 4, 50}, {"nosuchnet", 1, 50}};
    CHECK(ps_collect_mps_run(&p, bad, 2, 0.01, t, NULL, 0) == PS_E_BACKEND);
    CHECK_MSG(strstr(ps_last_error(), "nosuchnet at 50%: zoo: unknown model") != NULL, "%s", ps_last_error());
    const ps_mps_job_t zero[1] = {{"mobilenetv2", 4, 0}};
    CHECK(ps_collect_mps_run(&p, zero, 1, 0.01, t, NULL, 0) == PS_E_ARG);
    CHECK(ps_collect_mps_run(&p, jobs, 0, 0.01, t, NULL, 0) == PS_E_ARG);
}

/* A report in the form of `ncu --csv --page raw` with one launch per
 * operator, op i moving (i + 1) MB of DRAM. */
static void write_ncu(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fputs("\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
          "\"dram__bytes.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
          "\"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed\",\"gpu__time_duration.sum\"\n"
          "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"byte\",\"%\",\"%\",\"nsecond\"\n",
          f);
    for (int i = 0; i < n; i++)
        fprintf(f, "\"%d\",\"1\",\"python\",\"h\",\"k%d\",\"1\",\"7\",\"%d\",\"%d\",\"%d\",\"1000\"\n", i, i,
                (i + 1) * 1000000, i % 2 ? 80 : 20, i % 2 ? 30 : 70);
    fclose(f);
}

static void test_counters_from_ncu(void)
{
    const char *db = tmp("ncu.db");
    ps_collect_params_t p = fake_params();
    ps_campaign_t *c = NULL;
    CHECK_OK(ps_campaign_open(db, NULL, &c));
    write_ncu(tmp("ncu.csv"), 151);
    CHECK(ps_campaign_import_counters(c, "mobilenetv2", 1, tmp("ncu.csv")) == PS_E_ARG); /* no GPU yet */
    ps_campaign_free(c);
    static const int t[] = {10, 30};
    CHECK_OK(ps_campaign_open(db, &p, &c));
    CHECK_OK(ps_campaign_profile(c, "mobilenetv2", 1, t, 2, NULL, NULL));
    ps_campaign_free(c);
    CHECK_OK(ps_campaign_open(db, NULL, &c));
    write_ncu(tmp("ncu150.csv"), 150);
    CHECK(ps_campaign_import_counters(c, "mobilenetv2", 1, tmp("ncu150.csv")) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "150 kernel launches for the 151 operators") != NULL);
    CHECK_OK(ps_campaign_import_counters(c, "mobilenetv2", 1, tmp("ncu.csv")));
    CHECK(ps_campaign_import_counters(c, "mobilenetv2", 1, tmp("ncu.csv")) == PS_E_MISMATCH);
    CHECK_OK(ps_campaign_export(c, tmp("ncu_ops.csv"), NULL));
    ps_campaign_free(c);
    ps_ops_t *ops = NULL;
    CHECK_OK(ps_ops_load(tmp("ncu_ops.csv"), &ops));
    int ok = ops != NULL;
    for (size_t i = 0; ops && i < ops->n; i++) {
        const psi_op_row_t *r = &ops->rows[i];
        if (r->tpcs == 30)
            ok &= r->c.dram_bytes == (r->op + 1) * 1e6 &&
                  r->intensity == (r->op % 2 ? PS_INTENSITY_COMPUTE : PS_INTENSITY_MEMORY);
        else
            ok &= isnan(r->c.dram_bytes);
    }
    CHECK(ok);
    ps_ops_free(ops);
}

static void test_gpu_column_name(void)
{
    char b[64];
    psi_gpu_column_name("NVIDIA A100-SXM4-40GB", b, sizeof b);
    CHECK(strcmp(b, "A100-SXM4-40GB") == 0);
    psi_gpu_column_name("NVIDIA H200", b, sizeof b);
    CHECK(strcmp(b, "H200") == 0);
    psi_gpu_column_name("Tesla V100 SXM2 32GB", b, sizeof b);
    CHECK(strcmp(b, "V100-SXM2-32GB") == 0); /* the catalog's, once cleaned */
    psi_gpu_column_name("NVIDIA H100 80GB HBM3", b, sizeof b);
    CHECK(strcmp(b, "H100-SXM") == 0); /* tests/test_gpu_names.c: the whole table */
}

/* Whether a mapping of the process names a file containing needle. */
static int mapped(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

/* In a child of test_cuda_module_loaded_on_demand. */
static void module_beside_exe(void)
{
    ps_collect_params_t p = ps_collect_default_params();
    psi_backend_t *b = NULL;
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 64);
    CHECK(n > 0);
    if (n <= 0)
        return;
    exe[n] = '\0';
    snprintf(strrchr(exe, '/'), 64, "/libpairsight_cuda.so");
    int built = access(exe, F_OK) == 0;
    int rc = psi_backend_open(&p, &b);
    printf("  module %s: %s\n", built ? "built" : "not built", rc ? ps_last_error() : "GPU opened");
    if (!built) {
        CHECK(rc == PS_E_BACKEND && strstr(ps_last_error(), "no CUDA module"));
        CHECK(mapped("libcublas") == 0);
        return;
    }
    /* Without a GPU the module loads and the runtime says there is none. */
    CHECK_MSG(rc == 0 || (rc == PS_E_BACKEND && !strstr(ps_last_error(), "module")), "%s", ps_last_error());
    CHECK(mapped("libpairsight_cuda") == 1 && mapped("libcublas") == 1 && mapped("libcudnn") == 1);
    if (rc == 0) {
        CHECK(strcmp(b->name, "cuda") == 0 && b->dev.sm_count > 0);
        b->free(b);
    }
}

/* The host code loads no CUDA library: only opening the "cuda" backend loads
 * the module, found through PAIRSIGHT_CUDA_MODULE or beside the executable,
 * and with it cuBLAS, cuDNN and CUPTI. */
static void test_cuda_module_loaded_on_demand(void)
{
    static const char *const cuda_libs[] = {"libcublas", "libcudnn", "libcupti", "libcudart", "libpairsight_cuda"};
    for (size_t i = 0; i < PS_ARRAY_LEN(cuda_libs); i++)
        CHECK_MSG(mapped(cuda_libs[i]) == 0, "%s loaded before the cuda backend was asked for", cuda_libs[i]);
    ps_collect_params_t p = ps_collect_default_params();
    psi_backend_t *b = NULL;
    /* A module named by the environment that is not there: nothing else is
     * tried, and the message names the path and the variable. */
    const char *nowhere = tmp("nowhere/libpairsight_cuda.so");
    CHECK(setenv("PAIRSIGHT_CUDA_MODULE", nowhere, 1) == 0);
    CHECK(psi_backend_open(&p, &b) == PS_E_BACKEND && !b);
    CHECK_MSG(strstr(ps_last_error(), nowhere) && strstr(ps_last_error(), "PAIRSIGHT_CUDA_MODULE"), "%s",
              ps_last_error());
    /* A file that does not load: the loader's reason is in the message. */
    const char *junk = tmp("junk.so");
    FILE *f = fopen(junk, "w");
    CHECK(f && fputs("not an ELF file\n", f) >= 0 && fclose(f) == 0);
    CHECK(setenv("PAIRSIGHT_CUDA_MODULE", junk, 1) == 0);
    CHECK(psi_backend_open(&p, &b) == PS_E_BACKEND && !b);
    CHECK_MSG(strstr(ps_last_error(), "cannot load the CUDA module") && strstr(ps_last_error(), junk), "%s",
              ps_last_error());
    CHECK(mapped("libcublas") == 0 && mapped("libcudnn") == 0);
    CHECK(unsetenv("PAIRSIGHT_CUDA_MODULE") == 0);

    /* The module beside this test program, where the build made one, in a
     * child: the CUDA libraries it loads stay out of this process, and the
     * child's _exit skips LeakSanitizer's exit scan, which the CUDA runtime's
     * mappings can crash. */
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int failed_before = th_failed;
        module_beside_exe();
        fflush(NULL);
        _exit(th_failed > failed_before ? 1 : 0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(mapped("libcublas") == 0 && mapped("libpairsight_cuda") == 0);
}

/* The notes of a job's shards, one line each, prefixed E or I. */
static void note_into(ps_log_level_t level, const char *msg, void *user)
{
    char *buf = user;
    size_t len = strlen(buf);
    snprintf(buf + len, 4096 - len, "%c %s\n", level >= PS_LOG_WARN ? 'E' : 'I', msg);
}

/* The workflow of pairsight collect in the library: one shard per device
 * in child processes, merged, equal to the same job on one database; a
 * shard that fails is told by its message and leaves nothing merged; bad
 * jobs are refused by name; the TPC lists of the CLI. */
static void test_collect_job(void)
{
    int tp[8], n = 0;
    CHECK_OK(ps_collect_tpcs_parse("2,4-10:4,,20", tp, 8, &n));
    CHECK(n == 4 && tp[0] == 2 && tp[1] == 4 && tp[2] == 8 && tp[3] == 20);
    const char *bad[] = {"", "0", "4:2", "8-4", "4-8:0", "x", "1-9", "2147483648", "+", "4 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(ps_collect_tpcs_parse(bad[i], tp, 8, &n) == PS_E_ARG && strstr(ps_last_error(), "expected counts"),
                  "'%s'", bad[i]);
    static const int devs[] = {1, 0}, twice[] = {3, 3};
    ps_collect_job_t j = ps_collect_default_job();
    j.action = "coexec";
    j.params = fake_params();
    j.plan = small_plan();
    j.tpcs = plan_tpcs;
    j.n_tpcs = 5;
    j.db = tmp("job_one.db");
    CHECK_OK(ps_collect_job_run(&j, NULL));
    char notes[4096] = "";
    ps_collect_job_result_t r;
    j.db = tmp("job_dev.db");
    j.devices = devs;
    j.n_devices = 2;
    j.note = note_into;
    j.note_user = notes;
    CHECK_OK(ps_collect_job_run(&j, &r));
    CHECK(r.shards == 2 && r.shards_failed == 0);
    CHECK_MSG(strstr(notes, "I shard 0/2 on device 1 done (") && strstr(notes, "I shard 1/2 on device 0 done ("), "%s",
              notes);
    const char *q = "SELECT experiment, run, hp_ns, lp_ns FROM coexec ORDER BY experiment, run";
    char *a = dump(tmp("job_one.db"), q), *b = dump(tmp("job_dev.db"), q);
    CHECK(strlen(a) > 100 && strcmp(a, b) == 0);
    free(a);
    free(b);
    /* Shard 1's database is not one: its message, then its failure. */
    write_file(tmp("job_bad.db.shard1-of-2"), "not a database\n");
    notes[0] = '\0';
    j.db = tmp("job_bad.db");
    CHECK(ps_collect_job_run(&j, &r) == PS_E_BACKEND && r.shards_failed == 1);
    CHECK_MSG(strstr(ps_last_error(), "1 of 2 shards failed") && strstr(ps_last_error(), "not a campaign database"),
              "%s", ps_last_error());
    CHECK_MSG(strstr(notes, "E ") && strstr(notes, "job_bad.db.shard1-of-2: not a campaign database") &&
                  strstr(notes, "E shard 1/2 on device 0 failed (exit status 1; "),
              "%s", notes);
    CHECK(access(tmp("job_bad.db"), F_OK) != 0);
    /* Refusals by name. */
    ps_collect_job_t k = j;
    k.action = "scan";
    CHECK(ps_collect_job_run(&k, NULL) == PS_E_ARG && strstr(ps_last_error(), "action: 'scan'"));
    k = j;
    k.action = "profile";
    CHECK(ps_collect_job_run(&k, NULL) == PS_E_ARG && strstr(ps_last_error(), "profile needs a model"));
    k = j;
    k.plan.lp_model = NULL;
    CHECK(ps_collect_job_run(&k, NULL) == PS_E_ARG && strstr(ps_last_error(), "coexec needs hp and lp"));
    k = j;
    k.devices = twice;
    CHECK(ps_collect_job_run(&k, NULL) == PS_E_ARG && strstr(ps_last_error(), "devices: 3 twice"));
    k = j;
    k.params.shard_count = 2;
    CHECK(ps_collect_job_run(&k, NULL) == PS_E_ARG && strstr(ps_last_error(), "devices and a shard"));
    k = j;
    k.action = "counters";
    k.model = "resnet50";
    CHECK(ps_collect_job_run(&k, NULL) == PS_E_ARG && strstr(ps_last_error(), "devices go with profile or coexec"));
}

/* scaling and colocate in the library: rows added to the tables; the same
 * row again refused; a scaling run that stopped between its two tables
 * finished from the first with a warning through note, nothing measured. */
static void test_collect_job_mps(void)
{
    static const int shares[] = {20, 100};
    static const ps_mps_job_t jobs[] = {{"mobilenetv2", 4, 50}, {"bert-base", 2, 50}};
    char notes[4096] = "";
    ps_collect_job_result_t *r = calloc(1, sizeof *r);
    ps_collect_job_t j = ps_collect_default_job();
    j.action = "scaling";
    j.params = fake_params();
    j.model = "mobilenetv2";
    j.batch = 4;
    j.shares = shares;
    j.n_shares = 2;
    j.seconds = 0.01;
    j.scaling_path = tmp("s.csv");
    j.workloads_path = tmp("w.csv");
    j.note = note_into;
    j.note_user = notes;
    CHECK_OK(ps_collect_job_run(&j, r));
    CHECK(r->n_rows == 2 && r->exec_sms[0] < r->exec_sms[1] && r->tput[0] > 0 && strcmp(r->gpu, "FAKE-GPU") == 0);
    CHECK(strcmp(r->id, "mobilenetv2_batch4-inf") == 0);
    CHECK(ps_collect_job_run(&j, r) == PS_E_INPUT && strstr(ps_last_error(), "already has mobilenetv2_batch4-inf"));
    write_file(tmp("w.csv"), "gpu,workload,exclusive_tput\nFAKE-GPU,other_batch1-inf,5\n");
    CHECK_OK(ps_collect_job_run(&j, r));
    CHECK_MSG(r->n_rows == 0 && strstr(notes, "E collect: ") && strstr(notes, "(an interrupted run): writing"), "%s",
              notes);
    ps_workloads_t *w = NULL;
    CHECK_OK(ps_workloads_load(tmp("w.csv"), &w));
    CHECK(w && ps_workloads_rows(w) == 2);
    ps_workloads_free(w);
    ps_collect_job_t c = ps_collect_default_job();
    c.action = "colocate";
    c.params = fake_params();
    c.jobs = jobs;
    c.n_jobs = 2;
    c.seconds = 0.01;
    c.colocations_path = tmp("c.csv");
    CHECK_OK(ps_collect_job_run(&c, r));
    CHECK(r->n_rows == 2 && strcmp(r->id, "mobilenetv2_batch4-inf@50+bert-base_batch2-inf@50") == 0);
    CHECK(ps_collect_job_run(&c, r) == PS_E_INPUT && strstr(ps_last_error(), "already has co-location"));
    c.id = "mine";
    CHECK_OK(ps_collect_job_run(&c, r));
    c.n_jobs = 0;
    CHECK(ps_collect_job_run(&c, r) == PS_E_ARG && strstr(ps_last_error(), "colocate needs jobs"));
    free(r);
}

static void setup(void) { th_tmpdir_make(tmpdir, sizeof tmpdir, "ps_test_collect"); }

static void teardown(void) { th_tmpdir_remove(tmpdir); }

static void test_setup(void) { setup(); }
static void test_teardown(void) { teardown(); }

TH_MAIN(TEST(test_setup), TEST(test_zoo_cnn_shapes), TEST(test_zoo_transformer_shapes),
        TEST(test_oplist_text_roundtrip), TEST(test_oplist_errors_name_line_and_column),
        TEST(test_oplist_bounds_and_header), TEST(test_plan_tpcs_and_splits), TEST(test_plan_coexec_deterministic),
        TEST(test_gpu_column_name), TEST(test_campaign_refuses_mismatches), TEST(test_export_tables),
        TEST(test_mps_jobs), TEST(test_counters_from_ncu), TEST(test_collect_job), TEST(test_collect_job_mps),
        TEST(test_campaign_killed_and_resumed), TEST(test_cuda_module_loaded_on_demand), TEST(test_teardown))
