/*
 * Loading speed of the table readers on a paper-sized campaign: writes a
 * coexec.csv of N rows (default 730000, the size of the paper's campaign;
 * 10 runs per experiment) and an ops.csv of 6 models x 12 TPC counts, then
 * times ps_coexec_load, ps_table_check and ps_coexec_save. The target is a
 * load well under 2 s.
 *
 * usage: bench_tables [ROWS] [DIR]   (DIR default /tmp)
 */
#include "common/common.h"
#include "profile/tables.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *models[] = {"resnet50", "resnet101", "mobilenetv2", "bert-base",
                               "llama-3.2-1b", "llama-3.2-3b"};

int main(int argc, char **argv)
{
    size_t rows = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 730000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    char path[512], out[512];
    snprintf(path, sizeof path, "%s/bench_coexec_%ld.csv", dir, (long)getpid());
    snprintf(out, sizeof out, "%s/bench_coexec_%ld.out.csv", dir, (long)getpid());

    /* A deterministic campaign: segment starts and splits from an LCG. */
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fputs("experiment,gpu,hp_model,hp_batch,hp_start,hp_len,lp_model,lp_batch,lp_start,lp_len,"
          "hp_tpcs,lp_tpcs,hp_ns,lp_ns,mechanism\n",
          f);
    unsigned long long s = 42;
    int hm = 0, lm = 0, hs = 0, ls = 0, ht = 0;
    for (size_t i = 0; i < rows; i++) {
        if (i % 10 == 0) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            hm = (int)((s >> 33) % 6);
            lm = (int)((s >> 40) % 6);
            hs = (int)((s >> 20) % 200);
            ls = (int)((s >> 12) % 200);
            ht = 6 + (int)((s >> 50) % 48);
        }
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double noise = 1.0 + (double)((s >> 40) % 1000) / 10000.0;
        fprintf(f, "exp%zu,H200,%s,8,%d,16,%s,4,%d,16,%d,%d,%.6f,%.6f,sim\n", i / 10, models[hm], hs,
                models[lm], ls, ht, 66 - ht, 123456.789 * noise, 234567.891 * noise);
    }
    fclose(f);
    struct stat st;
    stat(path, &st);

    /* Wall time, and CPU time of this process (less disturbed by a busy
     * machine). */
    double t0 = psi_now();
    clock_t c0 = clock();
    ps_coexec_t *cx = NULL;
    if (ps_coexec_load(path, &cx) != 0) {
        fprintf(stderr, "%s\n", ps_last_error());
        return 1;
    }
    double t_load = psi_now() - t0;
    double c_load = (double)(clock() - c0) / CLOCKS_PER_SEC;

    t0 = psi_now();
    ps_check_result_t r;
    if (ps_table_check(path, &r) != 0) {
        fprintf(stderr, "%s\n", ps_last_error());
        return 1;
    }
    double t_check = psi_now() - t0;

    t0 = psi_now();
    if (ps_coexec_save(cx, out) != 0) {
        fprintf(stderr, "%s\n", ps_last_error());
        return 1;
    }
    double t_save = psi_now() - t0;

    printf("coexec.csv: %zu rows, %.1f MB\n", ps_coexec_rows(cx), (double)st.st_size / 1e6);
    printf("ps_coexec_load: %.3f s wall, %.3f s CPU (%.0f MB/s); target < 2 s: %.1fx under\n",
           t_load, c_load, (double)st.st_size / 1e6 / t_load, 2.0 / t_load);
    printf("ps_table_check: %.3f s (%zu rows, %zu models)\n", t_check, r.rows, r.groups);
    printf("ps_coexec_save: %.3f s\n", t_save);
    ps_coexec_free(cx);
    remove(path);
    remove(out);
    return 0;
}
