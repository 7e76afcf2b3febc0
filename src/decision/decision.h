/*
 * Internals of the decision stage (src/decision, docs/planner.md): the
 * planner and the replay. The calibration of upper bounds they read is the
 * model's (src/model/calib.h).
 */
#ifndef PS_DECISION_H
#define PS_DECISION_H

#include "pairsight.h"

/* The ceiling fields of a replay's result (lp_ceiling, lp_rate_needed) from
 * its orion and dedicated rows, for an LP-throughput goal of goal x orion's
 * (replay.c; docs/planner.md, "The ceiling"). */
void psi_replay_ceiling(ps_replay_result_t *r, double goal);

#endif
