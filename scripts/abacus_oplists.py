#!/usr/bin/python3
"""Operator lists of the seven models of Abacus's experiments, for
`pairsight overlap ... --oplists DIR` (docs/overlap.md).

One list per (model, batch, seq_len) that overlap.csv holds: the torchvision
models at batch 4, 8, 16 and 32, and BERT's 12 encoder layers at those batches
and sequence lengths 8, 16, 32 and 64. Captured on the meta device by
pairsight.capture (nothing computed), named by module path, so that
psi_abacus_group_paths puts each operator in its Abacus group. BERT runs as
Abacus runs it (bert.py): encoder layers on hidden states, no embeddings, its
layers under `encoder.layer.g` (examples/own_model/bert_nn.py's layers).

Usage: /usr/bin/python3 scripts/abacus_oplists.py OUTDIR   (torch 1.13, torchvision 0.14)
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, "..", "python"), os.path.join(here, "..", "examples", "own_model")]

import torch  # noqa: E402
import torchvision.models as tvm  # noqa: E402
from torch import nn  # noqa: E402

import bert_nn  # noqa: E402
from pairsight.capture import capture  # noqa: E402

BATCHES = (4, 8, 16, 32)
SEQ_LENS = (8, 16, 32, 64)


class AbacusBert(nn.Module):
    """BERT-base's 12 encoder layers on hidden states, as Abacus times them."""

    def __init__(self, layers=12, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.encoder = nn.Module()
        self.encoder.layer = nn.ModuleList(bert_nn.Layer(hidden, heads, ffn) for _ in range(layers))

    def forward(self, x):
        mask = torch.zeros(x.shape[0], 1, 1, x.shape[1], dtype=x.dtype, device=x.device)
        for layer in self.encoder.layer:
            x = layer(x, mask)
        return x


def cnn(name):
    if name == "inception_v3":
        return tvm.inception_v3(aux_logits=False, init_weights=False), 299
    return getattr(tvm, name)(), 224


def main(out):
    os.makedirs(out, exist_ok=True)
    n = 0
    for name in ("resnet50", "resnet101", "resnet152", "inception_v3", "vgg16", "vgg19"):
        model, side = cnn(name)
        model = model.half()
        for b in BATCHES:
            l = capture(model, [torch.empty(b, 3, side, side, dtype=torch.float16)], name=name, batch=b)
            l.write(os.path.join(out, "%s_b%d.oplist" % (name, b)))
            n += 1
    bert = AbacusBert().half()
    for b in BATCHES:
        for s in SEQ_LENS:
            l = capture(bert, [torch.empty(b, s, 768, dtype=torch.float16)], name="bert", batch=b, seq_len=s)
            l.write(os.path.join(out, "bert_b%d_s%d.oplist" % (b, s)))
            n += 1
    print("abacus_oplists: %d operator lists -> %s" % (n, out))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
