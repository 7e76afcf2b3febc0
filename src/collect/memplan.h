/*
 * Device memory of one model as the collector lays it out: every operator
 * has weights of its own (sized from its shape) and an output of its own,
 * and reads its predecessor's output as its input, as the model does, so
 * that a replayed model has the L2 footprint and DRAM traffic of the real
 * one rather than those of one layer run over and over. An operator whose
 * input does not fit in its predecessor's output (a residual add reading two
 * tensors, the first operator) gets an input of its own.
 *
 * The plan is pure arithmetic on the operator list: the CUDA backend adds
 * the address of one allocation (the arena), the fake backend a made-up
 * base, and the tests check that blocks are distinct and chained.
 */
#ifndef PS_COLLECT_MEMPLAN_H
#define PS_COLLECT_MEMPLAN_H

#include "profile/oplist.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PS_MEMPLAN_ALIGN 256 /* bytes; cuBLAS and cuDNN want 16, L2 lines are 128 */

/* One operator's buffers: addresses (base + offset) and sizes in bytes.
 * w is 0 (w_bytes 0) for an operator without weights. */
typedef struct {
    uintptr_t in, w, out;
    size_t in_bytes, w_bytes, out_bytes;
    int chained; /* 1 when in is the previous operator's out */
} psi_opbuf_t;

typedef struct {
    int n;
    psi_opbuf_t *op;          /* [n] */
    size_t weight_bytes;      /* all weight blocks */
    size_t activation_bytes;  /* outputs and own inputs */
    size_t total_bytes;       /* the arena: weights + activations + padding */
} psi_memplan_t;

/* Lay out l from address base (0: offsets). fp16, 2 bytes an element. On
 * success out->op is owned by the caller (psi_memplan_free). */
int psi_memplan_make(const psi_oplist_t *l, uintptr_t base, psi_memplan_t *out);
void psi_memplan_free(psi_memplan_t *m);

#ifdef __cplusplus
}
#endif

#endif
