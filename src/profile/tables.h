/*
 * In-memory rows of the tables of FORMATS.md. This header is the contract
 * between the readers and writers (src/profile), the simulator, the
 * collector, the features and the co-location predictors.
 *
 * Strings in a table are interned in the table's own pool: rows hold pointers
 * into it, valid until the table is freed, and equal strings of one table have
 * equal pointers. Optional numeric cells that were empty hold NAN; an empty
 * optional text cell is NULL.
 */
#ifndef PS_PROFILE_TABLES_H
#define PS_PROFILE_TABLES_H

#include "pairsight.h"

#include <math.h>

typedef struct psi_strpool psi_strpool_t;

/* ---- ops.csv ---- */

typedef enum {
    PS_INTENSITY_NONE = -1, /* empty cell */
    PS_INTENSITY_UNKNOWN = 0,
    PS_INTENSITY_COMPUTE = 1,
    PS_INTENSITY_MEMORY = 2
} psi_intensity_t;

typedef struct {
    double dram_bytes, l2_bytes;
    double stall_long_scoreboard, stall_lg_throttle, stall_mio_throttle;
    double sm_pct, mem_pct;
} psi_counters_t;

typedef struct {
    const char *gpu, *model;
    int batch, op;
    const char *name;
    int tpcs;
    double duration_ns;
    psi_intensity_t intensity;
    psi_counters_t c; /* NAN where not measured */
    const char *source; /* NULL: measured; "twin-ratio": estimated (FORMATS.md) */
} psi_op_row_t;

/*
 * One (gpu, model, batch) of ops.csv seen as a dense matrix: what features and
 * the simulator need. Built by psi_ops_index() (the loader calls it).
 */
typedef struct {
    const char *gpu, *model;
    int batch;
    int n_ops;
    int n_tpcs;
    int *tpcs;           /* [n_tpcs] ascending TPC counts seen for this group */
    double *duration_ns; /* [op * n_tpcs + k]: at tpcs[k]; NAN if not measured */
    const char **names;  /* [n_ops] */
    psi_intensity_t *intensity; /* [n_ops] */
    psi_counters_t *counters;   /* [n_ops]: each counter from the row with the
                                  most TPCs that has it (FORMATS.md) */
} psi_op_group_t;

struct ps_ops {
    psi_op_row_t *rows;
    size_t n, cap;
    psi_strpool_t *pool;
    psi_op_group_t *groups; /* built by psi_ops_index(), in first-seen order */
    size_t n_groups;
};

/* Rows whose duration was estimated, not measured (a source, FORMATS.md). */

/* An empty table, to fill with ps_ops_append (strings are copied). */
ps_ops_t *ps_ops_new(void);
int ps_ops_append(ps_ops_t *t, const psi_op_row_t *row);
/* Validate values (ranges of FORMATS.md, tpcs within a catalogued GPU), keys
 * (no duplicate, no gap in op indices) and build groups. On error the message
 * names the first offending row (1-based data row). Loaders call it. */
int psi_ops_index(ps_ops_t *t);
const psi_op_group_t *psi_ops_find(const ps_ops_t *t, const char *gpu, const char *model, int batch);
/* What a failed lookup can offer instead, for messages that point the way:
 * the (model, batch) groups of gpu in t ("resnet50 batch 8, bert-base batch
 * 8"; every GPU's when none is of gpu) and the TPC counts of g ("5, 11, 27,
 * 54"), into buf[n] (cut with "..." when long). Return buf. */
const char *psi_ops_groups_text(const ps_ops_t *t, const char *gpu, char *buf, size_t n);
const char *psi_group_tpcs_text(const psi_op_group_t *g, char *buf, size_t n);
/* Index of tpcs in g->tpcs, or -1. */
int psi_group_tpcs_index(const psi_op_group_t *g, int tpcs);
/* Sum of duration_ns over ops [start, start+len) at tpcs; NAN when any is
 * missing or the range is outside the group. */
double psi_group_segment_ns(const psi_op_group_t *g, int start, int len, int tpcs);

/* ---- coexec.csv ---- */

/* The public ps_coexec_row_t (pairsight_core.h) under its internal name. */
typedef ps_coexec_row_t psi_coexec_row_t;

struct ps_coexec {
    psi_coexec_row_t *rows;
    size_t n, cap;
    psi_strpool_t *pool;
};

ps_coexec_t *ps_coexec_new(void);
int ps_coexec_append(ps_coexec_t *t, const psi_coexec_row_t *row);

/* ---- workloads.csv ---- */

typedef ps_workload_row_t psi_workload_row_t; /* public (pairsight_core.h) */

struct ps_workloads {
    psi_workload_row_t *rows;
    size_t n, cap;
    psi_strpool_t *pool;
};

/* _new and _append: pairsight_core.h */

/* ---- workload_scaling.csv ---- */

typedef ps_scaling_row_t psi_scaling_row_t; /* public (pairsight_core.h) */

struct ps_scaling {
    psi_scaling_row_t *rows;
    size_t n, cap;
    psi_strpool_t *pool;
};

/* _new and _append: pairsight_core.h */

/* ---- colocations.csv ---- */

typedef ps_colocation_row_t psi_colocation_row_t; /* public: pairsight_core.h */

struct ps_colocations {
    psi_colocation_row_t *rows;
    size_t n, cap;
    psi_strpool_t *pool;
};

/* ps_colocations_new, ps_colocations_append: public (pairsight_core.h). */

/* ---- cross-file checks (colocheck.c): ps_table_check_workloads (public) ---- */

#endif
