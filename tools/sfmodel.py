"""swapformer's forward pass in PyTorch, batched, for training and for golden logits.

The math is the README's (and tests/reference/make_fixtures.py's "float64
formulas", reference B), written with batched tensor ops so that autograd can
train it: float32 for training, float64 for the golden logits.  Sequences in a
batch all have the same length (no padding): positions are 0..T-1.

Parameters are a dict keyed by swapformer's tensor names ("embed.tokens",
"layers.0.attn.q.weight", ..., "head.weight"), Linear weights [out, in], so a
trained model is exported by writing the dict as it is.
"""

import json
import math
import struct

import numpy as np
import torch
import torch.nn.functional as F


# --------------------------------------------------------------------------
# config
# --------------------------------------------------------------------------

def resolve(cfg):
    """The documented defaults filled in (a copy)."""
    r = dict(cfg)
    r.setdefault("maxLen", 512)
    r.setdefault("eps", 1e-5)
    r.setdefault("scaleEmbedding", False)
    r.setdefault("outputHead", False)
    r.setdefault("finalNorm", r["normPlacement"] == "pre")
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
# parameters
# --------------------------------------------------------------------------

def param_shapes(cfg, biases=True):
    """Ordered (name, shape) of every tensor the config has (the README's table)."""
    d, ff, V = cfg["dModel"], cfg["ffDim"], cfg["vocabSize"]
    out = [("embed.tokens", (V, d))]
    if cfg["position"] == "learned":
        out.append(("embed.positions", (cfg["maxLen"], d)))

    def lin(name, o, i):
        out.append((name + ".weight", (o, i)))
        if biases:
            out.append((name + ".bias", (o,)))

    def norm(name):
        out.append((name + ".weight", (d,)))
        if cfg["norm"] == "layernorm":
            out.append((name + ".bias", (d,)))

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
        lin("head", V, d)
    return out


def init_params(cfg, gen, biases=True, pos_std=1.0, dtype=torch.float32):
    """nn.Embedding / nn.Linear-style init (as swapformer's createEncoder)."""
    P = {}
    for name, shape in param_shapes(cfg, biases):
        if name == "embed.tokens":
            t = torch.randn(shape, generator=gen, dtype=dtype)
        elif name == "embed.positions":
            t = torch.randn(shape, generator=gen, dtype=dtype) * pos_std
        elif name.endswith(".weight") and len(shape) == 2:
            bound = 1.0 / math.sqrt(shape[1])
            t = (torch.rand(shape, generator=gen, dtype=dtype) * 2 - 1) * bound
        elif ("norm" in name) and name.endswith(".weight"):
            t = torch.ones(shape, dtype=dtype)
        else:
            t = torch.zeros(shape, dtype=dtype)
        P[name] = torch.nn.Parameter(t)
    return P


# --------------------------------------------------------------------------
# position schemes
# --------------------------------------------------------------------------

def sinusoidal_table(T, d, base, dtype):
    pos = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(0, d, 2, dtype=torch.float64)
    ang = pos / (base ** (i / d))
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang)[:, : d // 2]
    return pe.to(dtype)


def rope_inv_freq(D, base, scaling=None):
    """(inv_freq [D/2] float64 as a list, position divisor, mscale) for positionOptions.scaling.

    The angle of pair i at position t is (t / divisor) * inv_freq[i]; cos and sin
    are multiplied by mscale.  The spec's formulas, term by term.
    """
    half = D // 2
    theta = [base ** (-2.0 * i / D) for i in range(half)]
    if not scaling:
        return theta, 1.0, 1.0
    typ, factor = scaling["type"], float(scaling["factor"])
    if typ == "linear":
        return theta, factor, 1.0
    if typ == "ntk":
        b2 = base * factor ** (D / (D - 2))
        return [b2 ** (-2.0 * i / D) for i in range(half)], 1.0, 1.0
    if typ == "yarn":
        L0 = float(scaling["originalMaxLen"])
        beta_fast = float(scaling.get("betaFast", 32))
        beta_slow = float(scaling.get("betaSlow", 1))

        def corr(r):
            return D * math.log(L0 / (r * 2 * math.pi)) / (2 * math.log(base))

        low = max(math.floor(corr(beta_fast)), 0)
        high = min(math.ceil(corr(beta_slow)), D - 1)
        if low == high:
            high += 0.001
        out = []
        for i in range(half):
            pos_freq = base ** (2.0 * i / D)
            extra, inter = 1.0 / pos_freq, 1.0 / (factor * pos_freq)
            ramp = min(max((i - low) / (high - low), 0.0), 1.0)
            mask = 1.0 - ramp
            out.append(inter * (1.0 - mask) + extra * mask)
        return out, 1.0, 0.1 * math.log(factor) + 1.0
    raise ValueError("unknown rope scaling type %r" % typ)


def rope_cos_sin(T, D, po, dtype):
    inv, div, msc = rope_inv_freq(D, po["base"], po.get("scaling"))
    pos = torch.arange(T, dtype=torch.float64) / div
    ang = pos[:, None] * torch.tensor(inv, dtype=torch.float64)[None, :]
    return (torch.cos(ang) * msc).to(dtype), (torch.sin(ang) * msc).to(dtype)


def apply_rope(x, cos, sin, style):
    """x [B, H, T, D]; cos/sin [T, D/2]."""
    D = x.shape[-1]
    if style == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        ya, yb = a * cos - b * sin, a * sin + b * cos
        return torch.stack((ya, yb), dim=-1).reshape(x.shape)
    h = D // 2
    a, b = x[..., :h], x[..., h:]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)


