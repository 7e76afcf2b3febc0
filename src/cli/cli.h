/* Shared pieces of the command-line tool: the subcommand table and helpers
 * for messages, exit codes and progress. */
#ifndef PS_CLI_H
#define PS_CLI_H

#include "pairsight.h"

#include "cli/opt.h"

#include <stdio.h>

/* Exit codes of every subcommand. */
enum { CLI_OK = 0, CLI_BAD_INPUT = 1, CLI_USAGE = 2 };

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv); /* argv[0] is the subcommand name */
    const char *summary;              /* one line for `pairsight --help` */
    const char *op;                   /* or the library's operation that cli_op_command runs (fn NULL) */
} cli_command_t;

/* The command of a row that names a library operation (cmd_op.c): its
 * options from the operation's inputs and parameter table, its result
 * (JSON) to --out or standard output. argv[0] is the command's name. */
int cli_op_command(const char *op, int argc, char **argv);

/* JSON text json written as the CLI writes JSON (cli_json_print) to out,
 * atomically, or to standard output when out is NULL; the exit code. */
int cli_write_json(const char *cmd, const char *out, const char *json);

/* Whether s is a plain decimal number: no leading white space, no
 * hexadecimal, inf or nan (which strtod and strtol accept). */
int cli_plain_decimal(const char *s);

/* "pairsight: <cmd>: <message>" on stderr. Returns code, for
 * `return cli_fail(CLI_BAD_INPUT, "train", "%s", ps_last_error());`. */
int cli_fail(int code, const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* s as a whole base-10 integer in lo..hi into *out: 0, or -1 (out untouched)
 * when s is empty, has other text, or is out of range. */
/* A training or evaluation error about a coexec row, which names the
 * row's index only ("coexec row 29 (experiment ...)"), gets the
 * FILE:LINE:COLUMN at which `check` finds a fault of cx_path against ops;
 * any other error is left as it is. @return the message to print (the
 * library's last error, located where it can be), valid until the next call. */
const char *cli_locate_coexec_error(const char *cx_path, const ps_ops_t *ops);
int cli_parse_long(const char *s, long lo, long hi, long *out);

/* cli_parse_long into an int. */
int cli_parse_int(const char *s, long lo, long hi, int *out);

/* Transitional: the option-loop helpers used before src/cli/opt.h, kept so
 * that commands written against them on other branches still build after a
 * merge. New code declares its options in a cli_opt_t table (opt.h). */

/* Up to 4 comma-separated numbers in [lo, hi] (whole numbers when integer)
 * into v and *n: 0, or -1 on anything else (NaN, 1e400, 1.5 for an integer,
 * an empty list, a fifth number). */
int cli_parse_list(const char *s, double lo, double hi, int integer, double *v, int *n);

/* End of the transitional helpers. */

/* Checks, before any long work, that path can be written atomically: its
 * folder exists and is a folder, path itself is not a folder, and it is none
 * of the n files in inputs (NULL entries skipped), which the write would
 * replace. On failure prints "pairsight: <cmd>: <path>: ..." naming the
 * user's path (not the temp file) and returns the exit code: CLI_USAGE for an
 * empty path or an input named as output, CLI_BAD_INPUT for a missing or
 * unwritable folder; CLI_OK when path can be written. Use it before
 * training or evaluating so that a typo in --out costs nothing. */
int cli_check_out(const char *cmd, const char *path, const char *const *inputs, int n);
/* Lock path for writing until the process exits (ps_outlock_acquire; with
 * wait, wait for another writer, else fail naming it). cli_check_out takes
 * it without waiting. */
int cli_lock_output(const char *cmd, const char *path, int wait);

/* The same for an output folder that the command creates when missing (its
 * parent must exist) or fills when present (it must be a folder). */
int cli_check_out_dir(const char *cmd, const char *dir);

/* Replaces the temporary files that stand for "-" by "-" in msg, in place
 * (src/cli/opt.c). */
void cli_fix_message(char *msg);

/* The subcommands. Each lives in src/cli/cmd_<name>.c. */
int cmd_check(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_import_abacus(int argc, char **argv);
int cmd_overlap(int argc, char **argv);
/* pairsight overlap twin (cmd_overlap_twin.c). */
int cmd_overlap_twin(int argc, char **argv);
/* pairsight check of one overlap.csv (cmd_overlap.c): validate, print its line. */
int cli_check_overlap(const char *path, int json, int quiet);
int cmd_simulate(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_adapt(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_colocate(int argc, char **argv);
int cmd_collect(int argc, char **argv);
/* The collect actions that parse options of their own (cmd_collect_extra.c),
 * rows of the action table of cmd_collect.c. */
int cmd_collect_twin(int argc, char **argv);
int cmd_collect_score(int argc, char **argv);
int cmd_collect_fixed_cost(int argc, char **argv);
/* collect info (the device of p's backend; model's device memory at batch
 * when model is given) and collect ops (model's operator list at batch and
 * seq_len, or a summary of the list in file) (cmd_collect_info.c). */
int cli_collect_info(const ps_collect_params_t *p, const char *model, int batch, int json);
int cli_collect_ops(const char *file, const char *model, int batch, int seq_len, int json);
int cmd_model(int argc, char **argv);
int cmd_features(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* CLI_FN parser of "MODEL:BATCH" into a cli_model_batch_t. */
typedef struct {
    char name[64];
    int batch;
} cli_model_batch_t;
int cli_parse_model_batch(const char *v, void *dest);
/* The required --hp MODEL:BATCH option of plan and replay. */
#define CLI_HP_ACCEPTS "MODEL:BATCH, e.g. resnet50:8"
#define CLI_OPT_HP(dest, help)                                                                                         \
    {                                                                                                                  \
        "--hp", CLI_FN, dest, "MODEL:BATCH", help, .flags = CLI_REQ, .parse = cli_parse_model_batch,                   \
                                                   .accepts = CLI_HP_ACCEPTS                                           \
    }

/* eval and report in one: report_mode makes --out required and prints only
 * the path written (src/cli/cmd_eval.c). */
int cli_eval_main(int argc, char **argv, int report_mode);

/* 1 when the co-location model was trained on gpu (or records none), 0 when
 * not: predict and place warn then (coloc_sizes.c). */
int cli_coloc_model_knows_gpu(const ps_coloc_model_t *m, const char *gpu);
/* The batch size in a workload id ("bert_batch8-train" -> 8), else 1
 * (coloc_sizes.c). */
double cli_coloc_workload_batch(const char *name);
/* Warns when ks (bit k: k-way co-locations) holds a k the model was not
 * trained on; doing says what with them ("predicting", "placing groups of"). */
void cli_coloc_warn_ks(const ps_coloc_model_t *m, unsigned ks, const char *doing);
/* Warns when the queries q hold a GPU or a k the model was not trained on
 * (colocate predict and select). */
void cli_coloc_warn_queries(const ps_coloc_model_t *m, const ps_colocations_t *q);
/* Row i of workloads.csv: its gpu and workload columns (ps_workloads_key;
 * "" past the end). */
const char *cli_workload_gpu(const ps_workloads_t *w, size_t i);
const char *cli_workload_name(const ps_workloads_t *w, size_t i);

#endif
