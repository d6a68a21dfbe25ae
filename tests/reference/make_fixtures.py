#!/usr/bin/python3
"""Generate golden test fixtures for swapformer.

Independent reference implementation (PyTorch + numpy, float64 throughout).
Run with the Debian interpreter that has torch:

    /usr/bin/python3 tests/reference/make_fixtures.py

Writes tests/fixtures/<case>.safetensors (one model per case) and
tests/fixtures/golden.json.  Output is deterministic (byte-identical on rerun).

Three references are computed and cross-checked (max abs diff <= 1e-10):
  A. "torch.nn.TransformerEncoderLayer": PyTorch's stock encoder stack
     (layernorm, relu/gelu, position none/sinusoidal/learned added outside).
  B. "float64 formulas": a plain transcription of the swapformer spec with
     elementary torch ops (covers every case; this is what goes into "expected").
  C. "torch.nn.MultiheadAttention composite": the layer assembled from
     torch.nn.Linear / LayerNorm / MultiheadAttention (float attn_mask for ALiBi,
     identity in-projections fed with RoPE-rotated q/k), torch.nn.functional
     activations, and independently written PE / RoPE / ALiBi-slope code
     (covers every case).

RoPE scaling (positionOptions.scaling: linear, ntk, yarn) is written twice: in B
from the spec's formulas term by term (b_rope_freqs), in C following the
structure of HF transformers' modeling_rope_utils (_compute_*_parameters,
attention_factor multiplying cos and sin); self_checks() asserts they agree on
a grid of head sizes, bases, factors, originalMaxLen and betas.  Cases with
"outputHead": true also store the logits (B, T, vocabSize) of head(x_final),
padded rows 0, under "logits" (A and C apply their own nn.Linear head).

The long cases (names long*, lengths given: T from 65 to 300, past the C core's
64-row query chunks and 64-key tiles) store "expected" rounded to LONG_DIGITS
significant digits.  The overflow cases scale the q and k weights and biases
(qk_scale) so that raw scores pass 100, asserted, and store that largest score
as "maxScore".
"""

import hashlib
import json
import math
import os
import struct
import sys
import warnings
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")
torch.use_deterministic_algorithms(True)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT_DIR = os.path.join(ROOT, "tests", "fixtures")
DT = torch.float64
TOL = 1e-10

REF_A = "torch.nn.TransformerEncoderLayer"
REF_B = "float64 formulas"
REF_C = "torch.nn.MultiheadAttention composite"

# significant digits of "expected" in the cases with given lengths (long_*, overflow_*)
LONG_DIGITS = 10

DEFAULTS = {"maxLen": 512, "eps": 1e-5, "scaleEmbedding": False}


# --------------------------------------------------------------------------
# config helpers
# --------------------------------------------------------------------------

def resolve(cfg):
    """Fill in the documented defaults."""
    r = dict(cfg)
    r.setdefault("maxLen", 512)
    r.setdefault("eps", 1e-5)
    r.setdefault("scaleEmbedding", False)
    r.setdefault("finalNorm", r["normPlacement"] == "pre")
    r.setdefault("outputHead", False)
    po = dict(r.get("positionOptions") or {})
    if r["position"] in ("sinusoidal", "rope"):
        po.setdefault("base", 10000)
    if r["position"] == "rope":
        po.setdefault("style", "interleaved")
    r["positionOptions"] = po
    return r


def is_glu(act):
    return act in ("swiglu", "geglu")


# --------------------------------------------------------------------------
# weights: float64 draws rounded to the stored dtype
# --------------------------------------------------------------------------

def f32_to_bf16_bits(a32):
    u = a32.view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16  # round to nearest even
    return r.astype(np.uint16)


def bf16_bits_to_f64(b):
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def quantize(a64, dtype):
    """Return (raw little-endian bytes, exact float64 value of stored numbers)."""
    if dtype == "F32":
        s = a64.astype("<f4")
        return s.tobytes(), s.astype(np.float64)
    if dtype == "F16":
        s = a64.astype("<f2")
        assert np.all(np.isfinite(s))
        return s.tobytes(), s.astype(np.float64)
    if dtype == "BF16":
        b = f32_to_bf16_bits(a64.astype(np.float32)).astype("<u2")
        return b.tobytes(), bf16_bits_to_f64(b)
    raise ValueError(dtype)


def make_weights(cfg, seed, biases=True, head_bias=True):
    """Ordered list of (name, float64 ndarray) before rounding."""
    rng = np.random.default_rng(seed)
    d, ff, V = cfg["dModel"], cfg["ffDim"], cfg["vocabSize"]
    out = []

    def lin(name, o, i, bias=None):
        out.append((name + ".weight", rng.standard_normal((o, i)) * (1.2 / math.sqrt(i))))
        if biases if bias is None else bias:
            out.append((name + ".bias", rng.standard_normal(o) * 0.1))

    def norm(name):
        out.append((name + ".weight", 1.0 + 0.1 * rng.standard_normal(d)))
        if cfg["norm"] == "layernorm" and biases:
            out.append((name + ".bias", 0.1 * rng.standard_normal(d)))

    out.append(("embed.tokens", rng.standard_normal((V, d))))
    if cfg["position"] == "learned":
        out.append(("embed.positions", 0.5 * rng.standard_normal((cfg["maxLen"], d))))
    for l in range(cfg["layers"]):
        p = "layers.%d." % l
        for n in "qkvo":
            lin(p + "attn." + n, d, d)
        norm(p + "norm1")
        norm(p + "norm2")
        lin(p + "ffn.up", ff, d)
        if is_glu(cfg["activation"]):
            lin(p + "ffn.gate", ff, d)
        lin(p + "ffn.down", d, ff)
    if cfg["finalNorm"]:
        norm("final_norm")
    if cfg["outputHead"]:
        lin("head", V, d, bias=head_bias)
    return out


def write_safetensors(path, config_meta, tensors, dtype):
    """tensors: list of (name, float64 array).  Returns dict name -> exact float64 torch tensor."""
    header = {"__metadata__": {"format": "swapformer",
                               "config": json.dumps(config_meta, separators=(",", ":"))}}
    blobs, exact, off = [], {}, 0
    for name, a in tensors:
        raw, val = quantize(a, dtype)
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
        exact[name] = torch.tensor(val, dtype=DT)
    hj = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hj += b" " * ((-(8 + len(hj))) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)
    return exact


