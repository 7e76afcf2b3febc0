/* A check of an XGBoost booster's content, run before its bytes reach
 * XGBoost or our own evaluator: a file with valid checksums may still come
 * from a hostile or buggy writer. */
#ifndef PS_MODEL_XGBCHECK_H
#define PS_MODEL_XGBCHECK_H

#include <stddef.h>

/* 0 when buf[n] (XGBoost 1.7 UBJSON, as ps_model_save and colocate train
 * write it) is a gbtree regression (reg:squarederror, one output) over
 * n_features features whose every tree is a tree: num_nodes entries in each
 * per-node array, every child after its parent and inside the tree, one
 * parent each (so no cycle, and every node reached but XGBoost's deleted
 * ones), parents matching, split features below n_features, numeric splits
 * only, finite thresholds and leaf values, tree ids in order. -1 otherwise,
 * with the reason (naming the tree and node) in why[why_n]; PS_E_NOMEM when
 * an allocation failed. */
int psi_xgb_check(const unsigned char *buf, size_t n, int n_features, char *why, size_t why_n);

#endif
