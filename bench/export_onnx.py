#!/usr/bin/python3
"""Export a swapformer model file to ONNX, for the onnxruntime-web comparison.

    /usr/bin/python3 bench/export_onnx.py MODEL.safetensors OUT.onnx [--graph fused|plain] [--seq T]

Runs with Debian's PyTorch 1.13 (/usr/bin/python3; the pyenv python3 has no
torch). Needs neither the `onnx` nor the `onnxruntime` Python package, except
for the -q8 graphs, which need `onnx` (apt-get install python3-onnx).

The model file is swapformer's safetensors (README "File format"): the config
JSON is in __metadata__.config, F32 tensors, Linear weights [out, in]. The
PyTorch module below is a plain BERT-style transcription of README "Semantics"
(nn.Linear, nn.LayerNorm, softmax), restricted to what the ONNX comparison
needs: layernorm, learned / sinusoidal / no positions, gelu / gelu_tanh / relu.

Two graphs, the same math and the same weights:

  plain  torch.onnx.export of the module, opset 17 (LayerNormalization is a
         native op). onnxruntime's own graph optimiser (level 'all') then fuses
         what it recognises (Gelu / BiasGelu, SkipLayerNormalization, ...).
  fused  the graph that onnxruntime's offline transformer optimiser produces
         for BERT (python -m onnxruntime.transformers.optimizer --model_type bert),
         written directly: com.microsoft Attention (one packed QKV GEMM + the
         attention core), SkipLayerNormalization (residual add + bias + LN),
         BiasGelu, and MatMul for the rest. This is onnxruntime at its best on
         CPU / wasm for this architecture.

plain-q8, fused-q8  the same two graphs after onnxruntime's dynamic quantization
         (onnxruntime.quantization.quantize_dynamic, per_channel=True, int8
         weights, MatMulConstBOnly), written here with the `onnx` package
         (Debian's python3-onnx; the quantization tool itself is not needed):
           MatMul(x, W) with W constant  ->  DynamicQuantizeLinear(x) -> x_q (uint8),
             x_scale, x_zp; MatMulInteger(x_q, W_q, x_zp, W_zp) -> Cast(float) ->
             Mul(., Mul(x_scale, W_scale)), the bias Add (or the fused op taking
             the bias) unchanged
           com.microsoft Attention(x, W_qkv, b)  ->  DynamicQuantizeLinear(x);
             com.microsoft QAttention(x_q, W_qkv_q, b, x_scale, W_scale, , x_zp, W_zp)
         W_q int8 per output column, symmetric: s = max|w| / 127 (float32),
         W_q = round(w / s) half to even in [-127, 127], W_zp = 0: the bytes and
         scales of swapformer's q8 weights (core/qgemm.c). An input read by several
         MatMuls (q, k, v) is quantized once, as the tool does. onnxruntime's graph
         optimiser (level 'all') then fuses DynamicQuantizeLinear + MatMulInteger +
         Cast + Mul (+ Add) into com.microsoft DynamicQuantizeMatMul, which
         quantizes x per tensor (uint8) and runs MLAS's int8 GEMM.

--seq T fixes the sequence length (one file per T); without it T is a dynamic
axis. The input is `input_ids`, int64 [1, T]; the output `last_hidden_state`,
float32 [1, T, dModel].

Before exporting, the script checks in float32 PyTorch that both module
variants agree with a float64 transcription of the spec (relative max error,
printed). The swapformer-vs-onnxruntime check is done by bench/bench.js.
"""

import argparse
import json
import math
import os
import struct
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


# ------------------------------------------------------------------ file

