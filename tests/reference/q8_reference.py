#!/usr/bin/python3
"""Independent emulation of swapformer's int8 forward (dtype 'q8'), for tests/q8.test.js.

    /usr/bin/python3 tests/reference/q8_reference.py

Writes tests/fixtures/q8/reference.json and the model files of its own case
(tests/fixtures/q8/odd.safetensors, F32, and tests/fixtures/q8/odd.q8.safetensors,
the same weights quantized and written by this script in the q8 file format).
Deterministic: a second run writes byte-identical files. Needs numpy only (the
Debian interpreter, as the other reference scripts); shares no code with
swapformer or with make_fixtures.py.

The scheme, transcribed from its documentation (core/qgemm.h) and the order of
float operations in core/qgemm.c / core/encoder.c:

  weights (every Linear weight, the output head; float32 values as stored):
      amax = max_k |w[n][k]|, s_w = fl32(amax / 127), w_q = clamp(rne(fl32(w / s_w)), -127, 127)
      (s_w = 0 and w_q = 0 when amax / 127 is below the smallest normal... in float32: s_w == 0)
  token table: the same per row; the embedding is fl32(s * q) (x sqrt(dModel) with scaleEmbedding)
  activations, per row x (float32) of every matrix product's input, AMAX = 255 (SIMD128
  build) or 127 (relaxed-SIMD build):
      lo = min(0, min x), hi = max(0, max x), s_a = fl32(fl32(hi / AMAX) - fl32(lo / AMAX))
      s_a < FLT_MIN: s_a = 0, zp = 0, x_q = 0
      inv = fl32(1 / s_a), zp = min(rne(fl32(-lo * inv)), AMAX)
      x_q = clamp(rne(fl32(x * inv) + zp), 0, AMAX)      (the sum exact, then rounded)
  product: acc = sum_k (x_q - zp) w_q, exact integers (int64 here: the core's int32 cannot overflow)
      out = fl32(fl32(fl32(acc) * fl32(s_a * s_w)) + bias)
  everything else (norms, positions, attention, activations, residuals) in float64,
  rounded to float32 where a quantizer reads it.

The float64 parts differ from the core's float32 ones by about 1e-7 relative. A
value whose rounding x * inv + zp lies that close to a tie (k + 1/2) could round
the other way in the core, and every output downstream would move by a
quantization step: the test could then not tell that from a bug. So each
sequence's token ids are drawn (seeded) until no quantized value and no zero
point of its whole forward, in either AMAX, lies within MARGIN of a tie; the
distance reached is stored ("minTieDistance"). MARGIN is set from a measurement
made here as well: the same forward with every float step rounded to float32
instead of float64 moves the pre-rounding values by at most "float32Shift"
(printed and stored: about 1e-4 steps), and MARGIN is ten times that.

Cases:
  head__rope_half__rmsnorm__pre__swiglu   the golden fixture's model (pre-norm RMSNorm, RoPE
                                          half, SwiGLU, final norm, output head), own ids
  learned__layernorm__post__gelu          the golden fixture's model (post-norm LayerNorm,
                                          learned positions, erf GELU), own ids
  odd                                     the second one's config with sizes that fill no
                                          panel or k group exactly (dModel 22, 2 heads of 11,
                                          ffDim 37, vocab 45), an output head, a zero weight
                                          row (scale 0) and a zero token row; weights drawn
                                          here and written twice: F32 and as a q8 file
"""

import json
import math
import os
import struct
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
OUT = os.path.join(FIXTURES, "q8")

AMAXES = (255, 127)  # SIMD128 build (u8), relaxed-SIMD build (u7)
MARGIN = 1e-3         # in quantization steps; see the docstring
F32 = np.float32
FLT_MIN = F32(np.finfo(np.float32).tiny)


# ------------------------------------------------------------------ safetensors

