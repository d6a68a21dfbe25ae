#!/usr/bin/env python3
"""Independent reference for the pretrained-checkpoint loaders ("Real pretrained encoders").

Writes tiny random checkpoints in the exact Hugging Face folder layouts (tests/pretrained/<case>/)
and, next to them, the expected outputs of each family's forward computed here in float64 with
plain torch ops (tests/pretrained/expected/<case>.json).  Every forward below was written from the
Hugging Face / contrastors / jina / sentence-transformers modelling code (see tests/pretrained/README.md
for which detail was checked where); nothing is shared with swapformer or tests/reference/make_fixtures.py.

Regenerate everything with:

    /usr/bin/python3 tests/reference/make_pretrained.py

Deterministic (per-case seeds from crc32 of the case name, one torch thread).  Needs node and the npm
package `tokenizers` (project node_modules or /tmp/tk/node_modules) to tokenise the text cases with the
Rust tokenizers, via tests/reference/tokenize_with_rust.cjs.  Any failed self-check stops the script.
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import unicodedata
import zlib

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
D = torch.float64
NEG = torch.finfo(torch.float64).min  # HF masks with finfo(dtype).min

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "pretrained")
EXPECTED = os.path.join(OUT, "expected")
NODE_SCRIPT = os.path.join(HERE, "tokenize_with_rust.cjs")
CHECKS = []  # (name, detail) of every self-check that passed, printed at the end


def check(cond, name, detail=""):
    if not cond:
        raise AssertionError(f"self-check failed: {name} {detail}")
    CHECKS.append((name, detail))


def close(a, b, tol, name):
    a = torch.as_tensor(a, dtype=D)
    b = torch.as_tensor(b, dtype=D)
    err = float((a - b).abs().max()) if a.numel() else 0.0
    check(a.shape == b.shape and err <= tol, name, f"max|diff|={err:.3g} (tol {tol:g})")
    return err


# ----------------------------------------------------------------------------------------------
# safetensors (format: u64 LE header length, JSON header {name: {dtype, shape, data_offsets}}
# plus optional "__metadata__" of strings, padded with spaces to 8 bytes, then the raw LE data)
# ----------------------------------------------------------------------------------------------

def storage_round(t, dtype):
    """The float64 value of t after a save in `dtype` (what a loader reads back)."""
    t32 = t.to(torch.float32)
    if dtype == "F32":
        return t32.to(D)
    if dtype == "F16":
        return t32.to(torch.float16).to(D)
    if dtype == "BF16":
        return t32.to(torch.bfloat16).to(D)
    raise ValueError(dtype)


def tensor_bytes(t, dtype):
    if dtype == "F32":
        return t.to(torch.float32).contiguous().numpy().astype("<f4").tobytes()
    if dtype == "F16":
        return t.to(torch.float32).to(torch.float16).contiguous().numpy().astype("<f2").tobytes()
    if dtype == "BF16":
        return t.to(torch.float32).to(torch.bfloat16).contiguous().view(torch.int16).numpy().astype("<i2").tobytes()
    if dtype == "I64":
        return t.to(torch.int64).contiguous().numpy().astype("<i8").tobytes()
    raise ValueError(dtype)


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, tensor, dtype).  Data in sorted-name order, like the Rust writer."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    blobs, off = [], 0
    for name, t, dt in sorted(tensors, key=lambda e: e[0]):
        b = tensor_bytes(t, dt)
        header[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    return off


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        buf = data[a:b]
        dt = e["dtype"]
        if dt == "F32":
            arr = torch.from_numpy(np.frombuffer(buf, dtype="<f4").copy()).to(D)
        elif dt == "F16":
            arr = torch.from_numpy(np.frombuffer(buf, dtype="<f2").astype(np.float64))
        elif dt == "BF16":
            bits = np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16
            arr = torch.from_numpy(bits.view(np.float32).astype(np.float64))
        elif dt == "I64":
            arr = torch.from_numpy(np.frombuffer(buf, dtype="<i8").copy())
        else:
            raise ValueError(dt)
        out[name] = (dt, arr.reshape(e["shape"]))
    return header.get("__metadata__"), out


# ----------------------------------------------------------------------------------------------
# random, well-scaled parameters (HF names, float64, rounded to the storage dtype afterwards)
# ----------------------------------------------------------------------------------------------

class Gen:
    def __init__(self, case):
        self.g = torch.Generator().manual_seed(zlib.crc32(case.encode()))
        self.P = {}

    def normal(self, shape, std, mean=0.0):
        return torch.randn(*shape, generator=self.g, dtype=D) * std + mean

    def emb(self, name, n, d, std=0.5):
        self.P[name + ".weight"] = self.normal((n, d), std)

    def linear(self, name, n_out, n_in, bias=True, gain=1.0):
        self.P[name + ".weight"] = self.normal((n_out, n_in), gain / math.sqrt(n_in))
        if bias:
            self.P[name + ".bias"] = self.normal((n_out,), 0.05)

    def norm(self, name, n, bias=True):
        self.P[name + ".weight"] = self.normal((n,), 0.1, 1.0)
        if bias:
            self.P[name + ".bias"] = self.normal((n,), 0.05)

    def randint(self, lo, hi, n):
        return torch.randint(lo, hi, (n,), generator=self.g).tolist()


# ----------------------------------------------------------------------------------------------
# building blocks (float64)
# ----------------------------------------------------------------------------------------------

def linear(x, P, name):
    y = x @ P[name + ".weight"].T
    b = P.get(name + ".bias")
    return y if b is None else y + b


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)  # biased variance, as torch.nn.LayerNorm
    y = (x - mu) / torch.sqrt(var + eps) * w
    return y if b is None else y + b


def ln(x, P, name, eps):
    return layer_norm(x, P[name + ".weight"], P.get(name + ".bias"), eps)


def rms_norm(x, w, eps):  # T5LayerNorm: no mean subtraction, no bias
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def gelu_erf(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x * torch.sigmoid(x)


def relu(x):
    return torch.clamp(x, min=0.0)


ACT = {"gelu": gelu_erf, "gelu_new": gelu_tanh, "gelu_pytorch_tanh": gelu_tanh, "gelu_fast": gelu_tanh,
       "relu": relu, "silu": silu, "swish": silu}


def split_heads(x, nh):
    B, T, E = x.shape
    return x.view(B, T, nh, E // nh).transpose(1, 2)


def merge_heads(x):
    B, nh, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * d)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rope_cos_sin(T, dim, base):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=D) / dim))
    freqs = torch.outer(torch.arange(T, dtype=D), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)  # "half" (GPT-NeoX) layout: [f0..f_{d/2-1}, f0..f_{d/2-1}]
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin):  # x: [B, h, T, d]
    return x * cos + rotate_half(x) * sin


def key_mask(lengths, T):
    return torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]  # [B, T] True = real token


class Attention:
    """Self-attention with HF semantics.  impl="matrix": scores*scale + bias, disallowed keys set to
    finfo.min, softmax, @v.  impl="loop": every (query, head) on its own, over the allowed keys only, with
    mask and bias taken from per-element scalar functions (an independent check of the vectorised masks)."""

    def __init__(self, lengths, T, impl="matrix"):
        self.lengths, self.T, self.impl = list(lengths), T, impl
        self.kmask = key_mask(lengths, T)

    def __call__(self, q, k, v, scale, allowed=None, bias=None, allowed_fn=None, bias_fn=None):
        if self.impl == "matrix":
            s = (q @ k.transpose(-1, -2)) * scale
            if bias is not None:
                s = s + bias
            a = self.kmask[:, None, None, :]
            if allowed is not None:
                a = a & allowed
            s = s.masked_fill(~a, NEG)
            return torch.softmax(s, dim=-1) @ v
        B, nh, T, d = q.shape
        qn, kn, vn = q.numpy(), k.numpy(), v.numpy()
        out = np.zeros(qn.shape)
        for b in range(B):
            L = self.lengths[b]
            for i in range(L):
                js = [j for j in range(L) if (allowed_fn is None or allowed_fn(i, j))]
                for h in range(nh):
                    s = kn[b, h, js] @ qn[b, h, i] * scale
                    if bias_fn is not None:
                        s = s + np.array([bias_fn(h, i, j) for j in js])
                    p = np.exp(s - s.max())
                    out[b, h, i] = (p / p.sum()) @ vn[b, h, js]
        return torch.from_numpy(out)


# ----------------------------------------------------------------------------------------------
# family forwards (each returns the last hidden state [B, T, H]; padded rows are not zeroed here)
# ----------------------------------------------------------------------------------------------

def bert_family_forward(P, cfg, ids, lengths, type_ids=None, impl="matrix"):
    """BERT / RoBERTa / XLM-R (transformers models/bert, models/roberta) and JinaBERT v2
    (model_type bert + position_embedding_type alibi + feed_forward_type geglu)."""
    B, T = ids.shape
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    d = H // nh
    eps = cfg["layer_norm_eps"]
    mask = key_mask(lengths, T)
    if type_ids is None:
        type_ids = torch.zeros_like(ids)
    if cfg["model_type"] in ("roberta", "xlm-roberta"):
        pad = cfg["pad_token_id"]  # create_position_ids_from_input_ids
        m = (ids != pad).long()
        pos = torch.cumsum(m, dim=1) * m + pad
    else:
        pos = torch.arange(T)[None, :].expand(B, T)
    alibi = cfg.get("position_embedding_type", "absolute") == "alibi"
    x = P["embeddings.word_embeddings.weight"][ids] + P["embeddings.token_type_embeddings.weight"][type_ids]
    if not alibi:
        x = x + P["embeddings.position_embeddings.weight"][pos]
    x = ln(x, P, "embeddings.LayerNorm", eps)
    att = Attention(lengths, T, impl)
    bias, bias_fn = None, None
    if alibi:
        slopes = alibi_slopes(nh)
        rel = (torch.arange(T)[None, :] - torch.arange(T)[:, None]).abs().to(D)  # |j - i|
        bias = (-torch.tensor(slopes, dtype=D))[:, None, None] * rel[None]  # [h, T, T]
        bias_fn = lambda h, i, j: -slopes[h] * abs(i - j)
    for l in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{l}."
        q = split_heads(linear(x, P, p + "attention.self.query"), nh)
        k = split_heads(linear(x, P, p + "attention.self.key"), nh)
        v = split_heads(linear(x, P, p + "attention.self.value"), nh)
        ctx = merge_heads(att(q, k, v, 1.0 / math.sqrt(d), bias=bias, bias_fn=bias_fn))
        x = ln(linear(ctx, P, p + "attention.output.dense") + x, P, p + "attention.output.LayerNorm", eps)
        if cfg.get("feed_forward_type", "original").endswith("glu"):
            I = cfg["intermediate_size"]
            act = {"geglu": gelu_erf, "reglu": relu}[cfg["feed_forward_type"]]  # nn.GELU() / nn.ReLU()
            g = linear(x, P, p + "mlp.gated_layers")
            y = linear(act(g[..., :I]) * g[..., I:], P, p + "mlp.wo")  # first half activated
            x = ln(y + x, P, p + "mlp.layernorm", eps)
        else:
            y = linear(ACT[cfg["hidden_act"]](linear(x, P, p + "intermediate.dense")), P, p + "output.dense")
            x = ln(y + x, P, p + "output.LayerNorm", eps)
    return x


def alibi_slopes(n):
    """Standard ALiBi head slopes (jina-bert / mosaic-bert _get_alibi_head_slopes)."""
    def pow2(m):
        start = 2.0 ** (-(2.0 ** -(math.log2(m) - 3)))
        return [start * start ** i for i in range(m)]
    if math.log2(n).is_integer():
        return pow2(n)
    c = 2 ** math.floor(math.log2(n))
    return pow2(c) + alibi_slopes(2 * c)[0::2][: n - c]


def distilbert_forward(P, cfg, ids, lengths, impl="matrix"):
    B, T = ids.shape
    H, nh = cfg["dim"], cfg["n_heads"]
    d = H // nh
    eps = 1e-12  # hard-coded in modeling_distilbert (Embeddings and TransformerBlock), not read from config
    x = P["embeddings.word_embeddings.weight"][ids] + P["embeddings.position_embeddings.weight"][torch.arange(T)][None]
    x = ln(x, P, "embeddings.LayerNorm", eps)
    att = Attention(lengths, T, impl)
    act = ACT[cfg["activation"]]
    for l in range(cfg["n_layers"]):
        p = f"transformer.layer.{l}."
        q = split_heads(linear(x, P, p + "attention.q_lin"), nh) / math.sqrt(d)  # q scaled before the matmul
        k = split_heads(linear(x, P, p + "attention.k_lin"), nh)
        v = split_heads(linear(x, P, p + "attention.v_lin"), nh)
        ctx = merge_heads(att(q, k, v, 1.0))
        x = ln(linear(ctx, P, p + "attention.out_lin") + x, P, p + "sa_layer_norm", eps)
        y = linear(act(linear(x, P, p + "ffn.lin1")), P, p + "ffn.lin2")
        x = ln(y + x, P, p + "output_layer_norm", eps)
    return x


def nomic_rotary_base(cfg, T, rot_dim):
    """contrastors NomicBertDynamicNTKRotaryEmbedding._update_cos_sin_cache: the base only changes when the
    (padded) length T of the batch exceeds max_trained_positions."""
    base = float(cfg["rotary_emb_base"])
    f = cfg.get("rotary_scaling_factor")
    if f and T > cfg["max_trained_positions"]:
        base = base * ((f * T / cfg["max_trained_positions"]) - (f - 1)) ** (rot_dim / (rot_dim - 2))
    return base


def nomic_forward(P, cfg, ids, lengths, type_ids=None, impl="matrix"):
    B, T = ids.shape
    H, nh = cfg["n_embd"], cfg["n_head"]
    d = H // nh
    eps = cfg["layer_norm_epsilon"]
    assert cfg["rotary_emb_fraction"] == 1.0 and not cfg["rotary_emb_interleaved"] and not cfg["prenorm"]
    if type_ids is None:
        type_ids = torch.zeros_like(ids)
    x = P["embeddings.word_embeddings.weight"][ids] + P["embeddings.token_type_embeddings.weight"][type_ids]
    x = ln(x, P, "emb_ln", eps)
    rot = int(d * cfg["rotary_emb_fraction"])
    cos, sin = rope_cos_sin(T, rot, nomic_rotary_base(cfg, T, rot))
    att = Attention(lengths, T, impl)
    act = {"swiglu": silu, "geglu": gelu_erf, "glu": torch.sigmoid}[cfg["activation_function"]]
    for l in range(cfg["n_layer"]):
        p = f"encoder.layers.{l}."
        qkv = linear(x, P, p + "attn.Wqkv").view(B, T, 3, nh, d)  # "... (three h d)"
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        ctx = merge_heads(att(q, k, v, 1.0 / math.sqrt(d)))
        x = ln(linear(ctx, P, p + "attn.out_proj") + x, P, p + "norm1", eps)  # post-norm (prenorm false)
        y = linear(linear(x, P, p + "mlp.fc11") * act(linear(x, P, p + "mlp.fc12")), P, p + "mlp.fc2")
        x = ln(y + x, P, p + "norm2", eps)
    return x


def modernbert_layer_setup(cfg):
    """Per layer: (is_sliding, rope_theta).  Window from global_attn_every_n_layers (ModernBertAttention),
    theta from layer_types + rope_parameters (new configs) or global/local_rope_theta (old configs)."""
    every = cfg.get("global_attn_every_n_layers", 3)
    out = []
    for i in range(cfg["num_hidden_layers"]):
        sliding = i % every != 0
        if "layer_types" in cfg:
            assert (cfg["layer_types"][i] == "sliding_attention") == sliding
        if "rope_parameters" in cfg:
            theta = cfg["rope_parameters"]["sliding_attention" if sliding else "full_attention"]["rope_theta"]
        else:
            theta = cfg.get("local_rope_theta", 10000.0) if sliding else cfg.get("global_rope_theta", 160000.0)
        out.append((sliding, float(theta)))
    return out


def modernbert_forward(P, cfg, ids, lengths, impl="matrix"):
    B, T = ids.shape
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    d = H // nh
    eps = cfg["norm_eps"]
    act = ACT[cfg["hidden_activation"]]
    half = cfg["local_attention"] // 2
    x = ln(P["embeddings.tok_embeddings.weight"][ids], P, "embeddings.norm", eps)
    att = Attention(lengths, T, impl)
    dist = (torch.arange(T)[None, :] - torch.arange(T)[:, None]).abs()
    window = (dist <= half)[None, None]
    for l, (sliding, theta) in enumerate(modernbert_layer_setup(cfg)):
        p = f"layers.{l}."
        cos, sin = rope_cos_sin(T, d, theta)
        h = x if l == 0 else ln(x, P, p + "attn_norm", eps)  # layer 0: attn_norm is Identity
        qkv = linear(h, P, p + "attn.Wqkv").view(B, T, 3, nh, d)
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if sliding:
            ctx = att(q, k, v, d ** -0.5, allowed=window, allowed_fn=lambda i, j: abs(i - j) <= half)
        else:
            ctx = att(q, k, v, d ** -0.5)
        x = x + linear(merge_heads(ctx), P, p + "attn.Wo")
        inp, gate = linear(ln(x, P, p + "mlp_norm", eps), P, p + "mlp.Wi").chunk(2, dim=-1)
        x = x + linear(act(inp) * gate, P, p + "mlp.Wo")  # first half ("input") activated
    return ln(x, P, "final_norm", eps)


def t5_bucket(rel, num_buckets, max_distance, dtype=torch.float32):
    """T5Attention._relative_position_bucket, bidirectional; `dtype` is the float type of the log step
    (HF uses float32: relative_position.float())."""
    nb = num_buckets // 2
    ret = (rel > 0).long() * nb
    n = rel.abs()
    max_exact = nb // 2
    is_small = n < max_exact
    large = max_exact + (torch.log(n.to(dtype) / max_exact) / math.log(max_distance / max_exact)
                         * (nb - max_exact)).long()
    large = torch.clamp(large, max=nb - 1)
    return ret + torch.where(is_small, n, large)


def t5_bucket_scalar(rel, num_buckets, max_distance):
    nb = num_buckets // 2
    ret = nb if rel > 0 else 0
    n = abs(rel)
    me = nb // 2
    if n < me:
        return ret + n
    return ret + min(nb - 1, me + int(math.log(n / me) / math.log(max_distance / me) * (nb - me)))


def t5_forward(P, cfg, ids, lengths, impl="matrix"):
    B, T = ids.shape
    nh, dkv = cfg["num_heads"], cfg["d_kv"]
    eps = cfg["layer_norm_epsilon"]
    nbk, maxd = cfg["relative_attention_num_buckets"], cfg["relative_attention_max_distance"]
    emb = P["shared.weight"] if "shared.weight" in P else P["encoder.embed_tokens.weight"]
    x = emb[ids]  # no scaling, no position table
    table = P["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]  # [buckets, heads]
    rel = torch.arange(T)[None, :] - torch.arange(T)[:, None]  # memory (key) - context (query)
    bias = table[t5_bucket(rel, nbk, maxd)].permute(2, 0, 1)  # [h, T, T], shared by every block
    tnp = table.numpy()
    bias_fn = lambda h, i, j: tnp[t5_bucket_scalar(j - i, nbk, maxd), h]
    att = Attention(lengths, T, impl)
    gated = cfg["feed_forward_proj"].startswith("gated-")
    act_name = cfg["feed_forward_proj"].split("-")[-1]
    act = ACT["gelu_new" if cfg["feed_forward_proj"] == "gated-gelu" else act_name]
    for l in range(cfg["num_layers"]):
        p = f"encoder.block.{l}.layer."
        h = rms_norm(x, P[p + "0.layer_norm.weight"], eps)
        q = split_heads(h @ P[p + "0.SelfAttention.q.weight"].T, nh)
        k = split_heads(h @ P[p + "0.SelfAttention.k.weight"].T, nh)
        v = split_heads(h @ P[p + "0.SelfAttention.v.weight"].T, nh)
        ctx = merge_heads(att(q, k, v, 1.0, bias=bias, bias_fn=bias_fn))  # no 1/sqrt(d_kv)
        x = x + ctx @ P[p + "0.SelfAttention.o.weight"].T
        h = rms_norm(x, P[p + "1.layer_norm.weight"], eps)
        if gated:
            f = act(h @ P[p + "1.DenseReluDense.wi_0.weight"].T) * (h @ P[p + "1.DenseReluDense.wi_1.weight"].T)
        else:
            f = act(h @ P[p + "1.DenseReluDense.wi.weight"].T)
        x = x + f @ P[p + "1.DenseReluDense.wo.weight"].T
    return rms_norm(x, P["encoder.final_layer_norm.weight"], eps)


FORWARD = {"bert": bert_family_forward, "roberta": bert_family_forward, "xlm-roberta": bert_family_forward,
           "jina-bert": bert_family_forward, "distilbert": distilbert_forward, "nomic_bert": nomic_forward,
           "modernbert": modernbert_forward, "t5": t5_forward}
TAKES_TYPE_IDS = {"bert", "jina-bert", "nomic_bert"}


def run_forward(case, ids_list, type_list=None, impl="matrix"):
    """Right-padded batch (pad with the config's pad id), key-only mask; returns hidden [B, T, H] with the
    rows past each length set to exactly 0."""
    lengths = [len(s) for s in ids_list]
    T = max(lengths)
    pad = case["pad_id"]
    ids = torch.tensor([s + [pad] * (T - len(s)) for s in ids_list])
    kw = {}
    if case["family"] in TAKES_TYPE_IDS and type_list is not None:
        kw["type_ids"] = torch.tensor([s + [0] * (T - len(s)) for s in type_list])
    h = FORWARD[case["family"]](case["P"], case["config"], ids, lengths, impl=impl, **kw)
    return h * key_mask(lengths, T)[..., None].to(D)


# ----------------------------------------------------------------------------------------------
# pooling (sentence_transformers/models/Pooling.py), Dense, Normalize
# ----------------------------------------------------------------------------------------------

ST_POOL_ORDER = ["cls", "max", "mean", "mean_sqrt_len", "weightedmean", "lasttoken"]  # Pooling.forward order
ST_POOL_KEYS = {"cls": "pooling_mode_cls_token", "max": "pooling_mode_max_tokens",
                "mean": "pooling_mode_mean_tokens", "mean_sqrt_len": "pooling_mode_mean_sqrt_len_tokens",
                "weightedmean": "pooling_mode_weightedmean_tokens", "lasttoken": "pooling_mode_lasttoken"}


def pool_all(hidden, lengths):
    out = {k: [] for k in ST_POOL_ORDER}
    for b, L in enumerate(lengths):
        h = hidden[b, :L]
        s = h.sum(0)
        w = torch.arange(1, L + 1, dtype=D)[:, None]  # positions 1..L (right padding)
        out["cls"].append(h[0])
        out["mean"].append(s / max(L, 1e-9))
        out["max"].append(h.max(0).values)
        out["mean_sqrt_len"].append(s / math.sqrt(L))
        out["weightedmean"].append((h * w).sum(0) / w.sum())
        out["lasttoken"].append(h[L - 1])
    return {k: torch.stack(v) for k, v in out.items()}


def l2_normalize(x):
    return x / x.norm(dim=-1, keepdim=True).clamp(min=1e-12)  # F.normalize(p=2, eps=1e-12)


def apply_recipe(pooled, recipe, P_dense=None):
    x = torch.cat([pooled[m] for m in recipe["pooling"]], dim=-1)
    if recipe.get("dense"):
        dn = recipe["dense"]
        x = x @ P_dense["linear.weight"].T
        if dn["bias"]:
            x = x + P_dense["linear.bias"]
        x = {"torch.nn.modules.activation.Tanh": torch.tanh,
             "torch.nn.modules.linear.Identity": (lambda t: t)}[dn["activation_function"]](x)
    if recipe["normalize"]:
        x = l2_normalize(x)
    return x


# ----------------------------------------------------------------------------------------------
# tokenizers (tokenizer.json written by hand, loaded and run by the Rust tokenizers via Node)
# ----------------------------------------------------------------------------------------------

def added(content, id_, special=True, lstrip=False, normalized=False):
    return {"id": id_, "content": content, "single_word": False, "lstrip": lstrip, "rstrip": False,
            "normalized": normalized, "special": special}


def template(single, pair, specials):
    def parse(items):
        out = []
        for it in items:
            name, _, tid = it.partition(":")
            tid = int(tid or 0)
            if name.startswith("$"):
                out.append({"Sequence": {"id": name[1:], "type_id": tid}})
            else:
                out.append({"SpecialToken": {"id": name, "type_id": tid}})
        return out
    return {"type": "TemplateProcessing", "single": parse(single.split()), "pair": parse(pair.split()),
            "special_tokens": {t: {"id": t, "ids": [i], "tokens": [t]} for t, i in specials}}


WP_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WP_WORDS = ["the", "a", "an", "of", "and", "to", "in", "is", "it", "that", "for", "on", "with", "as", "what",
            "how", "are", "you", "this", "quick", "brown", "fox", "jump", "over", "lazy", "dog", "hello", "world",
            "search", "query", "document", "cafe", "naive", "resume", "swap", "former", "model", "encode",
            "transformer", "web", "assembly", "sentence", "embed", "test", "long", "short", "text", "token",
            "represent", "passage", "relevant", "un", "re", "##s", "##ing", "##ed", "##er", "##ly", "##tion",
            "##ment", "##es", "##able", "##ding", "##former", "##s", "中", "文"]


def wordpiece_vocab():
    punct = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    digits = list("0123456789")
    letters = list("abcdefghijklmnopqrstuvwxyz")
    vocab = []
    for t in WP_SPECIALS + punct + digits + letters + ["##" + c for c in letters + digits] + WP_WORDS:
        if t not in vocab:
            vocab.append(t)
    return vocab


def wordpiece_tokenizer_json(vocab):
    ids = {t: i for i, t in enumerate(vocab)}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(t, ids[t]) for t in WP_SPECIALS],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": template("[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
                                   [("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])]),
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    }


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


BPE_WORDS = ["the", "The", " the", " quick", " brown", " fox", " jumps", " over", " lazy", " dog", "Hello", " world",
             " hello", " World", " model", " encoder", " tokens", " test", " text", " is", " a", " of", " and",
             " in", " to", " café", " naïve", ",", ".", "!", " 2024", " Swap", "former", " Web", "Assembly", " what",
             " transformer", " sentence", " embeddings"]


def byte_bpe(words):
    """Merges that build each word (byte-level form) left to right; returns (merges, merged tokens)."""
    b2u = bytes_to_unicode()
    merges, new_tokens = [], []
    for w in words:
        syms = [b2u[b] for b in w.encode("utf-8")]
        cur = syms[0]
        for s in syms[1:]:
            pair = (cur, s)
            if pair not in merges:
                merges.append(pair)
                if cur + s not in new_tokens:
                    new_tokens.append(cur + s)
            cur = cur + s
    return merges, new_tokens


def bpe_tokenizer_json(specials_front, specials_back, post_processor, mask_lstrip=False):
    """Byte-level BPE: specials_front ids 0.., then the 256 byte symbols, then merged tokens, then specials_back."""
    b2u = bytes_to_unicode()
    merges, merged = byte_bpe(BPE_WORDS)
    vocab = list(specials_front) + [b2u[b] for b in range(256)] + [t for t in merged if t not in b2u.values()]
    vocab += list(specials_back)
    ids = {t: i for i, t in enumerate(vocab)}
    assert len(ids) == len(vocab)
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(t, ids[t], lstrip=(mask_lstrip and "mask" in t.lower()))
                         for t in list(specials_front) + list(specials_back)],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": post_processor(ids),
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": ids, "merges": [f"{a} {b}" for a, b in merges]},
    }
    return tok, vocab


UNI_WORDS = ["the", "quick", "brown", "fox", "jump", "s", "over", "lazy", "dog", "hello", "world", "Hello", "The",
             "encoder", "model", "token", "test", "text", "is", "a", "of", "and", "in", "to", "café", "naïve",
             "query", "passage", "sentence", "embed", "ding", "ing", "ed", "er", "transform", "er", "what", "how",
             "summarize", "2024", "Swap", "former", "Web", "Assembly", "Ünïcödé", "résumé", "中文", "ly"]
UNI_CHARS = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?;:'\"()-—/") + \
    list("éïöüçñàèÜ中文")


def unigram_pieces(seed):
    """(piece, log-prob score) list: '▁' + words, bare words, single characters; deterministic scores."""
    rng = np.random.RandomState(seed)
    pieces, seen = [("▁", -2.5)], {"▁"}
    for w in UNI_WORDS:
        for p, base in (("▁" + w, -6.0), (w, -8.0)):
            if p not in seen:
                seen.add(p)
                pieces.append((p, round(base - float(rng.uniform(0, 2)), 4)))
    for c in UNI_CHARS:
        if c not in seen:
            seen.add(c)
            pieces.append((c, round(-10.0 - float(rng.uniform(0, 2)), 4)))
    return pieces


def unigram_tokenizer_json(front, pieces, back, unk_id, post_processor, newer_t5_normalizer=False):
    vocab = [(t, 0.0) for t in front] + pieces + [(t, 0.0) for t in back]
    ids = {t: i for i, (t, _) in enumerate(vocab)}
    assert len(ids) == len(vocab)
    if newer_t5_normalizer:  # SpmConverter newer style: Strip(right) + Replace(" {2,}" -> "▁") (Precompiled omitted)
        norm = {"type": "Sequence", "normalizers": [
            {"type": "NFKC"}, {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "▁"}]}
    else:  # older style: Replace(" {2,}" -> " ") (Precompiled replaced by NFKC)
        norm = {"type": "Sequence", "normalizers": [
            {"type": "NFKC"}, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
    meta = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(t, ids[t], lstrip=(t == "<mask>")) for t in list(front) + list(back)],
        "normalizer": norm, "pre_tokenizer": meta, "post_processor": post_processor(ids), "decoder": dict(meta),
        "model": {"type": "Unigram", "unk_id": unk_id, "vocab": [[t, s] for t, s in vocab], "byte_fallback": False},
    }
    return tok, [t for t, _ in vocab]


def run_rust(jobs):
    r = subprocess.run(["node", NODE_SCRIPT], input=json.dumps({"jobs": jobs}).encode("utf-8"),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if r.returncode != 0:
        raise RuntimeError("tokenize_with_rust.cjs failed:\n" + r.stderr.decode())
    return json.loads(r.stdout.decode("utf-8"))


# Independent Python WordPiece (BertNormalizer + BertPreTokenizer + greedy longest match), to cross-check
# the Rust output on the WordPiece tokenizer.json written above.
def py_wordpiece(text, vocab):
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
            continue
        if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF:
            out.append(f" {ch} ")
        else:
            out.append(ch)
    text = "".join(c for c in unicodedata.normalize("NFD", "".join(out)) if unicodedata.category(c) != "Mn").lower()
    words = []
    for w in text.split():
        cur = ""
        for ch in w:
            cp = ord(ch)
            punct = (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126) or \
                unicodedata.category(ch).startswith("P")
            if punct:
                if cur:
                    words.append(cur)
                words.append(ch)
                cur = ""
            else:
                cur += ch
        if cur:
            words.append(cur)
    ids = {t: i for i, t in enumerate(vocab)}
    res = [ids["[CLS]"]]
    for w in words:
        pieces, start, bad = [], 0, False
        while start < len(w):
            end, cur = len(w), None
            while start < end:
                sub = w[start:end] if start == 0 else "##" + w[start:end]
                if sub in ids:
                    cur = sub
                    break
                end -= 1
            if cur is None:
                bad = True
                break
            pieces.append(ids[cur])
            start = end
        res.extend([ids["[UNK]"]] if bad else pieces)
    return res + [ids["[SEP]"]]


# ----------------------------------------------------------------------------------------------
# Hub-like side files
# ----------------------------------------------------------------------------------------------

def write_json(path, obj, sort_keys=False, indent=2):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + "\n")


def st_modules(with_dense, with_normalize, dense_dir="2_Dense"):
    mods = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if with_dense:
        mods.append({"idx": 2, "name": "2", "path": dense_dir, "type": "sentence_transformers.models.Dense"})
    if with_normalize:
        i = len(mods)
        mods.append({"idx": i, "name": str(i), "path": f"{i}_Normalize", "type": "sentence_transformers.models.Normalize"})
    return mods


def pooling_config(dim, modes, old_style=False):
    if old_style:  # sentence-transformers 1.x/2.0 files (all-MiniLM-L6-v2): only the first four modes
        keys = ["pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
                "pooling_mode_mean_sqrt_len_tokens"]
    else:  # Pooling.config_keys order (cls, mean, max, mean_sqrt_len, weightedmean, lasttoken, include_prompt)
        keys = ["pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
                "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"]
    cfg = {"word_embedding_dimension": dim}
    for k in keys:
        cfg[k] = any(ST_POOL_KEYS[m] == k for m in modes)
    if not old_style:
        cfg["include_prompt"] = True
    return cfg


def st_version(new=True, prompts=None):
    if not new:
        return {"__version__": {"sentence_transformers": "2.0.0", "transformers": "4.6.1", "pytorch": "1.8.1"}}
    return {"model_type": "SentenceTransformer",
            "__version__": {"sentence_transformers": "3.0.1", "transformers": "4.41.2", "pytorch": "2.3.0"},
            "prompts": prompts or {}, "default_prompt_name": None, "similarity_fn_name": "cosine"}


TORCH_DTYPE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def fmt(x):
    """~9 significant digits; exact zeros (padded rows) written as 0."""
    return [0 if v == 0 else float(format(float(v), ".9g")) for v in x]


def tensor_json(t):
    t = torch.as_tensor(t, dtype=D)
    return {"shape": list(t.shape), "data": fmt(t.reshape(-1).tolist())}


# ----------------------------------------------------------------------------------------------
# parameter sets per family (canonical HF names, no prefix)
# ----------------------------------------------------------------------------------------------

FF_GAIN = 2.0  # feed-forward inputs with std ~2, where erf and tanh GELU differ most (|x| ~ 2.7)


def bert_params(g, c, jina=False, pooler=True, position_table=None):
    H, I, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    g.emb("embeddings.word_embeddings", V, H, 0.5)
    if not jina:
        if position_table is None:
            g.emb("embeddings.position_embeddings", c["max_position_embeddings"], H, 0.3)
        else:
            g.P["embeddings.position_embeddings.weight"] = position_table
    g.emb("embeddings.token_type_embeddings", c["type_vocab_size"], H, 0.3)
    g.norm("embeddings.LayerNorm", H)
    for l in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{l}."
        g.linear(p + "attention.self.query", H, H, gain=1.5)
        g.linear(p + "attention.self.key", H, H, gain=1.5)
        g.linear(p + "attention.self.value", H, H)
        g.linear(p + "attention.output.dense", H, H)
        g.norm(p + "attention.output.LayerNorm", H)
        if jina:
            g.linear(p + "mlp.gated_layers", 2 * I, H, bias=False, gain=FF_GAIN)
            g.linear(p + "mlp.wo", H, I)
            g.norm(p + "mlp.layernorm", H)
        else:
            g.linear(p + "intermediate.dense", I, H, gain=FF_GAIN)
            g.linear(p + "output.dense", H, I)
            g.norm(p + "output.LayerNorm", H)
    if pooler:
        g.linear("pooler.dense", H, H)


def distilbert_sinusoids(n_pos, dim):
    """What modeling_distilbert create_sinusoidal_embeddings writes into position_embeddings.weight (float32)."""
    pos = torch.arange(n_pos, dtype=D)[:, None]
    j = torch.arange(dim)
    enc = pos / torch.pow(torch.tensor(10000.0, dtype=D), (2 * (j // 2)).to(D) / dim)[None, :]
    out = torch.empty(n_pos, dim, dtype=D)
    out[:, 0::2] = torch.sin(enc[:, 0::2])
    out[:, 1::2] = torch.cos(enc[:, 1::2])
    return out.to(torch.float32).to(D)


def distilbert_params(g, c):
    H, I = c["dim"], c["hidden_dim"]
    g.emb("embeddings.word_embeddings", c["vocab_size"], H, 0.5)
    if c["sinusoidal_pos_embds"]:
        tab = distilbert_sinusoids(c["max_position_embeddings"], H)
        # cross-check against a literal transcription of the numpy loop in modeling_distilbert
        enc = np.array([[p / np.power(10000, 2 * (j // 2) / H) for j in range(H)] for p in range(c["max_position_embeddings"])])
        ref = np.zeros_like(enc)
        ref[:, 0::2] = np.sin(enc[:, 0::2])
        ref[:, 1::2] = np.cos(enc[:, 1::2])
        close(tab, torch.from_numpy(ref.astype(np.float32).astype(np.float64)), 0.0, "distilbert sinusoid table == numpy loop (float32)")
        g.P["embeddings.position_embeddings.weight"] = tab
    else:
        g.emb("embeddings.position_embeddings", c["max_position_embeddings"], H, 0.3)
    g.norm("embeddings.LayerNorm", H)
    for l in range(c["n_layers"]):
        p = f"transformer.layer.{l}."
        g.linear(p + "attention.q_lin", H, H, gain=1.5)
        g.linear(p + "attention.k_lin", H, H, gain=1.5)
        g.linear(p + "attention.v_lin", H, H)
        g.linear(p + "attention.out_lin", H, H)
        g.norm(p + "sa_layer_norm", H)
        g.linear(p + "ffn.lin1", I, H, gain=FF_GAIN)
        g.linear(p + "ffn.lin2", H, I)
        g.norm(p + "output_layer_norm", H)


def nomic_params(g, c):
    H, I = c["n_embd"], c["n_inner"]
    assert I % 256 == 0  # NomciBertGatedMLP rounds hidden_features up to a multiple of 256
    g.emb("embeddings.word_embeddings", c["vocab_size"], H, 0.5)
    g.emb("embeddings.token_type_embeddings", c["type_vocab_size"], H, 0.3)
    g.norm("emb_ln", H)
    for l in range(c["n_layer"]):
        p = f"encoder.layers.{l}."
        w = torch.cat([g.normal((H, H), 1.5 / math.sqrt(H)), g.normal((H, H), 1.5 / math.sqrt(H)),
                       g.normal((H, H), 1.0 / math.sqrt(H))])
        g.P[p + "attn.Wqkv.weight"] = w
        if c["qkv_proj_bias"]:
            g.P[p + "attn.Wqkv.bias"] = g.normal((3 * H,), 0.05)
        g.linear(p + "attn.out_proj", H, H, bias=c["qkv_proj_bias"])
        g.norm(p + "norm1", H)
        g.linear(p + "mlp.fc11", I, H, bias=c["mlp_fc1_bias"], gain=FF_GAIN)
        g.linear(p + "mlp.fc12", I, H, bias=c["mlp_fc1_bias"], gain=FF_GAIN)
        g.linear(p + "mlp.fc2", H, I, bias=c["mlp_fc2_bias"])
        g.norm(p + "norm2", H)


def modernbert_params(g, c):
    H, I = c["hidden_size"], c["intermediate_size"]
    nb, ab, mb = c["norm_bias"], c["attention_bias"], c["mlp_bias"]
    g.emb("embeddings.tok_embeddings", c["vocab_size"], H, 0.5)
    g.norm("embeddings.norm", H, bias=nb)
    for l in range(c["num_hidden_layers"]):
        p = f"layers.{l}."
        if l > 0:
            g.norm(p + "attn_norm", H, bias=nb)
        w = torch.cat([g.normal((H, H), 1.5 / math.sqrt(H)), g.normal((H, H), 1.5 / math.sqrt(H)),
                       g.normal((H, H), 1.0 / math.sqrt(H))])
        g.P[p + "attn.Wqkv.weight"] = w
        if ab:
            g.P[p + "attn.Wqkv.bias"] = g.normal((3 * H,), 0.05)
        g.linear(p + "attn.Wo", H, H, bias=ab)
        g.norm(p + "mlp_norm", H, bias=nb)
        g.linear(p + "mlp.Wi", 2 * I, H, bias=mb, gain=FF_GAIN)
        g.linear(p + "mlp.Wo", H, I, bias=mb)
    g.norm("final_norm", H, bias=nb)


def t5_params(g, c, embed_name):
    Dm, dkv, nh, ff = c["d_model"], c["d_kv"], c["num_heads"], c["d_ff"]
    inner = nh * dkv
    g.P[embed_name] = g.normal((c["vocab_size"], Dm), 1.0)
    for l in range(c["num_layers"]):
        p = f"encoder.block.{l}.layer."
        g.P[p + "0.SelfAttention.q.weight"] = g.normal((inner, Dm), 1.5 / math.sqrt(Dm) / math.sqrt(dkv))
        g.P[p + "0.SelfAttention.k.weight"] = g.normal((inner, Dm), 1.0 / math.sqrt(Dm))
        g.P[p + "0.SelfAttention.v.weight"] = g.normal((inner, Dm), 1.0 / math.sqrt(Dm))
        g.P[p + "0.SelfAttention.o.weight"] = g.normal((Dm, inner), 1.0 / math.sqrt(inner))
        if l == 0:
            g.P[p + "0.SelfAttention.relative_attention_bias.weight"] = g.normal(
                (c["relative_attention_num_buckets"], nh), 1.0)
        g.norm(p + "0.layer_norm", Dm, bias=False)
        if c["feed_forward_proj"].startswith("gated-"):
            g.P[p + "1.DenseReluDense.wi_0.weight"] = g.normal((ff, Dm), FF_GAIN / math.sqrt(Dm))
            g.P[p + "1.DenseReluDense.wi_1.weight"] = g.normal((ff, Dm), FF_GAIN / math.sqrt(Dm))
        else:
            g.P[p + "1.DenseReluDense.wi.weight"] = g.normal((ff, Dm), FF_GAIN / math.sqrt(Dm))
        g.P[p + "1.DenseReluDense.wo.weight"] = g.normal((Dm, ff), 1.0 / math.sqrt(ff))
        g.norm(p + "1.layer_norm", Dm, bias=False)
    g.norm("encoder.final_layer_norm", Dm, bias=False)


# ----------------------------------------------------------------------------------------------
# tokenizers used by the cases
# ----------------------------------------------------------------------------------------------

def tok_wordpiece(model_max_length=512):
    vocab = wordpiece_vocab()
    tj = wordpiece_tokenizer_json(vocab)
    cfg = {"clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "do_basic_tokenize": True,
           "do_lower_case": True, "mask_token": "[MASK]", "model_max_length": model_max_length,
           "never_split": None, "pad_token": "[PAD]", "sep_token": "[SEP]", "strip_accents": None,
           "tokenize_chinese_chars": True, "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]"}
    smap = {"cls_token": "[CLS]", "mask_token": "[MASK]", "pad_token": "[PAD]", "sep_token": "[SEP]",
            "unk_token": "[UNK]"}
    ids = {t: i for i, t in enumerate(vocab)}
    seq = {"kind": "wordpiece", "bos": [ids["[CLS]"]], "eos": [ids["[SEP]"]], "sep_pair": [ids["[SEP]"]],
           "lo": len(WP_SPECIALS), "hi": len(vocab), "pad": ids["[PAD]"]}
    return {"json": tj, "vocab": vocab, "config": cfg, "map": smap, "seq": seq}


def tok_roberta():
    front = ["<s>", "<pad>", "</s>", "<unk>"]
    tj, vocab = bpe_tokenizer_json(front, ["<mask>"], lambda ids: {
        "type": "RobertaProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]],
        "trim_offsets": True, "add_prefix_space": False}, mask_lstrip=True)
    cfg = {"add_prefix_space": False, "bos_token": "<s>", "clean_up_tokenization_spaces": True,
           "cls_token": "<s>", "eos_token": "</s>", "errors": "replace", "mask_token": "<mask>",
           "model_max_length": 128, "pad_token": "<pad>", "sep_token": "</s>", "tokenizer_class": "RobertaTokenizer",
           "trim_offsets": True, "unk_token": "<unk>"}
    smap = {"bos_token": "<s>", "cls_token": "<s>", "eos_token": "</s>",
            "mask_token": {"content": "<mask>", "lstrip": True, "normalized": False, "rstrip": False, "single_word": False},
            "pad_token": "<pad>", "sep_token": "</s>", "unk_token": "<unk>"}
    seq = {"kind": "bpe", "bos": [0], "eos": [2], "sep_pair": [2, 2], "lo": 4, "hi": len(vocab) - 1, "pad": 1}
    return {"json": tj, "vocab": vocab, "config": cfg, "map": smap, "seq": seq}


def tok_modernbert():
    front = ["<|endoftext|>", "<|padding|>"]
    back = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    tj, vocab = bpe_tokenizer_json(front, back, lambda ids: template(
        "[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        [("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])]), mask_lstrip=True)
    ids = {t: i for i, t in enumerate(vocab)}
    cfg = {"clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "mask_token": "[MASK]",
           "model_input_names": ["input_ids", "attention_mask"], "model_max_length": 8192, "pad_token": "[PAD]",
           "sep_token": "[SEP]", "tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]"}
    smap = {"cls_token": "[CLS]", "mask_token": "[MASK]", "pad_token": "[PAD]", "sep_token": "[SEP]", "unk_token": "[UNK]"}
    seq = {"kind": "bpe", "bos": [ids["[CLS]"]], "eos": [ids["[SEP]"]], "sep_pair": [ids["[SEP]"]],
           "lo": len(front), "hi": ids["[UNK]"], "pad": ids["[PAD]"]}
    return {"json": tj, "vocab": vocab, "config": cfg, "map": smap, "seq": seq, "ids": ids}


def tok_xlmr():
    front = ["<s>", "<pad>", "</s>", "<unk>"]
    tj, vocab = unigram_tokenizer_json(front, unigram_pieces(7), ["<mask>"], 3, lambda ids: template(
        "<s>:0 $A:0 </s>:0", "<s>:0 $A:0 </s>:0 </s>:0 $B:0 </s>:0", [("<s>", 0), ("</s>", 2)]))
    cfg = {"bos_token": "<s>", "clean_up_tokenization_spaces": True, "cls_token": "<s>", "eos_token": "</s>",
           "mask_token": "<mask>", "model_max_length": 78, "pad_token": "<pad>", "sep_token": "</s>",
           "tokenizer_class": "XLMRobertaTokenizer", "unk_token": "<unk>"}
    smap = {"bos_token": "<s>", "cls_token": "<s>", "eos_token": "</s>",
            "mask_token": {"content": "<mask>", "lstrip": True, "normalized": False, "rstrip": False, "single_word": False},
            "pad_token": "<pad>", "sep_token": "</s>", "unk_token": "<unk>"}
    seq = {"kind": "unigram", "bos": [0], "eos": [2], "sep_pair": [2, 2], "lo": 4, "hi": len(vocab) - 1, "pad": 1}
    return {"json": tj, "vocab": vocab, "config": cfg, "map": smap, "seq": seq}


def tok_t5():
    front = ["<pad>", "</s>", "<unk>"]
    extra = [f"<extra_id_{i}>" for i in range(7, -1, -1)]  # like T5: extra ids at the end, highest first
    tj, vocab = unigram_tokenizer_json(front, unigram_pieces(11), extra, 2, lambda ids: template(
        "$A:0 </s>:0", "$A:0 </s>:0 $B:0 </s>:0", [("</s>", 1)]), newer_t5_normalizer=True)
    cfg = {"additional_special_tokens": extra[::-1], "clean_up_tokenization_spaces": True, "eos_token": "</s>",
           "extra_ids": len(extra), "legacy": True, "model_max_length": 512, "pad_token": "<pad>",
           "tokenizer_class": "T5Tokenizer", "unk_token": "<unk>"}
    smap = {"additional_special_tokens": extra[::-1], "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}
    seq = {"kind": "unigram", "bos": [], "eos": [1], "sep_pair": [1], "lo": 3, "hi": len(vocab) - len(extra), "pad": 0}
    return {"json": tj, "vocab": vocab, "config": cfg, "map": smap, "seq": seq}


def make_ids(g, tok, length):
    s = tok["seq"]
    n = length - len(s["bos"]) - len(s["eos"])
    return s["bos"] + g.randint(s["lo"], s["hi"], n) + s["eos"]


def make_pair(g, tok, la, lb):
    s = tok["seq"]
    a = s["bos"] + g.randint(s["lo"], s["hi"], la) + s["eos"]
    b = g.randint(s["lo"], s["hi"], lb) + s["eos"]
    ids = a + b
    return ids, [0] * len(a) + [1] * len(b)


def pad_vocab(n, multiple):
    return (n + multiple - 1) // multiple * multiple


EN_TEXTS = ["Hello, world!", "The quick brown fox jumps over the lazy dog.",
            "Café naïve résumé: Swapformer's WebAssembly encoder (2024) — 中文 tests?"]


# ----------------------------------------------------------------------------------------------
# the cases
# ----------------------------------------------------------------------------------------------

def case_bert_minilm():
    name = "bert-minilm"
    tok = tok_wordpiece()
    c = {"_name_or_path": "nreimers/MiniLM-L6-H384-uncased", "architectures": ["BertModel"],
         "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": False, "hidden_act": "gelu",
         "hidden_dropout_prob": 0.1, "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64,
         "layer_norm_eps": 1e-12, "max_position_embeddings": 128, "model_type": "bert", "num_attention_heads": 4,
         "num_hidden_layers": 2, "pad_token_id": 0, "position_embedding_type": "absolute", "torch_dtype": "float32",
         "transformers_version": "4.8.2", "type_vocab_size": 2, "use_cache": True, "vocab_size": len(tok["vocab"])}
    g = Gen(name)
    bert_params(g, c)
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True, "source": "modules.json"}
    st = {"modules": st_modules(False, True), "sbert": {"max_seq_length": 96, "do_lower_case": False},
          "pooling": pooling_config(32, ["mean"], old_style=True), "version": st_version(new=False)}
    batches = [{"ids": [make_ids(g, tok, 71), make_ids(g, tok, 9), make_ids(g, tok, 19)]},
               {"ids": [make_ids(g, tok, 6)]}]
    return dict(name=name, family="bert", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=st,
                save={}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="all-MiniLM-like sentence-transformers folder: BertModel keys without prefix (pooler.dense "
                      "present but unused), learned absolute positions, token types (all 0), embedding LayerNorm, "
                      "post-norm, erf GELU, eps 1e-12 from config; modules.json = Transformer -> 1_Pooling (mean, "
                      "old-style config with only four pooling keys) -> Normalize (no folder, like the Hub); "
                      "sentence_bert_config max_seq_length 96 < max_position_embeddings 128.")


def case_bert_bge_mlm():
    name = "bert-bge-mlm"
    tok = tok_wordpiece()
    H, V = 48, len(tok["vocab"])
    c = {"_name_or_path": "BAAI/bge-small-en-v1.5", "architectures": ["BertForPreTraining"],
         "attention_probs_dropout_prob": 0.1, "classifier_dropout": None, "hidden_act": "gelu",
         "hidden_dropout_prob": 0.1, "hidden_size": H, "id2label": {"0": "LABEL_0"}, "initializer_range": 0.02,
         "intermediate_size": 96, "label2id": {"LABEL_0": 0}, "layer_norm_eps": 1e-12,
         "max_position_embeddings": 128, "model_type": "bert", "num_attention_heads": 6, "num_hidden_layers": 2,
         "pad_token_id": 0, "position_embedding_type": "absolute", "torch_dtype": "float16",
         "transformers_version": "4.30.0", "type_vocab_size": 2, "use_cache": True, "vocab_size": V}
    g = Gen(name)
    bert_params(g, c)
    extras = {}
    for n, shape in [("cls.predictions.bias", (V,)), ("cls.predictions.transform.dense.weight", (H, H)),
                     ("cls.predictions.transform.dense.bias", (H,)), ("cls.predictions.transform.LayerNorm.gamma", (H,)),
                     ("cls.predictions.transform.LayerNorm.beta", (H,)), ("cls.predictions.decoder.weight", (V, H)),
                     ("cls.seq_relationship.weight", (2, H)), ("cls.seq_relationship.bias", (2,))]:
        extras[n] = g.normal(shape, 0.05)
    prompts = {"query": "Represent this sentence for searching relevant passages: "}
    recipe = {"pooling": ["cls"], "dense": None, "normalize": True, "source": "modules.json"}
    st = {"modules": st_modules(False, True), "sbert": {"max_seq_length": 128, "do_lower_case": True},
          "pooling": pooling_config(H, ["cls"]), "version": st_version(prompts=prompts)}
    gamma_beta = lambda k: k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
    batches = [{"ids": [make_ids(g, tok, 66), make_ids(g, tok, 14)]}, {"ids": [make_ids(g, tok, 5)]}]
    texts = [{"texts": [prompts["query"] + "what is a transformer?", "A transformer encodes sentence embeddings."]}]
    return dict(name=name, family="bert", config=c, g=g, dtype="F16", tok=tok, recipe=recipe, st=st,
                save={"prefix": "bert.", "rename": gamma_beta, "extras": extras,
                      "i64": {"bert.embeddings.position_ids": torch.arange(128)[None, :]}},
                batches=batches, texts=texts,
                notes="BGE-like folder saved from BertForPreTraining in F16 (torch_dtype float16): every encoder key "
                      "has the 'bert.' prefix, old TF names LayerNorm.gamma/LayerNorm.beta everywhere, plus "
                      "bert.pooler.dense.*, cls.predictions.* (incl. decoder.weight) and cls.seq_relationship.* "
                      "to ignore, and an int64 buffer bert.embeddings.position_ids [1,128] to skip. 6 heads of 8. "
                      "modules.json: 1_Pooling cls -> Normalize; the first text carries the BGE query instruction "
                      "(prompt 'query' in config_sentence_transformers.json). Expected values use the F16-rounded weights.")


def case_bert_dense_pairs():
    name = "bert-dense-pairs"
    tok = tok_wordpiece()
    H = 32
    c = {"architectures": ["BertModel"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu_new",
         "hidden_dropout_prob": 0.1, "hidden_size": H, "initializer_range": 0.02, "intermediate_size": 64,
         "layer_norm_eps": 1e-05, "max_position_embeddings": 96, "model_type": "bert", "num_attention_heads": 2,
         "num_hidden_layers": 3, "pad_token_id": 0, "position_embedding_type": "absolute", "torch_dtype": "float32",
         "transformers_version": "4.44.2", "type_vocab_size": 2, "use_cache": True, "vocab_size": len(tok["vocab"])}
    g = Gen(name)
    bert_params(g, c, pooler=False)
    modes = ["cls", "mean", "max"]
    order = [m for m in ST_POOL_ORDER if m in modes]  # Pooling.forward concatenates cls, max, mean
    dense = {"in_features": H * len(modes), "out_features": 24, "bias": True,
             "activation_function": "torch.nn.modules.activation.Tanh"}
    Pd = {"linear.weight": g.normal((24, H * len(modes)), 1.0 / math.sqrt(H * len(modes))),
          "linear.bias": g.normal((24,), 0.05)}
    recipe = {"pooling": order, "dense": dense, "normalize": True, "source": "modules.json"}
    st = {"modules": st_modules(True, True), "sbert": {"max_seq_length": 94, "do_lower_case": False},
          "pooling": pooling_config(H, modes), "dense": dense, "dense_params": Pd, "version": st_version()}
    b0 = [make_pair(g, tok, 30, 39), make_pair(g, tok, 8, 10), make_pair(g, tok, 4, 3)]
    batches = [{"ids": [x[0] for x in b0], "typeIds": [x[1] for x in b0]},
               {"ids": [make_ids(g, tok, 7)], "typeIds": [[0] * 7]}]
    texts = [{"pairs": [["what is a transformer?", "A transformer encodes sentence embeddings."],
                        ["Hello", "world!"]]},
             {"texts": EN_TEXTS}]
    return dict(name=name, family="bert", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=st,
                save={"shards": 2}, batches=batches, texts=texts,
                notes="BertModel without pooler, sharded safetensors (model.safetensors.index.json + 2 shards), "
                      "hidden_act gelu_new (tanh form), layer_norm_eps 1e-5, 2 heads of 16, 3 layers; sentence pairs "
                      "with token type ids 1 on segment B ([CLS] A [SEP] B [SEP]); 1_Pooling enables cls+mean+max "
                      "(config key order cls, mean, max) which ST concatenates in forward order cls, max, mean; "
                      "2_Dense 96->24 with bias and torch.nn.modules.activation.Tanh; 3_Normalize.")


def case_bert_pytorch_bin():
    name = "bert-pytorch-bin"
    tok = tok_wordpiece()
    c = {"architectures": ["BertModel"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
         "hidden_dropout_prob": 0.1, "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64,
         "layer_norm_eps": 1e-12, "max_position_embeddings": 64, "model_type": "bert", "num_attention_heads": 4,
         "num_hidden_layers": 1, "pad_token_id": 0, "position_embedding_type": "absolute", "torch_dtype": "float32",
         "transformers_version": "4.6.0", "type_vocab_size": 2, "vocab_size": len(tok["vocab"])}
    c["intermediate_size"] = 32
    g = Gen(name)
    bert_params(g, c)
    return dict(name=name, family="bert", config=c, g=g, dtype="F32", tok=tok, save={"bin": True}, st=None,
                no_expected=True)


def case_roberta():
    name = "roberta-bpe"
    tok = tok_roberta()
    c = {"architectures": ["RobertaForMaskedLM"], "attention_probs_dropout_prob": 0.1, "bos_token_id": 0,
         "classifier_dropout": None, "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
         "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-05,
         "max_position_embeddings": 130, "model_type": "roberta", "num_attention_heads": 4,
         "num_hidden_layers": 2, "pad_token_id": 1, "position_embedding_type": "absolute",
         "torch_dtype": "float32", "transformers_version": "4.39.3", "type_vocab_size": 1, "use_cache": True,
         "vocab_size": len(tok["vocab"])}
    g = Gen(name)
    bert_params(g, c, pooler=False)
    H, V = 32, c["vocab_size"]
    extras = {"lm_head.bias": g.normal((V,), 0.05), "lm_head.dense.weight": g.normal((H, H), 0.2),
              "lm_head.dense.bias": g.normal((H,), 0.05), "lm_head.layer_norm.weight": g.normal((H,), 0.1, 1.0),
              "lm_head.layer_norm.bias": g.normal((H,), 0.05)}
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True,
              "source": "fixture default (no modules.json): mean + normalize"}
    batches = [{"ids": [make_ids(g, tok, 128), make_ids(g, tok, 17), make_ids(g, tok, 6)]},
               {"ids": [make_ids(g, tok, 4)]}]
    return dict(name=name, family="roberta", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=None,
                save={"prefix": "roberta.", "extras": extras}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="RobertaForMaskedLM save: 'roberta.' prefix plus lm_head.* to ignore, no pooler. pad_token_id 1, "
                      "position ids cumsum(ids != pad) * mask + pad (real tokens at 2.., pads at 1), "
                      "max_position_embeddings 130 = 128 + 2 and the first batch has a sequence of exactly 128 tokens "
                      "(uses the last table row, 129); type_vocab_size 1, eps 1e-5. Byte-level BPE tokenizer.json "
                      "with RobertaProcessing (all type ids 0).")


def case_xlmr():
    name = "xlm-roberta-unigram"
    tok = tok_xlmr()
    c = {"architectures": ["XLMRobertaModel"], "attention_probs_dropout_prob": 0.1, "bos_token_id": 0,
         "classifier_dropout": None, "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
         "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-05,
         "max_position_embeddings": 80, "model_type": "xlm-roberta", "num_attention_heads": 4,
         "num_hidden_layers": 2, "output_past": True, "pad_token_id": 1, "position_embedding_type": "absolute",
         "torch_dtype": "bfloat16", "transformers_version": "4.29.0.dev0", "type_vocab_size": 1, "use_cache": True,
         "vocab_size": len(tok["vocab"])}
    g = Gen(name)
    bert_params(g, c)
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True, "source": "modules.json"}
    st = {"modules": st_modules(False, True), "sbert": {"max_seq_length": 78, "do_lower_case": False},
          "pooling": pooling_config(32, ["mean"]), "version": st_version()}
    batches = [{"ids": [make_ids(g, tok, 70), make_ids(g, tok, 11), make_ids(g, tok, 19)]},
               {"ids": [make_ids(g, tok, 3)]}]
    texts = [{"texts": ["query: how to encode text?", "passage: The quick brown fox jumps over the lazy dog.",
                        "Ünïcödé  café — naïve résumé 2024!"]}]
    return dict(name=name, family="xlm-roberta", config=c, g=g, dtype="BF16", tok=tok, recipe=recipe, st=st,
                save={}, batches=batches, texts=texts,
                notes="multilingual-e5-like XLMRobertaModel (model_type xlm-roberta) in BF16 storage (torch_dtype "
                      "bfloat16), no prefix, pooler.dense present but unused; RoBERTa positions (pad 1, offset 2), "
                      "max_position_embeddings 80, type_vocab_size 1, eps 1e-5; Unigram + Metaspace tokenizer.json "
                      "(<s> A </s>, pair <s> A </s> </s> B </s>, all type ids 0), E5 'query: '/'passage: ' texts; "
                      "modules.json mean -> Normalize. Expected values use the BF16-rounded weights.")


def case_distilbert_mlm():
    name = "distilbert-mlm"
    tok = tok_wordpiece()
    c = {"activation": "gelu", "architectures": ["DistilBertForMaskedLM"], "attention_dropout": 0.1, "dim": 32,
         "dropout": 0.1, "hidden_dim": 64, "initializer_range": 0.02, "max_position_embeddings": 128,
         "model_type": "distilbert", "n_heads": 4, "n_layers": 2, "pad_token_id": 0, "qa_dropout": 0.1,
         "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False, "tie_weights_": True, "torch_dtype": "float32",
         "transformers_version": "4.38.0", "vocab_size": len(tok["vocab"])}
    g = Gen(name)
    distilbert_params(g, c)
    H, V = 32, c["vocab_size"]
    extras = {"vocab_transform.weight": g.normal((H, H), 0.2), "vocab_transform.bias": g.normal((H,), 0.05),
              "vocab_layer_norm.weight": g.normal((H,), 0.1, 1.0), "vocab_layer_norm.bias": g.normal((H,), 0.05),
              "vocab_projector.bias": g.normal((V,), 0.05)}
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True,
              "source": "fixture default (no modules.json): mean + normalize"}
    batches = [{"ids": [make_ids(g, tok, 67), make_ids(g, tok, 8)]}, {"ids": [make_ids(g, tok, 4)]}]
    return dict(name=name, family="distilbert", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=None,
                save={"prefix": "distilbert.", "extras": extras}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="DistilBertForMaskedLM save: 'distilbert.' prefix plus vocab_transform/vocab_layer_norm/"
                      "vocab_projector.bias to ignore; config keys dim/n_layers/n_heads/hidden_dim/activation; "
                      "learned positions, no token types, LayerNorm eps hard-coded 1e-12 (no eps key in config); "
                      "q scaled by 1/sqrt(d) before q.k.")


def case_distilbert_sinusoidal():
    name = "distilbert-sinusoidal"
    tok = tok_wordpiece()
    c = {"activation": "relu", "architectures": ["DistilBertModel"], "attention_dropout": 0.1, "dim": 32,
         "dropout": 0.1, "hidden_dim": 64, "initializer_range": 0.02, "max_position_embeddings": 96,
         "model_type": "distilbert", "n_heads": 2, "n_layers": 2, "pad_token_id": 0, "qa_dropout": 0.1,
         "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": True, "tie_weights_": True, "torch_dtype": "float32",
         "transformers_version": "4.38.0", "vocab_size": len(tok["vocab"])}
    g = Gen(name)
    distilbert_params(g, c)
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True,
              "source": "fixture default (no modules.json): mean + normalize"}
    batches = [{"ids": [make_ids(g, tok, 90), make_ids(g, tok, 21), make_ids(g, tok, 2)]},
               {"ids": [make_ids(g, tok, 7)]}]
    return dict(name=name, family="distilbert", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=None,
                save={}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="DistilBertModel without prefix, sinusoidal_pos_embds true: the saved "
                      "embeddings.position_embeddings.weight [96,32] holds the float32 sinusoids (sin on even, cos on "
                      "odd columns of pos/10000^(2*(j//2)/dim)), exactly what HF writes and then uses; activation "
                      "relu, 2 heads of 16; a batch with a 2-token sequence ([CLS] [SEP]).")


NOMIC_AUTO_MAP = {"AutoConfig": "nomic-ai/nomic-bert-2048--configuration_hf_nomic_bert.NomicBertConfig",
                  "AutoModel": "nomic-ai/nomic-bert-2048--modeling_hf_nomic_bert.NomicBertModel",
                  "AutoModelForMaskedLM": "nomic-ai/nomic-bert-2048--modeling_hf_nomic_bert.NomicBertForPreTraining"}


def nomic_config(**kw):
    c = {"_name_or_path": "nomic-ai/nomic-embed-text-v1.5", "activation_function": "swiglu",
         "architectures": ["NomicBertModel"], "attn_pdrop": 0.0, "auto_map": NOMIC_AUTO_MAP, "bos_token_id": None,
         "causal": False, "dense_seq_output": True, "embd_pdrop": 0.0, "eos_token_id": None, "fused_bias_fc": True,
         "fused_dropout_add_ln": True, "initializer_range": 0.02, "layer_norm_epsilon": 1e-12,
         "max_trained_positions": 2048, "mlp_fc1_bias": False, "mlp_fc2_bias": False, "model_type": "nomic_bert",
         "n_embd": 32, "n_head": 4, "n_inner": 256, "n_layer": 2, "n_positions": 8192, "pad_vocab_size_multiple": 64,
         "parallel_block": False, "parallel_block_tied_norm": False, "prenorm": False, "qkv_proj_bias": False,
         "reorder_and_upcast_attn": False, "resid_pdrop": 0.0, "rotary_emb_base": 1000, "rotary_emb_fraction": 1.0,
         "rotary_emb_interleaved": False, "rotary_emb_scale_base": None, "rotary_scaling_factor": None,
         "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True, "summary_activation": None,
         "summary_first_dropout": 0.0, "summary_proj_to_labels": True, "summary_type": "cls_index",
         "summary_use_proj": True, "torch_dtype": "float32", "transformers_version": "4.37.2", "type_vocab_size": 2,
         "use_cache": True, "use_flash_attn": True, "use_rms_norm": False, "use_xentropy": True, "vocab_size": 0}
    c.update(kw)
    return c


def case_nomic():
    name = "nomic-embed"
    tok = tok_wordpiece(model_max_length=8192)
    c = nomic_config(vocab_size=pad_vocab(len(tok["vocab"]), 64))
    g = Gen(name)
    nomic_params(g, c)
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True, "source": "model card default: mean + normalize"}
    batches = [{"ids": [make_ids(g, tok, 75), make_ids(g, tok, 16), make_ids(g, tok, 6)]},
               {"ids": [make_ids(g, tok, 5)]}]
    texts = [{"texts": ["search_query: What is a transformer?",
                        "search_document: The quick brown fox jumps over the lazy dog.",
                        "clustering: Hello, world!"]}]
    return dict(name=name, family="nomic_bert", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=None,
                save={}, batches=batches, texts=texts, matryoshka=16,
                notes="nomic-embed-text-v1.5-like NomicBertModel (model_type nomic_bert, auto_map to "
                      "nomic-ai/nomic-bert-2048, GPT-2 style keys n_embd/n_head/n_layer/n_inner): no prefix, fused "
                      "attn.Wqkv rows [q; k; v] each head-major, RoPE half style (rotate_half) over the full head dim "
                      "with rotary_emb_base 1000, post-norm norm1/norm2, emb_ln, no biases anywhere "
                      "(qkv_proj_bias/mlp_fc1_bias/mlp_fc2_bias false), SwiGLU fc2(fc11(x) * silu(fc12(x))) with fc12 "
                      "the gate, token type embeddings (type 0), vocab_size padded to a multiple of 64 "
                      "(pad_vocab_size_multiple) above the tokenizer's size; rotary_scaling_factor null. "
                      "Matryoshka: mean -> layer_norm without affine (eps 1e-5) -> [:16] -> L2 normalise.")


def case_nomic_ntk():
    name = "nomic-bias-ntk"
    tok = tok_wordpiece(model_max_length=8192)
    V = pad_vocab(len(tok["vocab"]), 64)
    c = nomic_config(vocab_size=V, n_head=2, qkv_proj_bias=True, mlp_fc1_bias=True, mlp_fc2_bias=True,
                     rotary_scaling_factor=2, max_trained_positions=32, architectures=["NomicBertForPreTraining"],
                     _name_or_path="nomic-ai/nomic-bert-2048", torch_dtype="bfloat16")
    g = Gen(name)
    nomic_params(g, c)
    H = c["n_embd"]
    extras = {"cls.predictions.transform.dense.weight": g.normal((H, H), 0.2),
              "cls.predictions.transform.dense.bias": g.normal((H,), 0.05),
              "cls.predictions.transform.layer_norm.weight": g.normal((H,), 0.1, 1.0),
              "cls.predictions.transform.layer_norm.bias": g.normal((H,), 0.05),
              "cls.predictions.decoder.bias": g.normal((V,), 0.05)}
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True, "source": "model card default: mean + normalize"}
    batches = [{"ids": [make_ids(g, tok, 30), make_ids(g, tok, 12), make_ids(g, tok, 5)]},
               {"ids": [make_ids(g, tok, 80)]},
               {"ids": [make_ids(g, tok, 40)]}]
    texts = [{"texts": ["search_query: What is a transformer?", "classification: Hello, world!"]}]
    return dict(name=name, family="nomic_bert", config=c, g=g, dtype="BF16", tok=tok, recipe=recipe, st=None,
                save={"prefix": "bert.", "extras": extras}, batches=batches, texts=texts, matryoshka=16,
                ntk_batches={1, 2},
                notes="NomicBertForPreTraining save in BF16 (torch_dtype bfloat16): 'bert.' prefix plus cls.predictions.* to ignore; "
                      "qkv_proj_bias/mlp_fc1_bias/mlp_fc2_bias true (Wqkv, out_proj, fc11, fc12, fc2 all have "
                      "biases), 2 heads of 16; rotary_scaling_factor 2 with max_trained_positions 32, so "
                      "NomicBertDynamicNTKRotaryEmbedding rescales the base when the batch's padded length T > 32: "
                      "base' = 1000 * ((2*T/32) - 1) ** (d/(d-2)) with d = 16 (rotary dim). Batch 0 has T = 30 "
                      "(no rescale, padding-independent). Batches 1 (T = 80, base' = 1000*4^(16/14)) and 2 (T = 40) "
                      "are single sequences because with T > 32 the result depends on the padded length (and in HF "
                      "even on earlier calls: the inv_freq buffer and the cos/sin cache are kept); expected values are "
                      "those of a fresh model on exactly that batch.")


JINA_AUTO_MAP = {"AutoConfig": "jinaai/jina-bert-implementation--configuration_bert.JinaBertConfig",
                 "AutoModel": "jinaai/jina-bert-implementation--modeling_bert.JinaBertModel",
                 "AutoModelForMaskedLM": "jinaai/jina-bert-implementation--modeling_bert.JinaBertForMaskedLM",
                 "AutoModelForSequenceClassification":
                     "jinaai/jina-bert-implementation--modeling_bert.JinaBertForSequenceClassification"}


def jina_config(**kw):
    c = {"_name_or_path": "jinaai/jina-bert-implementation", "architectures": ["JinaBertForMaskedLM"],
         "attention_probs_dropout_prob": 0.0, "auto_map": JINA_AUTO_MAP, "classifier_dropout": None,
         "emb_pooler": "mean", "feed_forward_type": "geglu", "gradient_checkpointing": False, "hidden_act": "gelu",
         "hidden_dropout_prob": 0.1, "hidden_size": 48, "initializer_range": 0.02, "intermediate_size": 64,
         "layer_norm_eps": 1e-12, "max_position_embeddings": 8192, "model_max_length": 8192, "model_type": "bert",
         "num_attention_heads": 6, "num_hidden_layers": 2, "pad_token_id": 0, "position_embedding_type": "alibi",
         "torch_dtype": "float32", "transformers_version": "4.26.0", "type_vocab_size": 2, "use_cache": True,
         "vocab_size": 0}
    c.update(kw)
    return c


def case_jina():
    name = "jina-v2"
    tok = tok_wordpiece(model_max_length=8192)
    c = jina_config(vocab_size=pad_vocab(len(tok["vocab"]), 64), architectures=["JinaBertModel"])
    g = Gen(name)
    bert_params(g, c, jina=True, pooler=False)
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True, "source": "modules.json"}
    st = {"modules": st_modules(False, True), "sbert": {"max_seq_length": 8192, "do_lower_case": False},
          "pooling": pooling_config(48, ["mean"]), "version": st_version()}
    batches = [{"ids": [make_ids(g, tok, 77), make_ids(g, tok, 15), make_ids(g, tok, 24)]},
               {"ids": [make_ids(g, tok, 6)]}]
    return dict(name=name, family="jina-bert", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=st,
                save={}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="jina-embeddings-v2-like: model_type 'bert' but position_embedding_type 'alibi', "
                      "feed_forward_type 'geglu', auto_map/_name_or_path -> jinaai/jina-bert-implementation; no "
                      "position table; ALiBi bias -slope_h*|i-j| (symmetric) with the standard slopes for 6 heads "
                      "[2^-2, 2^-4, 2^-6, 2^-8, 2^-1, 2^-3]; post-norm; MLP "
                      "mlp.layernorm(x + mlp.wo(gelu_erf(g[:, :I]) * g[:, I:])) with g = mlp.gated_layers(x) (no "
                      "bias); no prefix; vocab padded to a multiple of 64; modules.json mean -> Normalize.")


def case_jina_mlm():
    name = "jina-v2-mlm"
    tok = tok_wordpiece(model_max_length=8192)
    V = pad_vocab(len(tok["vocab"]), 64)
    c = jina_config(vocab_size=V, num_attention_heads=12, intermediate_size=48, torch_dtype="float16")
    g = Gen(name)
    bert_params(g, c, jina=True, pooler=False)
    H = c["hidden_size"]
    extras = {"cls.predictions.bias": g.normal((V,), 0.05), "cls.predictions.transform.dense.weight": g.normal((H, H), 0.2),
              "cls.predictions.transform.dense.bias": g.normal((H,), 0.05),
              "cls.predictions.transform.LayerNorm.weight": g.normal((H,), 0.1, 1.0),
              "cls.predictions.transform.LayerNorm.bias": g.normal((H,), 0.05)}
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True, "source": "model card default: mean + normalize"}
    batches = [{"ids": [make_ids(g, tok, 72), make_ids(g, tok, 18)]}, {"ids": [make_ids(g, tok, 6)]}]
    return dict(name=name, family="jina-bert", config=c, g=g, dtype="F16", tok=tok, recipe=recipe, st=None,
                save={"prefix": "bert.", "extras": extras}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="JinaBertForMaskedLM save in F16 (torch_dtype float16): 'bert.' prefix plus cls.predictions.* to ignore; 12 heads of 4 "
                      "(slopes 2^-1..2^-8, 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5), intermediate 48; no modules.json "
                      "(jina model card: mean pooling, then normalise).")


def modernbert_old_config(tok, **kw):
    ids = tok["ids"]
    c = {"architectures": ["ModernBertModel"], "attention_bias": False, "attention_dropout": 0.0,
         "bos_token_id": ids["[CLS]"], "classifier_activation": "gelu", "classifier_bias": False,
         "classifier_dropout": 0.0, "classifier_pooling": "mean", "cls_token_id": ids["[CLS]"], "decoder_bias": True,
         "deterministic_flash_attn": False, "embedding_dropout": 0.0, "eos_token_id": ids["[SEP]"],
         "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0, "gradient_checkpointing": False,
         "hidden_activation": "gelu", "hidden_size": 32, "initializer_cutoff_factor": 2.0, "initializer_range": 0.02,
         "intermediate_size": 48, "local_attention": 16, "local_rope_theta": 10000.0,
         "max_position_embeddings": 8192, "mlp_bias": False, "mlp_dropout": 0.0, "model_type": "modernbert",
         "norm_bias": False, "norm_eps": 1e-05, "num_attention_heads": 4, "num_hidden_layers": 4,
         "pad_token_id": ids["[PAD]"], "position_embedding_type": "absolute", "reference_compile": True,
         "sep_token_id": ids["[SEP]"], "sparse_pred_ignore_index": -100, "sparse_prediction": False,
         "torch_dtype": "float32", "transformers_version": "4.48.0",
         "vocab_size": pad_vocab(len(tok["vocab"]), 64)}
    c.update(kw)
    return c


def case_modernbert():
    name = "modernbert-embed"
    tok = tok_modernbert()
    c = modernbert_old_config(tok)
    g = Gen(name)
    modernbert_params(g, c)
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True, "source": "modules.json"}
    st = {"modules": st_modules(False, True), "sbert": {"max_seq_length": 8192, "do_lower_case": False},
          "pooling": pooling_config(32, ["mean"]), "version": st_version()}
    batches = [{"ids": [make_ids(g, tok, 80), make_ids(g, tok, 19), make_ids(g, tok, 9)]},
               {"ids": [make_ids(g, tok, 5)]}]
    return dict(name=name, family="modernbert", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=st,
                save={}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="ModernBertModel (sentence-transformers folder, no prefix), older config keys "
                      "(global_rope_theta 160000, local_rope_theta 10000, global_attn_every_n_layers 3): 4 layers = "
                      "global, local, local, global; local layers attend only where |i-j| <= local_attention//2 = 8; "
                      "embeddings tok_embeddings -> norm (LayerNorm without bias), pre-norm, layer 0 without attn_norm, "
                      "fused Wqkv viewed (3, heads, d), GeGLU Wo(gelu(Wi_first_half) * Wi_second_half), final_norm, "
                      "no biases, RoPE half style; byte-level BPE with [CLS] $A [SEP] template and specials at the end "
                      "of the vocab, vocab_size padded to a multiple of 64.")


def case_modernbert_mlm():
    name = "modernbert-mlm"
    tok = tok_modernbert()
    old = modernbert_old_config(tok)
    for k in ("global_rope_theta", "local_rope_theta", "reference_compile", "torch_dtype",
              "position_embedding_type", "gradient_checkpointing"):
        old.pop(k)
    c = dict(old)
    c.update({"architectures": ["ModernBertForMaskedLM"], "num_hidden_layers": 3, "global_attn_every_n_layers": 2,
              "local_attention": 20, "intermediate_size": 40, "dtype": "float32", "transformers_version": "5.0.0",
              "layer_types": ["full_attention", "sliding_attention", "full_attention"],
              "rope_parameters": {"full_attention": {"rope_theta": 40000.0, "rope_type": "default"},
                                  "sliding_attention": {"rope_theta": 2500.0, "rope_type": "default"}},
              "tie_word_embeddings": True})
    g = Gen(name)
    modernbert_params(g, c)
    H, V = c["hidden_size"], c["vocab_size"]
    extras = {"head.dense.weight": g.normal((H, H), 0.2), "head.norm.weight": g.normal((H,), 0.1, 1.0),
              "decoder.bias": g.normal((V,), 0.05)}
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True,
              "source": "fixture default (no modules.json): mean + normalize"}
    batches = [{"ids": [make_ids(g, tok, 70), make_ids(g, tok, 23)]}, {"ids": [make_ids(g, tok, 4)]}]
    return dict(name=name, family="modernbert", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=None,
                save={"prefix": "model.", "extras": extras}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="ModernBertForMaskedLM save: 'model.' prefix plus head.dense.weight, head.norm.weight, "
                      "decoder.bias to ignore (decoder.weight tied, not saved); newer config style (transformers v5): "
                      "layer_types + rope_parameters {full_attention: theta 40000, sliding_attention: theta 2500}, no "
                      "global/local_rope_theta keys, 'dtype' instead of 'torch_dtype'; global_attn_every_n_layers 2 -> "
                      "layers global, local, global; local_attention 20 (|i-j| <= 10).")


def t5_config(tok, **kw):
    c = {"architectures": ["T5EncoderModel"], "classifier_dropout": 0.0, "d_ff": 64, "d_kv": 12, "d_model": 32,
         "decoder_start_token_id": 0, "dense_act_fn": "relu", "dropout_rate": 0.1, "eos_token_id": 1,
         "feed_forward_proj": "relu", "initializer_factor": 1.0, "is_encoder_decoder": True, "is_gated_act": False,
         "layer_norm_epsilon": 1e-06, "model_type": "t5", "num_decoder_layers": 2, "num_heads": 4, "num_layers": 2,
         "pad_token_id": 0, "relative_attention_max_distance": 20, "relative_attention_num_buckets": 32,
         "tie_word_embeddings": True, "torch_dtype": "float32", "transformers_version": "4.41.2", "use_cache": True,
         "vocab_size": pad_vocab(len(tok["vocab"]), 16)}
    c.update(kw)
    return c


def case_t5():
    name = "t5-relu"
    tok = tok_t5()
    c = t5_config(tok)
    g = Gen(name)
    t5_params(g, c, "shared.weight")
    recipe = {"pooling": ["mean"], "dense": None, "normalize": True, "source": "fixture default (T5): mean + normalize"}
    batches = [{"ids": [make_ids(g, tok, 130), make_ids(g, tok, 17), make_ids(g, tok, 7)]},
               {"ids": [make_ids(g, tok, 5)]}]
    return dict(name=name, family="t5", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=None,
                save={}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="T5EncoderModel save with shared.weight only (encoder.embed_tokens tied, not saved): RMSNorm "
                      "without mean/bias (layer_norm_epsilon 1e-6), pre-norm + encoder.final_layer_norm, no 1/sqrt(d_kv), "
                      "no biases, num_heads*d_kv = 48 != d_model 32, feed_forward_proj relu; relative position bias "
                      "table only in block 0 (shared by both blocks), bidirectional buckets with "
                      "relative_attention_num_buckets 32 and relative_attention_max_distance 20 (not the default 128), "
                      "bucket of rel = key - query; a 130-token sequence so every log bucket and the clamp are used; "
                      "Unigram tokenizer with the T5 post-processor ($A </s>).")


def case_sentence_t5():
    name = "sentence-t5"
    tok = tok_t5()
    c = t5_config(tok, d_kv=8, num_heads=6, d_ff=48, dense_act_fn="gelu_new", feed_forward_proj="gated-gelu",
                  is_gated_act=True, relative_attention_num_buckets=16, relative_attention_max_distance=24,
                  layer_norm_epsilon=1e-06, transformers_version="4.7.0.dev0")
    g = Gen(name)
    t5_params(g, c, "encoder.embed_tokens.weight")
    dense = {"in_features": 32, "out_features": 24, "bias": False,
             "activation_function": "torch.nn.modules.linear.Identity"}
    Pd = {"linear.weight": g.normal((24, 32), 1.0 / math.sqrt(32))}
    recipe = {"pooling": ["mean"], "dense": dense, "normalize": True, "source": "modules.json"}
    st = {"modules": st_modules(True, True), "sbert": {"max_seq_length": 256, "do_lower_case": False},
          "pooling": pooling_config(32, ["mean"]), "dense": dense, "dense_params": Pd, "version": st_version()}
    batches = [{"ids": [make_ids(g, tok, 75), make_ids(g, tok, 12)]}, {"ids": [make_ids(g, tok, 4)]}]
    return dict(name=name, family="t5", config=c, g=g, dtype="F32", tok=tok, recipe=recipe, st=st,
                save={}, batches=batches, texts=[{"texts": EN_TEXTS}],
                notes="sentence-t5 style folder: T5EncoderModel weights with encoder.embed_tokens.weight only (no "
                      "shared.weight); feed_forward_proj gated-gelu = wo(gelu_new(wi_0 x) * wi_1 x) (tanh GELU even "
                      "though the name says gelu); 6 heads of 8 (inner 48 != d_model 32), 16 buckets, max_distance 24; "
                      "modules.json mean -> 2_Dense 32->24 bias false, torch.nn.modules.linear.Identity -> Normalize.")


CASES = [case_bert_minilm, case_bert_bge_mlm, case_bert_dense_pairs, case_bert_pytorch_bin, case_roberta, case_xlmr,
         case_distilbert_mlm, case_distilbert_sinusoidal, case_nomic, case_nomic_ntk, case_jina, case_jina_mlm,
         case_modernbert, case_modernbert_mlm, case_t5, case_sentence_t5]


# ----------------------------------------------------------------------------------------------
# writing a case
# ----------------------------------------------------------------------------------------------

def save_weights(case, folder):
    sv, dt = case["save"], case["dtype"]
    prefix, rename = sv.get("prefix", ""), sv.get("rename", lambda k: k)
    entries = [(rename(prefix + k), v, dt) for k, v in case["P"].items()]
    entries += [(k, storage_round(v, dt), dt) for k, v in sv.get("extras", {}).items()]
    entries += [(k, v, "I64") for k, v in sv.get("i64", {}).items()]
    names = [e[0] for e in entries]
    assert len(set(names)) == len(names)
    if sv.get("bin"):
        sd = {n: (t.to(torch.float32) if d != "I64" else t) for n, t, d in sorted(entries, key=lambda e: e[0])}
        torch.save(sd, os.path.join(folder, "pytorch_model.bin"))
        back = torch.load(os.path.join(folder, "pytorch_model.bin"))
        check(set(back) == set(sd) and all(torch.equal(back[k], sd[k]) for k in sd), f"{case['name']}: .bin round trip")
        return
    files = {}
    if sv.get("shards"):
        n = sv["shards"]
        ordered = sorted(entries, key=lambda e: e[0])
        sizes = [len(tensor_bytes(t, d)) for _, t, d in ordered]
        total, acc, shard = sum(sizes), 0, 0
        groups = [[] for _ in range(n)]
        for e, sz in zip(ordered, sizes):
            if acc >= total * (shard + 1) / n and shard < n - 1:
                shard += 1
            groups[shard].append(e)
            acc += sz
        weight_map = {}
        for i, grp in enumerate(groups):
            fn = f"model-{i + 1:05d}-of-{n:05d}.safetensors"
            write_safetensors(os.path.join(folder, fn), grp, {"format": "pt"})
            files[fn] = grp
            for e in grp:
                weight_map[e[0]] = fn
        write_json(os.path.join(folder, "model.safetensors.index.json"),
                   {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    else:
        write_safetensors(os.path.join(folder, "model.safetensors"), entries, {"format": "pt"})
        files["model.safetensors"] = entries
    # read everything back with an independent reader and compare bit for bit
    for fn, grp in files.items():
        meta, got = read_safetensors(os.path.join(folder, fn))
        check(meta == {"format": "pt"} and set(got) == {e[0] for e in grp}, f"{case['name']}/{fn}: header")
        for name, t, d in grp:
            gd, gt = got[name]
            ref = t if d == "I64" else storage_round(t, d)
            check(gd == d and list(gt.shape) == list(t.shape) and torch.equal(gt, ref.to(gt.dtype)),
                  f"{case['name']}/{fn}: {name} round trip")


def write_tokenizer(case, folder):
    tok = case["tok"]
    if case["save"].get("bin"):  # the pytorch_model.bin folder holds config.json + weights only
        return
    write_json(os.path.join(folder, "tokenizer.json"), tok["json"])
    write_json(os.path.join(folder, "tokenizer_config.json"), tok["config"])
    write_json(os.path.join(folder, "special_tokens_map.json"), tok["map"])


def write_st(case, folder):
    st = case["st"]
    if not st:
        return
    write_json(os.path.join(folder, "modules.json"), st["modules"])
    write_json(os.path.join(folder, "sentence_bert_config.json"), st["sbert"])
    write_json(os.path.join(folder, "config_sentence_transformers.json"), st["version"])
    write_json(os.path.join(folder, "1_Pooling", "config.json"), st["pooling"])
    if st.get("dense"):
        write_json(os.path.join(folder, "2_Dense", "config.json"), st["dense"])
        st["dense_params"] = {k: storage_round(v, "F32") for k, v in st["dense_params"].items()}
        write_safetensors(os.path.join(folder, "2_Dense", "model.safetensors"),
                          [(k, v, "F32") for k, v in st["dense_params"].items()], {"format": "pt"})


def layer_check_with_torch(case, ids_list, type_list=None):
    """BERT / DistilBERT layers against torch.nn.TransformerEncoderLayer(norm_first=False) on the same weights."""
    P, c, fam = case["P"], case["config"], case["family"]
    lengths = [len(s) for s in ids_list]
    T = max(lengths)
    ids = torch.tensor([s + [case["pad_id"]] * (T - len(s)) for s in ids_list])
    mask = key_mask(lengths, T)
    if fam == "bert":
        H, nh, I, L = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"], c["num_hidden_layers"]
        eps, actname = c["layer_norm_eps"], c["hidden_act"]
        tt = torch.zeros_like(ids) if type_list is None else torch.tensor([s + [0] * (T - len(s)) for s in type_list])
        x = (P["embeddings.word_embeddings.weight"][ids] + P["embeddings.token_type_embeddings.weight"][tt]
             + P["embeddings.position_embeddings.weight"][torch.arange(T)][None])
        x = F.layer_norm(x, (H,), P["embeddings.LayerNorm.weight"], P["embeddings.LayerNorm.bias"], eps)
        names = lambda p: dict(q=p + "attention.self.query", k=p + "attention.self.key", v=p + "attention.self.value",
                               o=p + "attention.output.dense", n1=p + "attention.output.LayerNorm",
                               f1=p + "intermediate.dense", f2=p + "output.dense", n2=p + "output.LayerNorm")
        pre = lambda l: f"encoder.layer.{l}."
    else:
        H, nh, I, L = c["dim"], c["n_heads"], c["hidden_dim"], c["n_layers"]
        eps, actname = 1e-12, c["activation"]
        x = P["embeddings.word_embeddings.weight"][ids] + P["embeddings.position_embeddings.weight"][torch.arange(T)][None]
        x = F.layer_norm(x, (H,), P["embeddings.LayerNorm.weight"], P["embeddings.LayerNorm.bias"], eps)
        names = lambda p: dict(q=p + "attention.q_lin", k=p + "attention.k_lin", v=p + "attention.v_lin",
                               o=p + "attention.out_lin", n1=p + "sa_layer_norm", f1=p + "ffn.lin1", f2=p + "ffn.lin2",
                               n2=p + "output_layer_norm")
        pre = lambda l: f"transformer.layer.{l}."
    act = {"gelu": F.gelu, "relu": F.relu, "gelu_new": (lambda t: F.gelu(t, approximate="tanh"))}[actname]
    with torch.enable_grad():  # keeps torch off its fused fast path
        for l in range(L):
            n = names(pre(l))
            layer = torch.nn.TransformerEncoderLayer(H, nh, I, dropout=0.0, activation=act, layer_norm_eps=eps,
                                                     batch_first=True, norm_first=False, dtype=D)
            sd = {"self_attn.in_proj_weight": torch.cat([P[n["q"] + ".weight"], P[n["k"] + ".weight"], P[n["v"] + ".weight"]]),
                  "self_attn.in_proj_bias": torch.cat([P[n["q"] + ".bias"], P[n["k"] + ".bias"], P[n["v"] + ".bias"]]),
                  "self_attn.out_proj.weight": P[n["o"] + ".weight"], "self_attn.out_proj.bias": P[n["o"] + ".bias"],
                  "linear1.weight": P[n["f1"] + ".weight"], "linear1.bias": P[n["f1"] + ".bias"],
                  "linear2.weight": P[n["f2"] + ".weight"], "linear2.bias": P[n["f2"] + ".bias"],
                  "norm1.weight": P[n["n1"] + ".weight"], "norm1.bias": P[n["n1"] + ".bias"],
                  "norm2.weight": P[n["n2"] + ".weight"], "norm2.bias": P[n["n2"] + ".bias"]}
            layer.load_state_dict(sd)
            layer.eval()
            x = layer(x, src_key_padding_mask=~mask)
    ref = x.detach() * mask[..., None].to(D)
    mine = run_forward(case, ids_list, type_list)
    close(mine, ref, 1e-10, f"{case['name']}: forward == torch.nn.TransformerEncoderLayer stack")


def matryoshka(hidden, lengths, dim):
    mean = pool_all(hidden, lengths)["mean"]
    x = F.layer_norm(mean, (mean.shape[-1],), eps=1e-5)  # no affine, as the nomic v1.5 model card
    return l2_normalize(x[:, :dim])


def compute_expected(case, rust):
    name, fam, recipe = case["name"], case["family"], case["recipe"]
    Pd = case["st"]["dense_params"] if case["st"] and case["st"].get("dense") else None
    out_batches = []
    ntk = case.get("ntk_batches", set())
    for bi, b in enumerate(case["batches"]):
        ids, types = b["ids"], b.get("typeIds")
        lengths = [len(s) for s in ids]
        assert all(x < case["vocab_limit"] for s in ids for x in s)
        hidden = run_forward(case, ids, types)
        # padded batch == every sequence on its own (key-only mask, right padding)
        if bi not in ntk:
            for i, s in enumerate(ids):
                alone = run_forward(case, [s], None if types is None else [types[i]])
                close(hidden[i, :len(s)], alone[0], 1e-10, f"{name}: batch {bi} seq {i} padded == alone")
        pooled = pool_all(hidden, lengths)
        emb = apply_recipe(pooled, recipe, Pd)
        entry = {"ids": ids}
        if types is not None:
            entry["typeIds"] = types
        entry.update({"lengths": lengths, "hidden": tensor_json(hidden),
                      "pooled": {k: [fmt(r) for r in v.tolist()] for k, v in pooled.items()},
                      "embeddings": tensor_json(emb)})
        out_batches.append(entry)
        if bi == 0:
            longest = max(ids, key=len)
            k = ids.index(longest)
            tl = None if types is None else [types[k]]
            close(run_forward(case, [longest], tl, impl="loop"), run_forward(case, [longest], tl), 1e-10,
                  f"{name}: vectorised masks/biases == per-element loop attention (len {len(longest)})")
            if fam in ("bert", "distilbert") and case["config"].get("position_embedding_type", "absolute") == "absolute":
                layer_check_with_torch(case, ids, types)
            if case.get("matryoshka"):
                mat = matryoshka(hidden, lengths, case["matryoshka"])
                case["_matryoshka"] = {"dimensions": case["matryoshka"], "batchIndex": 0, "shape": list(mat.shape),
                                       "data": fmt(mat.reshape(-1).tolist())}
    out_texts = []
    for grp, res in zip(case["texts"], rust):
        encs = res["texts"] + res["pairs"]
        ids = [e["ids"] for e in encs]
        types = [e["typeIds"] for e in encs]
        assert all(x < case["vocab_limit"] for s in ids for x in s)
        use_types = types if any(any(t) for t in types) else None
        hidden = run_forward(case, ids, use_types)
        emb = apply_recipe(pool_all(hidden, [len(s) for s in ids]), recipe, Pd)
        e = dict(grp)
        e.update({"ids": ids, "typeIds": types, "tokens": [x["tokens"] for x in encs], "embeddings": tensor_json(emb)})
        out_texts.append(e)
    return out_batches, out_texts


def write_expected(path, obj):
    lines = ["{"]
    items = list(obj.items())
    for n, (k, v) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        if isinstance(v, list) and v and isinstance(v[0], dict):
            inner = ",\n".join("    " + json.dumps(x, separators=(",", ":"), ensure_ascii=False) for x in v)
            lines.append(f"  {json.dumps(k)}: [\n{inner}\n  ]{comma}")
        else:
            lines.append(f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'), ensure_ascii=False)}{comma}")
    lines.append("}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def emit(case):
    name = case["name"]
    folder = os.path.join(OUT, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    case["P"] = {k: storage_round(v, case["dtype"]) for k, v in case["g"].P.items()}
    c = case["config"]
    case["pad_id"] = case["tok"]["seq"]["pad"]
    vs = c["vocab_size"]
    case["vocab_limit"] = vs
    write_json(os.path.join(folder, "config.json"), c, sort_keys=True)
    save_weights(case, folder)
    write_tokenizer(case, folder)
    write_st(case, folder)
    # every tokenizer.json must load in the Rust tokenizers; vocabulary must fit the embedding table
    jobs = [{"tokenizer": os.path.join(folder, "tokenizer.json"), "texts": t.get("texts", []),
             "pairs": t.get("pairs", [])} for t in case.get("texts", [])] or \
        [{"tokenizer": os.path.join(folder, "tokenizer.json"), "texts": ["Hello, world!"]}]
    if case["save"].get("bin"):
        return None
    rust = run_rust(jobs)
    check(all(r["vocabSize"] == len(case["tok"]["vocab"]) for r in rust["results"]),
          f"{name}: Rust loads tokenizer.json, vocab size {len(case['tok']['vocab'])}")
    check(len(case["tok"]["vocab"]) <= vs, f"{name}: tokenizer vocab fits config.vocab_size {vs}")
    if case["tok"]["seq"]["kind"] == "wordpiece":
        for t, r in zip(case.get("texts", []), rust["results"]):
            for text, enc in zip(t.get("texts", []), r["texts"]):
                check(py_wordpiece(text, case["tok"]["vocab"]) == enc["ids"],
                      f"{name}: Python WordPiece == Rust for {text!r}")
    if case.get("no_expected"):
        return rust["tokenizersVersion"]
    batches, texts = compute_expected(case, rust["results"])
    obj = {"case": name, "family": case["family"], "folder": name, "modelType": c["model_type"],
           "storageDtype": case["dtype"], "notes": case["notes"], "embeddingRecipe": case["recipe"],
           "generator": {"script": "tests/reference/make_pretrained.py", "torch": torch.__version__,
                         "tokenizers": rust["tokenizersVersion"]},
           "batches": batches, "texts": texts}
    if "_matryoshka" in case:
        obj["matryoshka"] = case["_matryoshka"]
    write_expected(os.path.join(EXPECTED, name + ".json"), obj)
    return rust["tokenizersVersion"]


# ----------------------------------------------------------------------------------------------
# stand-alone cross-checks of the building blocks
# ----------------------------------------------------------------------------------------------

def unit_checks():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 7, 16, generator=g, dtype=D) * 3
    w, b = torch.randn(16, generator=g, dtype=D), torch.randn(16, generator=g, dtype=D)
    close(layer_norm(x, w, b, 1e-5), F.layer_norm(x, (16,), w, b, 1e-5), 1e-12, "layer_norm == F.layer_norm")
    close(gelu_erf(x), F.gelu(x), 1e-12, "erf GELU == F.gelu")
    close(gelu_tanh(x), F.gelu(x, approximate="tanh"), 1e-12, "tanh GELU == F.gelu(approximate='tanh')")
    close(silu(x), F.silu(x), 1e-12, "silu == F.silu")
    # RoPE half style == complex rotation of the pairs (i, i + d/2)
    T, dim, base = 50, 16, 1000.0
    q = torch.randn(2, 3, T, dim, generator=g, dtype=D)
    cos, sin = rope_cos_sin(T, dim, base)
    inv = base ** (-torch.arange(0, dim, 2, dtype=D) / dim)
    ang = torch.arange(T, dtype=D)[:, None] * inv[None]
    z = torch.complex(q[..., :dim // 2], q[..., dim // 2:]) * torch.polar(torch.ones_like(ang), ang)
    close(apply_rope(q, cos, sin), torch.cat([z.real, z.imag], -1), 1e-12, "RoPE rotate_half == complex rotation")
    # ALiBi slopes
    close(alibi_slopes(12), [2.0 ** -k for k in range(1, 9)] + [2.0 ** -0.5, 2.0 ** -1.5, 2.0 ** -2.5, 2.0 ** -3.5],
          1e-15, "ALiBi slopes, 12 heads == 2^-1..2^-8, 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5")
    close(alibi_slopes(6), [2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8, 2.0 ** -1, 2.0 ** -3], 1e-15,
          "ALiBi slopes, 6 heads == 2^-2, 2^-4, 2^-6, 2^-8, 2^-1, 2^-3")
    close(alibi_slopes(8), [2.0 ** -k for k in range(1, 9)], 1e-15, "ALiBi slopes, 8 heads == 2^-1..2^-8")
    # T5 buckets: HF float32 computation == the boundary table of hf-encoders.md (32 buckets, max distance 128)
    table = {**{n: n for n in range(8)}, **{n: 8 for n in range(8, 12)}, **{n: 9 for n in range(12, 16)},
             **{n: 10 for n in range(16, 23)}, **{n: 11 for n in range(23, 32)}, **{n: 12 for n in range(32, 46)},
             **{n: 13 for n in range(46, 64)}, **{n: 14 for n in range(64, 91)}, **{n: 15 for n in range(91, 600)}}
    rel = torch.arange(-599, 600)
    got = t5_bucket(rel, 32, 128)
    want = torch.tensor([table[abs(int(r))] + (16 if r > 0 else 0) for r in rel])
    check(torch.equal(got, want), "T5 buckets (32, 128) == boundary table n 8-11:8 ... >=91:15, +16 for key after query")
    for nb, md in ((32, 128), (32, 20), (16, 24)):
        rel = torch.arange(-300, 301)
        b32 = t5_bucket(rel, nb, md, torch.float32)
        b64 = t5_bucket(rel, nb, md, torch.float64)
        bsc = torch.tensor([t5_bucket_scalar(int(r), nb, md) for r in rel])
        check(torch.equal(b32, b64) and torch.equal(b32, bsc),
              f"T5 buckets ({nb}, {md}): float32 (HF) == float64 == scalar for |rel| <= 300")
    # nomic dynamic NTK base formula on the values used by nomic-bias-ntk
    c = {"rotary_emb_base": 1000, "rotary_scaling_factor": 2, "max_trained_positions": 32}
    close(nomic_rotary_base(c, 80, 16), 1000 * 4 ** (16 / 14), 1e-9, "nomic NTK base(T=80) == 1000*4^(16/14)")
    close(nomic_rotary_base(c, 32, 16), 1000.0, 0.0, "nomic NTK base unchanged at T == max_trained_positions")


def trap_checks(cases):
    """Each known trap must move the expected values well beyond float32 noise, else the fixture could not
    catch it.  Mutations are made on copies of the configs/weights; the forwards are unchanged."""
    def run(case, bi, cfg=None, P=None, types=True):
        m = dict(case)
        m["config"] = cfg if cfg is not None else case["config"]
        m["P"] = P if P is not None else case["P"]
        b = case["batches"][bi]
        return run_forward(m, b["ids"], b.get("typeIds") if types else None)

    def trap(name, case, bi=0, cfg=None, P=None, types=True, min_diff=3e-4):
        diff = float((run(case, bi, cfg, P, types) - run(case, bi)).abs().max())
        check(diff > min_diff, f"trap detectable: {case['name']}: {name}", f"max|diff|={diff:.3g}")

    def cfg_with(case, **kw):
        c = json.loads(json.dumps(case["config"]))
        c.update(kw)
        return c

    trap("tanh GELU instead of erf (hidden_act gelu)", cases["bert-minilm"], cfg=cfg_with(cases["bert-minilm"], hidden_act="gelu_new"))
    trap("erf GELU instead of tanh (hidden_act gelu_new)", cases["bert-dense-pairs"], cfg=cfg_with(cases["bert-dense-pairs"], hidden_act="gelu"))
    trap("token type ids ignored", cases["bert-dense-pairs"], types=False)
    trap("positions from 0 instead of pad+1", cases["roberta-bpe"], cfg=cfg_with(cases["roberta-bpe"], model_type="bert"))
    trap("activation relu read as gelu", cases["distilbert-sinusoidal"],
         cfg=cfg_with(cases["distilbert-sinusoidal"], activation="gelu"))
    c = cases["distilbert-sinusoidal"]
    P = dict(c["P"])
    tab = P["embeddings.position_embeddings.weight"]
    P["embeddings.position_embeddings.weight"] = torch.cat([tab[:, 0::2], tab[:, 1::2]], dim=1)
    trap("sinusoids as [sin | cos] halves instead of interleaved columns", c, P=P)
    # wrong ALiBi slope order == the right slopes on permuted heads: reverse the heads of q, k, v, out
    c = cases["jina-v2"]
    nh, H = c["config"]["num_attention_heads"], c["config"]["hidden_size"]
    d = H // nh
    perm = torch.arange(H).view(nh, d).flip(0).reshape(-1)
    P = dict(c["P"])
    for l in range(c["config"]["num_hidden_layers"]):
        p = f"encoder.layer.{l}.attention."
        for n in ("self.query", "self.key", "self.value"):
            P[p + n + ".weight"] = P[p + n + ".weight"][perm]
            P[p + n + ".bias"] = P[p + n + ".bias"][perm]
        P[p + "output.dense.weight"] = P[p + "output.dense.weight"][:, perm]
    trap("ALiBi slopes in reversed head order", c, P=P)
    c = cases["jina-v2"]
    P = dict(c["P"])
    for l in range(c["config"]["num_hidden_layers"]):
        w = P[f"encoder.layer.{l}.mlp.gated_layers.weight"]
        I = w.shape[0] // 2
        P[f"encoder.layer.{l}.mlp.gated_layers.weight"] = torch.cat([w[I:], w[:I]])
    trap("GLU: second half activated instead of the first", c, P=P)
    c = cases["nomic-embed"]
    trap("rotary_emb_base 10000 instead of 1000", c, cfg=cfg_with(c, rotary_emb_base=10000))
    P = dict(c["P"])
    for k in [k for k in P if ".fc11." in k]:
        P[k], P[k.replace(".fc11.", ".fc12.")] = P[k.replace(".fc11.", ".fc12.")], P[k]
    trap("SwiGLU gate on fc11 instead of fc12", c, P=P)
    c = cases["nomic-bias-ntk"]
    trap("no dynamic NTK rescale at T=80", c, bi=1, cfg=cfg_with(c, rotary_scaling_factor=None))
    c = cases["modernbert-embed"]
    trap("sliding window ignored", c, cfg=cfg_with(c, local_attention=1 << 20))
    trap("global theta on local layers", c, cfg=cfg_with(c, local_rope_theta=160000.0))
    c = cases["modernbert-mlm"]
    cf = cfg_with(c)
    cf.pop("rope_parameters")
    trap("rope_parameters ignored (default thetas 160000/10000)", c, cfg=cf)
    P = dict(c["P"])
    for l in range(c["config"]["num_hidden_layers"]):
        w = P[f"layers.{l}.mlp.Wi.weight"]
        I = w.shape[0] // 2
        P[f"layers.{l}.mlp.Wi.weight"] = torch.cat([w[I:], w[:I]])
    trap("GeGLU: second half activated instead of the first", c, P=P)
    c = cases["t5-relu"]
    trap("relative_attention_max_distance 128 (default) instead of 20", c, cfg=cfg_with(c, relative_attention_max_distance=128))
    c = cases["sentence-t5"]
    ref, old = run(c, 0), ACT["gelu_new"]
    try:
        ACT["gelu_new"] = gelu_erf
        diff = float((run(c, 0) - ref).abs().max())
    finally:
        ACT["gelu_new"] = old
    check(diff > 3e-4, "trap detectable: sentence-t5: gated-gelu with erf GELU instead of gelu_new", f"max|diff|={diff:.3g}")
    c = cases["bert-dense-pairs"]
    b = c["batches"][0]
    pooled = pool_all(run_forward(c, b["ids"], b["typeIds"]), b["lengths"] if "lengths" in b else [len(x) for x in b["ids"]])
    right = apply_recipe(pooled, c["recipe"], c["st"]["dense_params"])
    wrong = apply_recipe(pooled, dict(c["recipe"], pooling=["cls", "mean", "max"]), c["st"]["dense_params"])
    diff = float((right - wrong).abs().max())
    check(diff > 1e-2, "trap detectable: bert-dense-pairs: pooling concatenated in config-key order", f"max|diff|={diff:.3g}")


def nomic_padding_dependence(case):
    """Documents that with rotary_scaling_factor the output depends on the padded length."""
    seq = case["batches"][0]["ids"][1]
    alone = run_forward(case, [seq])[0]
    padded = run_forward(case, [seq, case["batches"][1]["ids"][0]])[0, :len(seq)]
    diff = float((alone - padded).abs().max())
    check(diff > 1e-3, f"{case['name']}: a {len(seq)}-token sequence padded to T=80 differs from alone",
          f"max|diff|={diff:.3g}")
    return diff


def main():
    os.makedirs(EXPECTED, exist_ok=True)
    for f in os.listdir(EXPECTED):
        if f.endswith(".json"):
            os.remove(os.path.join(EXPECTED, f))
    unit_checks()
    version = None
    built = {}
    for make in CASES:
        case = make()
        version = emit(case) or version
        built[case["name"]] = case
        if case["name"] == "nomic-bias-ntk":
            nomic_padding_dependence(case)
        print(f"  {case['name']}: ok", file=sys.stderr)
    trap_checks(built)
    total = 0
    for dp, _, fs in os.walk(OUT):
        total += sum(os.path.getsize(os.path.join(dp, f)) for f in fs)
    for n, d in CHECKS:
        print(f"check ok: {n} {d}".rstrip())
    print(f"{len(CHECKS)} checks passed; tokenizers {version}; tests/pretrained is {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
