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
 * Usage: bench_plan MODEL OPS HP:BATCH LP:BATCH [reps (default 5)] [requests (default 40)]
 * Prints the plan's figures too, so that two builds can be checked to plan
 * the same (a hash of the plan JSON without its timing).
 *
 * Then the per-request figure (issue 40): `requests` plans of one HP request
 * with the budget 1.3 x its alone time, as POST /v1/plan makes them
 * (slo_factor 1.3), at LP positions spread evenly over the LP model's
 * operators; the p50 and p90 of their CPU time (this thread's) against the
 * HP request's own GPU time (its operators' standalone whole-GPU durations,
 * the plan's alone_ns), in the same run.
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

static int model_batch(const char *s, char *name, int *batch)
{
    const char *c = strrchr(s, ':');
    if (!c || c - s > 63)
        return -1;
    memcpy(name, s, (size_t)(c - s));
    name[c - s] = 0;
    *batch = atoi(c + 1);
    return *batch > 0 ? 0 : -1;
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

/* One request as the service plans it, slo_factor 1.3; its plan's HP alone
 * time into *alone_ns, LP work into *work_ns; the CPU seconds it took. */
static double plan_request(const ps_model_t *m, const ps_ops_t *ops, ps_plan_params_t p, double *alone_ns,
                           double *work_ns)
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
    ps_plan_free(pl);
    return t;
}

static int per_request(const ps_model_t *m, const ps_ops_t *ops, ps_plan_params_t p, int n)
{
    const psi_op_group_t *g = psi_ops_find(ops, p.gpu ? p.gpu : m->gpu, p.lp_model, p.lp_batch);
    double *t = calloc((size_t)n, sizeof *t), alone = 0, work = 0;
    if (!g || !t) {
        free(t);
        return 1;
    }
    for (int r = 0; r < n; r++) {
        p.lp_start = (int)((long long)r * g->n_ops / n);
        if ((t[r] = plan_request(m, ops, p, &alone, &work)) < 0) {
            free(t);
            return 1;
        }
    }
    qsort(t, (size_t)n, sizeof *t, by_value);
    double p50 = t[n / 2], p90 = t[(9 * n) / 10 < n ? (9 * n) / 10 : n - 1];
    printf("per request: %d plans of %s:%d beside %s:%d at LP positions 0..%d, slo_factor 1.3: CPU p50 %.3f ms, "
           "p90 %.3f ms; the HP request's own GPU time %.3f ms; p50 / own time %.2f; mean LP work %.1f us\n",
           n, p.hp_model, p.hp_batch, p.lp_model, p.lp_batch, g->n_ops - 1, 1e3 * p50, 1e3 * p90, alone / 1e6,
           p50 / (alone * 1e-9), work / n / 1e3);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    char hp[64], lp[64];
    ps_plan_params_t p = ps_plan_default_params();
    if (argc < 5 || model_batch(argv[3], hp, &p.hp_batch) || model_batch(argv[4], lp, &p.lp_batch)) {
        fprintf(stderr, "usage: bench_plan MODEL OPS HP:BATCH LP:BATCH [reps]\n");
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
    if (per_request(m, ops, p, argc > 6 ? atoi(argv[6]) : 40) != 0) {
        fprintf(stderr, "bench_plan: %s\n", ps_last_error());
        return 1;
    }
    ps_model_free(m);
    ps_ops_free(ops);
    return 0;
}
