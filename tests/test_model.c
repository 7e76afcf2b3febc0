/*
 * The segment model on a synthetic campaign with a known slowdown rule:
 * training beats the median-slowdown-per-split rule, save/load/predict is
 * bit-identical, continued training lowers the error on an unseen model,
 * window composition (index and time-aligned), explanation and errors.
 */
#include "common/common.h"
#include "model/model.h"
#include "testhelp.h"
#include "test_model_lib.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include <zlib.h>

/* Whole files as bytes, and the sections of a model file (model.c): a
 * 4-byte tag, a u64 length, the CRC-32 of tag, length and payload. */
static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
}

static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    *n = b ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    return b;
}

static uint64_t le64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static void fix_crc(unsigned char *buf, size_t sec)
{
    uLong c = crc32(crc32(0L, buf + sec, 4), buf + sec + 4, 8);
    c = crc32(c, buf + sec + 16, (uInt)le64(buf + sec + 4));
    for (int i = 0; i < 4; i++)
        buf[sec + 12 + i] = (unsigned char)(c >> (8 * i));
}

static const char *GPU = "SYN-GPU";
enum { GPU_TPCS = 24, N_MODELS = 5, N_OPS = 48, UNSEEN = 4 };
static const int tpcs_grid[] = {6, 12, 18, 24};
static const char *const model_names[N_MODELS] = {"m0", "m1", "m2", "m3", "unseen"};

