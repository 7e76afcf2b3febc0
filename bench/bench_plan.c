/*
 * Prediction throughput of the planner (ps_plan): candidates predicted per
 * second of planning, for `pairsight plan`'s request of every HP model
 * beside every LP model of an ops.csv pair. The planner asks, per HP segment
 * boundary, for every segment length x SM split x LP length at once, so the
 * HP side of its queries repeats across the LP lengths: the figure is what
 * reusing each HP segment's features across those candidates buys (compare
 * builds before and after it). CPU time of the process (the load of other
 * jobs on a shared machine inflates it less than the wall clock), the
 * fastest of reps runs, on one OpenMP thread.
 *
 * Usage: bench_plan MODEL OPS HP:BATCH LP:BATCH [reps (default 5)] [requests (default 40)] [kept|emptied|none]
 * (the last: that memo mode only, e.g. under perf record)
 * Prints the plan's figures too, so that two builds can be checked to plan
 * the same (a hash of the plan JSON without its timing).
 *
 * Then the per-request figure (issue 40): `requests` plans of one HP request
 * with the budget 1.3 x its alone time, as POST /v1/plan makes them
 * (slo_factor 1.3), at LP positions spread evenly over the LP model's
 * operators; the p50 and p90 of their CPU time (this thread's) against the
 * HP request's own GPU time (its operators' standalone whole-GPU durations,
 * the plan's alone_ns), in the same run. Three times: with the model's
 * window-pair memo kept from request to request (as a server keeps it), with
 * it emptied before each request, and without it (the path before it); each
 * line ends with a hash of its plans, equal on the three lines when the memo
 * changes no plan.
 */
#include "common/common.h"
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double thread_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Folds what a plan says (its totals and steps, not its run time) into h. */
static uint64_t plan_hash(uint64_t h, const ps_plan_t *pl)
{
    double d[] = {pl->budget_ns, pl->planned_ns,     pl->alone_ns,        pl->lp_work_ns,
                  pl->mu,        (double)pl->lp_end, (double)pl->n_steps, (double)pl->n_predictions};
    for (size_t i = 0; i < PS_ARRAY_LEN(d); i++)
        h = psi_pair_memo_hash(h, &d[i], sizeof d[i]);
    for (size_t i = 0; i < pl->n_steps; i++) {
        const ps_plan_step_t *st = &pl->steps[i];
        int k[] = {st->hp_start, st->hp_len, st->hp_tpcs, st->lp_start, st->lp_len, st->lp_tpcs};
        double v[] = {st->hp_ns, st->lp_ns, st->hp_bound_ns, st->lp_bound_ns, st->step_ns, st->lp_work_ns};
        h = psi_pair_memo_hash(psi_pair_memo_hash(h, k, sizeof k), v, sizeof v);
    }
    return h;
}

/* How per_request treats the model's window-pair memo (src/model/pair_memo.c). */
enum { MEMO_KEPT, MEMO_COLD, MEMO_NONE };
static const char *const memo_names[] = {"memo kept across the requests, as a server keeps it",
                                         "memo emptied before each request (a pair reused within its plan only)",
                                         "no memo (every candidate predicted, as before the memo)"};

/* One request as the service plans it, slo_factor 1.3; its plan's HP alone
 * time into *alone_ns, LP work into *work_ns and its content into *hash;
 * the CPU seconds it took. */
static double plan_request(const ps_model_t *m, const ps_ops_t *ops, ps_plan_params_t p, double *alone_ns,
                           double *work_ns, uint64_t *hash)
{
    double t0 = thread_now();
    ps_plan_t *pl = NULL;
    p.budget_ns = 0;
    p.slo_factor = 1.3;
    if (ps_plan(m, ops, &p, &pl) != PS_OK)
        return -1;
    double t = thread_now() - t0;
    *alone_ns = pl->alone_ns;
    *work_ns += pl->lp_work_ns;
    *hash = plan_hash(*hash, pl);
    ps_plan_free(pl);
    return t;
}

