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

The fields that map Hugging Face families onto the encoder (headDim, attnScale,
typeVocabSize, embedNorm, firstAttnNorm, localWindow / localLayers with RoPE's
localBase, RoPE dynamic NTK, learned offset, position 't5', silu, geglu_tanh) have
14 cases of their own (after the long ones). B and C cover them (C's embeddings as
BertEmbeddings, RoBERTa's position ids, MHA of width heads x headDim, windows and
the T5 bias in the float mask, dynamic NTK per sequence as HF's
_compute_dynamic_ntk_parameters); two more references, written as transformers'
modeling_t5 (T5Attention, compute_bias, T5LayerFF) and modeling_modernbert
(Wqkv, rotary with local_rope_theta, the sliding-window mask, ModernBertMLP),
cover the t5 cases and the ModernBERT-like one. Cases with typeVocabSize > 1
store "typeIds" (the shape of "ids") next to "ids".

The long cases (names long*, lengths given: T from 65 to 300, past the C core's
64-row query chunks and 64-key tiles) and the families' cases store "expected"
rounded to LONG_DIGITS significant digits.  The overflow cases scale the q and k weights and biases
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
    r.setdefault("headDim", r["dModel"] // r["heads"])
    r.setdefault("attnScale", None)  # None: 1/sqrt(headDim), computed as a division (as before)
    r.setdefault("typeVocabSize", 0)
    r.setdefault("embedNorm", False)
    r.setdefault("firstAttnNorm", True)
    r.setdefault("localWindow", 0)
    r.setdefault("localLayers", [])
    r.setdefault("qkNorm", "none")
    r.setdefault("residualScale", 1)
    po = dict(r.get("positionOptions") or {})
    if r["position"] in ("sinusoidal", "rope"):
        po.setdefault("base", 10000)
    if r["position"] == "rope":
        po.setdefault("style", "interleaved")
        po.setdefault("localBase", po["base"])
    if r["position"] == "learned":
        po.setdefault("offset", 0)
    if r["position"] == "t5":
        po.setdefault("buckets", 32)
        po.setdefault("maxDistance", 128)
    r["positionOptions"] = po
    return r


def is_glu(act):
    return act in ("swiglu", "geglu", "geglu_tanh")


def uses_levers(cfg):
    """A config using a normalisation lever (qkNorm, residualScale; resolved cfg)."""
    return cfg["qkNorm"] != "none" or cfg["residualScale"] != 1


def residual_alpha(cfg):
    """residualScale: the stream's weight a in N(a x + f(x)) / a x + f(N(x)); 'deepnorm':
    DeepNet's alpha = (2N)^(1/4) for an N-layer encoder (Wang et al. 2022, section 3)."""
    a = cfg["residualScale"]
    return math.sqrt(math.sqrt(2.0 * cfg["layers"])) if a == "deepnorm" else float(a)


def uses_new_fields(cfg):
    """A config using a field added with the Hugging Face families (resolved cfg)."""
    return (cfg["headDim"] != cfg["dModel"] // cfg["heads"] or cfg["attnScale"] is not None
            or cfg["typeVocabSize"] > 0 or cfg["embedNorm"] or not cfg["firstAttnNorm"]
            or cfg["localWindow"] > 0 or cfg["position"] == "t5"
            or cfg["positionOptions"].get("offset", 0) != 0
            or cfg["positionOptions"].get("localBase", None) != cfg["positionOptions"].get("base", None)
            or (cfg["positionOptions"].get("scaling") or {}).get("type") == "dynamic"
            or cfg["activation"] in ("silu", "geglu_tanh"))


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
    A = cfg["heads"] * cfg["headDim"]  # attention width (= d unless headDim is given)
    out = []

    def lin(name, o, i, bias=None):
        out.append((name + ".weight", rng.standard_normal((o, i)) * (1.2 / math.sqrt(i))))
        if biases if bias is None else bias:
            out.append((name + ".bias", rng.standard_normal(o) * 0.1))

    def norm(name):
        out.append((name + ".weight", 1.0 + 0.1 * rng.standard_normal(d)))
        if cfg["norm"] == "layernorm" and biases:
            out.append((name + ".bias", 0.1 * rng.standard_normal(d)))

    # file order = the core's canonical order: tokens, types, the plugin's tensors, the embedding norm, layers
    out.append(("embed.tokens", rng.standard_normal((V, d))))
    if cfg["typeVocabSize"]:
        out.append(("embed.types", 0.5 * rng.standard_normal((cfg["typeVocabSize"], d))))
    if cfg["position"] == "learned":
        out.append(("embed.positions", 0.5 * rng.standard_normal((cfg["maxLen"], d))))
    if cfg["position"] == "t5":
        out.append(("embed.relative_bias", rng.standard_normal((cfg["positionOptions"]["buckets"], cfg["heads"]))))
    if cfg["embedNorm"]:
        norm("embed.norm")
    for l in range(cfg["layers"]):
        p = "layers.%d." % l
        for n in "qkv":
            lin(p + "attn." + n, A, d)
        lin(p + "attn.o", d, A)
        if cfg.get("qkNorm", "none") != "none":  # per-head q / k norms: [headDim], shared by the heads
            for n in ("q_norm", "k_norm"):
                out.append((p + "attn.%s.weight" % n, 1.0 + 0.2 * rng.standard_normal(cfg["headDim"])))
                if cfg["qkNorm"] == "layernorm" and biases:
                    out.append((p + "attn.%s.bias" % n, 0.2 * rng.standard_normal(cfg["headDim"])))
        if l > 0 or cfg["firstAttnNorm"]:
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


def b_dynamic_base(base, dk, L, scaling):
    """Dynamic NTK (nomic-embed's rotary_scaling_factor): a sequence of L tokens, L longer
    than originalMaxLen, turns with base ((factor L / originalMaxLen) - (factor - 1))^(D/(D-2))."""
    f, L0 = scaling["factor"], scaling["originalMaxLen"]
    if L <= L0:
        return base
    return base * ((f * L / L0) - (f - 1)) ** (dk / (dk - 2))


def b_rope(x, base, style, scaling=None):
    """x: [T, dk] for one head of one sequence; positions 0..T-1 (T: the sequence's own length)."""
    T, dk = x.shape
    h = dk // 2
    y = x.clone()
    if scaling and scaling["type"] == "dynamic":
        base, scaling = b_dynamic_base(base, dk, T, scaling), None
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


def b_t5_bucket(d, buckets, max_distance):
    """T5's bidirectional relative position bucket of the offset d = key - query, from the
    description in Raffel et al. / mesh-tensorflow, in plain float64 arithmetic."""
    half = buckets // 2            # one half for keys after the query, one for the rest
    exact = half // 2              # offsets below this get a bucket each
    b = half if d > 0 else 0
    n = abs(d)
    if n < exact:
        return b + n
    logb = exact + int(math.log(n / exact) / math.log(max_distance / exact) * (half - exact))
    return b + min(logb, half - 1)


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


def ref_b(cfg, W, ids, stats=None, type_ids=None, skip=(), qk_after_rope=False):
    """Returns (out [B,T,d], attentions [layers,B,H,T,T]); padded rows/cols are 0.
    stats (a dict), when given, receives "max_score": the largest raw score (before
    the max subtraction) and "min_row_max": the smallest row maximum. The layers in
    skip are left out (the stream passes through; their attentions are 0).
    qk_after_rope: the QK-norm after the rotation instead of before (not the spec: only
    to show that the fixtures tell the two apart)."""
    d, H, eps = cfg["dModel"], cfg["heads"], cfg["eps"]
    dk = cfg["headDim"]
    po = cfg["positionOptions"]
    B = len(ids)
    T = max(len(s) for s in ids)
    if type_ids is None:
        type_ids = [[0] * len(s) for s in ids]
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

    def qk_norm(t, name):
        """qkNorm: one head's q or k [L, dk], normed over its dk values with [dk] weights."""
        if cfg["qkNorm"] == "layernorm":
            return b_layernorm(t, W[name + ".weight"], gb(name + ".bias", dk), eps)
        return b_rmsnorm(t, W[name + ".weight"], eps)

    alpha = residual_alpha(cfg)
    outs, atts = [], []
    for bi, seq in enumerate(ids):
        L = len(seq)
        # each sequence separately with its own positions 0..L-1 (no padding at all)
        x = torch.stack([W["embed.tokens"][t] for t in seq])
        if cfg["scaleEmbedding"]:
            x = x * math.sqrt(d)
        if cfg["typeVocabSize"]:  # token types (segments)
            x = x + torch.stack([W["embed.types"][t] for t in type_ids[bi]])
        if cfg["position"] == "sinusoidal":
            x = x + b_sinusoidal(L, d, po["base"])
        elif cfg["position"] == "learned":  # rows offset .. offset + L - 1
            x = x + W["embed.positions"][po["offset"]:po["offset"] + L]
        if cfg["embedNorm"]:  # after tokens + types + positions
            x = norm(x, "embed.norm")
        seq_atts = []

        def attn(x, l):
            p = "layers.%d.attn." % l
            q, k, v = linear(x, p + "q"), linear(x, p + "k"), linear(x, p + "v")
            heads, probs = [], []
            slopes = b_alibi_slopes(H) if cfg["position"] == "alibi" else None
            local = l in cfg["localLayers"]
            for h in range(H):
                qh, kh, vh = (t[:, h * dk:(h + 1) * dk] for t in (q, k, v))
                if cfg["qkNorm"] != "none" and not qk_after_rope:  # after the projection, before RoPE
                    qh, kh = qk_norm(qh, p + "q_norm"), qk_norm(kh, p + "k_norm")
                if cfg["position"] == "rope":
                    base = po["localBase"] if local else po["base"]
                    qh = b_rope(qh, base, po["style"], po.get("scaling"))
                    kh = b_rope(kh, base, po["style"], po.get("scaling"))
                if cfg["qkNorm"] != "none" and qk_after_rope:
                    qh, kh = qk_norm(qh, p + "q_norm"), qk_norm(kh, p + "k_norm")
                if cfg["attnScale"] is None:
                    s = (qh @ kh.t()) / math.sqrt(dk)
                else:
                    s = (qh @ kh.t()) * cfg["attnScale"]
                if slopes is not None:
                    dist = torch.tensor([[abs(i - j) for j in range(L)] for i in range(L)], dtype=DT)
                    s = s - slopes[h] * dist
                if cfg["position"] == "t5":
                    rb = W["embed.relative_bias"]
                    s = s + torch.tensor([[float(rb[b_t5_bucket(j - i, po["buckets"], po["maxDistance"]), h])
                                           for j in range(L)] for i in range(L)], dtype=DT)
                if local:  # query i sees keys j with |i - j| <= localWindow
                    far = torch.tensor([[abs(i - j) > cfg["localWindow"] for j in range(L)] for i in range(L)])
                    s = s.masked_fill(far, -math.inf)
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
            elif a == "geglu_tanh":
                hdn = b_act("gelu_tanh", linear(x, p + "gate")) * linear(x, p + "up")
            else:
                hdn = b_act(a, linear(x, p + "up"))
            return linear(hdn, p + "down")

        # residualScale a: x = a x + f(N(x)) (pre), x = N(a x + f(x)) (post); a = 1 leaves x as is
        res = (lambda x: x) if alpha == 1 else (lambda x: alpha * x)
        for l in range(cfg["layers"]):
            n1, n2 = "layers.%d.norm1" % l, "layers.%d.norm2" % l
            if l in skip:  # removed: x unchanged, no attention
                seq_atts.append(torch.zeros(H, T, T, dtype=DT))
                continue
            if cfg["normPlacement"] == "pre":
                # firstAttnNorm false: layer 0's attention reads x itself
                x = res(x) + attn(norm(x, n1) if l > 0 or cfg["firstAttnNorm"] else x, l)
                x = res(x) + ffn(norm(x, n2), l)
            else:
                x = norm(res(x) + attn(x, l), n1)
                x = norm(res(x) + ffn(x, l), n2)
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


def roberta_position_ids(idt, pad, padding_idx):
    """transformers' create_position_ids_from_input_ids: real tokens numbered from
    padding_idx + 1, padding at padding_idx (here the mask comes from the lengths)."""
    mask = (~pad).int()
    incremental_indices = torch.cumsum(mask, dim=1).type_as(mask) * mask
    return incremental_indices.long() + padding_idx


def batch_embed(cfg, W, ids, type_ids=None):
    """The padded batch's embeddings as BertEmbeddings assembles them: word + token_type +
    position embeddings (nn.Embedding each), then the LayerNorm (embedNorm)."""
    d = cfg["dModel"]
    B, T = len(ids), max(len(s) for s in ids)
    emb = nn.Embedding(cfg["vocabSize"], d, dtype=DT)
    emb.weight.data.copy_(W["embed.tokens"])
    idt = torch.tensor([s + [0] * (T - len(s)) for s in ids], dtype=torch.long)
    pad = torch.tensor([[t >= len(s) for t in range(T)] for s in ids], dtype=torch.bool)
    x = emb(idt)
    if cfg["scaleEmbedding"]:
        x = x * math.sqrt(d)
    if cfg["typeVocabSize"]:
        temb = nn.Embedding(cfg["typeVocabSize"], d, dtype=DT)
        temb.weight.data.copy_(W["embed.types"])
        tt = torch.tensor([list(s) + [0] * (T - len(s)) for s in (type_ids or [[0] * len(s) for s in ids])],
                          dtype=torch.long)
        x = x + temb(tt)
    if cfg["position"] == "sinusoidal":
        x = x + pe_tutorial(T, d, cfg["positionOptions"]["base"]).unsqueeze(0)
    elif cfg["position"] == "learned":
        pemb = nn.Embedding(cfg["maxLen"], d, dtype=DT)
        pemb.weight.data.copy_(W["embed.positions"])
        off = cfg["positionOptions"]["offset"]
        if off:  # RoBERTa: padding_idx = offset - 1, real tokens from offset on
            x = x + pemb(roberta_position_ids(idt, pad, off - 1))
        else:
            x = x + pemb(torch.arange(T)).unsqueeze(0)
    if cfg["embedNorm"]:
        with torch.no_grad():
            x = make_norm(cfg, W, "embed.norm")(x)
    return x, pad


def bias_or_zero(W, name, size):
    return W[name] if name in W else torch.zeros(size, dtype=DT)


# --------------------------------------------------------------------------
# Reference A: stock nn.TransformerEncoder
# --------------------------------------------------------------------------

def covers_a(cfg):
    return (cfg["norm"] == "layernorm" and cfg["position"] in ("none", "sinusoidal", "learned")
            and cfg["activation"] in ("relu", "gelu") and cfg["headDim"] * cfg["heads"] == cfg["dModel"]
            and cfg["attnScale"] is None and cfg["firstAttnNorm"] and not cfg["localWindow"]
            and not uses_levers(cfg))


def ref_a(cfg, W, ids, type_ids=None, skip=()):
    """skip: a stock encoder of the layers kept (skipLayers: the model without them)."""
    d, eps = cfg["dModel"], cfg["eps"]
    kept = [l for l in range(cfg["layers"]) if l not in skip]
    x, pad = batch_embed(cfg, W, ids, type_ids)
    final = None
    if cfg["finalNorm"]:
        final = nn.LayerNorm(d, eps=eps, dtype=DT)
        final.weight.data.copy_(W["final_norm.weight"])
        final.bias.data.copy_(bias_or_zero(W, "final_norm.bias", d))
    with torch.no_grad():
        if not kept:
            out = final(x) if final is not None else x
        else:
            layer = nn.TransformerEncoderLayer(d, cfg["heads"], cfg["ffDim"], dropout=0.0,
                                               activation=cfg["activation"], layer_norm_eps=eps,
                                               batch_first=True, norm_first=cfg["normPlacement"] == "pre",
                                               dtype=DT)
            enc = nn.TransformerEncoder(layer, len(kept), norm=final)
            for l, lay in zip(kept, enc.layers):
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


def hf_rope_parameters(dim, base, scaling, seq_len=None):
    """(inv_freq [dim/2], attention_factor), following the structure of HF transformers'
    modeling_rope_utils._compute_{default,linear_scaling,ntk,yarn,dynamic_ntk}_parameters
    (float64 throughout, where HF computes the YaRN ramp in float32). dynamic: seq_len is
    the sequence's own length (HF passes the padded batch length; swapformer never
    depends on padding, and the two agree for a single sequence)."""
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

    def _compute_dynamic_ntk_parameters(base, dim, factor, max_position_embeddings, seq_len):
        attention_factor = 1.0
        seq_len = seq_len if seq_len is not None and seq_len > max_position_embeddings else max_position_embeddings
        base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(DT) / dim))
        return inv_freq, attention_factor

    if not scaling:
        return _compute_default_rope_parameters(base, dim)
    if scaling["type"] == "dynamic":
        return _compute_dynamic_ntk_parameters(base, dim, scaling["factor"], scaling["originalMaxLen"], seq_len)
    if scaling["type"] == "linear":
        return _compute_linear_scaling_rope_parameters(base, dim, scaling["factor"])
    if scaling["type"] == "ntk":
        return _compute_ntk_parameters(base, dim, scaling["factor"])
    assert scaling["type"] == "yarn"
    return _compute_yarn_parameters(base, dim, scaling["factor"], scaling["originalMaxLen"],
                                    scaling.get("betaFast") or 32, scaling.get("betaSlow") or 1)