/* Deterministic generator (splitmix64). */
static uint64_t rng_state;
static double urand(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* Memory intensity of every operator, kept for the slowdown rule. */
static double mem_intensity[N_MODELS][N_OPS];

/* Operators: work w at all TPCs, memory intensity mi; memory-bound ops scale
 * worse with TPCs. The unseen model is far more memory-bound and longer. */
static ps_ops_t *synth_ops(void)
{
    ps_ops_t *t = ps_ops_new();
    rng_state = 42;
    char name[32];
    for (int m = 0; m < N_MODELS; m++)
        for (int i = 0; i < N_OPS; i++) {
            double w = (m == UNSEEN ? 150e3 : 20e3) + 150e3 * urand();
            double mi = m == UNSEEN ? 0.6 + 0.4 * urand() : urand() * urand();
            mem_intensity[m][i] = mi;
            snprintf(name, sizeof name, "%s_%s%d", model_names[m], mi > 0.5 ? "bn" : "conv", i);
            for (size_t k = 0; k < PS_ARRAY_LEN(tpcs_grid); k++) {
                int tp = tpcs_grid[k];
                psi_op_row_t r = {.gpu = GPU,
                                  .model = model_names[m],
                                  .batch = 8,
                                  .op = i,
                                  .name = name,
                                  .tpcs = tp,
                                  .intensity = PS_INTENSITY_NONE};
                r.duration_ns = w * pow((double)GPU_TPCS / tp, 1.0 - 0.7 * mi);
                r.c.dram_bytes = mi * w * 40.0;
                r.c.l2_bytes = NAN;
                r.c.stall_long_scoreboard = 60.0 * mi + 3.0 * urand();
                r.c.stall_lg_throttle = 10.0 * mi;
                r.c.stall_mio_throttle = 5.0 * (1.0 - mi);
                r.c.sm_pct = 80.0 * (1.0 - mi);
                r.c.mem_pct = 90.0 * mi;
                CHECK_OK(ps_ops_append(t, &r));
            }
        }
    CHECK_OK(psi_ops_index(t));
    return t;
}

/* The rule: a side slows with its own memory-bound share M times the
 * co-runner's DRAM rate B (bytes/ns), saturating: delta = 1.03 + c M B/(B+5). */
static void rule(const ps_ops_t *ops, const ps_query_t *q, double *th, double *tl)
{
    const char *mod[2] = {q->hp_model, q->lp_model};
    int start[2] = {q->hp_start, q->lp_start}, len[2] = {q->hp_len, q->lp_len}, tp[2] = {q->hp_tpcs, q->lp_tpcs};
    double solo[2], M[2], B[2];
    for (int s = 0; s < 2; s++) {
        const psi_op_group_t *g = psi_ops_find(ops, GPU, mod[s], 8);
        int m = mod[s][0] == 'u' ? UNSEEN : mod[s][1] - '0';
        int k = psi_group_tpcs_index(g, tp[s]);
        double sum = 0, mem = 0, bytes = 0;
        for (int i = start[s]; i < start[s] + len[s]; i++) {
            double d = g->duration_ns[(size_t)i * (size_t)g->n_tpcs + (size_t)k];
            sum += d;
            mem += d * mem_intensity[m][i];
            bytes += g->counters[i].dram_bytes;
        }
        solo[s] = sum;
        M[s] = mem / sum;
        B[s] = bytes / sum;
    }
    *th = solo[0] * (1.03 + 3.0 * M[0] * B[1] / (B[1] + 5.0));
    *tl = solo[1] * (1.03 + 2.0 * M[1] * B[0] / (B[0] + 5.0));
}

static ps_query_t random_query(int hp_model, int lp_model, int max_len)
{
    static const int splits[][2] = {{6, 18}, {12, 12}, {18, 6}, {6, 12}, {12, 6}, {6, 6}};
    int sp = (int)(urand() * 6);
    ps_query_t q = {.gpu = GPU,
                    .hp_model = model_names[hp_model],
                    .hp_batch = 8,
                    .lp_model = model_names[lp_model],
                    .lp_batch = 8,
                    .hp_tpcs = splits[sp][0],
                    .lp_tpcs = splits[sp][1]};
    q.hp_len = 1 + (int)(urand() * max_len);
    q.lp_len = 1 + (int)(urand() * max_len);
    q.hp_start = (int)(urand() * (N_OPS - q.hp_len + 1));
    q.lp_start = (int)(urand() * (N_OPS - q.lp_len + 1));
    return q;
}

/* n_exp experiments of 2 runs each (1% noise); HP and LP models drawn from
 * [lo, hi]; experiments named with prefix. */
static ps_coexec_t *synth_coexec(const ps_ops_t *ops, int n_exp, int hp_lo, int hp_hi, int lp_lo, int lp_hi,
                                 const char *prefix, uint64_t seed)
{
    ps_coexec_t *cx = ps_coexec_new();
    rng_state = seed;
    char name[48];
    for (int e = 0; e < n_exp; e++) {
        int hm = hp_lo + (int)(urand() * (hp_hi - hp_lo + 1)), lm = lp_lo + (int)(urand() * (lp_hi - lp_lo + 1));
        ps_query_t q = random_query(hm, lm, 16);
        double th, tl;
        rule(ops, &q, &th, &tl);
        snprintf(name, sizeof name, "%s%d", prefix, e);
        for (int r = 0; r < 2; r++) {
            psi_coexec_row_t row = {.experiment = name,
                                    .gpu = GPU,
                                    .hp_model = q.hp_model,
                                    .hp_batch = 8,
                                    .hp_start = q.hp_start,
                                    .hp_len = q.hp_len,
                                    .lp_model = q.lp_model,
                                    .lp_batch = 8,
                                    .lp_start = q.lp_start,
                                    .lp_len = q.lp_len,
                                    .hp_tpcs = q.hp_tpcs,
                                    .lp_tpcs = q.lp_tpcs,
                                    .hp_ns = th * (1 + 0.01 * (urand() - 0.5)),
                                    .lp_ns = tl * (1 + 0.01 * (urand() - 0.5)),
                                    .mechanism = "sim"};
            CHECK_OK(ps_coexec_append(cx, &row));
        }
    }
    return cx;
}

static ps_train_params_t fast_params(void)
{
    ps_train_params_t p = ps_train_default_params();
    p.max_rounds = 150;
    p.n_depths = 1;
    p.depths[0] = 6;
    p.n_etas = 1;
    p.etas[0] = 0.3;
    /* One thread: on a shared, loaded machine OpenMP's spinning threads
     * cost more than they give on a data set this small. */
    p.nthread = 1;
    return p;
}

static ps_ops_t *OPS;
static ps_coexec_t *CX;
static ps_model_t *MODEL;

static void test_train_beats_median_rule(void)
{
    ps_train_params_t p = fast_params();
    double t0 = psi_now();
    CHECK_OK(ps_model_train(OPS, CX, &p, &MODEL));
    if (!MODEL)
        return;
    ps_model_info_t i;
    CHECK_OK(ps_model_info(MODEL, &i));
    CHECK(i.n_samples == CX->n);
    /* 10% of the experiments calibrate the bounds (src/decision). */
    CHECK(i.n_train + i.n_valid + i.n_test + i.n_calib == i.n_samples);
    CHECK(i.n_experiments < 20 || i.n_calib > 0);
    CHECK(i.n_experiments == CX->n / 2);
    CHECK(i.n_trees[0] >= 1 && i.n_trees[0] <= p.max_rounds);
    CHECK(strcmp(i.gpu, GPU) == 0);
    unsigned char *split = malloc(CX->n);
    CHECK_OK(ps_coexec_split(CX, p.seed, split));
    double mm[2], base[2];
    model_mape(MODEL, OPS, CX, split, PS_SPLIT_TEST, mm);
    median_rule_mape(OPS, CX, split, base);
    printf("  trained in %.2f s; test MAPE HP %.2f%% LP %.2f%%; median-per-split rule HP %.2f%% LP %.2f%%\n",
           psi_now() - t0, mm[0], mm[1], base[0], base[1]);
    CHECK(mm[0] < base[0]);
    CHECK(mm[1] < base[1]);
    /* The metadata's test error is the same quantity. */
    CHECK_NEAR(i.test_mape[0], mm[0], 1e-6 * mm[0] + 1e-9);
    CHECK_NEAR(i.test_mape[1], mm[1], 1e-6 * mm[1] + 1e-9);
    CHECK(i.valid_mape[0] > 0 && i.valid_mape[0] < base[0]);
    free(split);
}

static void test_save_load_bit_identical(void)
{
    if (!MODEL)
        return;
    char path[] = "/tmp/psi_test_modelXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(ps_model_save(MODEL, path));
    ps_model_t *back = NULL;
    CHECK_OK(ps_model_load(path, &back));
    if (!back)
        return;
    enum { N = 200 };
    ps_query_t q[N];
    rng_state = 7;
    for (int k = 0; k < N; k++)
        q[k] = random_query((int)(urand() * 4), (int)(urand() * 4), 48);
    double a[4][N], b[4][N];
    CHECK_OK(ps_model_predict_compose(MODEL, OPS, q, N, PS_COMPOSE_OVERLAP, a[0], a[1], a[2], a[3]));
    CHECK_OK(ps_model_predict_compose(back, OPS, q, N, PS_COMPOSE_OVERLAP, b[0], b[1], b[2], b[3]));
    CHECK(memcmp(a, b, sizeof a) == 0);
    ps_model_info_t i, j;
    ps_model_info(MODEL, &i);
    ps_model_info(back, &j);
    CHECK(i.n_samples == j.n_samples && i.depth[0] == j.depth[0] && i.eta[1] == j.eta[1]);
    CHECK(i.valid_mape[0] == j.valid_mape[0] && i.test_mape[1] == j.test_mape[1]);
    CHECK(i.n_trees[0] == j.n_trees[0] && i.n_trees[1] == j.n_trees[1]);
    CHECK(strcmp(i.gpu, j.gpu) == 0);
    ps_model_free(back);

    /* A damaged file is refused, never half-loaded. */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)len);
    CHECK(fread(buf, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    /* Cut anywhere (inside the magic, the header, a regressor, the end
     * magic): refused with a message naming the file. */
    long cuts[] = {0, 5, 12, 15, 16, 40, len / 3, len / 2, len - 100, len - 9, len - 1};
    for (size_t c = 0; c < PS_ARRAY_LEN(cuts); c++) {
        f = fopen(path, "wb");
        fwrite(buf, 1, (size_t)cuts[c], f);
        fclose(f);
        back = (ps_model_t *)1;
        int rc = ps_model_load(path, &back);
        CHECK_MSG(rc == PS_E_INPUT || rc == PS_E_BACKEND, "cut at %ld: %d", cuts[c], rc);
        CHECK(back == NULL);
        CHECK(strstr(ps_last_error(), path) != NULL);
    }
    /* Trailing bytes are refused too. */
    f = fopen(path, "wb");
    fwrite(buf, 1, (size_t)len, f);
    fputs("extra", f);
    fclose(f);
    CHECK(ps_model_load(path, &back) == PS_E_INPUT);
    /* Another feature layout version is a mismatch (with the metadata's
     * checksum made right; without, the checksum refuses it). */
    char *hdr = (char *)buf + 32;
    char *v = strstr(hdr, "\"version\":1");
    CHECK(v != NULL);
    if (v) {
        v[10] = '7';
        write_bytes(path, buf, (size_t)len);
        CHECK(ps_model_load(path, &back) == PS_E_INPUT);
        CHECK(strstr(ps_last_error(), "checksum mismatch in the metadata") != NULL);
        fix_crc(buf, 16);
        write_bytes(path, buf, (size_t)len);
        CHECK(ps_model_load(path, &back) == PS_E_MISMATCH);
        CHECK(strstr(ps_last_error(), "layout version 7") != NULL);
        v[10] = '1';
        fix_crc(buf, 16);
    }
    /* The HP and LP regressors swapped, whole sections or only their
     * payloads (checksums made right): refused by tag. */
    size_t hl = (size_t)le64(buf + 20), h0 = 32 + hl, b1 = (size_t)le64(buf + h0 + 4);
    size_t l0 = h0 + 16 + b1, b2 = (size_t)le64(buf + l0 + 4);
    unsigned char *sw = malloc((size_t)len);
    memcpy(sw, buf, h0);
    memcpy(sw + h0, buf + l0, 16 + b2);
    memcpy(sw + h0 + 16 + b2, buf + h0, 16 + b1);
    memcpy(sw + l0 + 16 + b2, buf + l0 + 16 + b2, 8);
    write_bytes(path, sw, (size_t)len);
    CHECK(ps_model_load(path, &back) == PS_E_INPUT && back == NULL);
    CHECK(strstr(ps_last_error(), "the LP regressor is where the HP regressor belongs") != NULL);
    memcpy(sw + h0, "XGHP", 4);
    memcpy(sw + h0 + 16 + b2, "XGLP", 4);
    fix_crc(sw, h0);
    fix_crc(sw, h0 + 16 + b2);
    write_bytes(path, sw, (size_t)len);
    CHECK(ps_model_load(path, &back) == PS_E_INPUT && back == NULL);
    CHECK_MSG(strstr(ps_last_error(), "the HP regressor section holds a regressor tagged 'lp'") != NULL, "%s",
              ps_last_error());
    free(sw);
    /* Version 1 (no checksums) and unknown versions: refused by version. */
    buf[8] = 1;
    write_bytes(path, buf, (size_t)len);
    CHECK(ps_model_load(path, &back) == PS_E_MISMATCH);
    CHECK(strstr(ps_last_error(), "model format version 1, this build reads version 2 (retrain") != NULL);
    buf[8] = 99; /* file format version */
    write_bytes(path, buf, (size_t)len);
    CHECK(ps_model_load(path, &back) == PS_E_MISMATCH);
    buf[0] = 'X';
    f = fopen(path, "wb");
    fwrite(buf, 1, (size_t)len, f);
    fclose(f);
    CHECK(ps_model_load(path, &back) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "not a pairsight model") != NULL);
    free(buf);
    remove(path);
    CHECK(ps_model_load("/nonexistent/model.psm", &back) == PS_E_IO);
    CHECK(ps_model_save(MODEL, "/nonexistent/model.psm") == PS_E_IO);
}