def read_model(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    hdr = json.loads(data[8:8 + n].decode("utf-8"))
    meta = hdr.pop("__metadata__")
    body = data[8 + n:]
    out = {}
    for name, t in hdr.items():
        a, b = t["data_offsets"]
        assert t["dtype"] == "F32", (path, name, t["dtype"])
        out[name] = np.frombuffer(body[a:b], dtype="<f4").reshape(t["shape"]).astype(F32)
    return json.loads(meta["config"]), out


def write_model(path, config, entries, dtype=None):
    """entries: (name, safetensors dtype, numpy array) in data order."""
    meta = {"format": "swapformer", "config": json.dumps(config, separators=(",", ":"))}
    if dtype:
        meta["dtype"] = dtype
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name, dt, a in entries:
        raw = a.astype({"F32": "<f4", "I8": "i1"}[dt]).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    hj = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hj += b" " * ((-(8 + len(hj))) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))


# ------------------------------------------------------------------ the int8 scheme

def quantize_weight(w):
    """w (N, K) float32 -> (w_q int64 (N, K), s_w float32 (N)), per output row."""
    w = np.asarray(w, dtype=F32)
    amax = np.abs(w).max(axis=1)
    s = (amax / F32(127)).astype(F32)
    q = np.zeros(w.shape, dtype=np.int64)
    for n in range(w.shape[0]):
        if s[n] > 0:
            q[n] = np.clip(np.rint((w[n] / s[n]).astype(F32)), -127, 127).astype(np.int64)
        else:
            s[n] = F32(0)
    return q, s


class Ties:
    """The smallest distance to a rounding tie seen (in quantization steps)."""

    def __init__(self):
        self.min = math.inf

    def see(self, u, lo=-math.inf, hi=math.inf):
        u = np.asarray(u, dtype=np.float64)
        # only ties between two values that survive the clamp matter: k + 1/2, 0 <= k < AMAX
        d = np.abs(u - np.floor(u) - 0.5)
        keep = (u > lo) & (u < hi)
        if keep.any():
            self.min = min(self.min, float(d[keep].min()))


def quantize_rows(x, amax, ties):
    """x (M, K) -> (x_q int64, zp int64 (M), s_a float32 (M)), per row; x rounded to float32 first."""
    x = np.asarray(x, dtype=np.float64).astype(F32)
    M, K = x.shape
    A = F32(amax)
    xq = np.zeros((M, K), dtype=np.int64)
    zps = np.zeros(M, dtype=np.int64)
    sas = np.zeros(M, dtype=F32)
    for m in range(M):
        r = x[m]
        lo = min(F32(0), r.min())
        hi = max(F32(0), r.max())
        s = F32(F32(hi / A) - F32(lo / A))
        if not (s >= FLT_MIN):
            continue  # s_a = 0, zp = 0, x_q = 0
        inv = F32(F32(1) / s)
        z = F32(-lo * inv)
        ties.see([z], -0.5, amax + 0.5)
        zp = min(int(np.rint(z)), amax)
        u = (r * inv).astype(F32).astype(np.float64) + zp  # exact: a float32 below 2^9 plus an integer
        ties.see(u, -0.5, amax + 0.5)
        xq[m] = np.clip(np.rint(u), 0, amax).astype(np.int64)
        zps[m], sas[m] = zp, s
    return xq, zps, sas


def qlinear(x, layer_q, bias, amax, ties):
    """out (M, N) = the int8 product of x (M, K) with a quantized Linear weight, as float64 values of float32 results."""
    wq, sw = layer_q
    xq, zp, sa = quantize_rows(x, amax, ties)
    acc = (xq - zp[:, None]) @ wq.T  # int64, exact
    out = acc.astype(np.float64).astype(F32) * (sa[:, None] * sw[None, :]).astype(F32)
    out = out.astype(F32)
    if bias is not None:
        out = (out + np.asarray(bias, dtype=F32)[None, :]).astype(F32)
    return out.astype(np.float64)


# ------------------------------------------------------------------ the forward (float64 outside the products)

def layernorm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps) * w
    return y + b if b is not None else y


def rmsnorm(x, w, b, eps):
    return x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps) * w


_erf = np.vectorize(math.erf)


