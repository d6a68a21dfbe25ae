#!/usr/bin/env python3
"""Independent float64 reference for DeBERTa-v2 / v3 / mDeBERTa-v3 (model_type deberta-v2).

Writes tiny random checkpoints in the exact Hugging Face layout (tests/deberta/<case>/: config.json,
model.safetensors with the `deberta.` prefix and the heads' names, tokenizer.json as transformers'
DebertaV2Converter writes it, tokenizer_config.json, special_tokens_map.json) and, next to them,
tests/deberta/expected/<case>.json: the inputs as the Rust tokenizers encode them, the float64 hidden
states and head logits; tests/deberta/expected-pipelines.json: the public task methods' outputs by the
pipeline rules (tests/reference/pipeline_rules.py, through make_head_pipelines.py); and
tests/deberta/buckets.json: the table row of every relative distance, from PyTorch's float32 computation.

The forward below was written from transformers' models/deberta_v2/modeling_deberta_v2.py (DebertaV2Embeddings,
DebertaV2Encoder, DisentangledSelfAttention, ConvLayer, ContextPooler, the two masked-LM heads; read at
evalstate/transformers a8384218 and huggingface/transformers 967ed0db): the relative positions through
make_log_bucket_position in float32 as PyTorch computes it, the shared rel_embeddings normed by the encoder's
LayerNorm, projected per layer by query_proj / key_proj (share_att_key, biases included) or pos_query_proj /
pos_key_proj, c2p and p2c gathered as the upstream code gathers them (p2c from the keys' rows, then transposed),
every score over sqrt(d x scale_factor); a second form computes every score one (query, key) at a time from
a scalar bucket function in numpy float32 and the two must agree to 1e-10.  Building blocks (safetensors,
random parameters, Rust tokenization) come from make_pretrained.py; nothing of swapformer is used.

    /usr/bin/python3 tests/reference/make_deberta.py

Deterministic (per-case seeds from crc32 of the case name, one torch thread).  Needs node and the npm package
`tokenizers`.  Any failed self-check stops the script.
"""
import base64
import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_pretrained as mp  # noqa: E402  (building blocks; its main() does not run on import)

D = mp.D
check, close = mp.check, mp.close
OUT = os.path.join(mp.ROOT, "tests", "deberta")
EXPECTED = os.path.join(OUT, "expected")
SPM = os.path.join(mp.ROOT, "tests", "tokenizers", "spm", "t5_nmt_nfkc.tokenizer.json")
TOL = 1e-10
TRAP = 3e-4
torch.set_num_threads(1)


# ----------------------------------------------------------------------------------------------
# relative positions (DisentangledSelfAttention / build_relative_position / make_log_bucket_position)
# ----------------------------------------------------------------------------------------------

def log_bucket(rel, buckets, max_position):
    """The bucket of relative positions rel (int64 tensor) as PyTorch computes make_log_bucket_position:
    |r| < mid is replaced by mid - 1 before the log (and kept as r); the log step in float32: the int64
    distances divided by mid (true division: float32), torch.log in float32, over the float32 log of
    (max_position - 1) / mid (a Python float made a tensor), times mid - 1, ceil, + mid; sign restored."""
    mid = buckets // 2
    sign = torch.sign(rel)
    inside = (rel < mid) & (rel > -mid)
    absr = torch.where(inside, torch.full_like(rel, mid - 1), rel.abs())
    den = torch.log(torch.tensor((max_position - 1) / mid))  # float32 0-dim
    logp = torch.ceil(torch.log(absr / mid) / den * (mid - 1)) + mid
    return torch.where(absr <= mid, rel.to(logp.dtype), logp * sign).to(torch.long)


def relative_rows(rel, o):
    """Table row of each relative position (query - key): clamp(bucket + span, 0, 2 span - 1)."""
    span = o["buckets"] if o["buckets"] > 0 else o["max_rel"]
    b = log_bucket(rel, o["buckets"], o["max_rel"]) if o["buckets"] > 0 else rel
    return torch.clamp(b + span, 0, 2 * span - 1)


def row_scalar(r, o):
    """The same row for one distance, in numpy float32 scalars (an independent form)."""
    span = o["buckets"] if o["buckets"] > 0 else o["max_rel"]
    b = r
    if o["buckets"] > 0:
        mid = o["buckets"] // 2
        a = abs(r)
        if a > mid:
            den = np.float32(np.log(np.float32((o["max_rel"] - 1) / mid)))
            t = np.float32(np.log(np.float32(np.float32(a) / np.float32(mid)))) / den * np.float32(mid - 1)
            lp = int(np.ceil(np.float32(t))) + mid
            b = lp if r > 0 else -lp
    return min(max(b + span, 0), 2 * span - 1)


def rel_options(cfg):
    """The relative-attention settings a config implies (DebertaV2Encoder / DisentangledSelfAttention)."""
    max_rel = cfg.get("max_relative_positions", -1)
    if max_rel < 1:
        max_rel = cfg.get("max_position_embeddings", 512)
    buckets = cfg.get("position_buckets", -1)
    pat = cfg.get("pos_att_type") or []
    if isinstance(pat, str):
        pat = [x.strip() for x in pat.lower().split("|")]
    return {"relative": cfg.get("relative_attention", False), "buckets": buckets if buckets > 0 else 0,
            "max_rel": max_rel, "c2p": "c2p" in pat, "p2c": "p2c" in pat,
            "share": cfg.get("share_att_key", False),
            "norm": "layer_norm" in [x.strip() for x in cfg.get("norm_rel_ebd", "none").lower().split("|")]}


# ----------------------------------------------------------------------------------------------
# the forward (float64)
# ----------------------------------------------------------------------------------------------

