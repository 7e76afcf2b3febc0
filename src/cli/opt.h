/* The table-driven option parser of every pairsight command, its usage text,
 * progress lines and JSON output.
 *
 * A command declares its flags once, as data:
 *
 *     ps_train_params_t p = ps_train_default_params();
 *     cli_opt_t opts[] = {
 *         {"--ops", CLI_STR, &ops_path, "FILE", "standalone profile", .flags = CLI_REQ | CLI_IN},
 *         {"--rounds", CLI_INT, &p.max_rounds, "N", "most trees per regressor", .lo = 1, .hi = 100000},
 *         CLI_OPT_QUIET(&quiet),
 *         {NULL}};
 *     cli_spec_t spec = {.cmd = "train", .synopsis = "--ops FILE ...", .opts = opts};
 *     int code;
 *     if (cli_parse(&spec, argc, argv, &code))
 *         return code;
 *
 * Because the destinations hold the library's defaults (from the
 * `_default_params()` structs) when the usage is printed, the usage text shows
 * those defaults and cannot drift from them (minimap2's main.c does the same).
 *
 * The parser takes `--opt value` and `--opt=value`, rejects a flag given twice
 * unless it is a list (CLI_INTS, CLI_DBLS), checks every value
 * against its bounds, and words every usage error the same way, with exit
 * status 2:
 *     pairsight: CMD: unknown option '--depth'; did you mean '--depths'? (see pairsight CMD --help)
 *     pairsight: CMD: --rounds needs a value: an integer in 1..100000 (see pairsight CMD --help)
 *     pairsight: CMD: --rounds: bad value '-3': expected an integer in 1..100000
 *     pairsight: CMD: --out given twice (it takes one value)
 *     pairsight: CMD: missing --coexec: --ops, --coexec and --out are required
 * A string option flagged CLI_IN reads standard input when given "-", and one
 * flagged CLI_OUT writes standard output; the command sees a temporary file in
 * both cases (main() copies an output to stdout once the command succeeded). */
#ifndef PS_CLI_OPT_H
#define PS_CLI_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    CLI_FLAG, /* int *: set to 1; takes no value */
    CLI_STR,  /* const char **: the value as given */
    CLI_INT,  /* int * in lo..hi */
    CLI_LONG, /* long * in lo..hi */
    CLI_U64,  /* uint64_t * in lo..hi (hi 0 = UINT64_MAX) */
    CLI_DBL,  /* double * in lo..hi (CLI_LO_OPEN, CLI_HI_OPEN exclude a bound) */
    CLI_INTS, /* int[max], count in *count: comma-separated integers in lo..hi */
    CLI_DBLS, /* double[max], count in *count: comma-separated numbers in lo..hi */
    CLI_ENUM, /* int *: the index of the value in choices (NULL-terminated) */
    CLI_FN    /* void *: parse(value, dest) returns 0 or -1; accepts says what it takes */
} cli_opt_type_t;

enum {
    CLI_REQ = 1u << 0,     /* required */
    CLI_IN = 1u << 1,      /* CLI_STR: "-" is standard input */
    CLI_OUT = 1u << 2,     /* CLI_STR: "-" is standard output */
    CLI_LO_OPEN = 1u << 3, /* lo itself is not accepted */
    CLI_HI_OPEN = 1u << 4, /* hi itself is not accepted */
    CLI_NODEF = 1u << 5    /* print no default (a flag whose default is "off" goes without saying) */
};

typedef struct cli_opt {
    const char *name; /* "--rounds", "-q"; NULL ends the table */
    cli_opt_type_t type;
    void *dest;
    const char *arg;                         /* the value's name in the usage: FILE, N, LIST; NULL for CLI_FLAG */
    const char *help;                        /* one sentence, wrapped by the usage printer */
    double lo, hi;                           /* bounds of numbers and list elements */
    unsigned flags;                          /* CLI_REQ, CLI_IN, ... */
    const char *def;                         /* the default in words, printed instead of the destination's value */
    const char *const *choices;              /* CLI_ENUM */
    int *count;                              /* CLI_INTS, CLI_DBLS: values read */
    int max;                                 /* CLI_INTS, CLI_DBLS: capacity of dest */
    int (*parse)(const char *v, void *dest); /* CLI_FN */
    const char *accepts;                     /* CLI_FN: "a list like 8,16,32 or 4-52:4" */
    int given;                               /* set by cli_parse: times the flag was given */
} cli_opt_t;

/* The flags every command shares. */
#define CLI_OPT_QUIET(p)                                                                                               \
    {                                                                                                                  \
        "-q", CLI_FLAG, (p), NULL, "quiet: no progress and no summary; errors still go to stderr", .flags = CLI_NODEF  \
    }
#define CLI_OPT_JSON(p, what)                                                                                          \
    {                                                                                                                  \
        "--json", CLI_FLAG, (p), NULL, what, .flags = CLI_NODEF                                                        \
    }