def read_safetensors(path):
    """Independent re-read of a written file (sanity check of the writer)."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    assert (8 + n) % 8 == 0
    hdr = json.loads(data[8:8 + n].decode("utf-8"))
    body = data[8 + n:]
    meta = hdr.pop("__metadata__")
    res, end = {}, 0
    for name, t in hdr.items():
        b, e = t["data_offsets"]
        assert b == end, "hole or reordering in data section"
        end = e
        raw = body[b:e]
        if t["dtype"] == "F32":
            a = np.frombuffer(raw, "<f4").astype(np.float64)
        elif t["dtype"] == "F16":
            a = np.frombuffer(raw, "<f2").astype(np.float64)
        elif t["dtype"] == "BF16":
            a = bf16_bits_to_f64(np.frombuffer(raw, "<u2"))
        res[name] = a.reshape(t["shape"])
    assert end == len(body)
    return meta, res


# --------------------------------------------------------------------------
# Reference B: plain float64 formulas (the spec, transcribed)
# --------------------------------------------------------------------------

def b_layernorm(x, w, b, eps):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    y = (x - mean) / torch.sqrt(var + eps) * w
    return y + b if b is not None else y


def b_rmsnorm(x, w, eps):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w


def b_sinusoidal(T, d, base):
    pe = torch.zeros(T, d, dtype=DT)
    for pos in range(T):
        for i in range(0, d, 2):
            ang = pos / (base ** (i / d))
            pe[pos, i] = math.sin(ang)
            if i + 1 < d:
                pe[pos, i + 1] = math.cos(ang)
    return pe


def b_rope_freqs(dk, base, scaling):
    """positionOptions.scaling, the spec's formulas term by term.
    Returns (angle(pos, i), mscale): the rotation angle of pair i at position pos,
    and the factor multiplying cos and sin."""
    if not scaling:
        return (lambda pos, i: pos * base ** (-2.0 * i / dk)), 1.0
    typ, factor = scaling["type"], scaling["factor"]
    if typ == "linear":                       # position interpolation
        return (lambda pos, i: (pos / factor) * base ** (-2.0 * i / dk)), 1.0
    if typ == "ntk":                          # NTK-aware: a larger base
        base2 = base * factor ** (dk / (dk - 2))
        return (lambda pos, i: pos * base2 ** (-2.0 * i / dk)), 1.0
    assert typ == "yarn", typ
    L0 = scaling["originalMaxLen"]
    beta_fast, beta_slow = scaling.get("betaFast", 32), scaling.get("betaSlow", 1)

    def correction_dim(r):
        return dk * math.log(L0 / (r * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), dk - 1)
    if low == high:
        high = high + 0.001
    inv = []
    for i in range(dk // 2):
        pos_freq = base ** (2.0 * i / dk)
        inv_extra, inv_inter = 1.0 / pos_freq, 1.0 / (factor * pos_freq)
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        mask = 1.0 - ramp
        inv.append(inv_inter * (1.0 - mask) + inv_extra * mask)
    return (lambda pos, i: pos * inv[i]), 0.1 * math.log(factor) + 1.0


def b_rope(x, base, style, scaling=None):
    """x: [T, dk] for one head of one sequence; positions 0..T-1."""
    T, dk = x.shape
    h = dk // 2
    y = x.clone()
    angle, msc = b_rope_freqs(dk, base, scaling)
    for pos in range(T):
        for i in range(h):
            a_ = angle(pos, i)
            c, s = math.cos(a_) * msc, math.sin(a_) * msc
            if style == "interleaved":
                a, bb = 2 * i, 2 * i + 1
            else:
                a, bb = i, i + h
            y[pos, a] = x[pos, a] * c - x[pos, bb] * s
            y[pos, bb] = x[pos, a] * s + x[pos, bb] * c
    return y


def b_alibi_slopes(n):
    def pow2(m):
        start = 2.0 ** (-8.0 / m)
        return [start ** (k + 1) for k in range(m)]
    if n & (n - 1) == 0:
        return pow2(n)
    p = 1
    while p * 2 <= n:
        p *= 2
    return pow2(p) + pow2(2 * p)[0::2][:n - p]


def b_act(a, x):
    if a == "relu":
        return torch.where(x > 0, x, torch.zeros_like(x))
    if a == "gelu":
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    if a == "gelu_tanh":
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if a == "silu":
        return x / (1 + torch.exp(-x))
    raise ValueError(a)


def ref_b(cfg, W, ids, stats=None):
    """Returns (out [B,T,d], attentions [layers,B,H,T,T]); padded rows/cols are 0.
    stats (a dict), when given, receives "max_score": the largest raw score (before
    the max subtraction) and "min_row_max": the smallest row maximum."""
    d, H, eps = cfg["dModel"], cfg["heads"], cfg["eps"]
    dk = d // H
    po = cfg["positionOptions"]
    B = len(ids)
    T = max(len(s) for s in ids)
    zero_d = torch.zeros(d, dtype=DT)
    g = lambda n: W.get(n, None)
    gb = lambda n, size: W[n] if n in W else torch.zeros(size, dtype=DT)

    def norm(x, name):
        if cfg["norm"] == "layernorm":
            return b_layernorm(x, W[name + ".weight"], gb(name + ".bias", d), eps)
        return b_rmsnorm(x, W[name + ".weight"], eps)

    def linear(x, name):
        w = W[name + ".weight"]
        return x @ w.t() + gb(name + ".bias", w.shape[0])

    outs, atts = [], []
    for bi, seq in enumerate(ids):
        L = len(seq)
        # each sequence separately with its own positions 0..L-1 (no padding at all)
        x = torch.stack([W["embed.tokens"][t] for t in seq])
        if cfg["scaleEmbedding"]:
            x = x * math.sqrt(d)
        if cfg["position"] == "sinusoidal":
            x = x + b_sinusoidal(L, d, po["base"])
        elif cfg["position"] == "learned":
            x = x + W["embed.positions"][:L]
        seq_atts = []

        def attn(x, l):
            p = "layers.%d.attn." % l
            q, k, v = linear(x, p + "q"), linear(x, p + "k"), linear(x, p + "v")
            heads, probs = [], []
            slopes = b_alibi_slopes(H) if cfg["position"] == "alibi" else None
            for h in range(H):
                qh, kh, vh = (t[:, h * dk:(h + 1) * dk] for t in (q, k, v))
                if cfg["position"] == "rope":
                    qh = b_rope(qh, po["base"], po["style"], po.get("scaling"))
                    kh = b_rope(kh, po["base"], po["style"], po.get("scaling"))
                s = (qh @ kh.t()) / math.sqrt(dk)
                if slopes is not None:
                    dist = torch.tensor([[abs(i - j) for j in range(L)] for i in range(L)], dtype=DT)
                    s = s - slopes[h] * dist
                m = s.max(dim=-1, keepdim=True).values
                if stats is not None:
                    stats["max_score"] = max(stats.get("max_score", -math.inf), float(m.max()))
                    stats["min_row_max"] = min(stats.get("min_row_max", math.inf), float(m.min()))
                e = torch.exp(s - m)
                pr = e / e.sum(dim=-1, keepdim=True)
                probs.append(pr)
                heads.append(pr @ vh)
            full = torch.zeros(H, T, T, dtype=DT)
            full[:, :L, :L] = torch.stack(probs)
            seq_atts.append(full)
            return linear(torch.cat(heads, dim=-1), p + "o")

        def ffn(x, l):
            p = "layers.%d.ffn." % l
            a = cfg["activation"]
            if a == "swiglu":
                hdn = b_act("silu", linear(x, p + "gate")) * linear(x, p + "up")
            elif a == "geglu":
                hdn = b_act("gelu", linear(x, p + "gate")) * linear(x, p + "up")
            else:
                hdn = b_act(a, linear(x, p + "up"))
            return linear(hdn, p + "down")

        for l in range(cfg["layers"]):
            n1, n2 = "layers.%d.norm1" % l, "layers.%d.norm2" % l
            if cfg["normPlacement"] == "pre":
                x = x + attn(norm(x, n1), l)
                x = x + ffn(norm(x, n2), l)
            else:
                x = norm(x + attn(x, l), n1)
                x = norm(x + ffn(x, l), n2)
        if cfg["finalNorm"]:
            x = norm(x, "final_norm")
        full = torch.zeros(T, d, dtype=DT)
        full[:L] = x
        outs.append(full)
        atts.append(torch.stack(seq_atts) if seq_atts else torch.zeros(0, H, T, T, dtype=DT))
    out = torch.stack(outs)
    att = torch.stack(atts, dim=1) if cfg["layers"] else torch.zeros(0, B, H, T, T, dtype=DT)
    return out, att


def b_logits(cfg, W, out, ids):
    """head(x_final) per position; padded rows 0."""
    lg = out @ W["head.weight"].t()
    if "head.bias" in W:
        lg = lg + W["head.bias"]
    for b, s in enumerate(ids):
        lg[b, len(s):] = 0
    return lg


# --------------------------------------------------------------------------
# Shared for A and C: padded batch embedding with an independent PE formula
# --------------------------------------------------------------------------

def pe_tutorial(T, d, base):
    """The PyTorch-tutorial formulation: div_term = exp(arange(0,d,2) * -ln(base)/d)."""
    pos = torch.arange(T, dtype=DT).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2, dtype=DT) * (-math.log(base) / d))
    pe = torch.zeros(T, d, dtype=DT)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


def batch_embed(cfg, W, ids):
    d = cfg["dModel"]
    B, T = len(ids), max(len(s) for s in ids)
    emb = nn.Embedding(cfg["vocabSize"], d, dtype=DT)
    emb.weight.data.copy_(W["embed.tokens"])
    idt = torch.tensor([s + [0] * (T - len(s)) for s in ids], dtype=torch.long)
    pad = torch.tensor([[t >= len(s) for t in range(T)] for s in ids], dtype=torch.bool)
    x = emb(idt)
    if cfg["scaleEmbedding"]:
        x = x * math.sqrt(d)
    if cfg["position"] == "sinusoidal":
        x = x + pe_tutorial(T, d, cfg["positionOptions"]["base"]).unsqueeze(0)
    elif cfg["position"] == "learned":
        pemb = nn.Embedding(cfg["maxLen"], d, dtype=DT)
        pemb.weight.data.copy_(W["embed.positions"])
        x = x + pemb(torch.arange(T)).unsqueeze(0)
    return x, pad


def bias_or_zero(W, name, size):
    return W[name] if name in W else torch.zeros(size, dtype=DT)


# --------------------------------------------------------------------------
# Reference A: stock nn.TransformerEncoder
# --------------------------------------------------------------------------

def covers_a(cfg):
    return (cfg["norm"] == "layernorm" and cfg["position"] in ("none", "sinusoidal", "learned")
            and cfg["activation"] in ("relu", "gelu"))


def ref_a(cfg, W, ids):
    d, eps = cfg["dModel"], cfg["eps"]
    x, pad = batch_embed(cfg, W, ids)
    final = None
    if cfg["finalNorm"]:
        final = nn.LayerNorm(d, eps=eps, dtype=DT)
        final.weight.data.copy_(W["final_norm.weight"])
        final.bias.data.copy_(bias_or_zero(W, "final_norm.bias", d))
    with torch.no_grad():
        if cfg["layers"] == 0:
            out = final(x) if final is not None else x
        else:
            layer = nn.TransformerEncoderLayer(d, cfg["heads"], cfg["ffDim"], dropout=0.0,
                                               activation=cfg["activation"], layer_norm_eps=eps,
                                               batch_first=True, norm_first=cfg["normPlacement"] == "pre",
                                               dtype=DT)
            enc = nn.TransformerEncoder(layer, cfg["layers"], norm=final)
            for l, lay in enumerate(enc.layers):
                p = "layers.%d." % l
                lay.self_attn.in_proj_weight.copy_(torch.cat([W[p + "attn.%s.weight" % n] for n in "qkv"]))
                lay.self_attn.in_proj_bias.copy_(torch.cat([bias_or_zero(W, p + "attn.%s.bias" % n, d) for n in "qkv"]))
                lay.self_attn.out_proj.weight.copy_(W[p + "attn.o.weight"])
                lay.self_attn.out_proj.bias.copy_(bias_or_zero(W, p + "attn.o.bias", d))
                lay.linear1.weight.copy_(W[p + "ffn.up.weight"])
                lay.linear1.bias.copy_(bias_or_zero(W, p + "ffn.up.bias", cfg["ffDim"]))
                lay.linear2.weight.copy_(W[p + "ffn.down.weight"])
                lay.linear2.bias.copy_(bias_or_zero(W, p + "ffn.down.bias", d))
                for n in ("norm1", "norm2"):
                    getattr(lay, n).weight.copy_(W[p + n + ".weight"])
                    getattr(lay, n).bias.copy_(bias_or_zero(W, p + n + ".bias", d))
            enc.eval()
            out = enc(x, src_key_padding_mask=pad)
    return out


# --------------------------------------------------------------------------
# Reference C: composite of torch.nn modules, independent PE/RoPE/ALiBi code
# --------------------------------------------------------------------------

def alibi_paper_slopes(n):
    """Verbatim logic of the ALiBi authors' get_slopes()."""
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest) + alibi_paper_slopes(2 * closest)[0::2][:n - closest]


