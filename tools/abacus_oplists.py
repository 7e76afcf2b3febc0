#!/usr/bin/env python3
"""Captured operator lists of the seven models of Abacus's A100 experiments
(docs/overlap.md, docs/simulator.md "The twin against Abacus"), one list per
(model, batch, sequence length) the artefact ran, named by module paths so
that psi_abacus_group_paths finds each group's operators.

    /usr/bin/python3 tools/abacus_oplists.py --out DIR [--batches 4,8,16,32] [--seqs 8,16,32,64]
        [--models resnet50,resnet101,resnet152,inception_v3,vgg16,vgg19,bert]

Writes DIR/MODEL_bBATCH_sSEQ.oplist (fp16, as Abacus's workers run: `.half()`).
The torchvision models are the library's (inception_v3 with aux_logits=False
and transform_input=False: the 14 groups Abacus runs). BERT is Abacus's
12-layer encoder without embeddings (`BertModel.run(hidden_states, mask,
start, end)` over `encoder.layer[start:end]`): the layers of
examples/own_model/bert_nn.py (Hugging Face's eager operator order) under the
module path encoder.layer.G, fed hidden states of shape batch x seq x 768 and
an additive mask. Needs torch and torchvision (Debian's python3-torch 1.13).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "own_model"))

MODELS = ("resnet50", "resnet101", "resnet152", "inception_v3", "vgg16", "vgg19", "bert")


def _bert_module():
    import torch
    from torch import nn
    from bert_nn import Layer

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.ModuleList(Layer(768, 12, 3072) for _ in range(12))

    class AbacusBert(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()

        def forward(self, x, mask):
            for layer in self.encoder.layer:
                x = layer(x, mask)
            return x

    return AbacusBert(), torch


def _build(model):
    import torchvision.models as tvm
    if model == "inception_v3":
        return tvm.inception_v3(aux_logits=False, transform_input=False, init_weights=False)
    return getattr(tvm, model)()


def _capture(model, batch, seq):
    import torch
    from pairsight.capture import capture
    if model == "bert":
        m, _ = _bert_module()
        x = torch.empty(batch, seq, 768)
        mask = torch.zeros(batch, 1, 1, seq)
        return capture(m, [x, mask], name="bert", batch=batch, seq_len=seq)
    side = 299 if model == "inception_v3" else 224
    return capture(_build(model), [torch.empty(batch, 3, side, side)], name=model, batch=batch)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="output folder (required)")
    p.add_argument("--batches", default="4,8,16,32", help="batch sizes (default 4,8,16,32)")
    p.add_argument("--seqs", default="8,16,32,64", help="BERT sequence lengths (default 8,16,32,64)")
    p.add_argument("--models", default=",".join(MODELS), help="models (default all seven)")
    a = p.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    batches = [int(b) for b in a.batches.split(",")]
    seqs = [int(s) for s in a.seqs.split(",")]
    n = 0
    for model in a.models.split(","):
        if model not in MODELS:
            p.error("unknown model '%s' (known: %s)" % (model, ",".join(MODELS)))
        for b in batches:
            for s in (seqs if model == "bert" else [0]):
                lst = _capture(model, b, s)
                lst.write(os.path.join(a.out, "%s_b%d_s%d.oplist" % (model, b, s)))
                n += 1
    print("abacus_oplists: %d lists -> %s" % (n, a.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