/* 1,000 random single-byte flips of a saved model: every one is refused
 * with a message naming the file, by the checks of the container (magic,
 * version, sections, checksums), so that no flipped byte reaches XGBoost
 * (its UBJSON reader crashed on 67 of 1,050 flips of version 1). */
static void test_flipped_bytes_refused(void)
{
    if (!MODEL)
        return;
    const char *path = "/tmp/psi_test_flip.psm";
    CHECK_OK(ps_model_save(MODEL, path));
    size_t len = 0;
    unsigned char *buf = read_bytes(path, &len);
    if (!buf)
        return;
    uint64_t st = 11;
    int refused = 0, by_xgboost = 0;
    for (int k = 0; k < 1000; k++) {
        size_t at = (size_t)(psi_splitmix64(&st) % len);
        unsigned char x = (unsigned char)(1 + psi_splitmix64(&st) % 255);
        buf[at] ^= x;
        ps_model_t *m = (ps_model_t *)1;
        int rc = psi_model_load_mem(path, buf, len, &m);
        buf[at] ^= x;
        if (rc != PS_OK && m == NULL && strstr(ps_last_error(), path))
            refused++;
        else
            CHECK_MSG(0, "flip %d at byte %zu (x%02x): rc %d", k, at, x, rc);
        if (rc == PS_E_BACKEND || strstr(ps_last_error(), "XGBoost"))
            by_xgboost++;
        if (rc == PS_OK)
            ps_model_free(m);
    }
    printf("  %d of 1000 flips refused, %d by XGBoost\n", refused, by_xgboost);
    CHECK(refused == 1000 && by_xgboost == 0);
    ps_model_t *m = NULL;
    CHECK_OK(psi_model_load_mem(path, buf, len, &m)); /* the unflipped bytes still load */
    ps_model_free(m);
    free(buf);
    remove(path);
    /* fuzz_psm's finding: checksums made right around a booster whose UBJSON
     * declares a huge count; XGBoost tried to allocate 0x290a1f0910630001
     * bytes. The structural check refuses it first. */
    m = (ps_model_t *)1;
    CHECK(ps_model_load("tests/data/psm_crafted_count.psm", &m) == PS_E_INPUT && m == NULL);
    CHECK_MSG(strstr(ps_last_error(), "is not a valid XGBoost model") != NULL, "%s", ps_last_error());
}

