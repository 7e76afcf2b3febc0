/*
 * Internal machinery of the table readers and writers (src/profile): the
 * string pool, a hash set of row keys, the column schemas of FORMATS.md and
 * the generic CSV loader and saver built on them. Nothing here is part of the
 * public API; other stages use tables.h.
 */
#ifndef PS_PROFILE_INTERNAL_H
#define PS_PROFILE_INTERNAL_H

#include "common/common.h"
#include "profile/csv.h"
#include "profile/tables.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- string pool ---- */

/* Interned strings live in arena chunks owned by the pool; equal strings get
 * equal pointers, so rows compare text by pointer. */
/* FNV-1a of s[0..len), avalanched: the pool's hash, also used where a
 * string is kept only as its hash. */
uint64_t psi_hash_bytes(const char *s, size_t len);
psi_strpool_t *psi_strpool_new(void);
void psi_strpool_free(psi_strpool_t *p);
/* The pooled copy of s[0..len) (NUL-terminated), or NULL when out of memory. */
const char *psi_strpool_intern_n(psi_strpool_t *p, const char *s, size_t len);
const char *psi_strpool_intern(psi_strpool_t *p, const char *s);

/* ---- hash set of row indices, for key checks ---- */

/* Rows are identified by index; the caller gives each row's hash and an
 * equality test over two indices. The set is sized once for n rows. */
typedef int (*psi_row_eq_fn)(const void *ctx, size_t a, size_t b);
typedef struct {
    size_t *row1; /* row index + 1; 0 = empty slot */
    uint64_t *hash;
    size_t mask;
} psi_keyset_t;

int psi_keyset_init(psi_keyset_t *s, size_t n);
void psi_keyset_free(psi_keyset_t *s);
/* Insert row; when an equal row is already there return its index, else
 * return SIZE_MAX (row was inserted). */
size_t psi_keyset_insert(psi_keyset_t *s, size_t row, uint64_t hash, psi_row_eq_fn eq, const void *ctx);

static inline uint64_t psi_hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}
static inline uint64_t psi_hash_ptr(uint64_t h, const void *p) { return psi_hash_mix(h, (uint64_t)(uintptr_t)p); }
/* Final avalanche, so that slot = hash & mask spreads well. */
static inline uint64_t psi_hash_final(uint64_t z) { return psi_mix64(z); }

/* ---- schemas ---- */

typedef enum { PS_COL_TEXT, PS_COL_INT, PS_COL_FLOAT, PS_COL_INTENSITY } psi_coltype_t;

/* One column of a table: its name, type, whether an empty cell is allowed,
 * the allowed range [lo, hi] (lo excluded when lo_open), and where the value
 * lives in the row struct. */
typedef struct {
    const char *name;
    psi_coltype_t type;
    int optional;
    double lo, hi;
    int lo_open;
    size_t offset;
} psi_column_t;

/* The first row that breaks a table-level rule (key, gap, consistency):
 * row and column name, a message, and optionally another row it conflicts
 * with (SIZE_MAX when none). Callers turn rows into lines or row numbers. */
typedef struct {
    size_t row;
    size_t other;
    const char *column;
    char msg[400];
} psi_rowerr_t;

/* A table kind: its columns and the operations the generic loader and saver
 * need. Table pointers are passed as void *. */
typedef struct {
    ps_table_kind_t kind;
    const char *name;
    const psi_column_t *cols;
    size_t ncols;
    size_t row_size;
    void *(*create)(void);
    void (*destroy)(void *t);
    int (*append)(void *t, const void *row);
    /* Checks values and keys; on a violation fills *e and returns PS_E_INPUT. */
    int (*validate)(void *t, psi_rowerr_t *e);
    const void *(*rows)(const void *t, size_t *n);
    size_t (*groups)(const void *t);
} psi_schema_t;

const psi_schema_t *psi_schema_get(ps_table_kind_t kind);

/* Table-level rules of each table (values, keys, consistency); the first
 * violation goes to *e. psi_ops_index is the ops counterpart. */
int psi_coexec_validate(ps_coexec_t *t, psi_rowerr_t *e);
/* The first key column in which two coexec rows of one experiment differ
 * (pooled strings compared by pointer), or NULL when they agree. */
const char *psi_coexec_key_diff(const psi_coexec_row_t *a, const psi_coexec_row_t *b);

/* Group counts of `pairsight check` (tables_groups.c): distinct (gpu, model,
 * batch) sides of a coexec table, workloads of a scaling table, co-locations
 * of a colocations table (0 when a count cannot be made). psi_colo_eq_id: two
 * colocation rows of one co-location, for psi_keyset_insert. */
size_t psi_coexec_groups(const void *t);
size_t psi_scaling_groups(const void *t);
size_t psi_colocations_groups(const void *t);
int psi_colo_eq_id(const void *rows, size_t a, size_t b);

/* Check a row's values against the column ranges; fills *e (with e->row
 * unset) and returns PS_E_INPUT on the first violation. */
int psi_schema_check_row(const psi_schema_t *s, const void *row, psi_rowerr_t *e);

/* Reads a whole table from an open tokenizer (positioned before the header).
 * kind PS_TABLE_UNKNOWN detects it from the header. On success *out is the
 * table (of the kind stored in *kind_out); on error nothing is kept. */
