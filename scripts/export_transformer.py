#!/usr/bin/python3
"""Exports transformer models built from torch.nn modules to ONNX with seeded random weights (no
downloads), seeded random inputs and PyTorch's float64 output, as references for the importer
(graph/) and its model tests (graph/tests/models_test.cpp).

Models:
  bert   a BERT-style encoder: token and position embeddings (nn.Embedding), their sum layer-
         normalised, then post-LN encoder layers (nn.Linear query / key / value / output
         projections, scaled dot-product attention with an additive mask made from the
         attention-mask input, nn.LayerNorm, a feed-forward nn.Linear - nn.GELU - nn.Linear),
         output: the last layer's hidden states (batch, seq, hidden).
         Full size (the defaults): 12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 30522,
         sequence 128.

For a model NAME it writes into --out:
  NAME.onnx          the model in eval mode (opset 17: nn.LayerNorm is one
                     LayerNormalization node), static shapes
  NAME.ids.npy       the token ids, int64 (batch, seq), uniform in [0, vocab)
  NAME.mask.npy      the attention mask, int64 (batch, seq): 1 for a token, 0 for padding (the
                     last seq / 4 positions of every other sequence are padding)
  NAME.hidden.npy    PyTorch's output for those inputs computed in float64, stored as float32

  gpt2   a GPT-2-style decoder: token and position embeddings, pre-LN blocks (nn.LayerNorm, one
         nn.Linear for query, key and value split three ways, causal attention by masked_fill
         with -inf above the diagonal, an output nn.Linear, a feed-forward nn.Linear -
         nn.GELU(approximate="tanh") - nn.Linear), a final nn.LayerNorm and the logits over the
         vocabulary by the token embedding's matrix (tied weights): output (batch, seq, vocab).
         Full size: 12 layers, hidden 768, 12 heads, FFN 3072, sequence 128 and (give
         --vocab 50257) GPT-2's vocabulary.

bert: graph inputs "ids" and "mask", output "hidden" (NAME.hidden.npy). gpt2: input "ids", output
"logits" (NAME.ids.npy, NAME.logits.npy). Needs Debian's python3-torch; run with /usr/bin/python3.

Usage: export_transformer.py --model bert|gpt2 [--layers L] [--hidden H] [--heads A] [--ffn F]
                             [--vocab V] [--seq S] [--batch N] [--out DIR] [--seed S]
Exit status 1 with "error: ..." for an unknown model or a bad option value; 2 (and a message)
if torch cannot be imported, so tests can skip.
"""
import math
import os
import sys

# The argument parser ("error: ..." exits) and the LayerNorm randomisation of the torchvision
# export script beside this one.
from export_torchvision import Parser, randomise_layer_norms

MODELS = ["bert", "gpt2"]
TORCH_MISSING = 2