def hf_rope_parameters(dim, base, scaling):
    """(inv_freq [dim/2], attention_factor), following the structure of HF transformers'
    modeling_rope_utils._compute_{default,linear_scaling,ntk,yarn}_parameters
    (float64 throughout, where HF computes the YaRN ramp in float32)."""
    def _compute_default_rope_parameters(base, dim):
        attention_factor = 1.0
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(DT) / dim))
        return inv_freq, attention_factor

    def _compute_linear_scaling_rope_parameters(base, dim, factor):
        inv_freq, attention_factor = _compute_default_rope_parameters(base, dim)
        inv_freq /= factor
        return inv_freq, attention_factor

    def _compute_ntk_parameters(base, dim, factor):
        attention_factor = 1.0
        base = base * factor ** (dim / (dim - 2))
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(DT) / dim))
        return inv_freq, attention_factor

    def _compute_yarn_parameters(base, dim, factor, max_position_embeddings, beta_fast, beta_slow):
        attention_factor = 0.1 * math.log(factor) + 1.0

        def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
            return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

        def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings):
            low = math.floor(find_correction_dim(low_rot, dim, base, max_position_embeddings))
            high = math.ceil(find_correction_dim(high_rot, dim, base, max_position_embeddings))
            return max(low, 0), min(high, dim - 1)

        def linear_ramp_factor(min, max, dim):
            if min == max:
                max += 0.001  # Prevent singularity
            linear_func = (torch.arange(dim, dtype=DT) - min) / (max - min)
            ramp_func = torch.clamp(linear_func, 0, 1)
            return ramp_func

        pos_freqs = base ** (torch.arange(0, dim, 2).to(DT) / dim)
        inv_freq_extrapolation = 1.0 / pos_freqs
        inv_freq_interpolation = 1.0 / (factor * pos_freqs)
        low, high = find_correction_range(beta_fast, beta_slow, dim, base, max_position_embeddings)
        inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).to(DT)
        inv_freq = (inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
                    + inv_freq_extrapolation * inv_freq_extrapolation_factor)
        return inv_freq, attention_factor

    if not scaling:
        return _compute_default_rope_parameters(base, dim)
    if scaling["type"] == "linear":
        return _compute_linear_scaling_rope_parameters(base, dim, scaling["factor"])
    if scaling["type"] == "ntk":
        return _compute_ntk_parameters(base, dim, scaling["factor"])
    assert scaling["type"] == "yarn"
    return _compute_yarn_parameters(base, dim, scaling["factor"], scaling["originalMaxLen"],
                                    scaling.get("betaFast") or 32, scaling.get("betaSlow") or 1)