static void test_adapt_lowers_unseen_error(void)
{
    if (!MODEL)
        return;
    /* The unseen model as HP beside the known ones: 50 experiments to adapt
     * on, 100 others to measure. */
    ps_coexec_t *adapt = synth_coexec(OPS, 50, UNSEEN, UNSEEN, 0, 3, "adapt", 1001);
    ps_coexec_t *held = synth_coexec(OPS, 100, UNSEEN, UNSEEN, 0, 3, "held", 2002);
    double before[2], after[2];
    model_mape(MODEL, OPS, held, NULL, -1, before);
    ps_train_params_t p = fast_params();
    ps_model_t *m2 = NULL;
    double t0 = psi_now();
    CHECK_OK(ps_model_adapt(MODEL, OPS, adapt, &p, &m2));
    double secs = psi_now() - t0;
    if (!m2)
        goto done;
    model_mape(m2, OPS, held, NULL, -1, after);
    ps_model_info_t i, j;
    ps_model_info(MODEL, &i);
    ps_model_info(m2, &j);
    printf("  unseen model: HP %.2f%% -> %.2f%%, LP %.2f%% -> %.2f%% after adapting on %zu samples in %.2f s\n",
           before[0], after[0], before[1], after[1], j.adapt_samples, secs);
    CHECK(after[0] < before[0]);
    CHECK(j.adapt_samples == 100);
    CHECK(j.n_trees[0] == i.n_trees[0] + p.adapt_rounds);
    CHECK(j.n_adapt == i.n_adapt + 1);
    /* Depth chosen per side on held-out experiments of the 50 new ones. */
    printf("  adaptation depth chosen: HP %d, LP %d\n", j.adapt_depth[0], j.adapt_depth[1]);
    for (int s = 0; s < 2; s++)
        CHECK(j.adapt_depth[s] >= 1 && j.adapt_depth[s] <= 3);
    CHECK(i.adapt_depth[0] == 0 && i.adapt_depth[1] == 0);
    CHECK(secs < 5.0 * 4); /* the issue asks < 5 s; slack for a loaded machine and sanitizers */
    /* The source model is unchanged. */
    double again[2];
    model_mape(MODEL, OPS, held, NULL, -1, again);
    CHECK(again[0] == before[0] && again[1] == before[1]);
    /* Rows of another GPU are refused. */
    adapt->rows[0].gpu = "OTHER";
    ps_model_t *m3 = NULL;
    CHECK(ps_model_adapt(MODEL, OPS, adapt, &p, &m3) != PS_OK);
    CHECK(m3 == NULL);
    ps_model_free(m2);
done:
    ps_coexec_free(adapt);
    ps_coexec_free(held);
}