static int per_request(ps_model_t *m, const ps_ops_t *ops, ps_plan_params_t p, int n, int mode)
{
    const psi_op_group_t *g = psi_ops_find(ops, p.gpu ? p.gpu : m->gpu, p.lp_model, p.lp_batch);
    double *t = calloc((size_t)n, sizeof *t), alone = 0, work = 0;
    if (!g || !t) {
        free(t);
        return 1;
    }
    psi_pair_memo_t *memo = m->pair_memo;
    if (memo)
        psi_pair_memo_clear(memo);
    if (mode == MEMO_NONE)
        m->pair_memo = NULL;
    uint64_t hash = 1;
    for (int r = 0; r < n; r++) {
        p.lp_start = (int)((long long)r * g->n_ops / n);
        if (mode == MEMO_COLD && memo)
            psi_pair_memo_clear(memo);
        if ((t[r] = plan_request(m, ops, p, &alone, &work, &hash)) < 0) {
            free(t);
            return 1;
        }
    }
    m->pair_memo = memo;
    qsort(t, (size_t)n, sizeof *t, by_value);
    double p50 = t[n / 2], p90 = t[(9 * n) / 10 < n ? (9 * n) / 10 : n - 1];
    printf("per request (%s): %d plans of %s:%d beside %s:%d at LP positions 0..%d, slo_factor 1.3: CPU p50 %.3f "
           "ms, p90 %.3f ms; the HP request's own GPU time %.3f ms; p50 / own time %.2f; mean LP work %.1f us; "
           "plans %016llx\n",
           memo_names[mode], n, p.hp_model, p.hp_batch, p.lp_model, p.lp_batch, g->n_ops - 1, 1e3 * p50, 1e3 * p90,
           alone / 1e6, p50 / (alone * 1e-9), work / n / 1e3, (unsigned long long)hash);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    char hp[64], lp[64];
    ps_plan_params_t p = ps_plan_default_params();
    if (argc < 5 || ps_model_batch_parse(argv[3], hp, &p.hp_batch) || ps_model_batch_parse(argv[4], lp, &p.lp_batch)) {
        fprintf(stderr, "usage: bench_plan MODEL OPS HP:BATCH LP:BATCH [reps] [requests] [kept|emptied|none]\n");
        return 2;
    }
    static const char *const mode_keys[] = {"kept", "emptied", "none"};
    int only = -1;
    for (int k = 0; argc > 7 && k < 3; k++)
        if (strcmp(argv[7], mode_keys[k]) == 0)
            only = k;
    if (argc > 7 && only < 0) {
        fprintf(stderr, "bench_plan: memo mode '%s' is none of kept, emptied, none\n", argv[7]);
        return 2;
    }
    int reps = argc > 5 ? atoi(argv[5]) : 5;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    if (ps_model_load(argv[1], &m) || ps_ops_load(argv[2], &ops)) {
        fprintf(stderr, "bench_plan: %s\n", ps_last_error());
        return 1;
    }
    p.hp_model = hp;
    p.lp_model = lp;
    p.budget_ns = 1e18;
    double best = 0;
    long n = 0;
    for (int r = 0; r < reps; r++) {
        ps_plan_t *pl = NULL;
        if (m->pair_memo) /* each rep from an empty memo: the same work each time */
            psi_pair_memo_clear(m->pair_memo);
        double t0 = cpu_now();
        if (ps_plan(m, ops, &p, &pl) != PS_OK) {
            fprintf(stderr, "bench_plan: %s\n", ps_last_error());
            return 1;
        }
        double t = cpu_now() - t0, rate = (double)pl->n_predictions / t;
        n = pl->n_predictions;
        if (r == 0)
            printf("plan: %zu steps, planned %.17g ns, LP work %.17g ns\n", pl->n_steps, pl->planned_ns,
                   pl->lp_work_ns);
        best = rate > best ? rate : best;
        ps_plan_free(pl);
    }
    printf("plan %s:%d beside %s:%d coverage %.2f: %ld predictions, best %.0f predictions/s (%.2f ms)\n", hp,
           p.hp_batch, lp, p.lp_batch, p.coverage, n, best, 1e3 * (double)n / best);
    for (int mode = MEMO_KEPT; mode <= MEMO_NONE; mode++)
        if ((only < 0 || mode == only) && per_request(m, ops, p, argc > 6 ? atoi(argv[6]) : 40, mode) != 0) {
            fprintf(stderr, "bench_plan: %s\n", ps_last_error());
            return 1;
        }
    ps_model_free(m);
    ps_ops_free(ops);
    return 0;
}