def activation(name, h, g):
    if name == "gelu":
        return 0.5 * h * (1 + _erf(h / math.sqrt(2)))
    if name == "relu":
        return np.maximum(h, 0)
    if name == "swiglu":  # down(silu(gate(x)) * up(x))
        return g / (1 + np.exp(-g)) * h
    raise ValueError(name)


def rope_half(x, pos, D, base):
    """x (T, H, D) rotated at positions pos: pairs (i, i + D/2), theta_i = base^(-2i/D)."""
    half = D // 2
    i = np.arange(half, dtype=np.float64)
    ang = pos[:, None] * base ** (-2 * i / D)  # (T, half)
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)


SUPPORTED = {"vocabSize", "dModel", "heads", "layers", "ffDim", "maxLen", "position", "positionOptions", "norm",
             "normPlacement", "finalNorm", "eps", "activation", "scaleEmbedding", "outputHead"}


def forward(cfg, W, Q, ids, amax, ties, dt=np.float64):
    """One sequence: {hidden: [(T, C)] * (layers + 1), output (T, C), logits (T, V) or None}. dt: the
    float parts' precision (float64; float32 only to measure float32Shift, every step rounded to it)."""
    assert set(cfg) <= SUPPORTED, set(cfg) - SUPPORTED
    assert not cfg.get("scaleEmbedding")
    C, H, L = cfg["dModel"], cfg["heads"], cfg["layers"]
    D = C // H
    eps, pre = cfg["eps"], cfg["normPlacement"] == "pre"
    norm = {"layernorm": layernorm, "rmsnorm": rmsnorm}[cfg["norm"]]
    r = lambda a: np.asarray(a, dtype=dt)
    g = lambda n: None if W.get(n) is None else r(W[n])
    N = lambda x, n: r(norm(x, g(n + ".weight"), g(n + ".bias"), dt(eps)))
    lin = lambda x, n: r(qlinear(x, Q[n + ".weight"], W.get(n + ".bias"), amax, ties))
    T = len(ids)
    pos = np.arange(T, dtype=dt)
    # embeddings: the int8 token rows, dequantized in float32
    tq, ts = Q["embed.tokens"]
    x = r((tq[ids].astype(F32) * ts[ids][:, None]).astype(F32))
    if cfg["position"] == "learned":
        x = r(x + r(W["embed.positions"][cfg["positionOptions"].get("offset", 0):][:T]))
    else:
        assert cfg["position"] == "rope" and cfg["positionOptions"]["style"] == "half", cfg["position"]
    hidden = [np.asarray(x, dtype=np.float64)]
    for l in range(L):
        p = "layers.%d." % l
        a = N(x, p + "norm1") if pre else x
        q, k, v = lin(a, p + "attn.q"), lin(a, p + "attn.k"), lin(a, p + "attn.v")
        q, k, v = (t.reshape(T, H, D) for t in (q, k, v))
        if cfg["position"] == "rope":
            base = cfg["positionOptions"]["base"]
            q, k = r(rope_half(q, pos, D, base)), r(rope_half(k, pos, D, base))
        s = r(np.einsum("ihd,jhd->hij", q, k) * dt(1 / math.sqrt(D)))
        s = r(s - s.max(axis=-1, keepdims=True))
        pr = r(np.exp(s))
        pr = r(pr / pr.sum(axis=-1, keepdims=True))
        ao = r(np.einsum("hij,jhd->ihd", pr, v).reshape(T, C))
        o = lin(ao, p + "attn.o")
        x = r(x + o) if pre else N(r(x + o), p + "norm1")
        a = N(x, p + "norm2") if pre else x
        h = lin(a, p + "ffn.up")
        gt = lin(a, p + "ffn.gate") if p + "ffn.gate.weight" in Q else None
        f = lin(r(activation(cfg["activation"], h, gt)), p + "ffn.down")
        x = r(x + f) if pre else N(r(x + f), p + "norm2")
        hidden.append(np.asarray(x, dtype=np.float64))
    out = N(x, "final_norm") if cfg["finalNorm"] else x
    logits = lin(out, "head") if cfg.get("outputHead") else None
    return {"hidden": hidden, "output": np.asarray(out, dtype=np.float64), "logits": logits}