/* Index pairing against time-aligned pairing on the asymmetric case, with
 * pair predictions made by a known contention law: while contended, HP runs
 * at 1/1.5 and LP at 1/1.2 of their standalone speed. */
static void test_compose_asymmetric(void)
{
    /* HP: one window of standalone 100; LP: three windows of 30 each. A
     * pair (HP, LP window j): LP is contended all along (36); HP is
     * contended for 36, progressing 24, then alone for 76: 112. */
    double wh[1] = {100}, wl[3] = {30, 30, 30};
    double lh[3], ll[3];
    for (int j = 0; j < 3; j++) {
        lh[j] = log(112.0 / 100.0);
        ll[j] = log(1.2);
    }
    double th, tl;
    CHECK_OK(psi_compose_windows(PS_COMPOSE_INDEX, &(psi_windows_t){1, 3, lh, ll, wh, wl}, &th, &tl));
    CHECK_NEAR(th, 112, 1e-9); /* index pairing sees one LP window */
    CHECK_NEAR(tl, 3 * 36, 1e-9);
    CHECK_OK(psi_compose_windows(PS_COMPOSE_OVERLAP, &(psi_windows_t){1, 3, lh, ll, wh, wl}, &th, &tl));
    /* Truth: contended for 108 (progress 72), then alone for 28: 136. */
    CHECK_NEAR(th, 136, 1e-5);
    CHECK_NEAR(tl, 108, 1e-5);

    /* One window per side: both methods return the pair prediction. */
    double a = log(1.3), b = log(1.1), one[1] = {50}, two[1] = {70};
    double t1, t2, u1, u2;
    CHECK_OK(psi_compose_windows(PS_COMPOSE_INDEX, &(psi_windows_t){1, 1, &a, &b, one, two}, &t1, &t2));
    CHECK_OK(psi_compose_windows(PS_COMPOSE_OVERLAP, &(psi_windows_t){1, 1, &a, &b, one, two}, &u1, &u2));
    CHECK_NEAR(t1, 65, 1e-9);
    CHECK(t1 == u1 && t2 == u2);

    /* Symmetric windows of equal length: both pairings agree. */
    double wsym[2] = {40, 40}, lsym[4], msym[4];
    for (int k = 0; k < 4; k++) {
        lsym[k] = log(1.25);
        msym[k] = log(1.25);
    }
    CHECK_OK(psi_compose_windows(PS_COMPOSE_INDEX, &(psi_windows_t){2, 2, lsym, msym, wsym, wsym}, &t1, &t2));
    CHECK_OK(psi_compose_windows(PS_COMPOSE_OVERLAP, &(psi_windows_t){2, 2, lsym, msym, wsym, wsym}, &u1, &u2));
    CHECK_NEAR(t1, 100, 1e-9);
    CHECK_NEAR(u1, 100, 1e-5);
    CHECK_NEAR(u2, 100, 1e-5);

    /* The same with 6 windows a side (tables past the stack buffer of
     * compose_overlap): 6 x 40 x 1.25 each. */
    double w6[6], l6[36];
    for (int k = 0; k < 36; k++)
        l6[k] = log(1.25);
    for (int k = 0; k < 6; k++)
        w6[k] = 40;
    CHECK_OK(psi_compose_windows(PS_COMPOSE_OVERLAP, &(psi_windows_t){6, 6, l6, l6, w6, w6}, &u1, &u2));
    CHECK_NEAR(u1, 300, 1e-4);
    CHECK_NEAR(u2, 300, 1e-4);
}

/* Long segments through the trained model: index composition equals the sum
 * of the window predictions made one by one. */