def read_safetensors(path):
    """A safetensors file of F32 tensors -> (its __metadata__, {name: tensor})."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    hdr = json.loads(data[8:8 + n].decode("utf-8"))
    meta = hdr.pop("__metadata__", {}) or {}
    body = memoryview(data)[8 + n:]
    W = {}
    for name, t in hdr.items():
        if t["dtype"] != "F32":
            sys.exit("export_onnx: %s is %s; only F32 files are supported" % (name, t["dtype"]))
        b, e = t["data_offsets"]
        W[name] = torch.from_numpy(np.frombuffer(body[b:e], "<f4").copy().reshape(t["shape"]))
    return meta, W


def read_model(path):
    meta, W = read_safetensors(path)
    if meta.get("format") != "swapformer" or "config" not in meta:
        sys.exit("export_onnx: %s has no swapformer config in its metadata" % path)
    return json.loads(meta["config"]), W


def resolve(cfg):
    r = dict(cfg)
    r.setdefault("maxLen", 512)
    r.setdefault("eps", 1e-5)
    r.setdefault("scaleEmbedding", False)
    r.setdefault("finalNorm", r["normPlacement"] == "pre")
    po = dict(r.get("positionOptions") or {})
    po.setdefault("base", 10000)
    r["positionOptions"] = po
    if r["norm"] != "layernorm":
        sys.exit("export_onnx: norm %r is not supported (layernorm only)" % r["norm"])
    if r["position"] not in ("learned", "sinusoidal", "none"):
        sys.exit("export_onnx: position %r is not supported (learned, sinusoidal, none)" % r["position"])
    if r["activation"] not in ("gelu", "gelu_tanh", "relu"):
        sys.exit("export_onnx: activation %r is not supported (gelu, gelu_tanh, relu)" % r["activation"])
    return r


def sinusoidal(T, d, base):
    pe = np.zeros((T, d))
    pos = np.arange(T)[:, None]
    i2 = np.arange(0, d, 2)
    ang = pos / np.power(float(base), i2 / d)
    pe[:, 0::2] = np.sin(ang)
    pe[:, 1::2] = np.cos(ang)[:, : d // 2]
    return torch.tensor(pe, dtype=torch.float32)


# ------------------------------------------------------------------ contrib ops
# Each is an autograd.Function whose forward is the op's math in PyTorch and
# whose symbolic emits the com.microsoft op (onnxruntime contrib ops, CPU EP).

class MsAttention(torch.autograd.Function):
    """com.microsoft Attention: input [B,S,H], weights [H,3H] (q|k|v), bias [3H], no mask."""

    @staticmethod
    def forward(ctx, x, w, b, heads):
        B, S, H = x.shape
        dk = H // heads
        qkv = x @ w + b
        q, k, v = qkv.split(H, dim=-1)
        q, k, v = (t.reshape(B, S, heads, dk).transpose(1, 2) for t in (q, k, v))
        p = torch.softmax((q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(dk)), dim=-1)
        return (p @ v).transpose(1, 2).reshape(B, S, H)

    @staticmethod
    def symbolic(g, x, w, b, heads):
        return g.op("com.microsoft::Attention", x, w, b, num_heads_i=heads)


class MsSkipLayerNorm(torch.autograd.Function):
    """com.microsoft SkipLayerNormalization: LN(input + skip + bias)."""

    @staticmethod
    def forward(ctx, x, skip, gamma, beta, bias, eps):
        return F.layer_norm(x + skip + bias, (x.shape[-1],), gamma, beta, eps)

    @staticmethod
    def symbolic(g, x, skip, gamma, beta, bias, eps):
        return g.op("com.microsoft::SkipLayerNormalization", x, skip, gamma, beta, bias, epsilon_f=eps)


class MsBiasGelu(torch.autograd.Function):
    """com.microsoft BiasGelu: gelu_erf(x + bias)."""

    @staticmethod
    def forward(ctx, x, bias):
        return F.gelu(x + bias)

    @staticmethod
    def symbolic(g, x, bias):
        return g.op("com.microsoft::BiasGelu", x, bias)


class MsFastGelu(torch.autograd.Function):
    """com.microsoft FastGelu: gelu_tanh(x + bias)."""

    @staticmethod
    def forward(ctx, x, bias):
        return F.gelu(x + bias, approximate="tanh")

    @staticmethod
    def symbolic(g, x, bias):
        return g.op("com.microsoft::FastGelu", x, bias)


# ------------------------------------------------------------------ modules

def linear(W, name, out_f, in_f):
    m = nn.Linear(in_f, out_f)
    with torch.no_grad():
        m.weight.copy_(W[name + ".weight"])
        b = W.get(name + ".bias")
        m.bias.copy_(b if b is not None else torch.zeros(out_f))
    return m


def layernorm(W, name, d, eps):
    m = nn.LayerNorm(d, eps=eps)
    with torch.no_grad():
        m.weight.copy_(W[name + ".weight"])
        b = W.get(name + ".bias")
        m.bias.copy_(b if b is not None else torch.zeros(d))
    return m


def activation(name):
    return {"gelu": lambda x: F.gelu(x), "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
            "relu": F.relu}[name]


class Embeddings(nn.Module):
    def __init__(self, cfg, W, seq):
        super().__init__()
        d = cfg["dModel"]
        self.scale = math.sqrt(d) if cfg["scaleEmbedding"] else None
        self.tokens = nn.Embedding(cfg["vocabSize"], d)
        with torch.no_grad():
            self.tokens.weight.copy_(W["embed.tokens"])
        self.position = cfg["position"]
        if self.position == "learned":
            self.positions = nn.Embedding(cfg["maxLen"], d)
            with torch.no_grad():
                self.positions.weight.copy_(W["embed.positions"])
        elif self.position == "sinusoidal":
            # a table long enough for every T this file will see, sliced to T
            n = seq if seq else max(cfg["maxLen"], 8192)
            self.register_buffer("table", sinusoidal(n, d, cfg["positionOptions"]["base"]))

    def forward(self, ids):
        x = self.tokens(ids)
        if self.scale is not None:
            x = x * self.scale
        T = ids.shape[1]
        if self.position == "learned":
            x = x + self.positions.weight[:T]
        elif self.position == "sinusoidal":
            x = x + self.table[:T]
        return x


class PlainLayer(nn.Module):
    """One encoder layer, BERT style: separate q/k/v Linear, softmax(q k^T / sqrt(dk)) v."""

    def __init__(self, cfg, W, l):
        super().__init__()
        d, ff, p = cfg["dModel"], cfg["ffDim"], "layers.%d." % l
        self.h, self.dk, self.pre = cfg["heads"], d // cfg["heads"], cfg["normPlacement"] == "pre"
        self.q, self.k, self.v, self.o = (linear(W, p + "attn." + n, d, d) for n in "qkvo")
        self.norm1, self.norm2 = layernorm(W, p + "norm1", d, cfg["eps"]), layernorm(W, p + "norm2", d, cfg["eps"])
        self.up, self.down = linear(W, p + "ffn.up", ff, d), linear(W, p + "ffn.down", d, ff)
        self.act = activation(cfg["activation"])

    def attn(self, x):
        B, T, d = x.shape
        split = lambda t: t.view(B, T, self.h, self.dk).permute(0, 2, 1, 3)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dk)
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.o(ctx.permute(0, 2, 1, 3).contiguous().view(B, T, d))

    def ffn(self, x):
        return self.down(self.act(self.up(x)))

    def forward(self, x):
        if self.pre:
            x = x + self.attn(self.norm1(x))
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.ffn(x))


class FusedLayer(nn.Module):
    """The same layer written with onnxruntime's fused contrib ops (post-norm only)."""

    def __init__(self, cfg, W, l):
        super().__init__()
        d, p = cfg["dModel"], "layers.%d." % l
        self.h, self.eps = cfg["heads"], float(cfg["eps"])
        self.gelu = {"gelu": MsBiasGelu, "gelu_tanh": MsFastGelu}.get(cfg["activation"])
        if self.gelu is None:
            sys.exit("export_onnx: the fused graph supports gelu and gelu_tanh")
        zero = lambda n: torch.zeros(n)
        b = lambda name, n: W.get(name, zero(n))
        t = lambda name: W[name].t().contiguous()  # [out,in] -> [in,out] for x @ w
        P = lambda a: nn.Parameter(a, requires_grad=False)
        self.qkv_w = P(torch.cat([t(p + "attn.%s.weight" % n) for n in "qkv"], dim=1))
        self.qkv_b = P(torch.cat([b(p + "attn.%s.bias" % n, d) for n in "qkv"]))
        self.o_w, self.o_b = P(t(p + "attn.o.weight")), P(b(p + "attn.o.bias", d))
        self.up_w, self.up_b = P(t(p + "ffn.up.weight")), P(b(p + "ffn.up.bias", cfg["ffDim"]))
        self.down_w, self.down_b = P(t(p + "ffn.down.weight")), P(b(p + "ffn.down.bias", d))
        self.g1, self.b1 = P(W[p + "norm1.weight"]), P(b(p + "norm1.bias", d))
        self.g2, self.b2 = P(W[p + "norm2.weight"]), P(b(p + "norm2.bias", d))

    def forward(self, x):
        a = torch.matmul(MsAttention.apply(x, self.qkv_w, self.qkv_b, self.h), self.o_w)
        x = MsSkipLayerNorm.apply(a, x, self.g1, self.b1, self.o_b, self.eps)
        f = torch.matmul(self.gelu.apply(torch.matmul(x, self.up_w), self.up_b), self.down_w)
        return MsSkipLayerNorm.apply(f, x, self.g2, self.b2, self.down_b, self.eps)