def quantized(cfg, W):
    """Every tensor the scheme stores as int8: the Linear weights (incl. the head) and the token table."""
    return {n: quantize_weight(w) for n, w in W.items()
            if n == "embed.tokens" or (n.endswith(".weight") and w.ndim == 2 and n != "embed.positions")}


# ------------------------------------------------------------------ cases

def odd_case():
    """learned__layernorm__post__gelu's config at sizes that fill no panel (8 columns) or k group (2, 4) exactly."""
    cfg = {"vocabSize": 45, "dModel": 22, "heads": 2, "layers": 2, "ffDim": 37, "maxLen": 16, "position": "learned",
           "positionOptions": {}, "norm": "layernorm", "normPlacement": "post", "finalNorm": False, "eps": 1e-5,
           "activation": "gelu", "scaleEmbedding": False, "outputHead": True}
    rng = np.random.default_rng(zlib.crc32(b"q8 odd"))
    C, F, V = cfg["dModel"], cfg["ffDim"], cfg["vocabSize"]
    W = {}

    def lin(n, o, i):
        W[n + ".weight"] = rng.standard_normal((o, i)) * (1.2 / math.sqrt(i))
        W[n + ".bias"] = rng.standard_normal(o) * 0.1

    def nrm(n):
        W[n + ".weight"] = 1.0 + 0.1 * rng.standard_normal(C)
        W[n + ".bias"] = 0.1 * rng.standard_normal(C)

    W["embed.tokens"] = rng.standard_normal((V, C))
    W["embed.positions"] = 0.5 * rng.standard_normal((cfg["maxLen"], C))
    for l in range(cfg["layers"]):
        p = "layers.%d." % l
        for n in "qkvo":
            lin(p + "attn." + n, C, C)
        nrm(p + "norm1")
        nrm(p + "norm2")
        lin(p + "ffn.up", F, C)
        lin(p + "ffn.down", C, F)
    lin("head", V, C)
    W["layers.0.ffn.up.weight"][5] = 0  # a zero row: scale 0, the output is the bias
    W["embed.tokens"][7] = 0            # a zero token row: scale 0
    W = {n: w.astype(F32) for n, w in W.items()}
    return cfg, W


def write_odd(cfg, W, Q):
    order = ["embed.tokens", "embed.positions"]
    for l in range(cfg["layers"]):
        p = "layers.%d." % l
        for n in ("attn.q", "attn.k", "attn.v", "attn.o"):
            order += [p + n + ".weight", p + n + ".bias"]
        order += [p + "norm1.weight", p + "norm1.bias", p + "norm2.weight", p + "norm2.bias"]
        for n in ("ffn.up", "ffn.down"):
            order += [p + n + ".weight", p + n + ".bias"]
    order += ["head.weight", "head.bias"]
    assert set(order) == set(W)
    write_model(os.path.join(OUT, "odd.safetensors"), cfg, [(n, "F32", W[n]) for n in order])
    entries = []
    for n in order:  # q8: "<name>.scale" F32 [rows] just before "<name>" I8 [rows, cols]
        if n in Q:
            entries += [(n + ".scale", "F32", Q[n][1]), (n, "I8", Q[n][0])]
        else:
            entries.append((n, "F32", W[n]))
    write_model(os.path.join(OUT, "odd.q8.safetensors"), cfg, entries, dtype="q8")


def run_batch(cfg, W, Q, batch, amax, ties):
    return [forward(cfg, W, Q, np.array(s), amax, ties) for s in batch]


def float32_shift(cfg, W, Q, batch):
    """How far float32 arithmetic in the float parts moves the values the quantizers round (in
    steps), per build, and whether any rounding changed."""
    shifts = []
    for amax in AMAXES:
        a, b = Capture(), Capture()
        for s in batch:
            forward(cfg, W, Q, np.array(s), amax, a, np.float64)
            forward(cfg, W, Q, np.array(s), amax, b, np.float32)
        assert len(a.u) == len(b.u)
        same = all(np.array_equal(np.rint(x), np.rint(y)) for x, y in zip(a.u, b.u))
        shifts.append((max(float(np.abs(x - y).max()) for x, y in zip(a.u, b.u)), same))
    return shifts


