/*
 * The classic models' kernels, derived once from measured V100 profiles (the
 * Orion per-kernel profiles in ../shared/data/orion-v100/ops.csv) and
 * compiled into the library from data/orion_kernels.inc, so that the product
 * never reads ../shared at run time. `pairsight simulate --derive OPS_CSV`
 * regenerates data/orion_kernels.inc (docs/simulator.md, "Workloads").
 */
#ifndef PS_SIMULATE_DERIVE_H
#define PS_SIMULATE_DERIVE_H

#include "profile/tables.h"

#include <stdio.h>

typedef struct {
    const char *model;
    int batch; /* batch size the source profiled */
    const char *name;
    char cls;       /* 'c' compute, 'm' memory, 'u' unknown: the source's class */
    double v100_ns; /* measured V100 duration */
    double flops, dram_bytes, weight_bytes, l2_bytes;
    double ctas, ctas_per_sm, lat_rounds, flop_eff;
    double threads;  /* threads per block (the launch configuration of its kind) */
    double sm_usage; /* Orion's SM_usage: SMs its blocks fill in one wave on the V100; 0 unknown */
} sim_derived_t;

/* The compiled-in table (static storage). */
const sim_derived_t *psi_sim_derived_table(size_t *n);

/*
 * Derive the kernels of the rows of a measured profile (one GPU, one TPC
 * count: the whole V100) and write them to f as the initializer lines of
 * data/orion_kernels.inc. gpu names the GPU of the rows in the catalog
 * (e.g. "V100-SXM2-16GB"). Each kernel's work is the amount that makes the
 * twin's own standalone time on that GPU equal the measured duration.
 */
int psi_sim_derive_write(const psi_op_row_t *rows, size_t n, const char *gpu, FILE *f);

/* Derive one kernel (exposed for the tests). */
int psi_sim_derive_kernel(const psi_op_row_t *row, const char *gpu, sim_derived_t *out);

#endif