class Encoder(nn.Module):
    def __init__(self, cfg, W, graph="plain", seq=None):
        super().__init__()
        if graph == "fused" and cfg["normPlacement"] != "post":
            sys.exit("export_onnx: the fused graph is for post-norm (BERT) models; use --graph plain")
        Layer = FusedLayer if graph == "fused" else PlainLayer
        self.embed = Embeddings(cfg, W, seq)
        self.layers = nn.ModuleList(Layer(cfg, W, l) for l in range(cfg["layers"]))
        self.final = layernorm(W, "final_norm", cfg["dModel"], cfg["eps"]) if cfg["finalNorm"] else None

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.final(x) if self.final is not None else x


# ------------------------------------------------------------------ float64 spec check

def spec64(cfg, W, ids):
    """README "Semantics" in float64 elementary ops, for the self-check."""
    D = torch.float64
    w = lambda n: W[n].to(D)
    bz = lambda n, k: W[n].to(D) if n in W else torch.zeros(k, dtype=D)
    d, h = cfg["dModel"], cfg["heads"]
    dk, T = d // h, ids.shape[1]
    ln = lambda x, n: F.layer_norm(x, (d,), w(n + ".weight"), bz(n + ".bias", d), cfg["eps"])
    lin = lambda x, n, o: x @ w(n + ".weight").t() + bz(n + ".bias", o)
    x = w("embed.tokens")[ids[0]]
    if cfg["scaleEmbedding"]:
        x = x * math.sqrt(d)
    if cfg["position"] == "learned":
        x = x + w("embed.positions")[:T]
    elif cfg["position"] == "sinusoidal":
        x = x + sinusoidal(T, d, cfg["positionOptions"]["base"]).to(D)
    act = {"gelu": lambda t: 0.5 * t * (1 + torch.erf(t / math.sqrt(2))),
           "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "relu": F.relu}[cfg["activation"]]
    for l in range(cfg["layers"]):
        p = "layers.%d." % l

        def attn(y):
            q, k, v = (lin(y, p + "attn." + n, d).view(T, h, dk).transpose(0, 1) for n in "qkv")
            s = q @ k.transpose(-1, -2) / math.sqrt(dk)
            s = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            return lin(((s / s.sum(-1, keepdim=True)) @ v).transpose(0, 1).reshape(T, d), p + "attn.o", d)

        ffn = lambda y: lin(act(lin(y, p + "ffn.up", cfg["ffDim"])), p + "ffn.down", d)
        if cfg["normPlacement"] == "pre":
            x = x + attn(ln(x, p + "norm1"))
            x = x + ffn(ln(x, p + "norm2"))
        else:
            x = ln(x + attn(x), p + "norm1")
            x = ln(x + ffn(x), p + "norm2")
    if cfg["finalNorm"]:
        x = ln(x, "final_norm")
    return x[None]


def rel_err(a, b):
    return float((a.double() - b.double()).abs().max() / b.double().abs().max())


# ------------------------------------------------------------------ dynamic quantization (-q8 graphs)

def quantize_weight_columns(w):
    """w float32 [K, N] (x @ w) -> (int8 [K, N], float32 scales [N]): per output
    column, symmetric, s = max|w| / 127 in float32, q = round half to even of
    w / s (float32 division) clamped to [-127, 127]; an all-zero column gets s = 0."""
    w = np.asarray(w, dtype=np.float32)
    s = (np.abs(w).max(axis=0) / np.float32(127)).astype(np.float32)
    safe = np.where(s > 0, s, np.float32(1))
    q = np.clip(np.rint(w / safe), -127, 127)
    q[:, s == 0] = 0
    return q.astype(np.int8), s


def quantize_weight_tensor(w):
    """quantize_weight_columns with one scale for the whole tensor (per_channel=False)."""
    q, s = quantize_weight_columns(np.asarray(w, dtype=np.float32).reshape(-1, 1))
    return q.reshape(np.shape(w)), s.reshape(())


def quantize_table_u8(w):
    """An embedding table as onnxruntime quantizes a Gather's constant input (an
    activation: uint8, per tensor, asymmetric): the range [min(w, 0), max(w, 0)],
    s = (max - min) / 255, zero point round(-min / s), q = clip(round(w / s) + zp, 0, 255)."""
    w = np.asarray(w, dtype=np.float32)
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    s = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = np.uint8(np.clip(np.rint(-lo / s), 0, 255))
    q = np.clip(np.rint(w / s) + float(zp), 0, 255).astype(np.uint8)
    return q, s, zp


def quantize_dynamic_onnx(src, dst, per_channel=True, gather=False):
    """The f32 ONNX graph src -> dst as onnxruntime's quantize_dynamic writes it
    (see the module docstring). per_channel=False: one weight scale per MatMul;
    gather=True: a Gather of a constant table (the embeddings) reads its uint8
    quantization and a DequantizeLinear follows, as GatherQuant does in
    onnxruntime's IntegerOps registry. Returns the number of quantized nodes."""
    import onnx
    from onnx import helper, numpy_helper, TensorProto

    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    uses = {}
    for n in g.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    nodes, new_inits, quantized_inputs, dropped, count = [], [], {}, set(), 0

    def quantized_input(x):
        # one DynamicQuantizeLinear per input tensor, shared by its readers
        if x not in quantized_inputs:
            q, sc, zp = x + "_quantized", x + "_scale", x + "_zero_point"
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [q, sc, zp], x + "_QuantizeLinear"))
            quantized_inputs[x] = (q, sc, zp)
        return quantized_inputs[x]

    def use_up(name):
        uses[name] -= 1
        if uses[name] == 0:
            dropped.add(name)

    def quantized_weight(name):
        w = numpy_helper.to_array(inits[name])
        q, s = quantize_weight_columns(w) if per_channel else quantize_weight_tensor(w)
        new_inits.append(numpy_helper.from_array(q, name + "_quantized"))
        new_inits.append(numpy_helper.from_array(s, name + "_scale"))
        new_inits.append(numpy_helper.from_array(np.zeros(s.shape, np.int8), name + "_zero_point"))
        use_up(name)
        return name + "_quantized", name + "_scale", name + "_zero_point"

    def quantized_table(name):
        q, s, zp = quantize_table_u8(numpy_helper.to_array(inits[name]))
        new_inits.append(numpy_helper.from_array(q, name + "_quantized"))
        new_inits.append(numpy_helper.from_array(np.array(s, np.float32), name + "_scale"))
        new_inits.append(numpy_helper.from_array(np.array(zp, np.uint8), name + "_zero_point"))
        use_up(name)
        return name + "_quantized", name + "_scale", name + "_zero_point"

    for n in g.node:
        if n.op_type == "MatMul" and n.input[1] in inits and len(inits[n.input[1]].dims) == 2:
            xq, xs, xz = quantized_input(n.input[0])
            wq, ws, wz = quantized_weight(n.input[1])
            name = (n.name or n.output[0]) + "_quant"
            out = n.output[0] + "_output_quantized"
            nodes.append(helper.make_node("MatMulInteger", [xq, wq, xz, wz], [out], name))
            nodes.append(helper.make_node("Cast", [out], [out + "_cast_output"], out + "_cast", to=TensorProto.FLOAT))
            nodes.append(helper.make_node("Mul", [xs, ws], [name + "_scales_mul:0"], name + "_scales_mul"))
            nodes.append(helper.make_node("Mul", [out + "_cast_output", name + "_scales_mul:0"], [n.output[0]], name + "_output_scale_mul"))
            count += 1
        elif n.op_type == "Attention" and n.domain == "com.microsoft" and n.input[1] in inits:
            xq, xs, xz = quantized_input(n.input[0])
            wq, ws, wz = quantized_weight(n.input[1])
            q = helper.make_node("QAttention", [xq, wq, n.input[2], xs, ws, "", xz, wz], list(n.output),
                                 (n.name or n.output[0]) + "_quant", domain="com.microsoft")
            q.attribute.extend(n.attribute)
            nodes.append(q)
            count += 1
        elif gather and n.op_type == "Gather" and n.input[0] in inits and inits[n.input[0]].data_type == TensorProto.FLOAT:
            tq, ts, tz = quantized_table(n.input[0])
            out = n.output[0] + "_quantized"
            q = helper.make_node("Gather", [tq, n.input[1]], [out], n.name or n.output[0])
            q.attribute.extend(n.attribute)
            nodes.append(q)
            nodes.append(helper.make_node("DequantizeLinear", [out, ts, tz], [n.output[0]], n.output[0] + "_DequantizeLinear"))
            count += 1
        else:
            nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    keep = [t for t in g.initializer if t.name not in dropped]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    if any(n.op_type == "QAttention" for n in nodes) and not any(o.domain == "com.microsoft" for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    return count


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--graph", choices=("fused", "plain", "fused-q8", "plain-q8"), default="fused")
    ap.add_argument("--seq", type=int, default=0, help="fix T (default: dynamic T axis)")
    ap.add_argument("--check-len", type=int, default=64, help="T of the float32-vs-float64 self-check")
    a = ap.parse_args()

    cfg, W = read_model(a.model)
    cfg = resolve(cfg)
    base = a.graph[:-3] if a.graph.endswith("-q8") else a.graph
    model = Encoder(cfg, W, base, a.seq or None).eval()

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, cfg["vocabSize"], (1, a.seq or a.check_len), generator=g)
    with torch.no_grad():
        out = model(ids)
        ref = spec64(cfg, W, ids)
    err = rel_err(out, ref)
    print("export_onnx: %s graph, float32 PyTorch vs float64 spec at T=%d: relative max error %.2e"
          % (a.graph, ids.shape[1], err))
    if not err <= 1e-4:
        sys.exit("export_onnx: the PyTorch module does not reproduce the spec")

    kw = {}
    if not a.seq:
        kw["dynamic_axes"] = {"input_ids": {1: "T"}, "last_hidden_state": {1: "T"}}
    tmp = a.out + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, (ids,), tmp, input_names=["input_ids"], output_names=["last_hidden_state"],
                          opset_version=17, do_constant_folding=True,
                          custom_opsets={"com.microsoft": 1}, **kw)
    if base != a.graph:
        n = quantize_dynamic_onnx(tmp, tmp + ".q8")
        os.remove(tmp)
        tmp = tmp + ".q8"
        print("export_onnx: dynamic quantization: %d MatMul / Attention nodes with int8 weights" % n)
    os.replace(tmp, a.out)
    print("export_onnx: wrote %s (%d bytes)" % (a.out, os.path.getsize(a.out)))


if __name__ == "__main__":
    main()