def bert_module(torch, layers, hidden, heads, ffn, vocab, seq):
    nn = torch.nn
    head_dim = hidden // heads

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.query = nn.Linear(hidden, hidden)
            self.key = nn.Linear(hidden, hidden)
            self.value = nn.Linear(hidden, hidden)
            self.output = nn.Linear(hidden, hidden)
            self.norm1 = nn.LayerNorm(hidden, eps=1e-12)
            self.ffn_in = nn.Linear(hidden, ffn)
            self.act = nn.GELU()
            self.ffn_out = nn.Linear(ffn, hidden)
            self.norm2 = nn.LayerNorm(hidden, eps=1e-12)

        def forward(self, x, extended_mask):
            b, s, _ = x.shape

            def split_heads(t):
                return t.view(b, s, heads, head_dim).transpose(1, 2)

            q = split_heads(self.query(x))
            k = split_heads(self.key(x))
            v = split_heads(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(head_dim)
            probs = torch.softmax(scores + extended_mask, dim=-1)
            context = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, hidden)
            x = self.norm1(x + self.output(context))
            return self.norm2(x + self.ffn_out(self.act(self.ffn_in(x))))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(vocab, hidden)
            self.positions = nn.Embedding(seq, hidden)
            self.norm = nn.LayerNorm(hidden, eps=1e-12)
            self.layers = nn.ModuleList([Layer() for _ in range(layers)])

        def forward(self, ids, mask):
            positions = torch.arange(ids.shape[1])
            x = self.norm(self.tokens(ids) + self.positions(positions))
            extended = (1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0
            for layer in self.layers:
                x = layer(x, extended)
            return x

    return Bert()


def gpt2_module(torch, layers, hidden, heads, ffn, vocab, seq):
    nn = torch.nn
    head_dim = hidden // heads

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(hidden)
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.proj = nn.Linear(hidden, hidden)
            self.norm2 = nn.LayerNorm(hidden)
            self.fc = nn.Linear(hidden, ffn)
            self.act = nn.GELU(approximate="tanh")
            self.fc_out = nn.Linear(ffn, hidden)
            self.register_buffer("causal", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1))

        def forward(self, x):
            b, s, _ = x.shape

            def split_heads(t):
                return t.view(b, s, heads, head_dim).transpose(1, 2)

            q, k, v = self.qkv(self.norm1(x)).split(hidden, dim=2)
            q, k, v = split_heads(q), split_heads(k), split_heads(v)
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(head_dim)
            scores = scores.masked_fill(self.causal[:s, :s], float("-inf"))
            context = torch.matmul(torch.softmax(scores, dim=-1), v)
            x = x + self.proj(context.transpose(1, 2).reshape(b, s, hidden))
            return x + self.fc_out(self.act(self.fc(self.norm2(x))))

    class Gpt2(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(vocab, hidden)
            self.positions = nn.Embedding(seq, hidden)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.norm = nn.LayerNorm(hidden)

        def forward(self, ids):
            x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
            for block in self.blocks:
                x = block(x)
            # The output layer shares the token embedding's weights (GPT-2's tied head).
            return torch.matmul(self.norm(x), self.tokens.weight.t())

    return Gpt2()


def export(a, torch, np):
    torch.manual_seed(a.seed)
    build = bert_module if a.model == "bert" else gpt2_module
    model = build(torch, a.layers, a.hidden, a.heads, a.ffn, a.vocab, a.seq)
    gen = torch.Generator().manual_seed(a.seed + 1)
    randomise_layer_norms(model, torch, gen)
    model.eval()
    ids = torch.randint(0, a.vocab, (a.batch, a.seq), generator=gen, dtype=torch.int64)
    path = os.path.join(a.out, a.model)
    if a.model == "bert":
        mask = torch.ones(a.batch, a.seq, dtype=torch.int64)
        for b in range(1, a.batch, 2):
            mask[b, a.seq - a.seq // 4:] = 0
        inputs, names, output = (ids, mask), ["ids", "mask"], "hidden"
    else:
        inputs, names, output = (ids,), ["ids"], "logits"
    torch.onnx.export(model, inputs, path + ".onnx", opset_version=17, input_names=names,
                      output_names=[output], do_constant_folding=True)
    with torch.no_grad():
        y = model.double()(*inputs)
    for name, value in zip(names, inputs):
        np.save(path + "." + name + ".npy", value.numpy())
    np.save(path + "." + output + ".npy", y.numpy().astype(np.float32))
    print("%s: %d layers, hidden %d, %d heads, FFN %d, vocabulary %d, ids (%d, %d), %s std "
          "%.3f -> %s.onnx" % (a.model, a.layers, a.hidden, a.heads, a.ffn, a.vocab, a.batch,
                               a.seq, output, float(y.std()), path))


def main():
    ap = Parser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="one of %s" % ", ".join(MODELS))
    ap.add_argument("--layers", type=int, default=12, help="encoder layers (default 12)")
    ap.add_argument("--hidden", type=int, default=768, help="hidden size (default 768)")
    ap.add_argument("--heads", type=int, default=12, help="attention heads (default 12)")
    ap.add_argument("--ffn", type=int, default=3072, help="feed-forward size (default 3072)")
    ap.add_argument("--vocab", type=int, default=30522, help="vocabulary (default 30522)")
    ap.add_argument("--seq", type=int, default=128, help="sequence length (default 128)")
    ap.add_argument("--batch", type=int, default=1, help="batch (default 1)")
    ap.add_argument("--out", default=".", help="output folder (created; default .)")
    ap.add_argument("--seed", type=int, default=0, help="seed of weights and inputs (default 0)")
    a = ap.parse_args()
    if a.model not in MODELS:
        print("error: --model %s: unknown model (one of %s)" % (a.model, ", ".join(MODELS)),
              file=sys.stderr)
        return 1
    limits = [("layers", 1, 48), ("hidden", 1, 8192), ("heads", 1, 256), ("ffn", 1, 32768),
              ("vocab", 2, 1 << 20), ("seq", 1, 4096), ("batch", 1, 64)]
    for name, lo, hi in limits:
        v = getattr(a, name)
        if v < lo or v > hi:
            print("error: --%s %d: must be in [%d, %d]" % (name, v, lo, hi), file=sys.stderr)
            return 1
    if a.hidden % a.heads != 0:
        print("error: --hidden %d: must be a multiple of --heads %d" % (a.hidden, a.heads),
              file=sys.stderr)
        return 1
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print("torch not importable (%s): install python3-torch (scripts/install_deps.sh "
              "--tests)" % e, file=sys.stderr)
        return TORCH_MISSING
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    try:
        export(a, torch, np)
    except Exception as e:  # an export failure names the model
        print("error: %s: %s" % (a.model, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
