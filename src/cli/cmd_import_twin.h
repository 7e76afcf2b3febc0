/* pairsight import's --oplist/--tpcs-from/--at and its ops format (cmd_import_twin.c). */
#ifndef PS_CLI_CMD_IMPORT_TWIN_H
#define PS_CLI_CMD_IMPORT_TWIN_H

#include "pairsight.h"

#define IMPORT_TWIN_MAX 512 /* TPC counts */

typedef struct {
    const char *oplist, *from, *at;
} import_twin_t;

/* The options of cmd_import's table, over an import_twin_t *tw. */
#define IMPORT_TWIN_OPTS(tw)                                                                                           \
    {"--oplist",                                                                                                       \
     CLI_STR,                                                                                                          \
     &(tw)->oplist,                                                                                                    \
     "FILE",                                                                                                           \
     "the model's operator list (python -m pairsight.capture): kernels are aligned with its operators, one row "       \
     "per operator named as in the list; a kernel that fits no operator (an engine fusing across operators, such "     \
     "as TensorRT) is refused with the first mismatch",                                                                \
     .flags = CLI_IN,                                                                                                  \
     .def = "none: one row per kernel"},                                                                               \
        {"--tpcs-from",                                                                                                \
         CLI_STR,                                                                                                      \
         &(tw)->from,                                                                                                  \
         "twin",                                                                                                       \
         "write every --at count: the measured durations at --tpcs, elsewhere measured x the twin's ratio for the "    \
         "operator, marked source=twin-ratio (docs/profile.md)",                                                       \
         .def = "none: --tpcs only"},                                                                                  \
    {                                                                                                                  \
        "--at", CLI_STR, &(tw)->at, "LIST", "with --tpcs-from: TPC counts to write, e.g. 8,16,20-30",                  \
            .def = "every count from 1 to the GPU's"                                                                   \
    }

/* Import in (ps_import_run, or the ops format) and apply --tpcs-from: PS_OK,
 * a PS_E_* code (<= 0, the message in ps_last_error), or a CLI exit code
 * (> 0) already reported. */
int import_twin_run(const char *kind, const char *in, ps_import_params_t *p, const import_twin_t *tw, ps_ops_t **ops,
                    ps_import_info_t *info);

#endif
