/*
 * The artefact of Abacus (W. Cui et al., SC'21, github Raphael-Hao/Abacus):
 * its measured co-runs of operator groups, read into overlap.csv, and how it
 * splits each model into groups (abacus/network/ *_splited.py, bert.py;
 * docs/overlap.md tells the whole of it).
 */
#ifndef PS_PROFILE_ABACUS_H
#define PS_PROFILE_ABACUS_H

#include "pairsight.h"
#include "profile/overlap.h"

#include <stddef.h>

/* What the import read: the public struct of include/pairsight_overlap.h. */
typedef ps_abacus_info_t psi_abacus_info_t;

/*
 * Read the profiles of data/profile/{A100,mig}/ from repo: a work tree (when
 * rev is NULL and the files are there on disk) or any git repository, bare
 * or not, at rev (NULL: the newest commit that holds data/profile/A100),
 * through `git ls-tree` and `git cat-file`. Every row is checked; an error
 * names REPO@REV:PATH:LINE:COLUMN. *out owns the table.
 */
int psi_abacus_import(const char *repo, const char *rev, psi_overlap_t **out, psi_abacus_info_t *info);

/* The groups of an Abacus model (0 when the model is not one of its seven). */
int psi_abacus_model_ops(const char *model);

/*
 * The module paths (torchvision's, Hugging Face's for BERT) that make group g
 * of model, space-separated, into buf: "layer3.4" for one bottleneck of a
 * ResNet, "features.0 features.1" for a VGG conv and its ReLU. Returns the
 * number of paths, 0 for an unknown model or group.
 */
int psi_abacus_group_paths(const char *model, int g, char *buf, size_t n);

/* Whether operator name lies in module path p (p itself or under "p."). */
int psi_abacus_in_path(const char *name, const char *p);

#endif