def rope_complex(x, base, scaling=None):
    """interleaved: treat (2i, 2i+1) as complex numbers, multiply by attention_factor * e^{i*pos*theta}.
    x: [B,T,H,dk]"""
    B, T, H, dk = x.shape
    theta, attention_factor = hf_rope_parameters(dk, base, scaling)
    ang = torch.outer(torch.arange(T, dtype=DT), theta)            # [T, dk/2]
    rot = torch.polar(torch.full_like(ang, attention_factor), ang)  # complex128
    xc = torch.view_as_complex(x.reshape(B, T, H, dk // 2, 2).contiguous())
    y = xc * rot[None, :, None, :]
    return torch.view_as_real(y).reshape(B, T, H, dk)


def rope_rotate_half(x, base, scaling=None):
    """HF/LLaMA style: x*cos + rotate_half(x)*sin with cos/sin duplicated over halves
    (and multiplied by attention_scaling, as HF's rotary embedding forward does)."""
    B, T, H, dk = x.shape
    inv_freq, attention_scaling = hf_rope_parameters(dk, base, scaling)
    freqs = torch.outer(torch.arange(T, dtype=DT), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)                        # [T, dk]
    cos = (emb.cos() * attention_scaling)[None, :, None, :]
    sin = (emb.sin() * attention_scaling)[None, :, None, :]
    x1, x2 = x[..., :dk // 2], x[..., dk // 2:]
    rotated = torch.cat((-x2, x1), dim=-1)
    return x * cos + rotated * sin


class RMSNormMod(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d, dtype=DT))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def make_norm(cfg, W, name):
    d = cfg["dModel"]
    if cfg["norm"] == "layernorm":
        m = nn.LayerNorm(d, eps=cfg["eps"], dtype=DT)
        m.bias.data.copy_(bias_or_zero(W, name + ".bias", d))
    else:
        m = RMSNormMod(d, cfg["eps"])
    m.weight.data.copy_(W[name + ".weight"])
    return m


def make_linear(W, name):
    w = W[name + ".weight"]
    m = nn.Linear(w.shape[1], w.shape[0], dtype=DT)
    m.weight.data.copy_(w)
    m.bias.data.copy_(bias_or_zero(W, name + ".bias", w.shape[0]))
    return m


def ref_c(cfg, W, ids):
    d, H = cfg["dModel"], cfg["heads"]
    dk = d // H
    po = cfg["positionOptions"]
    x, pad = batch_embed(cfg, W, ids)
    B, T, _ = x.shape
    # float mask [B*H, T, T]: ALiBi bias + -inf on padded keys
    mask = torch.zeros(B, H, T, T, dtype=DT)
    if cfg["position"] == "alibi":
        pos = torch.arange(T, dtype=DT)
        dist = (pos[None, :] - pos[:, None]).abs()
        mask = mask - torch.tensor(alibi_paper_slopes(H), dtype=DT)[None, :, None, None] * dist
    mask = mask.masked_fill(pad[:, None, None, :], float("-inf")).reshape(B * H, T, T)
    act = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
           "swiglu": F.silu, "geglu": F.gelu}[cfg["activation"]]
    atts = []
    with torch.no_grad():
        for l in range(cfg["layers"]):
            p = "layers.%d." % l
            mha = nn.MultiheadAttention(d, H, dropout=0.0, batch_first=True, dtype=DT)
            qp, kp, vp = (make_linear(W, p + "attn." + n) for n in "qkv")
            rope = cfg["position"] == "rope"
            if rope:
                # projections done outside; MHA gets identity in-projections
                mha.in_proj_weight.copy_(torch.cat([torch.eye(d, dtype=DT)] * 3))
                mha.in_proj_bias.zero_()
            else:
                mha.in_proj_weight.copy_(torch.cat([qp.weight, kp.weight, vp.weight]))
                mha.in_proj_bias.copy_(torch.cat([qp.bias, kp.bias, vp.bias]))
            mha.out_proj.weight.copy_(W[p + "attn.o.weight"])
            mha.out_proj.bias.copy_(bias_or_zero(W, p + "attn.o.bias", d))
            mha.train()  # dropout is 0; avoids the fused fast path
            n1, n2 = make_norm(cfg, W, p + "norm1"), make_norm(cfg, W, p + "norm2")
            up, down = make_linear(W, p + "ffn.up"), make_linear(W, p + "ffn.down")
            gate = make_linear(W, p + "ffn.gate") if is_glu(cfg["activation"]) else None

            def sa(h):
                if rope:
                    rf = rope_complex if po["style"] == "interleaved" else rope_rotate_half
                    q = rf(qp(h).reshape(B, T, H, dk), po["base"], po.get("scaling")).reshape(B, T, d)
                    k = rf(kp(h).reshape(B, T, H, dk), po["base"], po.get("scaling")).reshape(B, T, d)
                    v = vp(h)
                else:
                    q = k = v = h
                o, w = mha(q, k, v, attn_mask=mask, need_weights=True, average_attn_weights=False)
                atts.append(w)
                return o

            def ff(h):
                if gate is not None:
                    return down(act(gate(h)) * up(h))
                return down(act(up(h)))

            if cfg["normPlacement"] == "pre":
                x = x + sa(n1(x))
                x = x + ff(n2(x))
            else:
                x = n1(x + sa(x))
                x = n2(x + ff(x))
        if cfg["finalNorm"]:
            x = make_norm(cfg, W, "final_norm")(x)
    att = torch.stack(atts) if atts else torch.zeros(0, B, H, T, T, dtype=DT)
    return x, att


def torch_head(W, out, ids):
    """nn.Linear head on A's / C's output; padded rows 0."""
    V, d = W["head.weight"].shape
    head = nn.Linear(d, V, bias="head.bias" in W, dtype=DT)
    with torch.no_grad():
        head.weight.copy_(W["head.weight"])
        if "head.bias" in W:
            head.bias.copy_(W["head.bias"])
        lg = head(out)
    pad = torch.tensor([[t >= len(s) for t in range(out.shape[1])] for s in ids])
    return lg.masked_fill(pad[:, :, None], 0.0)


# --------------------------------------------------------------------------
# self-checks: the seed lessons' worked numbers + formula cross-checks
# --------------------------------------------------------------------------

def self_checks():
    # LayerNorm of [2,-1,4,3], eps tiny
    y = b_layernorm(torch.tensor([2., -1., 4., 3.], dtype=DT), torch.ones(4, dtype=DT), None, 1e-12)
    assert [round(v, 4) for v in y.tolist()] == [0.0, -1.6036, 1.0690, 0.5345], y
    # sinusoidal d=4: PE1.PE2 = PE2.PE3 = 1.54025
    pe = b_sinusoidal(4, 4, 10000)
    assert round(float(pe[1] @ pe[2]), 5) == 1.54025 and round(float(pe[2] @ pe[3]), 5) == 1.54025
    assert torch.allclose(pe, pe_tutorial(4, 4, 10000), atol=1e-14, rtol=0)
    assert torch.allclose(b_sinusoidal(9, 16, 100), pe_tutorial(9, 16, 100), atol=1e-13, rtol=0)
    # ALiBi slopes for 8 heads = 1/2 .. 1/256
    assert b_alibi_slopes(8) == [2.0 ** -(k + 1) for k in range(8)]
    for n in range(1, 33):
        a, b = b_alibi_slopes(n), alibi_paper_slopes(n)
        assert len(a) == n and max(abs(u - v) for u, v in zip(a, b)) < 1e-15, n
    s12 = b_alibi_slopes(12)
    assert abs(s12[8] - 2 ** -0.5) < 1e-15 and abs(s12[11] - 2 ** -3.5) < 1e-15
    # RoPE: q.k at positions (3,7) equals (10,14); both styles; both implementations agree
    g = torch.Generator().manual_seed(0)
    for style in ("interleaved", "half"):
        for dk in (2, 4, 8):
            q = torch.randn(1, dk, generator=g, dtype=DT)
            k = torch.randn(1, dk, generator=g, dtype=DT)
            rot = lambda v, pos: b_rope(v.expand(pos + 1, dk), 10000, style)[pos]
            a = float(rot(q, 3) @ rot(k, 7))
            b = float(rot(q, 10) @ rot(k, 14))
            assert abs(a - b) < 1e-12, (style, a, b)
            assert abs(a - float(q[0] @ k[0])) > 1e-6  # rotation actually does something
        x = torch.randn(12, 8, generator=g, dtype=DT)
        mine = b_rope(x, 500, style)
        other = (rope_complex if style == "interleaved" else rope_rotate_half)(x.reshape(1, 12, 1, 8), 500)
        assert torch.allclose(mine, other.reshape(12, 8), atol=1e-13, rtol=0), style
    # RoPE scaling: the spec's formulas (B) and HF's structure (C) give the same angles and factor
    yarn = lambda f, L0, **b: dict(type="yarn", factor=f, originalMaxLen=L0, **b)
    scalings = [dict(type="linear", factor=2), dict(type="linear", factor=0.5), dict(type="ntk", factor=4),
                dict(type="ntk", factor=1), yarn(4, 8), yarn(4, 8, betaFast=16, betaSlow=2), yarn(2.5, 512),
                yarn(2.5, 512, betaFast=16, betaSlow=2), yarn(8, 64), yarn(4, 2), yarn(1, 64), yarn(16, 4096)]
    pos = torch.arange(0, 200, 7, dtype=DT)
    for dk in (4, 8, 16, 64, 128):
        for base in (1.5, 10, 100, 500, 10000, 500000):
            for sc in scalings:
                angle, msc = b_rope_freqs(dk, base, sc)
                inv, af = hf_rope_parameters(dk, base, sc)
                mine = torch.tensor([[angle(p, i) for i in range(dk // 2)] for p in pos.tolist()], dtype=DT)
                assert torch.allclose(mine, torch.outer(pos, inv), rtol=1e-13, atol=1e-12), (dk, base, sc)
                assert abs(msc - af) < 1e-15, (dk, base, sc)
    # ... and the worked values: YaRN's ramp (pair index i: 0 = fastest), mscale, NTK's base, PI's positions
    def ramp(dk, base, sc):
        angle, _ = b_rope_freqs(dk, base, sc)
        f = sc["factor"]
        return [round((base ** (-2.0 * i / dk) - angle(1, i)) / (base ** (-2.0 * i / dk) * (1 - 1 / f)), 12)
                for i in range(dk // 2)]
    assert ramp(8, 10000, yarn(4, 8)) == [0, 1, 1, 1]                               # low 0, high 1
    assert ramp(8, 10000, yarn(4, 8, betaFast=16, betaSlow=2)) == [0, 1, 1, 1]      # low == high == 0
    assert ramp(16, 10000, yarn(2.5, 512)) == [0, 0.25, 0.5, 0.75, 1, 1, 1, 1]       # low 0, high 4
    assert ramp(16, 10000, yarn(2.5, 512, betaFast=16, betaSlow=2)) == [0, 0, round(1 / 3, 12), round(2 / 3, 12), 1, 1, 1, 1]
    assert ramp(16, 500, yarn(8, 64)) == [0, round(1 / 3, 12), round(2 / 3, 12), 1, 1, 1, 1, 1]
    assert ramp(16, 10, yarn(4, 2)) == [0] * 8                                      # high -3 < low 0
    assert abs(b_rope_freqs(8, 10000, yarn(4, 8))[1] - (0.1 * math.log(4) + 1)) < 1e-15
    assert abs(b_rope_freqs(8, 10000, yarn(1, 8))[1] - 1) == 0
    a_ntk, _ = b_rope_freqs(8, 10000, dict(type="ntk", factor=4))
    assert abs(a_ntk(1, 1) - (10000 * 4 ** (8 / 6)) ** (-2 / 8)) < 1e-15
    a_lin, _ = b_rope_freqs(8, 10000, dict(type="linear", factor=4))
    a_one, _ = b_rope_freqs(8, 10000, None)
    assert all(abs(a_lin(12, i) - a_one(3, i)) < 1e-15 for i in range(4))
    # scaled RoPE stays relative (q.k at (3,7) = (10,14)) and YaRN scales q.k by mscale^2
    for style in ("interleaved", "half"):
        for sc in scalings:
            q = torch.randn(1, 8, generator=g, dtype=DT)
            k = torch.randn(1, 8, generator=g, dtype=DT)
            rot = lambda v, pos: b_rope(v.expand(pos + 1, 8), 10000, style, sc)[pos]
            a, b = float(rot(q, 3) @ rot(k, 7)), float(rot(q, 10) @ rot(k, 14))
            assert abs(a - b) < 1e-12, (style, sc, a, b)
            m2 = b_rope_freqs(8, 10000, sc)[1] ** 2
            assert abs(float(rot(q, 5) @ rot(q, 5)) - m2 * float(q[0] @ q[0])) < 1e-12, (style, sc)
        x = torch.randn(24, 16, generator=g, dtype=DT)
        for sc in scalings:
            mine = b_rope(x, 100, style, sc)
            other = (rope_complex if style == "interleaved" else rope_rotate_half)(x.reshape(1, 24, 1, 16), 100, sc)
            assert torch.allclose(mine, other.reshape(24, 16), atol=1e-13, rtol=0), (style, sc)
    # activations against torch.nn.functional
    t = torch.linspace(-6, 6, 1001, dtype=DT)
    assert torch.allclose(b_act("gelu", t), F.gelu(t), atol=1e-14, rtol=0)
    assert torch.allclose(b_act("gelu_tanh", t), F.gelu(t, approximate="tanh"), atol=1e-14, rtol=0)
    assert torch.allclose(b_act("silu", t), F.silu(t), atol=1e-14, rtol=0)
    assert torch.equal(b_act("relu", t), F.relu(t))
    # bf16 rounding: ties to even, and carry into exponent
    v = np.array([1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 1.0 + 2 ** -9, (2 - 2 ** -8) + 2 ** -9, -1.5], np.float32)
    assert bf16_bits_to_f64(f32_to_bf16_bits(v)).tolist() == [1.0, 1.0 + 2 ** -6, 1.0, 2.0, -1.5]
    print("self-checks: OK (LayerNorm [2,-1,4,3], sinusoidal PE dots 1.54025, ALiBi slopes, "
          "RoPE relative-position invariance, RoPE scaling B == HF-structured C and YaRN ramps, "
          "activations, bf16 rounding)")


# --------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------

def base_cfg(position, norm, placement, activation, **kw):
    alibi = position == "alibi"
    heads = kw.pop("heads", 12 if alibi else 4)
    d = kw.pop("dModel", 24 if heads == 12 else 16)
    cfg = {"vocabSize": 40, "dModel": d, "heads": heads, "layers": kw.pop("layers", 2),
           "ffDim": kw.pop("ffDim", 16 if alibi else 24), "maxLen": kw.pop("maxLen", 12 if position == "learned" else 16),
           "position": position}
    po = kw.pop("positionOptions", None)
    if position == "sinusoidal":
        cfg["positionOptions"] = po or {"base": 10000}
    elif position == "rope":
        cfg["positionOptions"] = po
    else:
        cfg["positionOptions"] = {}
    cfg.update({"norm": norm, "normPlacement": placement,
                "finalNorm": kw.pop("finalNorm", placement == "pre"),
                "eps": kw.pop("eps", 1e-5), "activation": activation,
                "scaleEmbedding": kw.pop("scaleEmbedding", False)})
    assert not kw, kw
    return cfg


def build_cases():
    cases = []

    def add(name, cfg, **opt):
        cases.append(dict(name=name, config=cfg, dtype=opt.get("dtype", "F32"),
                          biases=opt.get("biases", True), attentions=opt.get("attentions", False),
                          head_bias=opt.get("head_bias", True), long=opt.get("long", False),
                          lens=opt.get("lens"), qk_scale=opt.get("qk_scale")))

    positions = [("none", None), ("sinusoidal", None), ("learned", None),
                 ("rope_interleaved", {"base": 10000, "style": "interleaved"}),
                 ("rope_half", {"base": 10000, "style": "half"}), ("alibi", None)]
    # torch-coverable combos (layernorm x none/sinusoidal/learned) get relu/gelu;
    # everything else cycles through all five activations.
    torch_acts = iter(["relu", "gelu", "gelu", "relu", "relu", "gelu"])
    cycle = ["gelu_tanh", "swiglu", "geglu", "relu", "gelu"]
    ci = 0
    for pname, po in positions:
        pos = "rope" if pname.startswith("rope") else pname
        for norm in ("layernorm", "rmsnorm"):
            for placement in ("pre", "post"):
                if norm == "layernorm" and pos in ("none", "sinusoidal", "learned"):
                    act = next(torch_acts)
                else:
                    act = cycle[ci % len(cycle)]
                    ci += 1
                name = "%s__%s__%s__%s" % (pname, norm, placement, act)
                attn = (pname, norm, placement) in (("alibi", "layernorm", "pre"),
                                                    ("rope_half", "rmsnorm", "post"),
                                                    ("none", "rmsnorm", "pre"))
                add(name, base_cfg(pos, norm, placement, act, positionOptions=po), attentions=attn)

    add("alibi_h8__rmsnorm__pre__gelu", base_cfg("alibi", "rmsnorm", "pre", "gelu", heads=8, dModel=16))
    add("scale_embedding__sinusoidal__layernorm__pre__gelu",
        base_cfg("sinusoidal", "layernorm", "pre", "gelu", scaleEmbedding=True))
    add("pre_no_final_norm__learned__layernorm__relu",
        base_cfg("learned", "layernorm", "pre", "relu", finalNorm=False))
    add("pre_no_final_norm__rope_half__rmsnorm__swiglu",
        base_cfg("rope", "rmsnorm", "pre", "swiglu", finalNorm=False,
                 positionOptions={"base": 10000, "style": "half"}))
    add("post_final_norm__sinusoidal__layernorm__gelu",
        base_cfg("sinusoidal", "layernorm", "post", "gelu", finalNorm=True))
    add("post_final_norm__alibi__rmsnorm__geglu",
        base_cfg("alibi", "rmsnorm", "post", "geglu", finalNorm=True))
    add("eps_1e-6__none__layernorm__pre__relu", base_cfg("none", "layernorm", "pre", "relu", eps=1e-6))
    add("eps_1e-6__rope_interleaved__rmsnorm__post__gelu_tanh",
        base_cfg("rope", "rmsnorm", "post", "gelu_tanh", eps=1e-6,
                 positionOptions={"base": 10000, "style": "interleaved"}))
    # an eps large enough that ignoring / misplacing it is visible at float32 tolerance
    add("eps_0.5__learned__rmsnorm__pre__relu", base_cfg("learned", "rmsnorm", "pre", "relu", eps=0.5))
    add("eps_0.5__none__layernorm__post__gelu", base_cfg("none", "layernorm", "post", "gelu", eps=0.5))
    add("sinusoidal_base100__layernorm__post__relu",
        base_cfg("sinusoidal", "layernorm", "post", "relu", positionOptions={"base": 100}))
    add("rope_interleaved_base500__rmsnorm__pre__gelu",
        base_cfg("rope", "rmsnorm", "pre", "gelu", positionOptions={"base": 500, "style": "interleaved"}))
    add("rope_half_base500__layernorm__post__swiglu",
        base_cfg("rope", "layernorm", "post", "swiglu", positionOptions={"base": 500, "style": "half"}))
    add("no_bias__rope_half__rmsnorm__pre__swiglu",
        base_cfg("rope", "rmsnorm", "pre", "swiglu", positionOptions={"base": 10000, "style": "half"}),
        biases=False)
    add("no_bias__sinusoidal__layernorm__post__gelu",
        base_cfg("sinusoidal", "layernorm", "post", "gelu"), biases=False)
    add("f16__sinusoidal__layernorm__post__gelu", base_cfg("sinusoidal", "layernorm", "post", "gelu"),
        dtype="F16")
    add("bf16__rope_interleaved__rmsnorm__pre__swiglu",
        base_cfg("rope", "rmsnorm", "pre", "swiglu", positionOptions={"base": 10000, "style": "interleaved"}),
        dtype="BF16")
    add("layers0__learned__layernorm__pre", base_cfg("learned", "layernorm", "pre", "relu", layers=0))
    add("layers0__sinusoidal__rmsnorm__post_final_norm",
        base_cfg("sinusoidal", "rmsnorm", "post", "gelu", layers=0, finalNorm=True))
    add("layers3__learned__layernorm__post__relu", base_cfg("learned", "layernorm", "post", "relu", layers=3))
    add("layers3__rope_half__rmsnorm__pre__geglu",
        base_cfg("rope", "rmsnorm", "pre", "geglu", layers=3, positionOptions={"base": 10000, "style": "half"}))
    # defaults: only the fields that have no documented default
    add("defaults__rope__layernorm__pre__gelu",
        {"vocabSize": 40, "dModel": 16, "heads": 4, "layers": 2, "ffDim": 24, "position": "rope",
         "norm": "layernorm", "normPlacement": "pre", "activation": "gelu"})
    add("defaults__sinusoidal__layernorm__post__relu",
        {"vocabSize": 40, "dModel": 16, "heads": 4, "layers": 2, "ffDim": 24, "position": "sinusoidal",
         "norm": "layernorm", "normPlacement": "post", "activation": "relu"})

    # RoPE scaling (positionOptions.scaling), sequences up to 24 long: heads 2 (head size 8) or 1 (16)
    def rope_sc(style, base, scaling, norm, placement, act, heads=2):
        return base_cfg("rope", norm, placement, act, heads=heads, dModel=16,
                        positionOptions={"base": base, "style": style, "scaling": scaling})
    add("rope_interleaved_linear2__rmsnorm__pre__swiglu",
        rope_sc("interleaved", 10000, {"type": "linear", "factor": 2}, "rmsnorm", "pre", "swiglu"), long=True)
    add("rope_half_linear4__layernorm__post__gelu",
        rope_sc("half", 10000, {"type": "linear", "factor": 4}, "layernorm", "post", "gelu"), long=True)
    add("rope_interleaved_ntk4__layernorm__pre__gelu_tanh",
        rope_sc("interleaved", 10000, {"type": "ntk", "factor": 4}, "layernorm", "pre", "gelu_tanh"), long=True)
    add("rope_half_ntk4_base100__rmsnorm__post__relu",
        rope_sc("half", 100, {"type": "ntk", "factor": 4}, "rmsnorm", "post", "relu"), long=True)
    # YaRN: ramp [0,1,1,1] (low 0, high 1)
    add("rope_half_yarn4_L8__rmsnorm__pre__geglu",
        rope_sc("half", 10000, {"type": "yarn", "factor": 4, "originalMaxLen": 8}, "rmsnorm", "pre", "geglu"),
        long=True)
    # explicit betas; low == high == 0 (the +0.001 branch)
    add("rope_interleaved_yarn4_L8_beta16_2__layernorm__pre__swiglu",
        rope_sc("interleaved", 10000, {"type": "yarn", "factor": 4, "originalMaxLen": 8, "betaFast": 16,
                                       "betaSlow": 2}, "layernorm", "pre", "swiglu"), long=True)
    # head size 16: fractional ramps, [0,0,1/3,2/3,1,...] (low 1, high 4) and [0,1/3,2/3,1,...] (low 0, high 3)
    add("rope_half_yarn2.5_L512_beta16_2__rmsnorm__pre__gelu",
        rope_sc("half", 10000, {"type": "yarn", "factor": 2.5, "originalMaxLen": 512, "betaFast": 16,
                                "betaSlow": 2}, "rmsnorm", "pre", "gelu", heads=1), long=True)
    add("rope_interleaved_yarn8_L64_base500__layernorm__post__relu",
        rope_sc("interleaved", 500, {"type": "yarn", "factor": 8, "originalMaxLen": 64},
                "layernorm", "post", "relu", heads=1), long=True)
    # high (-3) below low (0): the ramp is 0 everywhere, every pair extrapolated, only mscale acts
    add("rope_interleaved_yarn4_L2_base10__rmsnorm__post__swiglu",
        rope_sc("interleaved", 10, {"type": "yarn", "factor": 4, "originalMaxLen": 2},
                "rmsnorm", "post", "swiglu", heads=1), long=True)

    # output head: "logits" (B, T, vocabSize) besides the hidden states
    add("head__rope_half__rmsnorm__pre__swiglu",
        dict(base_cfg("rope", "rmsnorm", "pre", "swiglu", positionOptions={"base": 10000, "style": "half"}),
             outputHead=True))
    add("head_no_bias__sinusoidal__layernorm__post__gelu",
        dict(base_cfg("sinusoidal", "layernorm", "post", "gelu"), outputHead=True), head_bias=False)

    # ---- long sequences: T from 65 to 300, past the query chunk (SF_CHUNK = 64) and the
    # key tile (SF_ATT_BK = 64) of the C core, so chunk and tile offsets are exercised.
    # Padded batches whose lengths straddle 64 and 128; vocab 50, dModel 16 (24 for six
    # heads), every position plugin, both norms and placements.
    def long_cfg(position, norm, placement, act, **kw):
        kw.setdefault("heads", 4)
        kw.setdefault("dModel", 16)
        kw.setdefault("ffDim", 24)
        cfg = base_cfg(position, norm, placement, act, maxLen=kw.pop("maxLen", 512), **kw)
        cfg["vocabSize"] = 50
        return cfg
    straddle = [300, 65, 128, 129, 63, 1]
    add("long_straddle__alibi__layernorm__pre__gelu", long_cfg("alibi", "layernorm", "pre", "gelu"),
        lens=straddle)
    add("long__sinusoidal__layernorm__post__relu", long_cfg("sinusoidal", "layernorm", "post", "relu"),
        lens=[129, 64, 65])
    add("long__learned_L300__rmsnorm__post__gelu_tanh",
        long_cfg("learned", "rmsnorm", "post", "gelu_tanh", maxLen=300), lens=[300, 70])
    add("long__rope_interleaved__layernorm__pre__swiglu",
        long_cfg("rope", "layernorm", "pre", "swiglu", positionOptions={"base": 10000, "style": "interleaved"}),
        lens=[200, 65])
    add("long__rope_half__rmsnorm__pre__geglu",
        long_cfg("rope", "rmsnorm", "pre", "geglu", positionOptions={"base": 10000, "style": "half"}),
        lens=[128, 129, 1])
    add("long__rope_half_yarn4_L64__layernorm__post__gelu",
        long_cfg("rope", "layernorm", "post", "gelu", positionOptions={
            "base": 10000, "style": "half", "scaling": {"type": "yarn", "factor": 4, "originalMaxLen": 64}}),
        lens=[256, 65])
    add("long__alibi_h6__rmsnorm__post__swiglu",
        long_cfg("alibi", "rmsnorm", "post", "swiglu", heads=6, dModel=24), lens=[200, 66])
    add("long__none__rmsnorm__pre__relu", long_cfg("none", "rmsnorm", "pre", "relu"), lens=[180, 66])
    # q and k weights (and biases) scaled so that raw scores pass 100: exp overflows
    # float32 (above ~88) unless the row maximum is subtracted first.
    add("overflow__sinusoidal__rmsnorm__pre__gelu", long_cfg("sinusoidal", "rmsnorm", "pre", "gelu"),
        lens=[24, 9], qk_scale=4.0)
    add("long_overflow__rope_interleaved__layernorm__post__relu",
        long_cfg("rope", "layernorm", "post", "relu", positionOptions={"base": 10000, "style": "interleaved"}),
        lens=[160, 20], qk_scale=3.6)
    return cases


def make_ids(seed, vocab, long=False, lens=None):
    rng = np.random.default_rng(seed + 1)
    if lens:  # given lengths (the long cases)
        return [[int(t) for t in rng.integers(0, vocab, size=L)] for L in lens]
    if long:  # two sequences, the longer 24 (past YaRN's originalMaxLen 8)
        lens = [24, int(rng.integers(9, 21))]
        return [[int(t) for t in rng.integers(0, vocab, size=L)] for L in lens]
    B = int(rng.integers(2, 4))
    lens = [int(v) for v in rng.choice(np.arange(1, 10), size=B, replace=False)]
    if max(lens) < 6:
        lens[0] = 9
    return [[int(t) for t in rng.integers(0, vocab, size=L)] for L in lens]


def flat(t, digits=None):
    """Row-major list of floats: exact (repr of the float64), or rounded to digits
    significant digits (the long cases, to keep golden.json small: 5e-11 relative)."""
    if digits:
        return [float("%.*g" % (digits, v)) for v in t.reshape(-1).tolist()]
    return [float(v) for v in t.reshape(-1).tolist()]


def main():
    self_checks()
    os.makedirs(OUT_DIR, exist_ok=True)
    for f in os.listdir(OUT_DIR):
        if f.endswith(".safetensors") or f == "golden.json":
            os.remove(os.path.join(OUT_DIR, f))
    cases = build_cases()
    names = [c["name"] for c in cases]
    assert len(set(names)) == len(names)
    golden = {"generator": "tests/reference/make_fixtures.py", "torch": torch.__version__, "cases": []}
    report = []
    for c in cases:
        name, meta_cfg = c["name"], c["config"]
        cfg = resolve(meta_cfg)
        assert cfg["dModel"] % cfg["heads"] == 0
        if cfg["position"] == "rope":
            assert (cfg["dModel"] // cfg["heads"]) % 2 == 0
        seed = zlib.crc32(name.encode())
        ids = make_ids(seed, cfg["vocabSize"], c["long"], c["lens"])
        assert len(set(map(len, ids))) == len(ids)
        if cfg["position"] == "learned":
            assert cfg["maxLen"] >= max(map(len, ids))
        path = os.path.join(OUT_DIR, name + ".safetensors")
        tensors = make_weights(cfg, seed, c["biases"], c["head_bias"])
        if c["qk_scale"]:
            tensors = [(n, a * c["qk_scale"] if ".attn.q." in n or ".attn.k." in n else a) for n, a in tensors]
        W = write_safetensors(path, meta_cfg, tensors, c["dtype"])
        meta, back = read_safetensors(path)
        assert json.loads(meta["config"]) == meta_cfg and meta["format"] == "swapformer"
        assert list(back) == list(W) and all(np.array_equal(back[k], W[k].numpy()) for k in W)

        B, T = len(ids), max(map(len, ids))
        real = torch.tensor([[t < len(s) for t in range(T)] for s in ids])
        stats = {}
        out_b, att_b = ref_b(cfg, W, ids, stats)
        if c["qk_scale"]:  # some scores overflow float32's exp without the max subtraction
            assert stats["max_score"] > 100, (name, stats)
        head = cfg["outputHead"]
        lg_b = b_logits(cfg, W, out_b, ids) if head else None
        refs, diffs = [REF_B], {}
        if covers_a(cfg):
            out_a = ref_a(cfg, W, ids)
            diffs[REF_A] = float((out_a - out_b)[real].abs().max())
            if head:
                diffs[REF_A + " (logits)"] = float((torch_head(W, out_a, ids) - lg_b).abs().max())
            refs.insert(0, REF_A)
        out_c, att_c = ref_c(cfg, W, ids)
        diffs[REF_C] = float((out_c - out_b)[real].abs().max())
        if head:
            diffs[REF_C + " (logits)"] = float((torch_head(W, out_c, ids) - lg_b).abs().max())
        if cfg["layers"]:
            qmask = real[None, :, None, :, None]
            diffs[REF_C + " (attn probs)"] = float(((att_c - att_b) * qmask).abs().max())
        refs.insert(len(refs) - 1, REF_C)
        for k, v in diffs.items():
            if not v <= TOL:
                sys.exit("CROSS-CHECK FAILED: %s: %s differs from %s by %.3e" % (name, k, REF_B, v))
        assert float(out_b.abs().max()) > 0.1 and float(out_b[real].std()) > 0.1
        assert torch.all(out_b[~real] == 0)

        entry = {"name": name, "file": name + ".safetensors", "config": meta_cfg, "dtype": c["dtype"],
                 "ids": ids, "references": refs, "shape": [B, T, cfg["dModel"]],
                 "expected": flat(out_b, LONG_DIGITS if c["lens"] else None)}
        if c["qk_scale"]:  # the largest raw score q.k/sqrt(dk) (+ bias) of reference B
            entry["maxScore"] = round(stats["max_score"], 6)
        if c["attentions"]:
            entry["attentions"] = {"shape": list(att_b.shape), "data": flat(att_b)}
        if head:
            assert float(lg_b.abs().max()) > 0.1 and torch.all(lg_b[~real] == 0)
            entry["logits"] = {"shape": list(lg_b.shape), "data": flat(lg_b)}
        golden["cases"].append(entry)
        report.append((name, c["dtype"], len(ids), T, diffs, stats.get("max_score")))

    with open(os.path.join(OUT_DIR, "golden.json"), "w") as f:
        # compact, one case per line (keeps diffs readable and the file small)
        head = {k: v for k, v in golden.items() if k != "cases"}
        f.write(json.dumps(head, separators=(",", ":"))[:-1] + ',"cases":[\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in golden["cases"]))
        f.write("\n]}\n")

    total = sum(os.path.getsize(os.path.join(OUT_DIR, f)) for f in os.listdir(OUT_DIR))
    for name, dt, B, T, diffs, max_score in report:
        ds = ", ".join("%s %.1e" % ({REF_A: "A", REF_C: "C", REF_C + " (attn probs)": "C-attn",
                                     REF_A + " (logits)": "A-logits", REF_C + " (logits)": "C-logits"}[k], v)
                       for k, v in diffs.items())
        print("%-58s %-4s B=%d T=%-3d max|diff| vs B: %s%s" % (name, dt, B, T, ds, "" if max_score is None
                                                                else ", max score %.1f" % max_score))
    print("%d cases, fixtures total %d bytes" % (len(report), total))


if __name__ == "__main__":
    main()