def alibi_slopes(n):
    def pow2(m):
        start = 2.0 ** (-8.0 / m)
        return [start ** (k + 1) for k in range(m)]
    if n & (n - 1) == 0:
        return pow2(n)
    p = 1
    while p * 2 <= n:
        p *= 2
    return pow2(p) + pow2(2 * p)[0::2][: n - p]


# --------------------------------------------------------------------------
# forward
# --------------------------------------------------------------------------

def act_fn(a, x):
    if a == "relu":
        return torch.relu(x)
    if a == "gelu":
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    if a == "gelu_tanh":
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if a == "silu":
        return x * torch.sigmoid(x)
    raise ValueError(a)


def forward(cfg, P, ids, return_hidden=False):
    """ids: LongTensor [B, T] (every sequence of length T).  Returns logits [B, T, V]
    (or the final hidden states [B, T, d] when the config has no head or return_hidden)."""
    cfg = resolve(cfg)
    d, H, eps = cfg["dModel"], cfg["heads"], cfg["eps"]
    D = d // H
    po = cfg["positionOptions"]
    pos_kind = cfg["position"]
    B, T = ids.shape
    dt = P["embed.tokens"].dtype

    def g(name):
        return P.get(name)

    def linear(x, name):
        return F.linear(x, P[name + ".weight"], g(name + ".bias"))

    def norm(x, name):
        w, b = P[name + ".weight"], g(name + ".bias")
        if cfg["norm"] == "layernorm":
            mu = x.mean(dim=-1, keepdim=True)
            var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
            y = (x - mu) / torch.sqrt(var + eps) * w
            return y + b if b is not None else y
        return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w

    x = F.embedding(ids, P["embed.tokens"])
    if cfg["scaleEmbedding"]:
        x = x * math.sqrt(d)
    if pos_kind == "sinusoidal":
        x = x + sinusoidal_table(T, d, po["base"], dt)
    elif pos_kind == "learned":
        if T > cfg["maxLen"]:
            raise ValueError("SEQUENCE_TOO_LONG: %d > maxLen %d" % (T, cfg["maxLen"]))
        x = x + P["embed.positions"][:T]

    bias = None
    if pos_kind == "alibi":
        pos = torch.arange(T, dtype=torch.float64)
        dist = (pos[None, :] - pos[:, None]).abs()
        bias = (-torch.tensor(alibi_slopes(H), dtype=torch.float64)[:, None, None] * dist).to(dt)
    cs = rope_cos_sin(T, D, po, dt) if pos_kind == "rope" else None

    def attn(h, l):
        p = "layers.%d.attn." % l
        q, k, v = (linear(h, p + n).reshape(B, T, H, D).transpose(1, 2) for n in "qkv")
        if cs is not None:
            q, k = apply_rope(q, cs[0], cs[1], po["style"]), apply_rope(k, cs[0], cs[1], po["style"])
        s = (q @ k.transpose(-1, -2)) / math.sqrt(D)
        if bias is not None:
            s = s + bias
        pr = torch.softmax(s, dim=-1)
        o = (pr @ v).transpose(1, 2).reshape(B, T, d)
        return linear(o, p + "o")

    def ffn(h, l):
        p = "layers.%d.ffn." % l
        a = cfg["activation"]
        if a == "swiglu":
            z = act_fn("silu", linear(h, p + "gate")) * linear(h, p + "up")
        elif a == "geglu":
            z = act_fn("gelu", linear(h, p + "gate")) * linear(h, p + "up")
        else:
            z = act_fn(a, linear(h, p + "up"))
        return linear(z, p + "down")

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
    if return_hidden or not cfg["outputHead"]:
        return x
    return linear(x, "head")


# --------------------------------------------------------------------------
# model file (safetensors, config in __metadata__.config)
# --------------------------------------------------------------------------

def write_model(path, config_meta, tensors, dtype="F16"):
    """tensors: list of (name, ndarray).  Writes F16 or F32, 8-byte aligned data.
    Returns {name: float64 ndarray of the stored numbers} (what the loader widens to)."""
    np_dt = {"F16": "<f2", "F32": "<f4"}[dtype]
    header = {"__metadata__": {"format": "swapformer",
                               "config": json.dumps(config_meta, separators=(",", ":"))}}
    blobs, stored, off = [], {}, 0
    for name, a in tensors:
        s = np.asarray(a, dtype=np.float64).astype(np_dt)
        if not np.all(np.isfinite(s)):
            raise ValueError("%s does not fit %s" % (name, dtype))
        raw = s.tobytes()
        header[name] = {"dtype": dtype, "shape": list(s.shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
        stored[name] = s.astype(np.float64)
    hj = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hj += b" " * ((-(8 + len(hj))) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)
    return stored


def read_model(path):
    """(config dict, {name: float64 ndarray}) of a swapformer model file (F32/F16/BF16)."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    hdr = json.loads(data[8:8 + n].decode("utf-8"))
    body = data[8 + n:]
    meta = hdr.pop("__metadata__")
    out, end = {}, 0
    for name, t in hdr.items():
        b, e = t["data_offsets"]
        assert b == end, "hole or reordering in the data section"
        end = e
        raw = body[b:e]
        if t["dtype"] == "F32":
            a = np.frombuffer(raw, "<f4").astype(np.float64)
        elif t["dtype"] == "F16":
            a = np.frombuffer(raw, "<f2").astype(np.float64)
        elif t["dtype"] == "BF16":
            a = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        else:
            raise ValueError(t["dtype"])
        out[name] = a.reshape(t["shape"])
    assert end == len(body)
    assert meta.get("format") == "swapformer"
    return json.loads(meta["config"]), out
