/*
 * pairsight.h - predict how much deep-learning tasks slow each other down when
 * they share one NVIDIA GPU, and choose which tasks to co-locate.
 *
 * Overview
 * --------
 * The data goes one way through the stages below; each is a folder of src/
 * and a section of one of the headers this umbrella includes (in brackets),
 * in this order:
 *
 *   tables      src/profile    [core] the CSV tables of docs/FORMATS.md: per-operator
 *                              standalone profiles (ops.csv), measured
 *                              co-executions (coexec.csv) and the
 *                              workload-level tables; readers and writers
 *   import      src/profile    [collect] Nsight Compute and PyTorch traces -> ops.csv
 *   simulate    src/simulate   [collect] a GPU twin that writes a whole campaign
 *   features    src/features   [core] segment pairs -> fixed-layout feature vectors
 *   model       src/model      [core] the PairSight segment model: two XGBoost
 *                              regressors, training, adaptation, files
 *   prediction  src/model      [core] window composition, fast batch prediction,
 *                              explanations
 *   evaluation  src/evaluate   [eval] the baselines and the published experiments
 *   co-location src/colocate   [colocate] workload-level co-location under MPS
 *   overlap     src/profile,   [overlap] overlap.csv (co-runs of k operator-group
 *               src/evaluate   ranges), its import from Abacus, the makespan
 *                              predictors and the twin scored against them
 *   decision    src/decision   [core] calibrated upper bounds, the co-location
 *                              planner; [eval] replay of request streams on
 *                              the twin
 *   collector   src/collect    [collect] measuring ops.csv and coexec.csv on a GPU
 * (src/common holds errors, logging, memory and atomic files; src/cli the
 * `pairsight` program.)
 *
 * Conventions
 * -----------
 * - Every function that can fail returns 0 (PS_OK) or a negative PS_E_* code
 *   and leaves a thread-local message for ps_last_error(); outputs come last.
 *   The few functions that return a count, a name or a flag say so.
 * - Handles are opaque (ps_model_t, ps_ops_t, ...), created by _load, _train,
 *   _open or _run and released by _free, which accepts NULL. On failure an
 *   output handle is set to NULL and nothing is kept.
 * - Parameter structs come from a `_default_params()` function that returns
 *   them by value; change the fields you need and pass a pointer.
 * - Strings and tables passed in are borrowed for the duration of the call
 *   unless a function says otherwise; strings returned are owned by the
 *   library (static, or living as long as the handle they come from).
 * - Seeds are uint64_t; long work reports through one ps_progress_fn.
 * - The library never exits and never prints except through the log
 *   callback (ps_log_set).
 * - Thread safety is stated per type: loaded tables, models, baselines and
 *   co-location models are read-only and may be read from several threads
 *   at once unless their section says otherwise; a campaign is used by one
 *   thread at a time.
 *
 * Example
 * -------
 * Predict the HP and LP latency of one candidate pair of segments, on the
 * files that scripts/run.sh writes (out/ops.csv and out/model.psm); 27/27 is
 * one of the SM splits of that campaign. tests/test_header_example.sh
 * compiles and runs this program.
 *
 *     #include <pairsight.h>
 *     #include <stdio.h>
 *
 *     int main(void)
 *     {
 *         ps_ops_t *ops = NULL;
 *         ps_model_t *model = NULL;
 *         int rc = ps_ops_load("out/ops.csv", &ops);
 *         if (rc == PS_OK)
 *             rc = ps_model_load("out/model.psm", &model);
 *         ps_query_t q = {.gpu = "A100-SXM4-40GB",
 *                         .hp_model = "resnet50", .hp_batch = 8, .hp_start = 0, .hp_len = 16,
 *                         .lp_model = "bert-base", .lp_batch = 8, .lp_start = 40, .lp_len = 16,
 *                         .hp_tpcs = 27, .lp_tpcs = 27};
 *         double hp_ns = 0, lp_ns = 0;
 *         if (rc == PS_OK)
 *             rc = ps_model_predict(model, ops, &q, 1, &hp_ns, &lp_ns);
 *         if (rc == PS_OK)
 *             printf("HP %.0f ns, LP %.0f ns\n", hp_ns, lp_ns);
 *         else
 *             fprintf(stderr, "%s\n", ps_last_error());
 *         ps_model_free(model);
 *         ps_ops_free(ops);
 *         return rc == PS_OK ? 0 : 1;
 *     }
 *
 * End of example.
 */
#ifndef PAIRSIGHT_H
#define PAIRSIGHT_H

/* One header per audience; this umbrella includes them all, so a program
 * written against the single header of earlier versions compiles unchanged.
 * A program may instead include only the ones it needs (each includes
 * pairsight_core.h). */
#include "pairsight_core.h"     /* errors, tables, features, model, prediction, bounds, plan, bindings */
#include "pairsight_collect.h"  /* importers, simulator, collector */
#include "pairsight_eval.h"     /* baselines, accuracy, replay */
#include "pairsight_colocate.h" /* workload-level co-location */
#include "pairsight_overlap.h"  /* overlap.csv, the overlap predictor, its twin, import abacus */

#endif /* PAIRSIGHT_H */