static void test_compose_with_model(void)
{
    if (!MODEL)
        return;
    ps_query_t q = {.gpu = GPU,
                    .hp_model = "m0",
                    .hp_batch = 8,
                    .hp_start = 0,
                    .hp_len = 40,
                    .lp_model = "m1",
                    .lp_batch = 8,
                    .lp_start = 4,
                    .lp_len = 20,
                    .hp_tpcs = 12,
                    .lp_tpcs = 12};
    double h, l, hs, ls;
    CHECK_OK(ps_model_predict_compose(MODEL, OPS, &q, 1, PS_COMPOSE_INDEX, &h, &l, &hs, &ls));
    /* HP: 3 windows [0,13) [13,26) [26,40); LP: 2 windows [4,14) [14,24). */
    int hs_[3] = {0, 13, 26}, hl_[3] = {13, 13, 14}, ls_[2] = {4, 14}, ll_[2] = {10, 10};
    double sum_h = 0, sum_l = 0;
    for (int i = 0; i < 3; i++) {
        ps_query_t w = q;
        w.hp_start = hs_[i];
        w.hp_len = hl_[i];
        w.lp_start = ls_[i < 2 ? i : 1];
        w.lp_len = ll_[i < 2 ? i : 1];
        double a, b;
        CHECK_OK(ps_model_predict(MODEL, OPS, &w, 1, &a, &b));
        sum_h += a;
        if (i < 2)
            sum_l += b;
    }
    CHECK_NEAR(h, sum_h, 1e-9 * sum_h);
    CHECK_NEAR(l, sum_l, 1e-9 * sum_l);
    const psi_op_group_t *g = psi_ops_find(OPS, GPU, "m0", 8);
    CHECK_NEAR(hs, psi_group_segment_ns(g, 0, 40, 12), 1e-6 * hs);
    double oh, ol;
    CHECK_OK(ps_model_predict_compose(MODEL, OPS, &q, 1, PS_COMPOSE_OVERLAP, &oh, &ol, NULL, NULL));
    CHECK(oh > 0.5 * hs && oh < 3 * hs && ol > 0.5 * ls && ol < 3 * ls);

    /* A batch larger than one chunk gives the same answers as one by one. */
    enum { N = 5000 };
    ps_query_t *many = malloc(N * sizeof *many);
    double *bh = malloc(N * sizeof *bh), *bl = malloc(N * sizeof *bl);
    rng_state = 99;
    for (int k = 0; k < N; k++)
        many[k] = random_query((int)(urand() * 4), (int)(urand() * 4), 16);
    CHECK_OK(ps_model_predict(MODEL, OPS, many, N, bh, bl));
    for (int k = 0; k < N; k += 997) {
        double a, b;
        CHECK_OK(ps_model_predict(MODEL, OPS, &many[k], 1, &a, &b));
        CHECK(a == bh[k] && b == bl[k]);
    }
    free(many);
    free(bh);
    free(bl);
}

/* The model predicts through the flattened forest; it must equal XGBoost's
 * own predictor to float rounding on the same feature rows. */
static void test_forest_matches_xgboost(void)
{
    if (!MODEL)
        return;
    enum { N = 300 };
    int nf = MODEL->layout.n_features;
    float *x = malloc((size_t)N * 2 * (size_t)nf * sizeof *x);
    rng_state = 1234;
    for (int k = 0; k < N; k++) {
        ps_query_t q = random_query((int)(urand() * 5), (int)(urand() * 5), 16);
        CHECK_OK(psi_features_build_pair(&MODEL->layout, OPS, &q, x + (size_t)k * nf, x + (size_t)(N + k) * nf, NULL));
    }
    CHECK(MODEL->forest[0] != NULL && MODEL->forest[1] != NULL);
    for (int side = 0; side < 2; side++) {
        double a[N], b[N];
        const float *xs = x + (size_t)side * N * (size_t)nf;
        psi_model_predict_rows(MODEL, side, xs, N, a);
        CHECK_OK(psi_model_predict_xgb(MODEL, side, xs, N, 0, b));
        double worst = 0;
        for (int k = 0; k < N; k++)
            worst = fmax(worst, fabs(a[k] - b[k]));
        CHECK_MSG(worst < 1e-5, "side %d: largest difference %g", side, worst);
    }
    free(x);
}

static void test_predict_errors(void)
{
    if (!MODEL)
        return;
    ps_query_t ok = {.gpu = GPU,
                     .hp_model = "m0",
                     .hp_batch = 8,
                     .hp_start = 0,
                     .hp_len = 8,
                     .lp_model = "m1",
                     .lp_batch = 8,
                     .lp_start = 0,
                     .lp_len = 8,
                     .hp_tpcs = 12,
                     .lp_tpcs = 12};
    ps_query_t q[2] = {ok, ok};
    double h[2], l[2];
    q[1].lp_model = "vgg";
    CHECK(ps_model_predict(MODEL, OPS, q, 2, h, l) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "query 1") && strstr(ps_last_error(), "'vgg'"));
    CHECK(ps_model_check_query(MODEL, OPS, &q[1]) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "'vgg'") != NULL);
    CHECK_OK(ps_model_check_query(MODEL, OPS, &q[0]));
    q[1] = ok;
    q[1].hp_tpcs = 18;
    CHECK(ps_model_predict(MODEL, OPS, q, 2, h, l) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "30 TPCs") && strstr(ps_last_error(), "24 TPCs"));
    q[1] = ok;
    q[1].hp_start = 45;
    CHECK(ps_model_predict(MODEL, OPS, q, 2, h, l) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "outside") != NULL);
    q[1] = ok;
    q[1].hp_tpcs = 7;
    CHECK(ps_model_predict(MODEL, OPS, q, 2, h, l) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "7 TPCs") != NULL);
    q[1] = ok;
    q[1].gpu = "A100";
    CHECK(ps_model_predict(MODEL, OPS, q, 2, h, l) == PS_E_MISMATCH);
    CHECK(ps_model_predict_compose(MODEL, OPS, q, 1, (ps_compose_t)5, h, l, NULL, NULL) == PS_E_ARG);
    CHECK_OK(ps_model_predict(MODEL, OPS, q, 0, h, l));

    /* A batch split over threads still names the failing query. */
    enum { N = 2000 };
    ps_query_t *many = malloc(N * sizeof *many);
    double *bh = malloc(N * sizeof *bh), *bl = malloc(N * sizeof *bl);
    for (int k = 0; k < N; k++)
        many[k] = ok;
    many[1500].lp_model = "vgg";
    CHECK(ps_model_predict(MODEL, OPS, many, N, bh, bl) == PS_E_INPUT);
    CHECK_MSG(strstr(ps_last_error(), "query 1500") && strstr(ps_last_error(), "'vgg'"), "%s", ps_last_error());
    free(many);
    free(bh);
    free(bl);
}