int psi_table_load_csv(psi_csv_t *csv, ps_table_kind_t kind, ps_table_kind_t *kind_out, void **out);
int psi_table_save_any(const psi_schema_t *s, const void *t, const char *path);

/* A decimal number in the C locale into *out; NaN, infinities, hex and
 * spaces are refused with a reason in *why. Returns 0 or -1. */
int psi_parse_double(const char *s, double *out, const char **why);

/* Every table kind of the public API as X(type, stem, kind), for the
 * functions made once per kind: ps_<stem>_load (tableio.c) and
 * ps_table_builder_finish_<stem> (builder.c). */
#define PSI_TABLE_KINDS(X)                                                                                             \
    X(ps_ops_t, ops, PS_TABLE_OPS)                                                                                     \
    X(ps_coexec_t, coexec, PS_TABLE_COEXEC)                                                                            \
    X(ps_workloads_t, workloads, PS_TABLE_WORKLOADS)                                                                   \
    X(ps_scaling_t, scaling, PS_TABLE_SCALING)                                                                         \
    X(ps_colocations_t, colocations, PS_TABLE_COLOCATIONS)

/* ---- importers ---- */

/* Checks model, batch and tpcs (and that a given GPU name is not empty). */
int psi_import_check_params(const ps_import_params_t *p);
/* qsort's answer for two records of an import ordered by a key (key_cmp:
 * < 0, 0, > 0) and, between equal keys, in the order they were read (seq),
 * so that the order is stable whatever qsort does. */
static inline int psi_import_order(int key_cmp, size_t seq_a, size_t seq_b)
{
    return key_cmp ? key_cmp : (seq_a > seq_b) - (seq_a < seq_b);
}
/* The start of an importer of a file: *out cleared, the parameters checked
 * and path opened for reading into *f (the caller's to close). */
int psi_import_open(const char *path, const ps_import_params_t *p, ps_ops_t **out, FILE **f);
/* Appends kernel `op` of an import as one ops row (counters may be NULL). */
int psi_import_add(ps_ops_t *t, const ps_import_params_t *p, int op, const char *name, double duration_ns,
                   const psi_counters_t *c);
/* Refuses an import without kernels, indexes it and hands it to *out (or
 * frees it on error); counts its operators and time into info (may be
 * NULL). Takes the table: *t is NULL after, whatever the result. */
int psi_import_finish(ps_ops_t **t, const char *path, ps_ops_t **out, ps_import_info_t *info);

/* The GPU the rows name: --gpu as the catalog writes it, else the file's
 * (mapped to the catalog where it knows the name, else as written, with a
 * warning). Refuses tpcs beyond the GPU's TPCs (PS_E_ARG). *q is p with the
 * GPU set (file_gpu must outlive it). */
int psi_import_resolve_gpu(const ps_import_params_t *p, const char *file_gpu, ps_import_params_t *q,
                           ps_import_info_t *info);

/* Kernels and time per process, device or stream (keys are pooled, so
 * compared by pointer), for choosing one and saying what was left. */
typedef struct {
    const char *key;
    size_t n, n_comm;
    double ns, ns_comm;
} import_tally_t;
typedef struct {
    import_tally_t *t;
    size_t n, cap;
} import_tallies_t;
int psi_import_tally_add(import_tallies_t *ts, const char *key, double ns, int comm);
/* The tally with the most time (of compute kernels only, when asked; first
 * seen wins a tie), or SIZE_MAX when none has any. */
size_t psi_import_tally_busiest(const import_tallies_t *ts, int compute_only);
/* Appends "what KEY: N kernels, T" to info->skipped for each tally not taken. */
void psi_import_tally_left(const import_tallies_t *ts, const char *what, const int *taken, ps_import_info_t *info);
void psi_import_tallies_free(import_tallies_t *ts);
/* Appends to a "; "-separated note in buf[n] (cut to fit). */
void psi_import_note(char *buf, size_t n, const char *fmt, ...) PS_PRINTF(3, 4);
/* Appends item to a ", "-separated list in buf[n]. */
void psi_import_list(char *buf, size_t n, const char *item);

/* The importers over a file, an open tokenizer and JSON (or gzip) bytes in
 * memory (the fuzzers call the last two); info may be NULL. */
int psi_import_ncu_file(const char *path, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info);
int psi_import_torch_file(const char *path, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info);
int psi_import_nsys_file(const char *path, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info);
int psi_import_ncu_csv(psi_csv_t *csv, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info);
int psi_import_torch_bytes(const char *data, size_t len, const char *name, const ps_import_params_t *p, ps_ops_t **out,
                           ps_import_info_t *info);

/* The longest operator a profile may hold: one hour (3.6e12 ns). A profile
 * records one run of a model, seconds long, and no single GPU kernel of a
 * training or inference step runs for hours; beyond this a duration is a
 * damaged or hostile file (a torch trace's dur of 2^64 us was written as
 * 1.8e22 ns). The bound also keeps every duration exact in a double's 53
 * bits (3.6e12 < 2^53) and an int64 of ns far from overflow when summed over
 * millions of operators. */
#define PSI_MAX_OP_NS 3.6e12

#endif
