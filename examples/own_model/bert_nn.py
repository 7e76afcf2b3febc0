"""A BERT-base encoder built from torch.nn layers only (Devlin et al. 2019: 12
layers, hidden 768, 12 heads, FFN 3072, vocabulary 30522), with the operator
order of HuggingFace's eager BertModel: the model of docs/own-model.md.

    python -m pairsight.capture bert_nn:bert_base --input 128:int64 --batch 8 --out bert.oplist
"""
import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.hd = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.hd).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        scores = scores + mask
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3)
        b, s = ctx.shape[:2]
        return ctx.reshape(b, s, self.heads * self.hd)


class Output(nn.Module):
    def __init__(self, din, dout):
        super().__init__()
        self.dense = nn.Linear(din, dout)
        self.layernorm = nn.LayerNorm(dout, eps=1e-12)

    def forward(self, x, residual):
        return self.layernorm(self.dense(x) + residual)


class Layer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.attn_output = Output(hidden, hidden)
        self.intermediate = nn.Linear(hidden, ffn)
        self.gelu = nn.GELU()
        self.output = Output(ffn, hidden)

    def forward(self, x, mask):
        a = self.attn_output(self.attn(x, mask), x)
        return self.output(self.gelu(self.intermediate(a)), a)


class Embeddings(nn.Module):
    def __init__(self, vocab, hidden, max_pos, types):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(types, hidden)
        self.layernorm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, ids, pos, types):
        return self.layernorm(self.word(ids) + self.token_type(types) + self.position(pos))


class BertEncoder(nn.Module):
    def __init__(self, layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, max_pos=512):
        super().__init__()
        self.embeddings = Embeddings(vocab, hidden, max_pos, 2)
        self.layer = nn.ModuleList(Layer(hidden, heads, ffn) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)
        self.tanh = nn.Tanh()

    def forward(self, ids):
        b, s = ids.shape
        pos = torch.arange(s, device=ids.device).unsqueeze(0).expand(b, s)
        types = torch.zeros_like(ids)
        mask = torch.zeros(b, 1, 1, s, device=ids.device, dtype=self.pooler.weight.dtype)
        x = self.embeddings(ids, pos, types)
        for layer in self.layer:
            x = layer(x, mask)
        return self.tanh(self.pooler(x[:, 0]))


def bert_base():
    return BertEncoder()