typedef struct {
    const char *cmd;             /* "train"; messages read "pairsight: <cmd>: ..." */
    const char *sub;             /* "eval" for `pairsight colocate eval`, or NULL */
    const char *synopsis;        /* what follows "usage: pairsight CMD [SUB] "; lines split by '\n' */
    const char *about;           /* a paragraph of what the command does */
    cli_opt_t *opts;             /* ends with {NULL} */
    const char *const *examples; /* NULL-terminated complete command lines */
    const char *notes;           /* text after the options, or NULL */
    const char *exit_status;     /* NULL: "0 ok, 1 bad input or failure, 2 usage error" */
    int max_pos;                 /* positional arguments accepted (-1: any number) */
} cli_spec_t;

/* Parses argv (argv[0] is the command or subcommand name) against spec.
 * Positional arguments are moved, in order, to argv[1..*npos] (npos may be
 * NULL when the spec takes none); everything after "--" is positional.
 * Returns 0 when the command should go on, or 1 when it should return *code
 * at once: CLI_OK after printing the usage for -h/--help, CLI_USAGE after a
 * usage error printed on stderr. */
int cli_parse(cli_spec_t *spec, int argc, char **argv, int *npos, int *code);

/* The options of the number parameters of the library's operation op (its
 * table, ps_op_params: parameter slo_factor is --slo-factor, with its type,
 * bounds, value name, help and default), writing into params (the
 * operation's parameter struct, holding its defaults), into out[max].
 * Returns how many were written. */
int cli_op_opts(const char *op, void *params, cli_opt_t *out, int max);
/* The option of one number parameter, name, of operation op's table (as
 * cli_op_opts: its name, type, bounds, value name, help and default),
 * writing into dest, a member of the command's own of the row's type: for
 * a command whose options hold the values elsewhere or in another order.
 * An unknown name is a programming error (aborts). */
cli_opt_t cli_op_opt(const char *op, const char *name, void *dest);
/* The option of a parameter or input name into buf[size]: "--" then the
 * name with '-' for '_' (slo_factor: --slo-factor). */
void cli_param_flag(const char *name, char *buf, size_t size);

/* The usage text of spec, generated from its table: synopsis, about, every
 * flag with its value, range and default, examples, notes, exit status. */
void cli_usage(const cli_spec_t *spec, FILE *f);

/* 1 when the flag was given on the command line. */
int cli_given(cli_spec_t *spec, const char *name);

/* The usage error for options that are required together: names is a
 * comma-separated list of flags; when some were not given, prints "missing
 * --b: --a, --b and --c are required" (naming only the missing ones first)
 * and returns CLI_USAGE, else CLI_OK. A prefix such as "select: " goes
 * before the message when what is not NULL. */
int cli_need(cli_spec_t *spec, const char *what, const char *names);

/* Standard input and output given as "-". cli_stdin_path copies stdin into
 * a temporary file once and returns its path (NULL on failure, message in
 * cli_io_error); cli_stdout_path returns a temporary path whose content
 * cli_io_finish copies to stdout when rc is CLI_OK. cli_io_finish removes the
 * temporary files and returns rc (or CLI_BAD_INPUT when the copy failed). */
const char *cli_stdin_path(void);
const char *cli_stdout_path(void);
const char *cli_io_error(void);
int cli_io_finish(int rc);

/* The user's name for a path that may be one of the temporary files above
 * ("-" for them, else path itself). */
const char *cli_user_path(const char *path);

/* Progress of a long step on stderr, unless quiet: on a terminal a line
 * rewritten a few times a second, otherwise a line every few seconds; both
 * with done / total and an estimate of the time left. A new `what` (or done
 * going back to 0) starts a new step. cli_progress_end closes the step's
 * line. */
void cli_progress(int quiet, const char *what, double done, double total);

/* A ps_progress_fn for the library's long calls: user points to the int
 * quiet flag of the command. */
void cli_progress_cb(const char *stage, double done, double total, void *user);
void cli_progress_end(int quiet);

/* JSON output, one style for every command: compact, numbers with 17
 * significant digits (integers exact), NaN and infinities as null, strings
 * escaped and made valid UTF-8 (an invalid byte becomes U+FFFD), and a
 * top-level "schema" field "pairsight.<name>.v<version>" first. Built on
 * cJSON trees: cli_json_new returns an object holding only the schema field
 * (NULL when out of memory); cli_json_print writes o and a newline to f and
 * frees o. Returns 0, or -1 when the write failed. */
struct cJSON;
struct cJSON *cli_json_new(const char *name, int version);
int cli_json_print(struct cJSON *o, FILE *f);

/* Moves every member of the object from to the end of the object to, and
 * deletes from. */
void cli_json_move(struct cJSON *to, struct cJSON *from);

/* The same writer for a single value (used by cli_json_print). */
void cli_json_write(const struct cJSON *v, FILE *f);

/* Shared by the parser (opt.c) and the usage text (usage.c): whether o takes
 * a list and what it accepts, in words. */
int cli_opt_is_list(const cli_opt_t *o);
void cli_opt_accepts_text(const cli_opt_t *o, char *buf, size_t n);

/* A whole finite number (strtod, no trailing text, not NaN): 0, else -1. */
int cli_parse_number(const char *s, double *out);

#endif
