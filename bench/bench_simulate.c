/*
 * Speed of the simulator on the paper's campaign size: 52k experiments x 14
 * runs = 728k co-execution samples on the A100 with the six models, 1..16
 * operators per side. Prints samples per second for the simulation alone
 * and with both CSV files written, and the ratio against the budget of one
 * minute (issue 3).
 *
 * usage: bench_simulate [experiments] [threads]   (defaults 52000, 0 = all cores)
 */
#include "pairsight.h"
#include "common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    ps_sim_params_t p = ps_sim_default_params();
    p.experiments = argc > 1 ? atol(argv[1]) : 52000;
    p.threads = argc > 2 ? atoi(argv[2]) : 0;
    p.seed = 42;
    double t0 = psi_now();
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    if (ps_sim_run(&p, &ops, &cx) != 0) {
        fprintf(stderr, "bench_simulate: %s\n", ps_last_error());
        return 1;
    }
    double t_sim = psi_now() - t0;
    char dir[] = "/tmp/psi_bench_simXXXXXX", ops_path[64], cx_path[64];
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(ops_path, sizeof ops_path, "%s/ops.csv", dir);
    snprintf(cx_path, sizeof cx_path, "%s/coexec.csv", dir);
    double t1 = psi_now();
    int rc = ps_ops_save(ops, ops_path) || ps_coexec_save(cx, cx_path);
    double t_save = psi_now() - t1;
    if (rc)
        fprintf(stderr, "bench_simulate: %s\n", ps_last_error());
    double samples = (double)ps_coexec_rows(cx);
    printf("campaign: %ld experiments x %d runs = %.0f samples, %zu operator rows, threads %d\n", p.experiments,
           p.runs, samples, ps_ops_rows(ops), p.threads);
    printf("simulate:         %7.2f s  %10.0f samples/s\n", t_sim, samples / t_sim);
    printf("simulate + write: %7.2f s  %10.0f samples/s\n", t_sim + t_save, samples / (t_sim + t_save));
    printf("budget 60 s for 730k samples: %.1fx faster than required\n",
           60.0 / ((t_sim + t_save) * 730000.0 / samples));
    remove(ops_path);
    remove(cx_path);
    rmdir(dir);
    ps_ops_free(ops);
    ps_coexec_free(cx);
    return rc;
}
