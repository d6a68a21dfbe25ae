#!/usr/bin/python3
"""Export a Hugging Face BERT folder to ONNX in transformers.js's layout, for the
end-to-end comparison (bench/groups/end-to-end.js).

    /usr/bin/python3 bench/export_hf.py FOLDER

FOLDER holds config.json (model_type bert) and model.safetensors (F32, BertModel's
tensor names, as transformers saves them). Writes FOLDER/onnx/model.onnx and
FOLDER/onnx/model_quantized.onnx, the two files transformers.js loads for dtype
'fp32' and 'q8'. Runs with Debian's PyTorch 1.13 and python3-onnx (/usr/bin/python3).

model.onnx: torch.onnx.export (opset 14) of a transcription of transformers'
BertModel forward (models/bert/modeling_bert.py, eager attention) in nn modules:
word + token-type + position embeddings, LayerNorm; per layer separate q/k/v
Linear, scores / sqrt(d_head) + the extended attention mask ((1 - mask) * the
float32 minimum), softmax, the output dense + residual + LayerNorm, the
intermediate dense + erf GELU, the output dense + residual + LayerNorm. Inputs
input_ids, attention_mask, token_type_ids: int64 [batch_size, sequence_length];
output last_hidden_state: float32 [batch_size, sequence_length, hidden_size]; the
names and dynamic axes of an Optimum export for feature-extraction, the graph left
to onnxruntime's own optimiser (level 'all', the default of onnxruntime-node and
onnxruntime-web), as in the files transformers.js users download.

model_quantized.onnx: onnxruntime's dynamic quantization with the settings of
transformers.js's conversion script (scripts/quantize.py, mode q8 for a model
without Conv: QuantType.QInt8 weights, QUInt8 activations, per_channel and
reduce_range off, the IntegerOps registry, MatMulConstBOnly), written with
bench/export_onnx.py's quantize_dynamic_onnx: every MatMul with a constant weight
-> DynamicQuantizeLinear + MatMulInteger (int8 weights, one symmetric scale
per tensor) + Cast + Mul by the scales; every Gather of a constant table (word,
position and token-type embeddings) -> a Gather of its uint8 per-tensor
quantization + DequantizeLinear.

Before exporting, the module is checked in float32 against the same forward in
float64 on a padded batch (relative max error over the real tokens, printed).
"""

import json
import math
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

from export_onnx import quantize_dynamic_onnx, read_safetensors, rel_err

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


def linear(W, name):
    w = W[name + ".weight"]
    m = nn.Linear(w.shape[1], w.shape[0])
    with torch.no_grad():
        m.weight.copy_(w)
        m.bias.copy_(W[name + ".bias"])
    return m


def layernorm(W, name, eps):
    w = W[name + ".weight"]
    m = nn.LayerNorm(w.shape[0], eps=eps)
    with torch.no_grad():
        m.weight.copy_(w)
        m.bias.copy_(W[name + ".bias"])
    return m


def embedding(W, name):
    w = W[name]
    m = nn.Embedding(w.shape[0], w.shape[1])
    with torch.no_grad():
        m.weight.copy_(w)
    return m


class Layer(nn.Module):
    def __init__(self, hf, W, i):
        super().__init__()
        p, eps = "encoder.layer.%d." % i, hf["layer_norm_eps"]
        self.h = hf["num_attention_heads"]
        self.dh = hf["hidden_size"] // self.h
        self.query, self.key, self.value = (linear(W, p + "attention.self." + n) for n in ("query", "key", "value"))
        self.attn_out, self.attn_norm = linear(W, p + "attention.output.dense"), layernorm(W, p + "attention.output.LayerNorm", eps)
        self.inter, self.out = linear(W, p + "intermediate.dense"), linear(W, p + "output.dense")
        self.out_norm = layernorm(W, p + "output.LayerNorm", eps)

    def forward(self, x, mask):
        B, T, d = x.shape
        heads = lambda t: t.view(B, T, self.h, self.dh).permute(0, 2, 1, 3)
        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous().view(B, T, d)
        a = self.attn_norm(self.attn_out(ctx) + x)
        return self.out_norm(self.out(F.gelu(self.inter(a))) + a)


class BertModel(nn.Module):
    def __init__(self, hf, W):
        super().__init__()
        if hf.get("model_type") != "bert" or hf.get("hidden_act", "gelu") != "gelu":
            sys.exit("export_hf: a bert config.json with hidden_act gelu is expected")
        self.words = embedding(W, "embeddings.word_embeddings.weight")
        self.positions = embedding(W, "embeddings.position_embeddings.weight")
        self.types = embedding(W, "embeddings.token_type_embeddings.weight")
        self.norm = layernorm(W, "embeddings.LayerNorm", hf["layer_norm_eps"])
        self.register_buffer("position_ids", torch.arange(hf["max_position_embeddings"]).unsqueeze(0), persistent=False)
        self.layers = nn.ModuleList(Layer(hf, W, i) for i in range(hf["num_hidden_layers"]))

    def forward(self, input_ids, attention_mask, token_type_ids):
        T = input_ids.shape[1]
        x = self.words(input_ids) + self.types(token_type_ids) + self.positions(self.position_ids[:, :T])
        x = self.norm(x)
        dtype = x.dtype
        mask = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
        for layer in self.layers:
            x = layer(x, mask)
        return x


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    folder = sys.argv[1]
    with open(os.path.join(folder, "config.json")) as f:
        hf = json.load(f)
    _, W = read_safetensors(os.path.join(folder, "model.safetensors"))
    model = BertModel(hf, W).eval()

    # a padded batch: the float32 module against itself in float64, over the real tokens
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1, hf["vocab_size"], (2, 24), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 10:] = 0
    types = torch.zeros_like(ids)
    with torch.no_grad():
        out = model(ids, mask, types)
        ref = model.double()(ids, mask, types)
        model.float()
    keep = mask.bool()
    err = rel_err(out[keep], ref[keep])
    print("export_hf: float32 vs float64 on a padded batch: relative max error %.2e" % err)
    if not err <= 1e-4:
        sys.exit("export_hf: the float32 module does not reproduce its float64 forward")

    os.makedirs(os.path.join(folder, "onnx"), exist_ok=True)
    dst = os.path.join(folder, "onnx", "model.onnx")
    axes = {"batch_size": 0, "sequence_length": 1}
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dynamic = {n: {v: k for k, v in axes.items()} for n in names + ["last_hidden_state"]}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask, types), dst + ".tmp", input_names=names, output_names=["last_hidden_state"],
                          opset_version=14, do_constant_folding=True, dynamic_axes=dynamic)
    os.replace(dst + ".tmp", dst)
    print("export_hf: wrote %s (%d bytes)" % (dst, os.path.getsize(dst)))
    q8 = os.path.join(folder, "onnx", "model_quantized.onnx")
    n = quantize_dynamic_onnx(dst, q8 + ".tmp", per_channel=False, gather=True)
    os.replace(q8 + ".tmp", q8)
    print("export_hf: wrote %s (%d bytes; %d MatMul / Gather nodes quantized)" % (q8, os.path.getsize(q8), n))


if __name__ == "__main__":
    main()