static void test_explain(void)
{
    if (!MODEL)
        return;
    ps_query_t q = {.gpu = GPU,
                    .hp_model = "m0",
                    .hp_batch = 8,
                    .hp_start = 3,
                    .hp_len = 10,
                    .lp_model = "m2",
                    .lp_batch = 8,
                    .lp_start = 20,
                    .lp_len = 12,
                    .hp_tpcs = 6,
                    .lp_tpcs = 18};
    ps_explanation_t *e = NULL;
    CHECK_OK(ps_model_explain(MODEL, OPS, &q, &e));
    if (!e)
        return;
    double h, l;
    CHECK_OK(ps_model_predict(MODEL, OPS, &q, 1, &h, &l));
    CHECK_NEAR(e->hp_ns, h, 1e-9 * h);
    /* SHAP is additive: bias + contributions = predicted log delta. */
    double sum[2] = {e->bias[0], e->bias[1]};
    int ops_seen[2][2] = {{0, 0}, {0, 0}};
    const psi_op_group_t *g = psi_ops_find(OPS, GPU, "m2", 8);
    for (size_t i = 0; i < e->n; i++) {
        const ps_contribution_t *c = &e->items[i];
        sum[c->side] += c->contribution;
        if (c->op >= 0 && c->owner >= 0)
            ops_seen[c->side][c->owner]++;
        if (c->op >= 0 && c->owner == 1)
            CHECK(c->op >= 20 && c->op < 32 && strcmp(c->name, g->names[c->op]) == 0);
        if (i > 0 && e->items[i - 1].side == c->side)
            CHECK(fabs(e->items[i - 1].contribution) >= fabs(c->contribution));
    }
    CHECK_NEAR(sum[0], log(e->hp_ns / e->hp_solo_ns), 1e-4);
    CHECK_NEAR(sum[1], log(e->lp_ns / e->lp_solo_ns), 1e-4);
    CHECK(ops_seen[0][0] == 10 && ops_seen[0][1] == 12 && ops_seen[1][1] == 12);
    ps_explanation_free(e);
    ps_explanation_free(NULL);
    q.hp_len = 20;
    CHECK(ps_model_explain(MODEL, OPS, &q, &e) == PS_E_ARG && e == NULL);
}

/* One model shared by threads that predict and explain at once (the API
 * says a model is read-only): every thread gets the single-threaded answers
 * bit for bit. */
enum { CONC_N = 300, CONC_THREADS = 4 };
typedef struct {
    const ps_query_t *q;
    double h[CONC_N], l[CONC_N];
    ps_explanation_t *e;
    int rc;
} conc_t;

static void *conc_run(void *arg)
{
    conc_t *c = arg;
    for (int r = 0; r < 10 && c->rc == PS_OK; r++)
        c->rc = ps_model_predict(MODEL, OPS, c->q, CONC_N, c->h, c->l);
    if (c->rc == PS_OK)
        c->rc = ps_model_explain(MODEL, OPS, &c->q[0], &c->e);
    return NULL;
}

static void test_concurrent_predict(void)
{
    if (!MODEL)
        return;
    static ps_query_t q[CONC_N];
    static conc_t ref, c[CONC_THREADS];
    rng_state = 7;
    for (int k = 0; k < CONC_N; k++)
        q[k] = random_query((int)(urand() * 4), (int)(urand() * 4), 16);
    ref.q = q;
    conc_run(&ref);
    CHECK_OK(ref.rc);
    pthread_t t[CONC_THREADS];
    for (int i = 0; i < CONC_THREADS; i++) {
        c[i].q = q;
        CHECK(pthread_create(&t[i], NULL, conc_run, &c[i]) == 0);
    }
    for (int i = 0; i < CONC_THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK_OK(c[i].rc);
        CHECK(memcmp(c[i].h, ref.h, sizeof ref.h) == 0 && memcmp(c[i].l, ref.l, sizeof ref.l) == 0);
        CHECK(c[i].e && ref.e && c[i].e->n == ref.e->n);
        for (size_t k = 0; c[i].e && ref.e && k < ref.e->n && k < c[i].e->n; k++)
            CHECK(c[i].e->items[k].contribution == ref.e->items[k].contribution);
        ps_explanation_free(c[i].e);
    }
    ps_explanation_free(ref.e);
}