def rope_complex(x, base, scaling=None, seq_len=None):
    """interleaved: treat (2i, 2i+1) as complex numbers, multiply by attention_factor * e^{i*pos*theta}.
    x: [B,T,H,dk]"""
    B, T, H, dk = x.shape
    theta, attention_factor = hf_rope_parameters(dk, base, scaling, seq_len)
    ang = torch.outer(torch.arange(T, dtype=DT), theta)            # [T, dk/2]
    rot = torch.polar(torch.full_like(ang, attention_factor), ang)  # complex128
    xc = torch.view_as_complex(x.reshape(B, T, H, dk // 2, 2).contiguous())
    y = xc * rot[None, :, None, :]
    return torch.view_as_real(y).reshape(B, T, H, dk)


def rope_rotate_half(x, base, scaling=None, seq_len=None):
    """HF/LLaMA style: x*cos + rotate_half(x)*sin with cos/sin duplicated over halves
    (and multiplied by attention_scaling, as HF's rotary embedding forward does)."""
    B, T, H, dk = x.shape
    inv_freq, attention_scaling = hf_rope_parameters(dk, base, scaling, seq_len)
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


def hf_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """transformers' T5Attention._relative_position_bucket, transcribed (float32 log as there)."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def t5_position_bias(cfg, W, T):
    """T5Attention.compute_bias: [1, H, T, T] from embed.relative_bias through an nn.Embedding."""
    po = cfg["positionOptions"]
    context_position = torch.arange(T, dtype=torch.long)[:, None]
    memory_position = torch.arange(T, dtype=torch.long)[None, :]
    relative_position = memory_position - context_position
    bucket = hf_relative_position_bucket(relative_position, bidirectional=True,
                                         num_buckets=po["buckets"], max_distance=po["maxDistance"])
    emb = nn.Embedding(po["buckets"], cfg["heads"], dtype=DT)
    with torch.no_grad():
        emb.weight.copy_(W["embed.relative_bias"])
        return emb(bucket).permute([2, 0, 1]).unsqueeze(0)


C_ACTS = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
          "swiglu": F.silu, "geglu": F.gelu, "silu": F.silu, "geglu_tanh": lambda t: F.gelu(t, approximate="tanh")}


def deepnet_residual_connection(alpha):
    """torchscale's EncoderLayer.residual_connection (DeepNet): residual * alpha + x, with
    alpha = (2 * encoder_layers) ** 0.25 for 'deepnorm' (torchscale's Encoder)."""
    def residual_connection(x, residual):
        return residual * alpha + x
    return residual_connection


def make_qk_norm(cfg, W, name):
    """qkNorm as Qwen3 / OLMo-2 write it: a norm module of width head_dim applied to
    q_proj(x).view(B, T, H, head_dim) (the same weights for every head)."""
    dk = cfg["headDim"]
    if cfg["qkNorm"] == "layernorm":
        m = nn.LayerNorm(dk, eps=cfg["eps"], dtype=DT)
        m.bias.data.copy_(bias_or_zero(W, name + ".bias", dk))
    else:
        m = RMSNormMod(dk, cfg["eps"])
    m.weight.data.copy_(W[name + ".weight"])
    return m


def ref_c(cfg, W, ids, type_ids=None, skip=()):
    d, H = cfg["dModel"], cfg["heads"]
    dk = cfg["headDim"]
    A = H * dk
    po = cfg["positionOptions"]
    x, pad = batch_embed(cfg, W, ids, type_ids)
    B, T, _ = x.shape
    lens = [len(s) for s in ids]
    # The configs of the Hugging Face families go through MHA with identity in- and
    # out-projections of width A (headDim x heads), the projections done outside, q
    # pre-scaled so that MHA's 1/sqrt(headDim) gives attnScale.
    generic = uses_new_fields(cfg)
    # float mask [B*H, T, T]: ALiBi or T5 bias + -inf on padded keys (+ -inf outside a local layer's window)
    mask = torch.zeros(B, H, T, T, dtype=DT)
    if cfg["position"] == "alibi":
        pos = torch.arange(T, dtype=DT)
        dist = (pos[None, :] - pos[:, None]).abs()
        mask = mask - torch.tensor(alibi_paper_slopes(H), dtype=DT)[None, :, None, None] * dist
    if cfg["position"] == "t5":
        mask = mask + t5_position_bias(cfg, W, T)
    mask = mask.masked_fill(pad[:, None, None, :], float("-inf"))
    # sliding window (real query rows only: a padded row keeps its keys, and stays finite)
    pos = torch.arange(T)
    far = ((pos[None, :] - pos[:, None]).abs() > cfg["localWindow"])[None, None] & ~pad[:, None, :, None]
    local_mask = mask.masked_fill(far, float("-inf")).reshape(B * H, T, T)
    mask = mask.reshape(B * H, T, T)
    act = C_ACTS[cfg["activation"]]
    rs = cfg["residualScale"]
    residual_connection = deepnet_residual_connection((2 * cfg["layers"]) ** 0.25 if rs == "deepnorm" else rs)
    qkn = cfg["qkNorm"] != "none"
    atts = []
    with torch.no_grad():
        for l in range(cfg["layers"]):
            p = "layers.%d." % l
            if l in skip:  # skipLayers: this layer is not run
                atts.append(torch.zeros(B, H, T, T, dtype=DT))
                continue
            local = l in cfg["localLayers"]
            mha = nn.MultiheadAttention(A if generic else d, H, dropout=0.0, batch_first=True, dtype=DT)
            qp, kp, vp = (make_linear(W, p + "attn." + n) for n in "qkv")
            op = make_linear(W, p + "attn.o")
            rope = cfg["position"] == "rope"
            outside = rope or generic or qkn
            if qkn:
                q_norm, k_norm = make_qk_norm(cfg, W, p + "attn.q_norm"), make_qk_norm(cfg, W, p + "attn.k_norm")
            if outside:
                # projections done outside; MHA gets identity in-projections
                mha.in_proj_weight.copy_(torch.cat([torch.eye(A, dtype=DT)] * 3))
                mha.in_proj_bias.zero_()
            else:
                mha.in_proj_weight.copy_(torch.cat([qp.weight, kp.weight, vp.weight]))
                mha.in_proj_bias.copy_(torch.cat([qp.bias, kp.bias, vp.bias]))
            if generic:  # o applied outside
                mha.out_proj.weight.copy_(torch.eye(A, dtype=DT))
                mha.out_proj.bias.zero_()
            else:
                mha.out_proj.weight.copy_(W[p + "attn.o.weight"])
                mha.out_proj.bias.copy_(bias_or_zero(W, p + "attn.o.bias", d))
            mha.train()  # dropout is 0; avoids the fused fast path
            has_n1 = l > 0 or cfg["firstAttnNorm"]
            n1 = make_norm(cfg, W, p + "norm1") if has_n1 else None
            n2 = make_norm(cfg, W, p + "norm2")
            up, down = make_linear(W, p + "ffn.up"), make_linear(W, p + "ffn.down")
            gate = make_linear(W, p + "ffn.gate") if is_glu(cfg["activation"]) else None

            def rotate(t):
                rf = rope_complex if po["style"] == "interleaved" else rope_rotate_half
                base = po["localBase"] if local else po["base"]
                sc = po.get("scaling")
                if sc and sc["type"] == "dynamic":  # each sequence with its own length
                    return torch.cat([rf(t[b:b + 1].reshape(1, T, H, dk), base, sc, lens[b]) for b in range(B)]).reshape(B, T, A)
                return rf(t.reshape(B, T, H, dk), base, sc).reshape(B, T, A)

            def sa(h):
                if outside:
                    q, k, v = qp(h), kp(h), vp(h)
                    if qkn:  # per head, before RoPE
                        q = q_norm(q.view(B, T, H, dk)).reshape(B, T, A)
                        k = k_norm(k.view(B, T, H, dk)).reshape(B, T, A)
                    if rope:
                        q, k = rotate(q), rotate(k)
                    if cfg["attnScale"] is not None:
                        q = q * (cfg["attnScale"] * math.sqrt(dk))
                else:
                    q = k = v = h
                o, w = mha(q, k, v, attn_mask=local_mask if local else mask, need_weights=True,
                           average_attn_weights=False)
                atts.append(w)
                return op(o) if generic else o

            def ff(h):
                if gate is not None:
                    return down(act(gate(h)) * up(h))
                return down(act(up(h)))

            if cfg["normPlacement"] == "pre":
                if rs == 1:
                    x = x + sa(n1(x) if n1 is not None else x)
                    x = x + ff(n2(x))
                else:  # torchscale's EncoderLayer with normalize_before
                    residual = x
                    x = residual_connection(sa(n1(x) if n1 is not None else x), residual)
                    residual = x
                    x = residual_connection(ff(n2(x)), residual)
            elif rs == 1:
                x = n1(x + sa(x))
                x = n2(x + ff(x))
            else:  # torchscale's EncoderLayer, post-norm (DeepNet)
                residual = x
                x = n1(residual_connection(sa(x), residual))
                residual = x
                x = n2(residual_connection(ff(x), residual))
        if cfg["finalNorm"]:
            x = make_norm(cfg, W, "final_norm")(x)
    att = torch.stack(atts) if atts else torch.zeros(0, B, H, T, T, dtype=DT)
    return x, att


# --------------------------------------------------------------------------
# Reference D: the layer as transformers writes it, for the families that map onto
# swapformer's new fields (T5Attention / T5LayerFF; ModernBertAttention / ModernBertMLP)
# --------------------------------------------------------------------------

REF_T5 = "transformers T5 layers (T5Attention, compute_bias, T5LayerFF)"
REF_MBERT = "transformers ModernBERT layers (ModernBertAttention, sliding-window mask, ModernBertMLP)"


def extended_attention_mask(pad):
    """get_extended_attention_mask: (1 - mask) * finfo.min, [B, 1, 1, T]."""
    return (pad[:, None, None, :].to(DT)) * torch.finfo(DT).min


def covers_t5(cfg):
    return not uses_levers(cfg) and (cfg["position"] == "t5" and cfg["normPlacement"] == "pre" and cfg["norm"] == "rmsnorm"
            and cfg["finalNorm"] and cfg["firstAttnNorm"] and not cfg["localWindow"] and not cfg["embedNorm"]
            and cfg["activation"] in ("relu", "geglu_tanh", "gelu_tanh", "swiglu"))


def ref_t5(cfg, W, ids, type_ids=None):
    """T5 encoder blocks as transformers' modeling_t5 runs them: T5LayerSelfAttention
    (T5LayerNorm, T5Attention with inner_dim = n_heads x d_kv and one position_bias
    from compute_bias, shared by every block, plus the extended mask), T5LayerFF
    (T5DenseActDense or T5DenseGatedActDense: wo(act(wi_0 x) * wi_1 x)), final_layer_norm."""
    d, n_heads, d_kv = cfg["dModel"], cfg["heads"], cfg["headDim"]
    inner_dim = n_heads * d_kv
    hidden_states, pad = batch_embed(cfg, W, ids, type_ids)
    batch_size, seq_length, _ = hidden_states.shape
    position_bias = t5_position_bias(cfg, W, seq_length) + extended_attention_mask(pad)
    # NewGELUActivation (gelu_new), T5 v1.1's dense_act_fn
    gelu_new = lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    act = {"relu": nn.ReLU(), "geglu_tanh": gelu_new, "gelu_tanh": gelu_new, "swiglu": nn.SiLU()}[cfg["activation"]]
    gated = is_glu(cfg["activation"])
    atts = []
    with torch.no_grad():
        def shape(states):
            return states.view(batch_size, -1, n_heads, d_kv).transpose(1, 2)

        def unshape(states):
            return states.transpose(1, 2).contiguous().view(batch_size, -1, inner_dim)

        for l in range(cfg["layers"]):
            p = "layers.%d." % l
            layer_norm = make_norm(cfg, W, p + "norm1")
            q, k, v, o = (make_linear(W, p + "attn." + n) for n in "qkvo")
            normed_hidden_states = layer_norm(hidden_states)
            query_states = shape(q(normed_hidden_states))
            key_states = shape(k(normed_hidden_states))
            value_states = shape(v(normed_hidden_states))
            scores = torch.matmul(query_states, key_states.transpose(3, 2))
            if cfg["attnScale"] is not None and cfg["attnScale"] != 1:
                scores = scores * cfg["attnScale"]
            scores += position_bias
            attn_weights = nn.functional.softmax(scores, dim=-1)
            atts.append(attn_weights)
            attn_output = o(unshape(torch.matmul(attn_weights, value_states)))
            hidden_states = hidden_states + attn_output
            # T5LayerFF
            ff_norm = make_norm(cfg, W, p + "norm2")
            forwarded_states = ff_norm(hidden_states)
            wo = make_linear(W, p + "ffn.down")
            if gated:
                wi_0, wi_1 = make_linear(W, p + "ffn.gate"), make_linear(W, p + "ffn.up")
                forwarded_states = wo(act(wi_0(forwarded_states)) * wi_1(forwarded_states))
            else:
                wi = make_linear(W, p + "ffn.up")
                forwarded_states = wo(act(wi(forwarded_states)))
            hidden_states = hidden_states + forwarded_states
        hidden_states = make_norm(cfg, W, "final_norm")(hidden_states)
    att = torch.stack(atts) if atts else torch.zeros(0, batch_size, n_heads, seq_length, seq_length, dtype=DT)
    return hidden_states, att


def covers_modernbert(cfg):
    return not uses_levers(cfg) and (cfg["position"] == "rope" and cfg["positionOptions"]["style"] == "half"
            and not cfg["positionOptions"].get("scaling") and cfg["normPlacement"] == "pre"
            and cfg["norm"] == "layernorm" and cfg["finalNorm"] and cfg["activation"] in ("geglu", "swiglu")
            and not cfg["typeVocabSize"] and not cfg["scaleEmbedding"])


def ref_modernbert(cfg, W, ids, type_ids=None):
    """ModernBERT as transformers' modeling_modernbert runs it (eager attention, padded
    batch): ModernBertEmbeddings (tok_embeddings, norm), layers with attn_norm
    Identity on layer 0, a fused Wqkv, ModernBertRotaryEmbedding with rope_theta or
    local_rope_theta, the sliding-window mask (|i - j| <= local_attention // 2) on
    the local layers, ModernBertMLP (Wi -> input, gate; Wo(act(input) * gate)), final_norm."""
    d, H, head_dim = cfg["dModel"], cfg["heads"], cfg["headDim"]
    all_head_size = H * head_dim
    po = cfg["positionOptions"]
    local_attention = 2 * cfg["localWindow"]
    B, T = len(ids), max(len(s) for s in ids)
    input_ids = torch.tensor([s + [0] * (T - len(s)) for s in ids], dtype=torch.long)
    attention_mask = torch.tensor([[t < len(s) for t in range(T)] for s in ids], dtype=torch.long)
    act = {"geglu": F.gelu, "swiglu": F.silu}[cfg["activation"]]

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def rotary(base, position_ids):
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).to(DT) / head_dim))
        inv_freq_expanded = inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].to(DT)
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    atts = []
    with torch.no_grad():
        tok = nn.Embedding(cfg["vocabSize"], d, dtype=DT)
        tok.weight.copy_(W["embed.tokens"])
        hidden_states = tok(input_ids)
        if cfg["embedNorm"]:
            hidden_states = make_norm(cfg, W, "embed.norm")(hidden_states)
        # _update_attention_mask
        global_attention_mask = (1.0 - attention_mask[:, None, None, :].to(DT)).expand(B, 1, T, T) * torch.finfo(DT).min
        rows = torch.arange(T).unsqueeze(0)
        distance = torch.abs(rows - rows.T)
        window_mask = (distance <= local_attention // 2).unsqueeze(0).unsqueeze(0)
        sliding_window_mask = global_attention_mask.masked_fill(window_mask.logical_not(), torch.finfo(DT).min)
        position_ids = torch.arange(T).unsqueeze(0)
        for l in range(cfg["layers"]):
            p = "layers.%d." % l
            local = l in cfg["localLayers"]
            attn_norm = (nn.Identity() if l == 0 and not cfg["firstAttnNorm"] else make_norm(cfg, W, p + "norm1"))
            Wqkv = nn.Linear(d, 3 * all_head_size, dtype=DT)
            Wqkv.weight.copy_(torch.cat([W[p + "attn.%s.weight" % n] for n in "qkv"]))
            Wqkv.bias.copy_(torch.cat([bias_or_zero(W, p + "attn.%s.bias" % n, all_head_size) for n in "qkv"]))
            Wo = make_linear(W, p + "attn.o")
            qkv = Wqkv(attn_norm(hidden_states)).view(B, -1, 3, H, head_dim)
            cos, sin = rotary(po["localBase"] if local else po["base"], position_ids)
            query, key, value = qkv.transpose(3, 1).unbind(dim=2)  # [B, H, T, head_dim]
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
            query = (query * cos) + (rotate_half(query) * sin)
            key = (key * cos) + (rotate_half(key) * sin)
            scale = head_dim ** -0.5 if cfg["attnScale"] is None else cfg["attnScale"]
            attn_weights = torch.matmul(query, key.transpose(2, 3)) * scale
            attn_weights = attn_weights + (sliding_window_mask if local else global_attention_mask)
            attn_weights = nn.functional.softmax(attn_weights, dim=-1)
            atts.append(attn_weights)
            attn_output = torch.matmul(attn_weights, value).transpose(1, 2).contiguous().view(B, -1, all_head_size)
            hidden_states = hidden_states + Wo(attn_output)
            # ModernBertMLP: Wi = [gate; up] (the activated half first)
            mlp_norm = make_norm(cfg, W, p + "norm2")
            F_ = cfg["ffDim"]
            Wi = nn.Linear(d, 2 * F_, dtype=DT)
            Wi.weight.copy_(torch.cat([W[p + "ffn.gate.weight"], W[p + "ffn.up.weight"]]))
            Wi.bias.copy_(torch.cat([bias_or_zero(W, p + "ffn.gate.bias", F_), bias_or_zero(W, p + "ffn.up.bias", F_)]))
            Wo2 = make_linear(W, p + "ffn.down")
            inp, gate = Wi(mlp_norm(hidden_states)).chunk(2, dim=-1)
            hidden_states = hidden_states + Wo2(act(inp) * gate)
        hidden_states = make_norm(cfg, W, "final_norm")(hidden_states)
    att = torch.stack(atts) if atts else torch.zeros(0, B, H, T, T, dtype=DT)
    return hidden_states, att


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
    # T5 buckets: the plain float64 formula (B) == transformers' _relative_position_bucket (float32 log)
    for nb, md in ((32, 128), (32, 20), (16, 40), (16, 128), (8, 3), (64, 1000), (32, 9)):
        mine = [b_t5_bucket(dd, nb, md) for dd in range(-700, 701)]
        hf = hf_relative_position_bucket(torch.arange(-700, 701), True, nb, md).tolist()
        assert mine == hf, (nb, md, [dd for dd, a, b in zip(range(-700, 701), mine, hf) if a != b][:5])
        assert min(mine) == 0 and max(mine) <= nb - 1
    # ... and the worked values of plugins/position/t5.c: 32 buckets, maxDistance 128
    n_to_b = {n: b_t5_bucket(-n, 32, 128) for n in range(200)}
    assert [n_to_b[n] for n in range(8)] == list(range(8))
    assert {n_to_b[n] for n in range(8, 12)} == {8} and {n_to_b[n] for n in range(12, 16)} == {9}
    assert {n_to_b[n] for n in range(64, 91)} == {14} and {n_to_b[n] for n in range(91, 200)} == {15}
    assert all(b_t5_bucket(n, 32, 128) == 16 + n_to_b[n] for n in range(1, 200)) and b_t5_bucket(0, 32, 128) == 0
    # ... 32 buckets, maxDistance 20 (the fixture): log buckets from 8, the clamp (15) from 18 on
    assert [b_t5_bucket(-n, 32, 20) for n in (7, 8, 9, 10, 17, 18, 130)] == [7, 8, 9, 9, 14, 15, 15]
    # dynamic NTK: B's base == HF's _compute_dynamic_ntk_parameters with the sequence's length
    for dk in (4, 8, 16, 64):
        for base in (10, 1000, 10000, 160000):
            for f, L0 in ((2, 32), (4, 2048), (1.5, 10)):
                for L in (1, L0 - 1, L0, L0 + 1, 2 * L0 + 3):
                    sc = dict(type="dynamic", factor=f, originalMaxLen=L0)
                    b2 = b_dynamic_base(base, dk, L, sc)
                    inv, af = hf_rope_parameters(dk, base, sc, L)
                    mine = torch.tensor([b2 ** (-2.0 * i / dk) for i in range(dk // 2)], dtype=DT)
                    assert torch.allclose(mine, inv, rtol=1e-13, atol=0) and af == 1.0, (dk, base, f, L0, L)
                    assert (b2 == base) == (L <= L0)
    x = torch.randn(40, 8, generator=g, dtype=DT)
    for style, rf in (("interleaved", rope_complex), ("half", rope_rotate_half)):
        sc = dict(type="dynamic", factor=2, originalMaxLen=32)
        for L in (20, 32, 33, 40):
            mine = b_rope(x[:L], 1000, style, sc)
            other = rf(x[:L].reshape(1, L, 1, 8), 1000, sc, L).reshape(L, 8)
            assert torch.allclose(mine, other, atol=1e-13, rtol=0), (style, L)
        assert torch.equal(b_rope(x[:32], 1000, style, sc), b_rope(x[:32], 1000, style))
        assert not torch.allclose(b_rope(x[:33], 1000, style, sc)[:32], b_rope(x[:32], 1000, style))
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
          "T5 buckets B == transformers' and t5.c's worked values, dynamic NTK B == HF, activations, bf16 rounding)")


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
    else:  # learned (offset), t5 (buckets, maxDistance); none and alibi take none
        cfg["positionOptions"] = po or {}
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
                          lens=opt.get("lens"), qk_scale=opt.get("qk_scale"), skip=opt.get("skip")))

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

    # ---- the fields that map Hugging Face families onto the encoder (BERT, RoBERTa,
    # ModernBERT, T5, nomic-embed): headDim, attnScale, typeVocabSize (+ typeIds),
    # embedNorm, firstAttnNorm, localWindow / localLayers (+ RoPE localBase), RoPE
    # dynamic NTK, learned offset, position 't5', silu, geglu_tanh. vocabSize 50;
    # the new fields after the others in the config.
    def fam_cfg(position, norm, placement, act, **kw):
        new = {k: kw.pop(k) for k in ("headDim", "attnScale", "typeVocabSize", "embedNorm", "firstAttnNorm",
                                      "localWindow", "localLayers") if k in kw}
        kw.setdefault("heads", 4)
        kw.setdefault("dModel", 16)
        kw.setdefault("ffDim", 24)
        cfg = base_cfg(position, norm, placement, act, **kw)
        cfg["vocabSize"] = 50
        cfg.update(new)
        return cfg
    # BERT: token types (2) and the embedding LayerNorm, learned positions, post-norm
    add("bert_types2_embed_norm__learned__layernorm__post__gelu",
        fam_cfg("learned", "layernorm", "post", "gelu", maxLen=16, typeVocabSize=2, embedNorm=True),
        lens=[13, 6, 9, 2])
    # RoBERTa: one token type, positions from row 2 (maxLen = longest + 2: the 12-token sequence ends on the last row)
    add("roberta_offset2_types1_embed_norm__learned__layernorm__post__gelu",
        fam_cfg("learned", "layernorm", "post", "gelu", maxLen=14, positionOptions={"offset": 2},
                typeVocabSize=1, embedNorm=True), lens=[12, 5, 9])
    # an offset alone, pre-norm
    add("learned_offset2__rmsnorm__pre__relu",
        fam_cfg("learned", "rmsnorm", "pre", "relu", maxLen=12, positionOptions={"offset": 2}), lens=[10, 3, 7])
    # three token types, an RMSNorm over the embeddings (after the sinusoidal vectors)
    add("types3_embed_norm__sinusoidal__rmsnorm__pre__swiglu",
        fam_cfg("sinusoidal", "rmsnorm", "pre", "swiglu", typeVocabSize=3, embedNorm=True), lens=[11, 4, 8])
    # the embedding norm with RoPE (nothing added before it but the tokens)
    add("embed_norm__rope_interleaved__layernorm__post__gelu_tanh",
        fam_cfg("rope", "layernorm", "post", "gelu_tanh", positionOptions={"base": 10000, "style": "interleaved"},
                embedNorm=True), lens=[10, 3, 6])
    # layer 0 without an attention norm, short
    add("first_attn_norm_false__sinusoidal__rmsnorm__pre__gelu",
        fam_cfg("sinusoidal", "rmsnorm", "pre", "gelu", firstAttnNorm=False), lens=[9, 2, 5])
    # ModernBERT: embedding norm, no attention norm on layer 0, global layer 0 (base 160000),
    # local layers 1 and 2 (|i - j| <= 5, localBase 10000), geglu, no biases; T = 150, past
    # the 64-row query chunks and 64-key tiles
    add("modernbert_like__rope_half_local5__layernorm__pre__geglu",
        fam_cfg("rope", "layernorm", "pre", "geglu", heads=2, layers=3,
                positionOptions={"base": 160000, "localBase": 10000, "style": "half"},
                embedNorm=True, firstAttnNorm=False, localWindow=5, localLayers=[1, 2]),
        lens=[150, 70, 9], biases=False)
    # windows with ALiBi (layer 0 local, layer 1 global) and with no position at all (attentions)
    add("window7__alibi__rmsnorm__post__relu",
        fam_cfg("alibi", "rmsnorm", "post", "relu", localWindow=7, localLayers=[0]), lens=[100, 40, 15])
    add("window2__none__layernorm__pre__gelu",
        fam_cfg("none", "layernorm", "pre", "gelu", localWindow=2, localLayers=[1]), lens=[12, 7, 4],
        attentions=True)
    # T5 v1.0 / v1.1: heads x headDim != dModel, attnScale 1, relative buckets (32 buckets,
    # maxDistance 20: the log buckets and the clamp, over 133 tokens; 16 buckets), RMSNorm pre
    add("t5_b32_d20_hd12__rmsnorm__pre__relu",
        fam_cfg("t5", "rmsnorm", "pre", "relu", dModel=32, heads=4, ffDim=48, headDim=12, attnScale=1,
                positionOptions={"buckets": 32, "maxDistance": 20}), lens=[133, 30])
    add("t5_b16_d40_hd10__rmsnorm__pre__geglu_tanh",
        fam_cfg("t5", "rmsnorm", "pre", "geglu_tanh", dModel=24, heads=3, ffDim=32, headDim=10, attnScale=1,
                positionOptions={"buckets": 16, "maxDistance": 40}), lens=[70, 33, 5], biases=False)
    # headDim != dModel / heads with RoPE and the default scale 1/sqrt(headDim); plain silu
    add("headdim12__rope_half__rmsnorm__post__silu",
        fam_cfg("rope", "rmsnorm", "post", "silu", heads=2, headDim=12,
                positionOptions={"base": 10000, "style": "half"}), lens=[9, 4, 7])
    # RoPE dynamic NTK (originalMaxLen 32, factor 2): each sequence by its own length
    # (50 and 40 scaled, each its own base; 32 and 20 not), both styles
    add("rope_interleaved_dynamic2_L32__layernorm__pre__silu",
        fam_cfg("rope", "layernorm", "pre", "silu", heads=2, positionOptions={
            "base": 10000, "style": "interleaved", "scaling": {"type": "dynamic", "factor": 2, "originalMaxLen": 32}}),
        lens=[50, 20, 40, 32])
    # nomic-embed: token types, the embedding LayerNorm, RoPE half with dynamic NTK, post-norm, swiglu
    add("nomic_like_types2_embed_norm__rope_half_dynamic2_L32__layernorm__post__swiglu",
        fam_cfg("rope", "layernorm", "post", "swiglu", heads=2, positionOptions={
            "base": 1000, "style": "half", "scaling": {"type": "dynamic", "factor": 2, "originalMaxLen": 32}},
            typeVocabSize=2, embedNorm=True), lens=[45, 33, 16])

    # ---- the normalisation levers (issue 14): qkNorm (a norm of each head's q and k,
    # after the projection and before RoPE, its own [headDim] weights per layer),
    # residualScale (a number or 'deepnorm': x = N(a x + f(x)) / x = a x + f(N(x)),
    # DeepNet's a = (2L)^(1/4)) and forward's skipLayers (stored as "skipLayers";
    # the layers left out). vocabSize 50, the new fields after the others in the
    # config; every case a padded batch, the lengths given.
    def lev_cfg(position, norm, placement, act, **kw):
        new = {k: kw.pop(k) for k in ("headDim", "attnScale", "qkNorm", "residualScale") if k in kw}
        kw.setdefault("heads", 4)
        kw.setdefault("dModel", 16)
        kw.setdefault("ffDim", 24)
        kw.setdefault("maxLen", 16 if position == "learned" else 512)
        cfg = base_cfg(position, norm, placement, act, **kw)
        cfg["vocabSize"] = 50
        cfg.update(new)
        return cfg
    rope_i = {"base": 10000, "style": "interleaved"}
    rope_h = {"base": 10000, "style": "half"}
    # QK-norm: both norms (independent of the model's norm), with RoPE (both styles),
    # ALiBi, the absolute positions, none and t5; pre and post
    add("qknorm_layernorm__rope_interleaved__rmsnorm__pre__swiglu",
        lev_cfg("rope", "rmsnorm", "pre", "swiglu", positionOptions=rope_i, qkNorm="layernorm"), lens=[11, 4, 8])
    add("qknorm_rmsnorm__rope_half__layernorm__post__gelu",
        lev_cfg("rope", "layernorm", "post", "gelu", positionOptions=rope_h, qkNorm="rmsnorm"), lens=[10, 3, 7],
        attentions=True)
    add("qknorm_rmsnorm__alibi__rmsnorm__pre__relu",
        lev_cfg("alibi", "rmsnorm", "pre", "relu", qkNorm="rmsnorm"), lens=[12, 5, 9])
    add("qknorm_layernorm__alibi_h8__layernorm__post__gelu_tanh",
        lev_cfg("alibi", "layernorm", "post", "gelu_tanh", heads=8, dModel=32, qkNorm="layernorm"), lens=[9, 6, 2])
    add("qknorm_layernorm__sinusoidal__layernorm__pre__gelu",
        lev_cfg("sinusoidal", "layernorm", "pre", "gelu", qkNorm="layernorm"), lens=[10, 4, 7])
    add("qknorm_rmsnorm__learned__rmsnorm__post__geglu",
        lev_cfg("learned", "rmsnorm", "post", "geglu", qkNorm="rmsnorm"), lens=[13, 8, 2])
    # a layernorm QK-norm without biases (the file has no .bias tensors at all), position none
    add("qknorm_layernorm_no_bias__none__layernorm__pre__relu",
        lev_cfg("none", "layernorm", "pre", "relu", qkNorm="layernorm"), lens=[9, 5, 3], biases=False)
    # heads x headDim != dModel: the norms' weights are [headDim] = [12]
    add("qknorm_rmsnorm_headdim12__rope_half__rmsnorm__pre__swiglu",
        lev_cfg("rope", "rmsnorm", "pre", "swiglu", heads=2, headDim=12, positionOptions=rope_h, qkNorm="rmsnorm"),
        lens=[8, 3, 6])
    # the config's eps, large enough to be seen in the QK-norm of head size 4
    add("qknorm_layernorm_eps0.5__rope_interleaved__layernorm__post__relu",
        lev_cfg("rope", "layernorm", "post", "relu", eps=0.5, positionOptions=rope_i, qkNorm="layernorm"),
        lens=[10, 6, 2])
    add("qknorm_rmsnorm__t5_hd8__rmsnorm__pre__relu",
        lev_cfg("t5", "rmsnorm", "pre", "relu", dModel=24, heads=3, headDim=8, attnScale=1,
                positionOptions={"buckets": 16, "maxDistance": 20}, qkNorm="rmsnorm"), lens=[30, 12])
    # past the 64-row query chunks and 64-key tiles: the keys are normed for every token
    # first, the queries chunk by chunk
    add("long_qknorm_rmsnorm__rope_half__rmsnorm__post__swiglu",
        lev_cfg("rope", "rmsnorm", "post", "swiglu", heads=2, positionOptions=rope_h, qkNorm="rmsnorm"),
        lens=[150, 65, 9])
    add("long_qknorm_layernorm__rope_interleaved__layernorm__pre__geglu",
        lev_cfg("rope", "layernorm", "pre", "geglu", positionOptions=rope_i, qkNorm="layernorm"), lens=[130, 64])
    add("long_qknorm_layernorm__alibi__rmsnorm__pre__gelu",
        lev_cfg("alibi", "rmsnorm", "pre", "gelu", qkNorm="layernorm"), lens=[129, 70, 1])
    # residualScale: 'deepnorm' (a = (2L)^(1/4)) post- and pre-norm, plain numbers
    add("deepnorm_L3__sinusoidal__layernorm__post__gelu",
        lev_cfg("sinusoidal", "layernorm", "post", "gelu", layers=3, residualScale="deepnorm"), lens=[12, 5, 8])
    add("deepnorm_L4__rope_half__rmsnorm__pre__swiglu",
        lev_cfg("rope", "rmsnorm", "pre", "swiglu", layers=4, positionOptions=rope_h, residualScale="deepnorm"),
        lens=[10, 4, 7])
    add("residual_scale0.5_L3__learned__layernorm__post__relu",
        lev_cfg("learned", "layernorm", "post", "relu", layers=3, residualScale=0.5), lens=[11, 6, 3])
    add("residual_scale2.5__alibi__rmsnorm__pre__gelu",
        lev_cfg("alibi", "rmsnorm", "pre", "gelu", residualScale=2.5), lens=[9, 4, 7])
    add("long_deepnorm_L3__rope_interleaved__layernorm__post__gelu_tanh",
        lev_cfg("rope", "layernorm", "post", "gelu_tanh", layers=3, positionOptions=rope_i, residualScale="deepnorm"),
        lens=[140, 66])
    # skipLayers: the layers named run as the identity (their attentions 0); one in the
    # middle (also the stock encoder of the two layers kept), the first and the last of
    # four (attentions), every layer (given out of order: the final norm of the embeddings)
    add("skip1_L3__learned__layernorm__post__relu",
        lev_cfg("learned", "layernorm", "post", "relu", layers=3), lens=[12, 7, 3], skip=[1])
    add("skip0_3_L4__rope_interleaved__rmsnorm__pre__swiglu",
        lev_cfg("rope", "rmsnorm", "pre", "swiglu", layers=4, positionOptions=rope_i), lens=[9, 5, 2],
        skip=[0, 3], attentions=True)
    add("skip_all_L2__sinusoidal__layernorm__pre__gelu",
        lev_cfg("sinusoidal", "layernorm", "pre", "gelu"), lens=[8, 3, 6], skip=[1, 0])
    add("long_skip2_L3__alibi__rmsnorm__post__gelu",
        lev_cfg("alibi", "rmsnorm", "post", "gelu", layers=3), lens=[120, 65, 3], skip=[2])
    # all three: a skipped layer is the identity, not a scaled residual
    add("long_skip1_deepnorm_L3_qknorm_rmsnorm__rope_half__layernorm__post__geglu",
        lev_cfg("rope", "layernorm", "post", "geglu", layers=3, positionOptions=rope_h, qkNorm="rmsnorm",
                residualScale="deepnorm"), lens=[70, 9], skip=[1])
    return cases


def lever_effects(cfg, W, ids, tids, skip, out_b, real):
    """How far each lever of a case moves reference B's output (the largest change over
    real rows, relative to the output's largest value), so that a core that ignores or
    misapplies it fails by far more than the tolerance: without the skip, without the
    residual scale, without the QK-norm, and with the QK-norm after RoPE instead of
    before. Each must move the output by more than 1% (asserted)."""
    scale = float(out_b[real].abs().max())
    rel = lambda o: float((o - out_b)[real].abs().max()) / scale
    eff = []
    if skip:
        eff.append(("skip ignored", rel(ref_b(cfg, W, ids, type_ids=tids)[0])))
    if cfg["residualScale"] != 1:
        eff.append(("residualScale 1", rel(ref_b(dict(cfg, residualScale=1), W, ids, type_ids=tids, skip=skip)[0])))
    if cfg["qkNorm"] != "none":
        eff.append(("qkNorm none", rel(ref_b(dict(cfg, qkNorm="none"), W, ids, type_ids=tids, skip=skip)[0])))
        if cfg["position"] == "rope":
            eff.append(("qkNorm after RoPE", rel(ref_b(cfg, W, ids, type_ids=tids, skip=skip, qk_after_rope=True)[0])))
    for what, e in eff:
        assert e > 0.01, (what, e)
    return eff


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


def make_type_ids(seed, ids, type_vocab):
    """Token types for a batch: even sequences as BERT's sentence pairs (0 ... 0 then
    type_vocab - 1 ... to the end), odd ones random; every type used, some sequence mixed."""
    rng = np.random.default_rng(seed + 2)
    out = []
    for b, s in enumerate(ids):
        L = len(s)
        if b % 2 == 0:
            k = int(rng.integers(1, L)) if L > 1 else 1
            out.append([0] * k + [type_vocab - 1] * (L - k))
        else:
            out.append([int(t) for t in rng.integers(0, type_vocab, size=L)])
    assert set(t for s in out for t in s) == set(range(type_vocab)), out
    assert any(len(set(s)) > 1 for s in out)
    return out


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
        assert "headDim" in meta_cfg or cfg["dModel"] % cfg["heads"] == 0
        if cfg["position"] == "rope":
            assert cfg["headDim"] % 2 == 0
        seed = zlib.crc32(name.encode())
        ids = make_ids(seed, cfg["vocabSize"], c["long"], c["lens"])
        assert len(set(map(len, ids))) == len(ids)
        if cfg["position"] == "learned":
            assert cfg["maxLen"] - cfg["positionOptions"]["offset"] >= max(map(len, ids))
        tids = make_type_ids(seed, ids, cfg["typeVocabSize"]) if cfg["typeVocabSize"] > 1 else None
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
        skip = c["skip"] or []
        assert all(0 <= l < cfg["layers"] for l in skip) and len(set(skip)) == len(skip)
        out_b, att_b = ref_b(cfg, W, ids, stats, type_ids=tids, skip=skip)
        if c["qk_scale"]:  # some scores overflow float32's exp without the max subtraction
            assert stats["max_score"] > 100, (name, stats)
        head = cfg["outputHead"]
        lg_b = b_logits(cfg, W, out_b, ids) if head else None
        refs, diffs = [REF_B], {}
        if covers_a(cfg):
            out_a = ref_a(cfg, W, ids, tids, skip)
            diffs[REF_A] = float((out_a - out_b)[real].abs().max())
            if head:
                diffs[REF_A + " (logits)"] = float((torch_head(W, out_a, ids) - lg_b).abs().max())
            refs.insert(0, REF_A)
        out_c, att_c = ref_c(cfg, W, ids, tids, skip)
        diffs[REF_C] = float((out_c - out_b)[real].abs().max())
        if head:
            diffs[REF_C + " (logits)"] = float((torch_head(W, out_c, ids) - lg_b).abs().max())
        qmask = real[None, :, None, :, None]
        if cfg["layers"]:
            diffs[REF_C + " (attn probs)"] = float(((att_c - att_b) * qmask).abs().max())
        refs.insert(len(refs) - 1, REF_C)
        for ref, covers, run in ((REF_T5, covers_t5, ref_t5), (REF_MBERT, covers_modernbert, ref_modernbert)):
            if covers(cfg) and not skip:
                out_d, att_d = run(cfg, W, ids, tids)
                diffs[ref] = float((out_d - out_b)[real].abs().max())
                diffs[ref + " (attn probs)"] = float(((att_d - att_b) * qmask).abs().max())
                refs.insert(len(refs) - 1, ref)
        for k, v in diffs.items():
            if not v <= TOL:
                sys.exit("CROSS-CHECK FAILED: %s: %s differs from %s by %.3e" % (name, k, REF_B, v))
        assert float(out_b.abs().max()) > 0.1 and float(out_b[real].std()) > 0.1
        assert torch.all(out_b[~real] == 0)
        effect = lever_effects(cfg, W, ids, tids, skip, out_b, real)

        entry = {"name": name, "file": name + ".safetensors", "config": meta_cfg, "dtype": c["dtype"], "ids": ids}
        if tids is not None:
            entry["typeIds"] = tids
        if skip:  # pass as forward(ids, {skipLayers})
            entry["skipLayers"] = skip
        entry.update({"references": refs, "shape": [B, T, cfg["dModel"]],
                      "expected": flat(out_b, LONG_DIGITS if c["lens"] else None)})
        if c["qk_scale"]:  # the largest raw score q.k/sqrt(dk) (+ bias) of reference B
            entry["maxScore"] = round(stats["max_score"], 6)
        if c["attentions"]:
            entry["attentions"] = {"shape": list(att_b.shape), "data": flat(att_b)}
        if head:
            assert float(lg_b.abs().max()) > 0.1 and torch.all(lg_b[~real] == 0)
            entry["logits"] = {"shape": list(lg_b.shape), "data": flat(lg_b)}
        golden["cases"].append(entry)
        report.append((name, c["dtype"], len(ids), T, diffs, stats.get("max_score"), effect))

    with open(os.path.join(OUT_DIR, "golden.json"), "w") as f:
        # compact, one case per line (keeps diffs readable and the file small)
        head = {k: v for k, v in golden.items() if k != "cases"}
        f.write(json.dumps(head, separators=(",", ":"))[:-1] + ',"cases":[\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in golden["cases"]))
        f.write("\n]}\n")

    total = sum(os.path.getsize(os.path.join(OUT_DIR, f)) for f in os.listdir(OUT_DIR))
    for name, dt, B, T, diffs, max_score, effect in report:
        ds = ", ".join("%s %.1e" % ({REF_A: "A", REF_C: "C", REF_C + " (attn probs)": "C-attn",
                                     REF_A + " (logits)": "A-logits", REF_C + " (logits)": "C-logits",
                                     REF_T5: "T5", REF_T5 + " (attn probs)": "T5-attn",
                                     REF_MBERT: "MB", REF_MBERT + " (attn probs)": "MB-attn"}[k], v)
                       for k, v in diffs.items())
        print("%-58s %-4s B=%d T=%-3d max|diff| vs B: %s%s%s" % (name, dt, B, T, ds, "" if max_score is None
                                                                  else ", max score %.1f" % max_score,
                                                                  "".join(", %s %.2f" % kv for kv in effect)))
    print("%d cases, fixtures total %d bytes" % (len(report), total))


if __name__ == "__main__":
    main()
