/* What the files of src/ops share. */
#ifndef PS_OPS_OPS_H
#define PS_OPS_OPS_H

#include "pairsight.h"

#include <cjson/cJSON.h>

/* A replay's result as JSON (schema pairsight.replay_result.v1): what
 * ps_replay_json and the replay operation answer. NULL when out of memory. */
cJSON *psi_replay_result_json(const ps_replay_result_t *r);

#endif