static void test_variant_and_params(void)
{
    /* The co-runner matters in the rule, so the ablation without co-runner
     * tokens must do worse on the LP side (whose slowdown depends on the HP
     * DRAM rate). */
    ps_train_params_t p = fast_params();
    p.variant = PS_FEAT_NO_CORUNNER;
    ps_model_t *m = NULL;
    CHECK_OK(ps_model_train(OPS, CX, &p, &m));
    if (m && MODEL) {
        ps_model_info_t a, b;
        ps_model_info(m, &a);
        ps_model_info(MODEL, &b);
        printf("  no co-runner tokens: test MAPE HP %.2f%% LP %.2f%% (full: %.2f%%, %.2f%%)\n", a.test_mape[0],
               a.test_mape[1], b.test_mape[0], b.test_mape[1]);
        CHECK(a.variant == PS_FEAT_NO_CORUNNER && a.n_features == 16 * 6 + 4);
        CHECK(a.test_mape[0] + a.test_mape[1] > b.test_mape[0] + b.test_mape[1]);
    }
    ps_model_free(m);
    ps_model_free(NULL);

    p = fast_params();
    p.n_depths = 0;
    m = (ps_model_t *)1;
    CHECK(ps_model_train(OPS, CX, &p, &m) == PS_E_ARG && m == NULL);
    p = fast_params();
    p.etas[0] = 0;
    CHECK(ps_model_train(OPS, CX, &p, &m) == PS_E_ARG);
    /* Too few experiments to split. */
    ps_coexec_t *two = synth_coexec(OPS, 2, 0, 3, 0, 3, "two", 5);
    CHECK(ps_model_train(OPS, two, NULL, &m) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "at least 3") != NULL);
    ps_coexec_free(two);
}

/* Progress of training: one call per boosting round actually run (and one
 * more at the end of each grid point), the total re-estimated from the
 * rounds early stopping let the finished grid points run, so that the last
 * call says done == total (the ETA reaches 0
 * when training does, not after every point's max_rounds). */
typedef struct {
    int calls;
    double first_total, last_done, last_total;
    int monotone;
} prog_rec_t;

static void record_progress(const char *stage, double done, double total, void *user)
{
    prog_rec_t *r = user;
    if (strcmp(stage, "training") != 0)
        return;
    if (r->last_done == 0)
        r->first_total = total;
    r->monotone &= (done == r->last_done + 1 || done == r->last_done) && total >= done;
    r->calls += done > r->last_done;
    r->last_done = done;
    r->last_total = total;
}

static void test_progress_follows_early_stopping(void)
{
    ps_train_params_t p = fast_params();
    p.max_rounds = 2000;
    p.early_stopping = 5;
    p.n_etas = 2;
    p.etas[1] = 0.5;
    prog_rec_t r = {.monotone = 1};
    p.progress = record_progress;
    p.progress_user = &r;
    ps_model_t *m = NULL;
    CHECK_OK(ps_model_train(OPS, CX, &p, &m));
    ps_model_info_t i;
    if (m && ps_model_info(m, &i) == PS_OK) {
        printf("  progress: %d rounds run of %.0f at most; first total %.0f\n", r.calls, 4.0 * p.max_rounds,
               r.first_total);
        CHECK(r.monotone);
        CHECK(r.first_total == 4.0 * p.max_rounds);
        CHECK(r.last_done == r.calls && r.last_total == r.last_done);
        /* Early stopping ended every point long before max_rounds. */
        CHECK(r.calls < p.max_rounds);
        CHECK(i.n_trees[0] + i.n_trees[1] <= r.calls);
    }
    ps_model_free(m);
    m = NULL;
    /* The grid scales with the rows: grid_rows below the training rows
     * trains the first point (depth-major) only. */
    p.n_depths = 2;
    p.depths[1] = 3;
    p.grid_rows = 1;
    r = (prog_rec_t){.monotone = 1};
    CHECK_OK(ps_model_train(OPS, CX, &p, &m));
    if (m && ps_model_info(m, &i) == PS_OK) {
        CHECK(r.first_total == 2.0 * p.max_rounds);
        for (int s = 0; s < 2; s++)
            CHECK(i.depth[s] == p.depths[0] && i.eta[s] == p.etas[0]);
    }
    ps_model_free(m);
    p.grid_rows = -1;
    CHECK(ps_model_train(OPS, CX, &p, &m) == PS_E_ARG);
}

static void setup(void)
{
    OPS = synth_ops();
    CX = synth_coexec(OPS, 600, 0, 3, 0, 3, "e", 123);
}

static void teardown(void)
{
    ps_model_free(MODEL);
    ps_coexec_free(CX);
    ps_ops_free(OPS);
}

TH_MAIN(TEST(setup), TEST(test_train_beats_median_rule), TEST(test_save_load_bit_identical),
        TEST(test_flipped_bytes_refused), TEST(test_adapt_lowers_unseen_error), TEST(test_compose_asymmetric),
        TEST(test_compose_with_model), TEST(test_forest_matches_xgboost), TEST(test_predict_errors), TEST(test_explain),
        TEST(test_concurrent_predict), TEST(test_variant_and_params), TEST(test_progress_follows_early_stopping),
        TEST(teardown))