def heads_of(x, nh):  # [B, T, A] -> [B, h, T, d]
    B, T, A = x.shape
    return x.view(B, T, nh, A // nh).transpose(1, 2)


def deberta_forward(P, cfg, ids, lengths, type_ids=None, impl="matrix", variant=None):
    """Last hidden state [B, T, H] (padded rows not zeroed here).  variant: deliberate changes for the
    trap checks (no_c2p, no_p2c, p2c_same_sign, scale1, no_rel_norm, conv_pad_global, bucket_floor,
    no_embed_norm)."""
    v = variant or {}
    B, T = ids.shape
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    d = cfg.get("attention_head_size", H // nh)
    eps = cfg.get("layer_norm_eps", 1e-7)
    o = rel_options(cfg)
    act = mp.ACT[cfg.get("hidden_act", "gelu")]
    mask = mp.key_mask(lengths, T)
    # DebertaV2Embeddings: word (+ positions when position_biased_input) (+ types) -> LayerNorm -> x mask
    x = P["embeddings.word_embeddings.weight"][ids]
    if cfg.get("position_biased_input", True):
        x = x + P["embeddings.position_embeddings.weight"][torch.arange(T)][None]
    if cfg.get("type_vocab_size", 0) > 0:
        t = type_ids if type_ids is not None else torch.zeros_like(ids)
        x = x + P["embeddings.token_type_embeddings.weight"][t]
    if cfg.get("embedding_size", H) != H:  # embed_proj (Linear E -> H, no bias) before the LayerNorm
        x = x @ P["embeddings.embed_proj.weight"].T
    if not v.get("no_embed_norm"):
        x = mp.ln(x, P, "embeddings.LayerNorm", eps)
    x = x * mask[..., None].to(D)
    x0 = x
    terms = int(o["c2p"]) + int(o["p2c"])
    scale = math.sqrt(d * (1 + terms)) if not v.get("scale1") else math.sqrt(d)
    R = None
    if o["relative"]:
        span = o["buckets"] if o["buckets"] > 0 else o["max_rel"]
        R = P["encoder.rel_embeddings.weight"][: 2 * span]
        if o["norm"] and not v.get("no_rel_norm"):
            R = mp.ln(R, P, "encoder.LayerNorm", eps)
        rel = torch.arange(T)[:, None] - torch.arange(T)[None, :]  # query - key
        rowfn = (lambda r: torch.tensor([[row_floor(int(x), o) for x in line] for line in r.tolist()])) if v.get("bucket_floor") \
            else (lambda r: relative_rows(r, o))  # the trap: floor instead of ceil in the log step
        rows = rowfn(rel)
    for l in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{l}.attention."
        q = heads_of(mp.linear(x, P, p + "self.query_proj"), nh)
        k = heads_of(mp.linear(x, P, p + "self.key_proj"), nh)
        val = heads_of(mp.linear(x, P, p + "self.value_proj"), nh)
        if impl == "matrix":
            s = q @ k.transpose(-1, -2) / scale
            if R is not None:
                pk_name = p + ("self.key_proj" if o["share"] else "self.pos_key_proj")
                pq_name = p + ("self.query_proj" if o["share"] else "self.pos_query_proj")
                if o["c2p"] and not v.get("no_c2p"):
                    PK = heads_of(mp.linear(R[None], P, pk_name), nh)  # [1, h, 2span, d]
                    c2p = q @ PK.transpose(-1, -2)  # [B, h, T, 2span]
                    s = s + torch.gather(c2p, -1, rows.expand(B, nh, T, T)) / scale
                if o["p2c"] and not v.get("no_p2c"):
                    PQ = heads_of(mp.linear(R[None], P, pq_name), nh)
                    p2c = k @ PQ.transpose(-1, -2)  # [B, h, T(keys), 2span]
                    # rows of the keys against -relative position, then transposed (DisentangledSelfAttention)
                    back = rows if v.get("p2c_same_sign") else rowfn(-rel)
                    s = s + torch.gather(p2c, -1, back.expand(B, nh, T, T)).transpose(-1, -2) / scale
            both = mask[:, None, None, :] & mask[:, None, :, None]  # get_attention_mask: query and key real
            s = s.masked_fill(~both, mp.NEG)
            ctx = torch.softmax(s, dim=-1) @ val
        else:
            ctx = loop_attention(P, cfg, o, R, q, k, val, lengths, scale, p)
        a = mp.ln(mp.linear(mp.merge_heads(ctx), P, p + "output.dense") + x, P, p + "output.LayerNorm", eps)
        f = f"encoder.layer.{l}."
        y = mp.ln(mp.linear(act(mp.linear(a, P, f + "intermediate.dense")), P, f + "output.dense") + a, P,
                  f + "output.LayerNorm", eps)
        if l == 0 and cfg.get("conv_kernel_size", 0) > 0:
            y = conv_layer(P, cfg, x0, y, mask, eps, v)
        x = y
    return x


def row_floor(r, o):
    span = o["buckets"]
    mid = span // 2
    a = abs(r)
    b = r
    if a > mid:
        t = np.float32(np.log(np.float32(a / mid))) / np.float32(np.log(np.float32((o["max_rel"] - 1) / mid))) * np.float32(mid - 1)
        lp = int(np.floor(t)) + mid
        b = lp if r > 0 else -lp
    return min(max(b + span, 0), 2 * span - 1)


def loop_attention(P, cfg, o, R, q, k, val, lengths, scale, p):
    """Every (batch, head, query) on its own over the real keys: score = (q.k + q.PK[c] + k.PQ[c]) / scale with
    c = row_scalar(i - j), the projections of the table rows computed one row at a time."""
    B, nh, T, d = q.shape
    out = np.zeros(q.shape)
    qn, kn, vn = q.numpy(), k.numpy(), val.numpy()
    PKr = PQr = None
    if R is not None:
        Rn = R.numpy()
        def proj(name):
            w, b = P[name + ".weight"].numpy(), P[name + ".bias"].numpy()
            return np.stack([w @ row + b for row in Rn])  # [2span, A]
        if o["c2p"]:
            PKr = proj(p + ("self.key_proj" if o["share"] else "self.pos_key_proj"))
        if o["p2c"]:
            PQr = proj(p + ("self.query_proj" if o["share"] else "self.pos_query_proj"))
    for b in range(B):
        L = lengths[b]
        for h in range(nh):
            for i in range(L):
                sc = []
                for j in range(L):
                    s = float(qn[b, h, i] @ kn[b, h, j])
                    if R is not None:
                        c = row_scalar(i - j, o)
                        if PKr is not None:
                            s += float(qn[b, h, i] @ PKr[c, h * d:(h + 1) * d])
                        if PQr is not None:
                            s += float(kn[b, h, j] @ PQr[c, h * d:(h + 1) * d])
                    sc.append(s / scale)
                sc = np.array(sc)
                e = np.exp(sc - sc.max())
                out[b, h, i] = (e / e.sum()) @ vn[b, h, :L]
    return torch.from_numpy(out)


def conv_layer(P, cfg, x0, y, mask, eps, v):
    """ConvLayer: Conv1d over the embeddings x0 (zero rows past each length, padding (k - 1) // 2 each
    side), rows past the length zeroed, conv_act, LayerNorm(y + out), x mask."""
    k = cfg["conv_kernel_size"]
    w, b = P["encoder.conv.conv.weight"], P["encoder.conv.conv.bias"]
    if v.get("conv_pad_global"):  # trap: the padded batch's rows convolved as one sequence (no zeroing)
        xin = x0.clone()
        xin[~mask] = 1.0
    else:
        xin = x0
    out = F.conv1d(xin.transpose(1, 2), w, b, padding=(k - 1) // 2, groups=cfg.get("conv_groups", 1)).transpose(1, 2)
    out = out.masked_fill(~mask[..., None], 0.0)
    name = cfg.get("conv_act", "tanh")
    out = torch.tanh(out) if name == "tanh" else mp.ACT[name](out)
    return mp.ln(y + out, P, "encoder.conv.LayerNorm", eps) * mask[..., None].to(D)


def conv_loop_check(P, cfg, name):
    """F.conv1d against the formula out[t, o] = b[o] + sum_c,k W[o, c, k] x[t + k - pad, c] (groups 1)."""
    g = torch.Generator().manual_seed(7)
    H, k = cfg["hidden_size"], cfg["conv_kernel_size"]
    x = torch.randn(1, 9, H, generator=g, dtype=D)
    w, b = P["encoder.conv.conv.weight"], P["encoder.conv.conv.bias"]
    got = F.conv1d(x.transpose(1, 2), w, b, padding=(k - 1) // 2).transpose(1, 2)[0]
    want = torch.zeros(9, H, dtype=D)
    pad = (k - 1) // 2
    for t in range(9):
        want[t] = b.clone()
        for kk in range(k):
            s = t + kk - pad
            if 0 <= s < 9:
                want[t] += w[:, :, kk] @ x[0, s]
    close(got, want, 1e-12, f"{name}: Conv1d == the per-position formula")


# ----------------------------------------------------------------------------------------------
# parameters and configs
# ----------------------------------------------------------------------------------------------

def deberta_params(g, c):
    H, I, L = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    nh = c["num_attention_heads"]
    A = nh * c.get("attention_head_size", H // nh)
    o = rel_options(c)
    E = c.get("embedding_size", H)  # the tables' width (DebertaV2Embeddings.embedding_size)
    g.emb("embeddings.word_embeddings", c["vocab_size"], E)
    if c.get("position_biased_input", True):
        g.emb("embeddings.position_embeddings", c["max_position_embeddings"], E)
    if c.get("type_vocab_size", 0) > 0:
        g.emb("embeddings.token_type_embeddings", c["type_vocab_size"], E)
    if E != H:
        g.P["embeddings.embed_proj.weight"] = g.normal((H, E), 1.5 / math.sqrt(E))
    g.norm("embeddings.LayerNorm", H)
    if o["relative"]:
        span = o["buckets"] if o["buckets"] > 0 else o["max_rel"]
        g.emb("encoder.rel_embeddings", 2 * span, H, std=1.0)
        if o["norm"]:
            g.norm("encoder.LayerNorm", H)
    if c.get("conv_kernel_size", 0) > 0:
        k = c["conv_kernel_size"]
        g.P["encoder.conv.conv.weight"] = g.normal((H, H, k), 1.5 / math.sqrt(H * k))
        g.P["encoder.conv.conv.bias"] = g.normal((H,), 0.1)
        g.norm("encoder.conv.LayerNorm", H)
    for l in range(L):
        p = f"encoder.layer.{l}."
        # the position projections weigh as much as q.k: the scheme's terms move the scores visibly
        for n in ("query_proj", "key_proj", "value_proj"):
            g.linear(p + "attention.self." + n, A, H, gain=1.5)
        if o["relative"] and not o["share"]:
            if o["c2p"]:
                g.linear(p + "attention.self.pos_key_proj", A, H, gain=1.5)
            if o["p2c"]:
                g.linear(p + "attention.self.pos_query_proj", A, H, gain=1.5)
        g.linear(p + "attention.output.dense", H, A)
        g.norm(p + "attention.output.LayerNorm", H)
        g.linear(p + "intermediate.dense", I, H, gain=mp.FF_GAIN)
        g.linear(p + "output.dense", H, I)
        g.norm(p + "output.LayerNorm", H)


def v3_config(vocab, **kw):
    """microsoft/deberta-v3-* (experiments/language_model/rtd_*.json as transformers saves it), small sizes."""
    c = {"attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
         "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-7, "max_position_embeddings": 512,
         "max_relative_positions": -1, "model_type": "deberta-v2", "norm_rel_ebd": "layer_norm",
         "num_attention_heads": 4, "num_hidden_layers": 2, "pad_token_id": 0, "pooler_dropout": 0,
         "pooler_hidden_act": "gelu", "pooler_hidden_size": 32, "pos_att_type": ["p2c", "c2p"],
         "position_biased_input": False, "position_buckets": 8, "relative_attention": True, "share_att_key": True,
         "torch_dtype": "float32", "transformers_version": "4.41.2", "type_vocab_size": 0, "vocab_size": vocab}
    c.update(kw)
    return {k: v for k, v in c.items() if v is not None}  # None: the key left out (the model's getattr default)


# ----------------------------------------------------------------------------------------------
# the tokenizer: DebertaV2Converter's tokenizer.json (convert_slow_tokenizer.py) for an spm model whose
# pieces are [PAD] [CLS] [SEP] [UNK] + the trained pieces (as DeBERTa-v3's spm.model), [MASK] added after
# ----------------------------------------------------------------------------------------------

SPECIALS = ["[PAD]", "[CLS]", "[SEP]", "[UNK]"]


def tok_deberta(lower=False, split_by_punct=False, model_max_length=512, legacy_metaspace=False):
    src = json.load(open(SPM, encoding="utf-8"))
    charsmap = src["normalizer"]["normalizers"][0]
    check(charsmap["type"] == "Precompiled" and len(base64.b64decode(charsmap["precompiled_charsmap"])) > 1000,
          "the spm fixture carries a Precompiled charsmap")
    pieces = [(p, s) for p, s in src["model"]["vocab"] if p not in ("<pad>", "</s>", "<unk>") and not p.startswith("<extra_id_")]
    vocab = [(t, 0.0) for t in SPECIALS] + pieces
    ids = {t: i for i, (t, _) in enumerate(vocab)}
    assert len(ids) == len(vocab)
    mask_id = len(vocab)
    norm = ([{"type": "Lowercase"}] if lower else []) + [{"type": "Strip", "strip_left": True, "strip_right": True},
                                                        charsmap, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
    meta = ({"type": "Metaspace", "replacement": "▁", "add_prefix_space": True} if legacy_metaspace else
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True})
    pre = ([{"type": "Punctuation", "behavior": "Isolated"}] if split_by_punct else []) + [meta]
    tj = {"version": "1.0", "truncation": None, "padding": None,
          "added_tokens": [mp.added(t, ids[t]) for t in SPECIALS] + [mp.added("[MASK]", mask_id)],
          "normalizer": {"type": "Sequence", "normalizers": norm},
          "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre},
          "post_processor": mp.template("[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
                                        [("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])]),
          "decoder": dict(meta),
          "model": {"type": "Unigram", "unk_id": ids["[UNK]"], "vocab": [[t, s] for t, s in vocab], "byte_fallback": False}}
    cfg = {"bos_token": "[CLS]", "clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "do_lower_case": lower,
           "eos_token": "[SEP]", "mask_token": "[MASK]", "model_max_length": model_max_length, "pad_token": "[PAD]",
           "sep_token": "[SEP]", "sp_model_kwargs": {}, "split_by_punct": split_by_punct,
           "tokenizer_class": "DebertaV2Tokenizer", "unk_token": "[UNK]", "vocab_type": "spm"}
    smap = {"bos_token": "[CLS]", "cls_token": "[CLS]", "eos_token": "[SEP]", "mask_token": "[MASK]",
            "pad_token": "[PAD]", "sep_token": "[SEP]", "unk_token": "[UNK]"}
    words = [t for t, _ in vocab] + ["[MASK]"]
    return {"json": tj, "vocab": words, "config": cfg, "map": smap, "seq": {"pad": 0}, "mask": "[MASK]"}


# ----------------------------------------------------------------------------------------------
# cases
# ----------------------------------------------------------------------------------------------

NLI_LABELS = ["contradiction", "entailment", "neutral"]  # cross-encoder/nli-deberta-v3-* order
NER_LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
ZS_PREMISES = ["The quick brown fox jumps over the lazy dog.", "A tokenizer splits text into pieces."]
ZS_LABELS = ["animals", "sports", "technology"]
ZS_TEMPLATE = "This example is {}."
RERANK = [["what is a tokenizer?", "A tokenizer splits text into pieces that a model can look up."],
          ["what is a tokenizer?", "The quick brown fox jumps over the lazy dog."],
          ["what is a tokenizer?", "It's a beautiful day in the neighbourhood, isn't it?"],
          ["how do pieces work?", "The unigram language model keeps the pieces that best explain the text."]]
SEQ_TEXTS = ["Hello, world! How are you today?", "The quick brown fox jumps over the lazy dog.",
             "Café naïve résumé: SentencePiece treats the input as a raw stream."]
NER_TEXTS = ["Angela Merkel visited Zürich and Paris.", "José Müller works for Hugging Face in New York!",
             "Wolfgang Amadeus Mozart was born in Salzburg, (Austria)."]
MLM_TEXTS = ["The quick brown [MASK] jumps over the lazy dog.", "A [MASK] splits text into [MASK] again.",
             "Hello, [MASK]!"]
EMBED_TEXTS = ["query: how do tokenizers work?", "passage: The quick brown fox jumps over the lazy dog.",
               "Ünïcödé  café — naïve résumé 2024!"]


def label_maps(names):
    return {"id2label": {str(i): n for i, n in enumerate(names)}, "label2id": {n: i for i, n in enumerate(names)}}


def base(name, arch, task, config, notes, tok=None, texts=(), pairs=()):
    tok = tok or tok_deberta()
    config = dict(config, vocab_size=len(tok["vocab"]) + 3)  # a few unused rows past the tokenizer, as 128100 > 128001
    if arch:
        config["architectures"] = [arch]
    g = mp.Gen(name)
    deberta_params(g, config)
    return {"name": name, "arch": arch, "task": task, "config": config, "g": g, "tok": tok, "notes": notes,
            "texts": list(texts), "pairs": list(pairs), "head": {}, "spec": None, "extras": {}, "batches": []}


def head_linear(case, name, n_out, n_in=None, gain=2.0):
    g, C = case["g"], case["config"]["hidden_size"]
    n_in = n_in or C
    case["head"][name + ".weight"] = g.normal((n_out, n_in), gain / math.sqrt(n_in))
    case["head"][name + ".bias"] = g.normal((n_out,), 0.3)


def head_norm(case, name, C=None):
    g, C = case["g"], C or case["config"]["hidden_size"]
    case["head"][name + ".weight"] = g.normal((C,), 0.1, 1.0)
    case["head"][name + ".bias"] = g.normal((C,), 0.05)


def spec(pool=None, dense=None, act="identity", norm=None, out_weight="classifier.weight", out_bias="classifier.bias"):
    return {"pool": pool, "dense": dense, "act": act, "norm": norm, "outWeight": out_weight, "outBias": out_bias}


def random_batches(case, lengths_list):
    g, V = case["g"], len(case["tok"]["vocab"]) - 1
    out = []
    for lengths in lengths_list:
        ids = [[1] + g.randint(4, V, n - 2) + [2] for n in lengths]
        entry = {"ids": ids}
        if case["config"].get("type_vocab_size", 0) > 0:
            entry["typeIds"] = [[0] * (n // 2) + [1] * (n - n // 2) for n in lengths]
        out.append(entry)
    case["batches"] = out
    return case


def case_v3_nli():
    c = v3_config(0, **label_maps(NLI_LABELS), _name_or_path="cross-encoder/nli-deberta-v3-xsmall")
    case = base("deberta-v3-nli", "DebertaV2ForSequenceClassification", "sequence", c,
                "cross-encoder/nli-deberta-v3-xsmall layout (labels contradiction, entailment, neutral): DeBERTa-v3 "
                "(relative_attention, position_buckets 8, max_relative_positions -1 -> 512, share_att_key, "
                "norm_rel_ebd layer_norm, pos_att_type [p2c, c2p], no absolute positions, no token types, eps 1e-7); "
                "ContextPooler (CLS, pooler.dense, gelu) + classifier; zero-shot pairs [CLS] A [SEP] B [SEP] whose "
                "type ids 1 are dropped (type_vocab_size 0).", pairs=[[p, ZS_TEMPLATE.format(l)] for p in ZS_PREMISES for l in ZS_LABELS])
    case["zeroShot"] = {"premises": ZS_PREMISES, "candidateLabels": ZS_LABELS, "hypothesisTemplate": ZS_TEMPLATE,
                        "entailmentId": 1, "pairOrder": "premise-major: input i is premise i // 3 with label i % 3"}
    head_linear(case, "pooler.dense", 32)
    head_linear(case, "classifier", 3)
    case["spec"] = spec(pool="cls", dense="pooler.dense", act="gelu")
    return case


def case_v3_rerank():
    c = v3_config(0, num_hidden_layers=3, position_buckets=16, max_relative_positions=40,
                  **label_maps(["LABEL_0"]), _name_or_path="mixedbread-ai/mxbai-rerank-xsmall-v1")
    case = base("deberta-v3-rerank", "DebertaV2ForSequenceClassification", "sequence", c,
                "mixedbread-ai/mxbai-rerank-xsmall-v1 layout: one output (a reranker score, sigmoid in predict); "
                "buckets 16 over max_relative_positions 40 (log buckets from |i - j| > 8, the last row from 40 on); "
                "3 layers.", pairs=RERANK)
    head_linear(case, "pooler.dense", 32)
    head_linear(case, "classifier", 1)
    case["spec"] = spec(pool="cls", dense="pooler.dense", act="gelu")
    return case


def case_v3_ner():
    c = v3_config(0, **label_maps(NER_LABELS), position_buckets=8, max_relative_positions=-1, max_position_embeddings=12)
    case = base("deberta-v3-ner", "DebertaV2ForTokenClassification", "token", c,
                "DebertaV2ForTokenClassification (NER labels O, B/I-PER, ORG, LOC): classifier on every token; "
                "buckets 8 over max_relative_positions -1, i.e. max_position_embeddings 12 (no absolute positions: "
                "it sizes nothing else), so the rows saturate within the texts.", texts=NER_TEXTS)
    head_linear(case, "classifier", len(NER_LABELS))
    case["spec"] = spec()
    return case


QA = [["Where do I live?", "My name is Wolfgang and I live in Berlin."],
      ["What does a tokenizer do?", "A tokenizer splits text into pieces that a model can look up, and the unigram model keeps the best ones."]]


def case_v3_qa():
    c = v3_config(0, _name_or_path="deepset/deberta-v3-base-squad2")
    case = base("deberta-v3-qa", "DebertaV2ForQuestionAnswering", "token", c,
                "deepset/deberta-v3-base-squad2 layout: DebertaV2ForQuestionAnswering, qa_outputs [2, H] on every "
                "token (start and end logits); question-context pairs [CLS] q [SEP] c [SEP].", pairs=QA)
    head_linear(case, "qa_outputs", 2)
    case["spec"] = spec(out_weight="qa_outputs.weight", out_bias="qa_outputs.bias")
    case["emitTask"] = "qa"  # computed as a token head: the same rows, two logits each
    return case


def case_v2_mlm():
    tok = tok_deberta(lower=True, split_by_punct=True)
    c = v3_config(0, conv_kernel_size=3, conv_act="gelu", position_buckets=8, max_relative_positions=16,
                  pos_att_type="p2c|c2p", torch_dtype="float32")
    case = base("deberta-v2-mlm", "DebertaV2ForMaskedLM", "mlm", c,
                "microsoft/deberta-v2-xlarge-like DebertaV2ForMaskedLM (legacy head, the default): the convolution "
                "after layer 0 (conv_kernel_size 3, conv_act gelu), buckets 8 / 16, pos_att_type as the string "
                "'p2c|c2p'; cls.predictions.transform.{dense, LayerNorm} (hidden_act gelu) and cls.predictions.bias, "
                "the decoder tied to the token table (its saved copy equal to it); tokenizer lowercase + "
                "split_by_punct (Punctuation isolated before Metaspace).", tok=tok, texts=MLM_TEXTS)
    head_linear(case, "cls.predictions.transform.dense", 32)
    head_norm(case, "cls.predictions.transform.LayerNorm")
    case["head"]["cls.predictions.bias"] = case["g"].normal((case["config"]["vocab_size"],), 0.3)
    case["spec"] = spec(dense="cls.predictions.transform.dense", act="gelu", norm="cls.predictions.transform.LayerNorm",
                        out_weight="deberta.embeddings.word_embeddings.weight", out_bias="cls.predictions.bias")
    case["alias"] = {"cls.predictions.decoder.weight": "deberta.embeddings.word_embeddings.weight",
                     "cls.predictions.decoder.bias": "cls.predictions.bias"}
    return case


def case_v2_lm_head():
    c = v3_config(0, legacy=False, position_biased_input=True, max_position_embeddings=64, position_buckets=-1,
                  max_relative_positions=10, share_att_key=None, norm_rel_ebd=None, pos_att_type="c2p",
                  type_vocab_size=2, conv_kernel_size=3)
    case = base("deberta-v2-lm-head", "DebertaV2ForMaskedLM", "mlm", c,
                "DebertaV2ForMaskedLM with legacy false: lm_predictions.lm_head.{dense, LayerNorm, bias} against the "
                "token table; v2-style absolute positions (position_biased_input, max_position_embeddings 64), "
                "token types (type_vocab_size 2), no buckets (distances clamped at max_relative_positions 10), "
                "pos_key_proj (share_att_key absent: false), c2p only (scale sqrt(2d)), no table norm (norm_rel_ebd "
                "absent: none), the convolution with conv_act's default tanh.", texts=MLM_TEXTS)
    head_linear(case, "lm_predictions.lm_head.dense", 32)
    head_norm(case, "lm_predictions.lm_head.LayerNorm")
    case["head"]["lm_predictions.lm_head.bias"] = case["g"].normal((case["config"]["vocab_size"],), 0.3)
    case["spec"] = spec(dense="lm_predictions.lm_head.dense", act="gelu", norm="lm_predictions.lm_head.LayerNorm",
                        out_weight="deberta.embeddings.word_embeddings.weight", out_bias="lm_predictions.lm_head.bias")
    return case


def case_v2_seq_p2c():
    c = v3_config(0, **label_maps(["negative", "positive"]), type_vocab_size=2, pos_att_type=["p2c"],
                  attention_head_size=6, share_att_key=False, position_buckets=8, max_relative_positions=20,
                  pooler_hidden_act="tanh")
    case = base("deberta-v2-seq-p2c", "DebertaV2ForSequenceClassification", "sequence", c,
                "a DebertaV2ForSequenceClassification with p2c only (scale sqrt(2d)), pos_query_proj (share_att_key "
                "false), attention_head_size 6 (attention width 24 on hidden 32), token types (pairs get type 1 on "
                "the second text), pooler_hidden_act tanh.", texts=SEQ_TEXTS[:2], pairs=RERANK[:2])
    head_linear(case, "pooler.dense", 32)
    head_linear(case, "classifier", 2)
    case["spec"] = spec(pool="cls", dense="pooler.dense", act="tanh")
    return case


def case_v2_embed_proj():
    c = v3_config(0, embedding_size=24, position_biased_input=True, max_position_embeddings=64, type_vocab_size=2,
                  position_buckets=8, max_relative_positions=16, conv_kernel_size=3)
    case = base("deberta-v2-embed-proj", "DebertaV2ForMaskedLM", "mlm", c,
                "DebertaV2ForMaskedLM with embedding_size 24 != hidden_size 32: word, position and type tables 24 wide, "
                "embeddings.embed_proj (Linear 24 -> 32, no bias) BEFORE embeddings.LayerNorm (32 wide; ALBERT and "
                "ELECTRA project after their norm); the legacy head's transform dense 32 -> 24 and LayerNorm 24, the "
                "decoder tied to the 24-wide token table; the convolution reads the projected, normed embeddings.",
                texts=MLM_TEXTS)
    head_linear(case, "cls.predictions.transform.dense", 24)
    head_norm(case, "cls.predictions.transform.LayerNorm", 24)
    case["head"]["cls.predictions.bias"] = case["g"].normal((case["config"]["vocab_size"],), 0.3)
    case["spec"] = spec(dense="cls.predictions.transform.dense", act="gelu", norm="cls.predictions.transform.LayerNorm",
                        out_weight="deberta.embeddings.word_embeddings.weight", out_bias="cls.predictions.bias")
    return random_batches(case, [[9, 3, 60, 60]])  # 132 rows: embed_proj over three 64-row chunks


def case_v3_rtd():
    c = v3_config(0, position_buckets=256, num_hidden_layers=1, hidden_size=16, intermediate_size=32,
                  num_attention_heads=2, pooler_hidden_size=16, architectures=["DebertaV2ForMaskedLM"], legacy=False)
    case = base("deberta-v3-rtd", None, "embedding", c,
                "a raw DeBERTa-v3 checkpoint (v3's bucket values: position_buckets 256, max_relative_positions -1 -> "
                "512), saved with its replaced-token-detection head (mask_predictions.*) and lm_predictions.*, "
                "config.json naming DebertaV2ForMaskedLM with legacy false (the lm_predictions layout): loads as an "
                "encoder all the same, fill-mask refused; a 700-token "
                "sequence reaches the table's last rows (|i - j| >= 506).", texts=EMBED_TEXTS)
    case["config"]["architectures"] = ["DebertaV2ForMaskedLM"]
    g, C, V = case["g"], 16, case["config"]["vocab_size"]
    for n, shape in (("lm_predictions.lm_head.dense.weight", (C, C)), ("lm_predictions.lm_head.dense.bias", (C,)),
                     ("lm_predictions.lm_head.LayerNorm.weight", (C,)), ("lm_predictions.lm_head.LayerNorm.bias", (C,)),
                     ("lm_predictions.lm_head.bias", (V,)), ("mask_predictions.dense.weight", (C, C)),
                     ("mask_predictions.dense.bias", (C,)), ("mask_predictions.LayerNorm.weight", (C,)),
                     ("mask_predictions.LayerNorm.bias", (C,)), ("mask_predictions.classifier.weight", (1, C)),
                     ("mask_predictions.classifier.bias", (1,))):
        case["extras"][n] = g.normal(shape, 0.3)
    return random_batches(case, [[700, 129, 5], [3]])


def case_v2_conv_tanh():
    c = v3_config(0, conv_kernel_size=5, position_biased_input=None, max_position_embeddings=48,
                  position_buckets=-1, max_relative_positions=6, pos_att_type="c2p|p2c")
    case = base("deberta-v2-conv", None, "embedding", c,
                "DebertaV2Model with absolute positions (position_biased_input absent: true) and the disentangled "
                "terms at once, no buckets "
                "(max_relative_positions 6), a convolution of kernel 5 with conv_act's default tanh; padded batches "
                "where the kernel reaches past a short sequence's end.", texts=EMBED_TEXTS)
    return random_batches(case, [[40, 2, 7, 3], [1 + 2]])


CASES = [case_v3_nli, case_v3_rerank, case_v3_ner, case_v3_qa, case_v2_mlm, case_v2_lm_head, case_v2_seq_p2c, case_v3_rtd,
         case_v2_conv_tanh, case_v2_embed_proj]


# ----------------------------------------------------------------------------------------------
# writing a case
# ----------------------------------------------------------------------------------------------

import make_heads as mh  # noqa: E402  (the heads' float64 forms, tokenization and JSON layout)


def encode(case, ids_list, type_list=None, impl="matrix", variant=None, cfg=None):
    lengths = [len(s) for s in ids_list]
    T = max(lengths)
    ids = torch.tensor([s + [0] * (T - len(s)) for s in ids_list])
    types = None
    if type_list is not None and (cfg or case["config"]).get("type_vocab_size", 0) > 0:
        types = torch.tensor([s + [0] * (T - len(s)) for s in type_list])
    h = deberta_forward(case["enc"], cfg or case["config"], ids, lengths, types, impl, variant)
    return h * mp.key_mask(lengths, T)[..., None].to(D)


def logits_of(case, inputs, hidden):
    rows, counts = mh.head_rows(case, hidden, [len(i["ids"]) for i in inputs], inputs, case["spec"])
    return mh.split_rows(mh.head_matrix(case["W"], case["spec"], rows), counts, case["task"])


def finalize(case):
    case["enc"] = {k: mp.storage_round(v, "F32") for k, v in case["g"].P.items()}
    head = {k: mp.storage_round(v, "F32") for k, v in case["head"].items()}
    extras = {k: mp.storage_round(v, "F32") for k, v in case["extras"].items()}
    W = {"deberta." + k: v for k, v in case["enc"].items()}
    W.update(head)
    W.update(extras)
    for name, src in case.get("alias", {}).items():
        W[name] = W[src]
    case["W"] = W
    if case["spec"]:
        case["spec"] = dict(case["spec"], eps=case["config"]["layer_norm_eps"])


def save_weights(case, folder):
    entries = [(k, v, "F32") for k, v in case["W"].items()]
    path = os.path.join(folder, "model.safetensors")
    mp.write_safetensors(path, entries, {"format": "pt"})
    meta, got = mp.read_safetensors(path)
    check(meta == {"format": "pt"} and set(got) == set(case["W"]), f"{case['name']}: safetensors header round trip")
    for name, t, dt in entries:
        gd, gt = got[name]
        check(gd == dt and list(gt.shape) == list(t.shape) and torch.equal(gt, t.to(gt.dtype)), f"{case['name']}: {name} round trip")
    return {n: {"dtype": d, "shape": list(t.shape)} for n, t, d in sorted(entries, key=lambda e: e[0])}


def self_checks(case, inputs, hidden, logits):
    name = case["name"]
    ids = [i["ids"] for i in inputs]
    types = [i["typeIds"] for i in inputs]
    for b, inp in enumerate(inputs):  # each input alone == its row of the padded batch (key-only mask)
        h1 = encode(case, [inp["ids"]], [inp["typeIds"]])
        close(h1[0], hidden[b, :len(inp["ids"])], TOL, f"{name}: input {b} alone == padded batch")
    k = min((i for i in range(len(ids)) if len(ids[i]) <= 160), key=lambda i: -len(ids[i]))
    close(encode(case, [ids[k]], [types[k]], impl="loop"), encode(case, [ids[k]], [types[k]]), TOL,
          f"{name}: per-(query, key) scores with the scalar bucket == the gathers (len {len(ids[k])})")
    if case["spec"]:
        rows, _ = mh.head_rows(case, hidden, [len(s) for s in ids], inputs, case["spec"])
        close(mh.head_loop(case["W"], case["spec"], rows), mh.head_matrix(case["W"], case["spec"], rows), TOL,
              f"{name}: head per-element loop == matrix form")
    if case["config"].get("conv_kernel_size", 0) > 0:
        conv_loop_check(case["enc"], case["config"], name)


def trap_checks(case, inputs, hidden):
    """The mistakes the suite must catch move the hidden states well beyond float32 noise."""
    name, o = case["name"], rel_options(case["config"])
    ids = [i["ids"] for i in inputs]
    types = [i["typeIds"] for i in inputs]

    def moved(label, variant=None, cfg=None):
        diff = float((encode(case, ids, types, variant=variant, cfg=cfg) - hidden).abs().max())
        check(diff > TRAP, f"trap detectable: {name}: {label}", f"max|diff|={diff:.3g}")

    if o["c2p"] and o["relative"]:
        moved("c2p dropped", {"no_c2p": True})
    if o["p2c"] and o["relative"]:
        moved("p2c dropped", {"no_p2c": True})
        moved("p2c at the mirrored row (the keys' rows gathered at i - j, not j - i)", {"p2c_same_sign": True})
    if o["relative"] and (o["c2p"] or o["p2c"]):
        moved("scale sqrt(d) instead of sqrt(d (1 + terms))", {"scale1": True})
    if o["norm"]:
        moved("the table not normed", {"no_rel_norm": True})
    if o["relative"] and o["buckets"] and max(map(len, ids)) > o["buckets"] // 2 + 2:
        moved("floor instead of ceil in the log buckets", {"bucket_floor": True})
    if case["config"].get("embedding_size", case["config"]["hidden_size"]) != case["config"]["hidden_size"]:
        moved("the embeddings' LayerNorm dropped after embed_proj", {"no_embed_norm": True})
    if case["config"].get("conv_kernel_size", 0) > 0 and len(set(len(s) for s in ids)) > 1:
        moved("the convolution reading past a sequence's end", {"conv_pad_global": True})


def emit(case):
    name = case["name"]
    folder = os.path.join(OUT, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    finalize(case)
    mp.write_json(os.path.join(folder, "config.json"), case["config"], sort_keys=True)
    tensors = save_weights(case, folder)
    tok = case["tok"]
    mp.write_json(os.path.join(folder, "tokenizer.json"), tok["json"])
    mp.write_json(os.path.join(folder, "tokenizer_config.json"), tok["config"])
    mp.write_json(os.path.join(folder, "special_tokens_map.json"), tok["map"])
    inputs, version = mh.tokenize(case, folder)
    for inp in inputs:
        check(all(0 <= x < case["config"]["vocab_size"] for x in inp["ids"]), f"{name}: ids fit vocab_size")
        check(inp["tokens"][0] == "[CLS]" and inp["tokens"][-1] == "[SEP]", f"{name}: [CLS] ... [SEP]")
    hidden = encode(case, [i["ids"] for i in inputs], [i["typeIds"] for i in inputs])
    logits = logits_of(case, inputs, hidden) if case["spec"] else None
    self_checks(case, inputs, hidden, logits)
    trap_checks(case, inputs, hidden)
    lengths = [len(i["ids"]) for i in inputs]
    obj = {"case": name, "family": "deberta-v2", "architecture": case["arch"], "task": case.get("emitTask", case["task"]),
           "modelType": "deberta-v2", "notes": case["notes"]}
    if case["spec"]:
        obj.update({"head": dict(mh.canonical_head(case), task=obj["task"])})
    obj["tensors"] = tensors
    if "zeroShot" in case:
        obj["zeroShot"] = case["zeroShot"]
    obj["inputs"] = inputs
    if logits is not None:
        obj["logits"] = mh.nested(logits)
    obj["hidden"] = mh.nested([hidden[b, :L] for b, L in enumerate(lengths)])
    batches = []
    for bi, b in enumerate(case["batches"]):
        h = encode(case, b["ids"], b.get("typeIds"))
        for i, s in enumerate(b["ids"]):
            if len(s) <= 160:
                close(encode(case, [s], None if "typeIds" not in b else [b["typeIds"][i]])[0], h[i, :len(s)], TOL,
                      f"{name}: batch {bi} sequence {i} alone == padded")
        batches.append(dict(b, lengths=[len(s) for s in b["ids"]], hidden=mh.nested([h[i, :len(s)] for i, s in enumerate(b["ids"])])))
    if batches:
        obj["batches"] = batches
    obj["generator"] = {"script": "tests/reference/make_deberta.py", "torch": torch.__version__, "tokenizers": version}
    mh.write_expected(os.path.join(EXPECTED, name + ".json"), obj, {"inputs", "logits", "hidden", "batches"})
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(folder) for f in fs)
    return size


# ----------------------------------------------------------------------------------------------
# the rows of every distance, for tests/deberta.test.js (the C table against PyTorch)
# ----------------------------------------------------------------------------------------------

BUCKET_CONFIGS = [(256, 512), (256, 2048), (32, 64), (16, 40), (8, 12), (128, 1024), (0, 12)]
BUCKET_T = 4096            # distances the test probes: -(T-1) .. T-1
BUCKET_LIMIT = 1 << 24     # the core's longest sequence (SF_MAX_LEN): the saturation is checked up to it


def runs(values):
    """[[first distance, row], ...] where the row changes (values indexed by distance from 0)."""
    out = []
    for dist, v in enumerate(values):
        if not out or out[-1][1] != v:
            out.append([dist, int(v)])
    return out


def bucket_reference():
    entries = []
    for buckets, max_rel in BUCKET_CONFIGS:
        o = {"buckets": buckets, "max_rel": max_rel}
        dist = torch.arange(BUCKET_T)
        pos, neg = relative_rows(dist, o), relative_rows(-dist, o)
        span = buckets if buckets else max_rel
        # PyTorch float32 == float64 == the numpy float32 scalar form, on every distance tested
        sc = [row_scalar(int(r), o) for r in range(-(BUCKET_T - 1), BUCKET_T)]
        both = relative_rows(torch.arange(-(BUCKET_T - 1), BUCKET_T), o)
        check(both.tolist() == sc, f"rows ({buckets}, {max_rel}): PyTorch float32 == numpy float32 scalars, |d| < {BUCKET_T}")
        if buckets:
            mid = buckets // 2
            r = torch.arange(-(BUCKET_T - 1), BUCKET_T, dtype=torch.float64)
            a = r.abs()
            lp = torch.ceil(torch.log(a / mid) / math.log((max_rel - 1) / mid) * (mid - 1)) + mid
            b64 = torch.where(a <= mid, r, lp * torch.sign(r)).to(torch.long)
            rows64 = torch.clamp(b64 + span, 0, 2 * span - 1)
            check(torch.equal(rows64, both), f"rows ({buckets}, {max_rel}): float64 == float32, |d| < {BUCKET_T}")
        # past the tested distances nothing changes: PyTorch's rows stay at the ends up to the core's limit
        tail = []
        for lo in range(BUCKET_T, BUCKET_LIMIT, 1 << 22):
            d = torch.arange(lo, min(lo + (1 << 22), BUCKET_LIMIT))
            tail.append((int(relative_rows(d, o).min()), int(relative_rows(-d, o).max())))
        check(all(t == (2 * span - 1, 0) for t in tail) and int(pos[-1]) == 2 * span - 1 and int(neg[-1]) == 0,
              f"rows ({buckets}, {max_rel}): the last row and row 0 from before {BUCKET_T} to {BUCKET_LIMIT}")
        entries.append({"buckets": buckets, "maxDistance": max_rel, "rows": 2 * span,
                        "positive": runs(pos.tolist()), "negative": runs(neg.tolist())})
    # worked values of families-and-deberta.md (v3: buckets 256, max 512; span 256 added)
    o = {"buckets": 256, "max_rel": 512}
    want = {0: 256, 128: 384, 140: 393, 200: 425, 256: 448, 400: 489, 500: 510, 505: 510, 506: 511, 511: 511, 512: 511,
            -511: 1, -512: 0, 1000: 511}
    got = {k: int(relative_rows(torch.tensor(k), o)) for k in want}
    check(got == want, "v3 rows: 0->256, 128->384, 140->393, 200->425, 256->448, 400->489, 500->510, 506..->511, -511->1, -512->0", str(got))
    return {"T": BUCKET_T, "limit": BUCKET_LIMIT, "torch": torch.__version__, "configs": entries}


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------

def pipelines():
    """expected-pipelines.json for tests/deberta: make_head_pipelines.py's rules on these cases."""
    import make_head_pipelines as mhp
    mhp.HEADS, mhp.OUT, mhp.FOLDER = OUT, os.path.join(OUT, "expected-pipelines.json"), "tests/deberta"
    mhp.TRUNCATIONS = [("deberta-v3-nli", 24), ("deberta-v3-nli", 12), ("deberta-v3-rerank", 16)]
    mhp.main()


def main():
    os.makedirs(EXPECTED, exist_ok=True)
    for f in os.listdir(EXPECTED):
        if f.endswith(".json"):
            os.remove(os.path.join(EXPECTED, f))
    built = [make() for make in CASES]
    keep = {c["name"] for c in built} | {"expected"}
    for f in os.listdir(OUT):
        if os.path.isdir(os.path.join(OUT, f)) and f not in keep:
            shutil.rmtree(os.path.join(OUT, f))
    for case in built:
        size = emit(case)
        print(f"  {case['name']}: {size / 1000:.0f} kB", file=sys.stderr)
    ref = bucket_reference()
    with open(os.path.join(OUT, "buckets.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(ref, separators=(",", ":")) + "\n")
    pipelines()
    for n, d in mp.CHECKS:
        print(f"check ok: {n} {d}".rstrip())
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(OUT) for f in fs)
    print(f"{len(mp.CHECKS)} checks passed; {len(built)} cases; tests/deberta is {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
