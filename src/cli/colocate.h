/* `pairsight colocate`: the options of its subcommands as parsed, and the
 * subcommands written in files of their own. cmd_colocate.c parses every
 * subcommand's options (its option tables) into one cli_coloc_opts_t and runs
 * the subcommand's row; select, place and shares read the fields they take. */
#ifndef PS_CLI_COLOCATE_H
#define PS_CLI_COLOCATE_H

#include "cli/cli.h"

/* Every option of the subcommands (a subcommand leaves the others at their
 * defaults); the file paths as given (NULL: not given). */
typedef struct {
    const char *sub, *workloads, *scaling, *colocations, *test, *out, *model, *kind, *target, *candidates, *shares,
        *predictors, *gpu, *transfer, *auto_kinds, *auto_rule, *as, *jobs, *gpus, *cases, *splits, *set, *objective,
        *floor, *slo, *emit;
    double train_frac;
    int seeds, unseen, test_alone, json, quiet, trees, epochs, rounds, unseen_pairs, place, max_per_gpu, step,
        max_total;
    uint64_t seed;
    ps_coloc_place_params_t place_params; /* place: --max-per-gpu and --time-limit (the colocate_place operation's
                                      table), --allow-wait */
} cli_coloc_opts_t;

/* The tables of --workloads, --scaling, --colocations and the second
 * colocations file (--test, --transfer or --unseen-splits), loaded and
 * checked against the workloads; NULL where not given. */
typedef struct {
    ps_workloads_t *w;
    ps_scaling_t *s;
    ps_colocations_t *c, *t;
} cli_coloc_tables_t;

/* colocate select (cmd_colocate_select.c): rank the candidates. */
int cmd_colocate_select(const cli_coloc_opts_t *o);
/* colocate shares (cmd_colocate_shares.c): the request built from the
 * options, ps_coloc_shares_json, its reply printed or emitted. */
int cmd_colocate_shares(const cli_coloc_opts_t *o);
/* colocate place on t's workloads and scaling (cmd_colocate_place.c). */
int cmd_colocate_place(const cli_coloc_opts_t *o, const cli_coloc_tables_t *t);
/* colocate eval --place: the placement cases of --cases scored with p on
 * t's tables (cmd_colocate_place.c). */
int cmd_colocate_eval_place(const cli_coloc_opts_t *o, const ps_coloc_eval_params_t *p, const cli_coloc_tables_t *t);

#endif