class Capture(Ties):
    """Ties that also keeps every pre-rounding vector, to compare two forwards."""

    def __init__(self):
        super().__init__()
        self.u = []

    def see(self, u, lo=-math.inf, hi=math.inf):
        super().see(u, lo, hi)
        self.u.append(np.asarray(u, dtype=np.float64))


def choose_ids(name, cfg, W, Q, lengths):
    """Each sequence drawn (seeded) until none of its roundings, in either build, lies within MARGIN
    of a tie (sequences are independent: rows are quantized one by one, attention is per sequence)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    batch, nearest, draws = [], math.inf, 0
    for b, n in enumerate(lengths):
        for attempt in range(1, 5001):
            seq = [int(t) for t in rng.integers(0, cfg["vocabSize"], size=n)]
            if name == "odd" and b == 0:
                seq[2] = 7  # the zero token row
            dist = math.inf
            for amax in AMAXES:
                ties = Ties()
                forward(cfg, W, Q, np.array(seq), amax, ties)
                dist = min(dist, ties.min)
                if dist < MARGIN:
                    break
            if dist >= MARGIN:
                break
        else:
            raise SystemExit("%s: no sequence of %d tokens without near-ties in 5000 draws" % (name, n))
        batch.append(seq)
        nearest, draws = min(nearest, dist), draws + attempt
    return batch, nearest, draws


def flat(arrays, T):
    """Sequences' (L_b, X) arrays -> [B, T, X] flat float64 list, padded rows 0."""
    X = arrays[0].shape[1]
    out = np.zeros((len(arrays), T, X))
    for b, a in enumerate(arrays):
        out[b, :a.shape[0]] = a
    return [float(v) for v in out.reshape(-1)]


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = []
    specs = [
        ("head__rope_half__rmsnorm__pre__swiglu", None, [7, 5, 3]),
        ("learned__layernorm__post__gelu", None, [9, 6, 2]),
        ("odd", "q8/odd.safetensors", [6, 4]),
    ]
    for name, file, lengths in specs:
        if name == "odd":
            cfg, W = odd_case()
            Q = quantized(cfg, W)
            write_odd(cfg, W, Q)
        else:
            file = name + ".safetensors"
            cfg, W = read_model(os.path.join(FIXTURES, file))
            Q = quantized(cfg, W)
        batch, dist, attempts = choose_ids(name, cfg, W, Q, lengths)
        shifts = float32_shift(cfg, W, Q, batch)
        T = max(len(s) for s in batch)
        case = {"name": name, "file": file, "config": cfg, "ids": batch, "minTieDistance": dist, "draws": attempts,
                "float32Shift": max(s for s, _ in shifts), "builds": {}}
        for amax in AMAXES:
            res = run_batch(cfg, W, Q, batch, amax, Ties())
            C = cfg["dModel"]
            entry = {"shape": [len(batch), T, C], "output": flat([r["output"] for r in res], T),
                     "hiddenStates": [flat([r["hidden"][l] for r in res], T) for l in range(cfg["layers"] + 1)]}
            if cfg.get("outputHead"):
                entry["logits"] = {"shape": [len(batch), T, cfg["vocabSize"]], "data": flat([r["logits"] for r in res], T)}
            case["builds"]["simd128" if amax == 255 else "relaxed"] = dict(amax=amax, **entry)
        cases.append(case)
        print("%-40s ids %s: %d draws, nearest tie %.2e steps (margin %.0e), float32 shift %.2e steps %s" % (
            name, [len(s) for s in batch], attempts, dist, MARGIN, case["float32Shift"],
            "(same integers)" if all(same for _, same in shifts) else "(a rounding moved)"))
    doc = {"generator": "tests/reference/q8_reference.py", "numpy": np.__version__, "margin": MARGIN, "cases": cases}
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
