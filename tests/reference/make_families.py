#!/usr/bin/env python3
"""Independent reference for the families of ELECTRA, RoFormer, GTE "new", EuroBERT, NeoBERT, ALBERT and
jina-embeddings-v3 (tests/families/).

Writes tiny random checkpoints in each family's exact Hugging Face folder layout (config.json, safetensors,
tokenizer.json, and sentence-transformers files where the real ones have them) into tests/families/<case>/, and
the float64 outputs of each family's forward and task head into tests/families/expected/<case>.json. Every forward
below was written from the upstream modelling code (transformers models/{electra,roformer,albert,eurobert}/
modeling_*.py, Alibaba-NLP/new-impl modeling.py, chandar-lab/NeoBERT model.py, jinaai/xlm-roberta-flash-
implementation modeling_xlm_roberta.py + modeling_lora.py), in plain torch ops; it shares no code with swapformer.
The safetensors writer, the random parameters and the tokenizer.json builders are make_pretrained.py's.

    /usr/bin/python3 tests/reference/make_families.py

Deterministic (per-case seeds from crc32 of the case name). Needs node and the npm package `tokenizers` for the
text cases (tokenize_with_rust.cjs). Any failed self-check stops the script.
"""
import json
import math
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_pretrained as mp  # noqa: E402  (building blocks only: safetensors, Gen, tokenizers, JSON helpers)
from make_pretrained import D, NEG, Gen, check, close, fmt, tensor_json, write_json, make_ids, make_pair  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "families")
EXPECTED = os.path.join(OUT, "expected")
FF_GAIN = 2.0

# ----------------------------------------------------------------------------------------------
# building blocks (float64)
# ----------------------------------------------------------------------------------------------


def lin(x, P, name):
    y = x @ P[name + ".weight"].T
    b = P.get(name + ".bias")
    return y if b is None else y + b


def ln(x, P, name, eps):
    return mp.layer_norm(x, P[name + ".weight"], P.get(name + ".bias"), eps)


def rms(x, w, eps):  # LlamaRMSNorm / nn.RMSNorm: x * rsqrt(mean(x^2) + eps) * w
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def heads_view(x, nh, d):  # [B, T, nh*d] -> [B, nh, T, d]
    B, T, _ = x.shape
    return x.view(B, T, nh, d).transpose(1, 2)


def merge(x):  # [B, nh, T, d] -> [B, T, nh*d]
    B, nh, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * d)


def attend(q, k, v, lengths, scale):
    """softmax(q k^T scale + key mask) v, the key mask of each sequence's real tokens (HF's extended mask)."""
    T = q.shape[2]
    s = (q @ k.transpose(-1, -2)) * scale
    mask = mp.key_mask(lengths, T)[:, None, None, :]
    return torch.softmax(s.masked_fill(~mask, NEG), dim=-1) @ v


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rope_half(T, inv_freq):
    """cos, sin [T, d] of the rotate_half layout: [f0..f_{d/2-1}, f0..f_{d/2-1}] (LlamaRotaryEmbedding, GTE)."""
    freqs = torch.outer(torch.arange(T, dtype=D), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def inv_freq(base, d):
    return 1.0 / (base ** (torch.arange(0, d, 2, dtype=D) / d))


def act(name):
    return mp.ACT[name]


def gelu(x):
    return mp.gelu_erf(x)


def post_norm_layer(x, lengths, P, n, nh, d, eps, ffn_act, rot=None):
    """BERT's post-norm layer under names n(q, k, v, o, n1, f1, f2, n2); rot(q, k) rotates q and k."""
    q, k, v = (heads_view(lin(x, P, n[w]), nh, d) for w in "qkv")
    if rot:
        q, k = rot(q, k)
    ctx = merge(attend(q, k, v, lengths, 1.0 / math.sqrt(d)))
    x = ln(lin(ctx, P, n["o"]) + x, P, n["n1"], eps)
    y = lin(ffn_act(lin(x, P, n["f1"])), P, n["f2"])
    return ln(y + x, P, n["n2"], eps)


def bert_names(p):
    return dict(q=p + "attention.self.query", k=p + "attention.self.key", v=p + "attention.self.value",
                o=p + "attention.output.dense", n1=p + "attention.output.LayerNorm", f1=p + "intermediate.dense",
                f2=p + "output.dense", n2=p + "output.LayerNorm")


def masked_mean(x, lengths):
    return torch.stack([x[b, :L].mean(0) for b, L in enumerate(lengths)])


# ----------------------------------------------------------------------------------------------
# the family forwards: hidden states [B, T, H] (padded rows not zeroed) and the head's logits
# ----------------------------------------------------------------------------------------------

def electra_forward(P, c, ids, lengths, type_ids):
    """transformers models/electra/modeling_electra.py: ElectraEmbeddings (LayerNorm over embedding_size), then
    embeddings_project (embedding_size != hidden_size), then BERT's layers."""
    B, T = ids.shape
    H, nh, eps = c["hidden_size"], c["num_attention_heads"], c["layer_norm_eps"]
    x = (P["embeddings.word_embeddings.weight"][ids] + P["embeddings.token_type_embeddings.weight"][type_ids]
         + P["embeddings.position_embeddings.weight"][torch.arange(T)][None])
    x = ln(x, P, "embeddings.LayerNorm", eps)
    if c["embedding_size"] != H:
        x = lin(x, P, "embeddings_project")
    for l in range(c["num_hidden_layers"]):
        x = post_norm_layer(x, lengths, P, bert_names(f"encoder.layer.{l}."), nh, H // nh, eps, act(c["hidden_act"]))
    return x


def electra_head(task, P, c, x, lengths, positions):
    if task == "sequence":  # ElectraClassificationHead: gelu, "although BERT uses tanh here"
        return lin(gelu(lin(x[:, 0], P, "classifier.dense")), P, "classifier.out_proj")
    if task == "token":
        return lin(x, P, "classifier")
    # ElectraGeneratorPredictions (dense to embedding_size, gelu, LayerNorm) + generator_lm_head tied to the table
    h = ln(gelu(lin(x, P, "generator_predictions.dense")), P, "generator_predictions.LayerNorm", c["layer_norm_eps"])
    return h @ P["embeddings.word_embeddings.weight"].T + P["generator_lm_head.bias"]


def roformer_sinusoids(n_pos, dim):
    """RoFormerSinusoidalPositionalEmbedding._init_weight: sin of the even columns in the first half, cos of the odd
    ones in the second, position_enc[pos, j] = pos / 10000^(2 (j // 2) / dim); float32 as HF stores it."""
    pos = torch.arange(n_pos, dtype=D)[:, None]
    j = torch.arange(dim)
    enc = pos / torch.pow(torch.tensor(10000.0, dtype=D), (2 * (j // 2)).to(D) / dim)[None, :]
    out = torch.empty(n_pos, dim, dtype=D)
    out[:, : dim // 2] = torch.sin(enc[:, 0::2])
    out[:, dim // 2:] = torch.cos(enc[:, 1::2])
    return out.to(torch.float32).to(D)


def roformer_rotate(x, sinusoidal):
    """RoFormerSelfAttention.apply_rotary_position_embeddings (x: [B, h, T, d])."""
    sin, cos = sinusoidal.chunk(2, dim=-1)
    sin_pos = torch.stack([sin, sin], dim=-1).reshape_as(sinusoidal)
    cos_pos = torch.stack([cos, cos], dim=-1).reshape_as(sinusoidal)
    rotated = torch.stack([-x[..., 1::2], x[..., ::2]], dim=-1).reshape_as(x)
    return x * cos_pos + rotated * sin_pos


def roformer_forward(P, c, ids, lengths, type_ids):
    B, T = ids.shape
    H, nh, eps = c["hidden_size"], c["num_attention_heads"], c["layer_norm_eps"]
    d = H // nh
    x = P["embeddings.word_embeddings.weight"][ids] + P["embeddings.token_type_embeddings.weight"][type_ids]
    x = ln(x, P, "embeddings.LayerNorm", eps)
    if c.get("embedding_size", H) != H:
        x = lin(x, P, "embeddings_project")
    sinus = roformer_sinusoids(c["max_position_embeddings"], d)[:T]
    rot = lambda q, k: (roformer_rotate(q, sinus), roformer_rotate(k, sinus))
    for l in range(c["num_hidden_layers"]):
        x = post_norm_layer(x, lengths, P, bert_names(f"encoder.layer.{l}."), nh, d, eps, act(c["hidden_act"]), rot)
    return x


def roformer_head(task, P, c, x, lengths, positions):
    if task == "sequence":  # RoFormerClassificationHead: dense, ACT2FN[hidden_act], out_proj
        return lin(act(c["hidden_act"])(lin(x[:, 0], P, "classifier.dense")), P, "classifier.out_proj")
    if task == "token":
        return lin(x, P, "classifier")
    h = act(c["hidden_act"])(lin(x, P, "cls.predictions.transform.dense"))  # to embedding_size
    h = ln(h, P, "cls.predictions.transform.LayerNorm", c["layer_norm_eps"])
    return h @ P["embeddings.word_embeddings.weight"].T + P["cls.predictions.bias"]


def gte_inv_freq(c, d):
    """NewEmbeddings._init_rope: RotaryEmbedding, or NTKScalingRotaryEmbedding whose cache (built for
    max_position_embeddings x factor at init, so at every length) uses (base f)^(-2i/d) / f^(2/d)."""
    base = float(c["rope_theta"])
    sc = c.get("rope_scaling")
    if not sc:
        return inv_freq(base, d)
    f = float(sc["factor"])
    return 1.0 / ((base * f) ** (torch.arange(0, d, 2, dtype=D) / d)) / f ** (2.0 / d)


def gte_forward(P, c, ids, lengths, type_ids):
    B, T = ids.shape
    H, nh, eps, I = c["hidden_size"], c["num_attention_heads"], c["layer_norm_eps"], c["intermediate_size"]
    d = H // nh
    x = P["embeddings.word_embeddings.weight"][ids]
    if c["type_vocab_size"] > 0:
        x = x + P["embeddings.token_type_embeddings.weight"][type_ids]
    x = ln(x, P, "embeddings.LayerNorm", eps)
    cos, sin = rope_half(T, gte_inv_freq(c, d))
    for l in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{l}."
        q, k, v = (heads_view(t, nh, d) for t in lin(x, P, p + "attention.qkv_proj").split(H, dim=-1))
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        x = ln(x + lin(merge(attend(q, k, v, lengths, 1.0 / math.sqrt(d))), P, p + "attention.o_proj"), P, p + "attn_ln", eps)
        up, gate = lin(x, P, p + "mlp.up_gate_proj").split(I, dim=-1)  # NewGatedMLP: up first, gate activated
        x = ln(x + lin(act(c["hidden_act"])(gate) * up, P, p + "mlp.down_proj"), P, p + "mlp_ln", eps)
    return x


def gte_head(task, P, c, x, lengths, positions):
    if task == "sequence":  # NewPooler (dense + tanh on the first token) + classifier
        return lin(torch.tanh(lin(x[:, 0], P, "pooler.dense")), P, "classifier")
    if task == "token":
        return lin(x, P, "classifier")
    h = ln(act(c["hidden_act"])(lin(x, P, "lm_head.dense")), P, "lm_head.norm", c["layer_norm_eps"])
    return h @ P["embeddings.word_embeddings.weight"].T + P["lm_head.decoder.bias"]


def eurobert_forward(P, c, ids, lengths, type_ids):
    """EuroBertModel (LlamaModel, bidirectional): pre-RMSNorm, GQA with repeat_kv, rotate_half RoPE, SwiGLU, norm."""
    B, T = ids.shape
    H, nh = c["hidden_size"], c["num_attention_heads"]
    nkv = c.get("num_key_value_heads") or nh
    d = c.get("head_dim") or H // nh
    eps = c["rms_norm_eps"]
    theta = c["rope_parameters"]["rope_theta"] if "rope_parameters" in c else c["rope_theta"]
    cos, sin = rope_half(T, inv_freq(float(theta), d))
    x = P["embed_tokens.weight"][ids]
    for l in range(c["num_hidden_layers"]):
        p = f"layers.{l}."
        h = rms(x, P[p + "input_layernorm.weight"], eps)
        q = heads_view(lin(h, P, p + "self_attn.q_proj"), nh, d)
        k = heads_view(lin(h, P, p + "self_attn.k_proj"), nkv, d)
        v = heads_view(lin(h, P, p + "self_attn.v_proj"), nkv, d)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = nh // nkv  # repeat_kv: kv head j serves query heads j*rep .. j*rep+rep-1
        k = k[:, :, None].expand(B, nkv, rep, T, d).reshape(B, nh, T, d)
        v = v[:, :, None].expand(B, nkv, rep, T, d).reshape(B, nh, T, d)
        x = x + lin(merge(attend(q, k, v, lengths, d ** -0.5)), P, p + "self_attn.o_proj")
        h = rms(x, P[p + "post_attention_layernorm.weight"], eps)
        x = x + lin(mp.silu(lin(h, P, p + "mlp.gate_proj")) * lin(h, P, p + "mlp.up_proj"), P, p + "mlp.down_proj")
    return rms(x, P["norm.weight"], eps)


def eurobert_head(task, P, c, x, lengths, positions):
    if task == "sequence":  # EuroBertForSequenceClassification: dense, nn.GELU(), classifier; bos / mean / late
        pooling = c.get("classifier_pooling", c.get("clf_pooling", "late"))
        if pooling == "late":
            logits = lin(gelu(lin(x, P, "dense")), P, "classifier")
            return masked_mean(logits, lengths)
        pooled = x[:, 0] if pooling == "bos" else masked_mean(x, lengths)
        return lin(gelu(lin(pooled, P, "dense")), P, "classifier")
    if task == "token":
        return lin(x, P, "classifier")
    return lin(x, P, "lm_head")


def neobert_freqs(d, T):
    """precompute_freqs_cis(dim, end, theta=10000): complex pairs (2i, 2i+1) rotated by t / 10000^(2i/d)."""
    f = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=D)[: d // 2] / d))
    return torch.polar(torch.ones(T, d // 2, dtype=D), torch.outer(torch.arange(T, dtype=D), f))


def neobert_rotate(x, freqs):  # apply_rotary_emb on [B, T, h, d]
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * freqs[None, :, None, :]).flatten(3)


def neobert_forward(P, c, ids, lengths, type_ids):
    B, T = ids.shape
    H, nh, eps = c["hidden_size"], c["num_attention_heads"], c["norm_eps"]
    d = H // nh
    freqs = neobert_freqs(d, T)
    x = P["encoder.weight"][ids]
    for l in range(c["num_hidden_layers"]):
        p = f"transformer_encoder.{l}."
        h = rms(x, P[p + "attention_norm.weight"], eps)
        q, k, v = (h @ P[p + "qkv.weight"].T).view(B, T, nh, 3 * d).chunk(3, dim=-1)  # per head [q | k | v]
        q, k = neobert_rotate(q, freqs), neobert_rotate(k, freqs)
        ctx = attend(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), lengths, 1.0 / math.sqrt(d))
        x = x + merge(ctx) @ P[p + "wo.weight"].T
        h = rms(x, P[p + "ffn_norm.weight"], eps)
        if p + "ffn.w12.weight" in P:  # xformers SwiGLU: w12 = [w1 | w2], silu(x1) * x2
            x1, x2 = (h @ P[p + "ffn.w12.weight"].T).chunk(2, dim=-1)
        else:  # the native fallback with w1, w2, w3
            x1, x2 = h @ P[p + "ffn.w1.weight"].T, h @ P[p + "ffn.w2.weight"].T
        x = x + (mp.silu(x1) * x2) @ P[p + "ffn.w3.weight"].T
    return rms(x, P["layer_norm.weight"], eps)


def neobert_head(task, P, c, x, lengths, positions):
    if task == "sequence":  # dense, tanh, classifier on the first token
        return lin(torch.tanh(lin(x[:, 0], P, "dense")), P, "classifier")
    return lin(x, P, "decoder")


def albert_forward(P, c, ids, lengths, type_ids):
    """AlbertEmbeddings (embedding_size) -> AlbertTransformer: embedding_hidden_mapping_in, then layer l runs group
    int(l / (num_hidden_layers / num_hidden_groups)), the same tensors for every layer of a group."""
    B, T = ids.shape
    H, nh, eps = c["hidden_size"], c["num_attention_heads"], c["layer_norm_eps"]
    x = (P["embeddings.word_embeddings.weight"][ids] + P["embeddings.token_type_embeddings.weight"][type_ids]
         + P["embeddings.position_embeddings.weight"][torch.arange(T)][None])
    x = ln(x, P, "embeddings.LayerNorm", eps)
    x = lin(x, P, "encoder.embedding_hidden_mapping_in")
    L, G = c["num_hidden_layers"], c["num_hidden_groups"]
    for l in range(L):
        g = int(l / (L / G))
        p = f"encoder.albert_layer_groups.{g}.albert_layers.0."
        n = dict(q=p + "attention.query", k=p + "attention.key", v=p + "attention.value", o=p + "attention.dense",
                 n1=p + "attention.LayerNorm", f1=p + "ffn", f2=p + "ffn_output", n2=p + "full_layer_layer_norm")
        x = post_norm_layer(x, lengths, P, n, nh, H // nh, eps, act(c["hidden_act"]))
    return x


def albert_head(task, P, c, x, lengths, positions):
    if task == "sequence":  # AlbertModel.pooler (a bare Linear) + tanh, then classifier
        return lin(torch.tanh(lin(x[:, 0], P, "pooler")), P, "classifier")
    if task == "token":
        return lin(x, P, "classifier")
    h = ln(act(c["hidden_act"])(lin(x, P, "predictions.dense")), P, "predictions.LayerNorm", c["layer_norm_eps"])
    return h @ P["embeddings.word_embeddings.weight"].T + P["predictions.bias"]


def jina_v3_weights(P, c, task):
    """The weights a task runs (LoRAParametrization.lora_forward): Linear W + B[t] A[t] scale, Embedding
    W + A[t] B[t] scale, scale = lora_alpha / lora_rank; no task: the originals."""
    out = {}
    t = None if task is None else c["lora_adaptations"].index(task)
    s = c["lora_alpha"] / c["lora_rank"]
    for name, w in P.items():
        if not name.endswith(".parametrizations.weight.original"):
            if ".lora_" not in name:
                out[name] = w
            continue
        base = name[: -len(".parametrizations.weight.original")]
        A, B = P[base + ".parametrizations.weight.0.lora_A"], P[base + ".parametrizations.weight.0.lora_B"]
        if t is None:
            out[base + ".weight"] = w
        elif base.startswith("embeddings."):
            out[base + ".weight"] = w + (A[t] @ B[t]) * s
        else:
            out[base + ".weight"] = w + (B[t] @ A[t]) * s
    return out


def jina_v3_forward(P, c, ids, lengths, type_ids, task=None):
    """XLMRobertaModel of xlm-roberta-flash-implementation: word + type embeddings, emb_ln, post-norm Blocks with a
    fused Wqkv "(three h d)", rotary (rotate_half, rotary_emb_base) on q and k, GELU MLP fc1 / fc2."""
    W = jina_v3_weights(P, c, task)
    B, T = ids.shape
    H, nh, eps = c["hidden_size"], c["num_attention_heads"], c["layer_norm_eps"]
    d = H // nh
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.token_type_embeddings.weight"][type_ids]
    x = ln(x, W, "emb_ln", eps)
    cos, sin = rope_half(T, inv_freq(float(c["rotary_emb_base"]), d))
    for l in range(c["num_hidden_layers"]):
        p = f"encoder.layers.{l}."
        qkv = lin(x, W, p + "mixer.Wqkv").view(B, T, 3, nh, d)
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        x = ln(lin(merge(attend(q, k, v, lengths, d ** -0.5)), W, p + "mixer.out_proj") + x, W, p + "norm1", eps)
        y = lin(gelu(lin(x, W, p + "mlp.fc1")), W, p + "mlp.fc2")
        x = ln(y + x, W, p + "norm2", eps)
    return x


FAMILIES = {"electra": (electra_forward, electra_head), "roformer": (roformer_forward, roformer_head),
            "gte": (gte_forward, gte_head), "eurobert": (eurobert_forward, eurobert_head),
            "neobert": (neobert_forward, neobert_head), "albert": (albert_forward, albert_head),
            "jina-v3": (jina_v3_forward, None)}


# ----------------------------------------------------------------------------------------------
# parameters
# ----------------------------------------------------------------------------------------------

def bert_layer_params(g, names, H, I, bias=True):
    g.linear(names["q"], H, H, bias=bias, gain=1.5)
    g.linear(names["k"], H, H, bias=bias, gain=1.5)
    g.linear(names["v"], H, H, bias=bias)
    g.linear(names["o"], H, H, bias=bias)
    g.norm(names["n1"], H)
    g.linear(names["f1"], I, H, bias=bias, gain=FF_GAIN)
    g.linear(names["f2"], H, I, bias=bias)
    g.norm(names["n2"], H)


def electra_params(g, c, position=True):
    H, E, I, V = c["hidden_size"], c.get("embedding_size") or c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    g.emb("embeddings.word_embeddings", V, E, 0.5)
    if position:
        g.emb("embeddings.position_embeddings", c["max_position_embeddings"], E, 0.3)
    g.emb("embeddings.token_type_embeddings", c["type_vocab_size"], E, 0.3)
    g.norm("embeddings.LayerNorm", E)
    if E != H:
        g.linear("embeddings_project", H, E)
    for l in range(c["num_hidden_layers"]):
        bert_layer_params(g, bert_names(f"encoder.layer.{l}."), H, I)


def gte_params(g, c):
    H, I = c["hidden_size"], c["intermediate_size"]
    g.emb("embeddings.word_embeddings", c["vocab_size"], H, 0.5)
    if c["type_vocab_size"] > 0:
        g.emb("embeddings.token_type_embeddings", c["type_vocab_size"], H, 0.3)
    g.norm("embeddings.LayerNorm", H)
    for l in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{l}."
        g.P[p + "attention.qkv_proj.weight"] = torch.cat([g.normal((H, H), 1.5 / math.sqrt(H)), g.normal((H, H), 1.5 / math.sqrt(H)),
                                                          g.normal((H, H), 1.0 / math.sqrt(H))])
        g.P[p + "attention.qkv_proj.bias"] = g.normal((3 * H,), 0.05)
        g.linear(p + "attention.o_proj", H, H)
        g.norm(p + "attn_ln", H)
        g.linear(p + "mlp.up_gate_proj", 2 * I, H, bias=False, gain=FF_GAIN)
        g.linear(p + "mlp.down_proj", H, I)
        g.norm(p + "mlp_ln", H)


def eurobert_params(g, c, attention_bias=False, mlp_bias=False):
    H, I, nh = c["hidden_size"], c["intermediate_size"], c["num_attention_heads"]
    nkv = c.get("num_key_value_heads") or nh
    d = c.get("head_dim") or H // nh
    g.emb("embed_tokens", c["vocab_size"], H, 0.5)
    for l in range(c["num_hidden_layers"]):
        p = f"layers.{l}."
        g.norm(p + "input_layernorm", H, bias=False)
        g.linear(p + "self_attn.q_proj", nh * d, H, bias=attention_bias, gain=1.5)
        g.linear(p + "self_attn.k_proj", nkv * d, H, bias=attention_bias, gain=1.5)
        g.linear(p + "self_attn.v_proj", nkv * d, H, bias=attention_bias)
        g.linear(p + "self_attn.o_proj", H, nh * d, bias=attention_bias)
        g.norm(p + "post_attention_layernorm", H, bias=False)
        g.linear(p + "mlp.gate_proj", I, H, bias=mlp_bias, gain=FF_GAIN)
        g.linear(p + "mlp.up_proj", I, H, bias=mlp_bias, gain=FF_GAIN)
        g.linear(p + "mlp.down_proj", H, I, bias=mlp_bias)
    g.norm("norm", H, bias=False)


def neobert_width(I):
    """EncoderBlock: int(2 I / 3) rounded up to a multiple of 8."""
    w = int(2 * I / 3)
    return 8 * ((w + 7) // 8)


def neobert_params(g, c, fused=True):
    H, nh = c["hidden_size"], c["num_attention_heads"]
    d, F_ = H // nh, neobert_width(c["intermediate_size"])
    g.emb("encoder", c["vocab_size"], H, 0.5)
    for l in range(c["num_hidden_layers"]):
        p = f"transformer_encoder.{l}."
        rows = []
        for h in range(nh):  # per head: q, k (sharper), v
            rows += [g.normal((d, H), 1.5 / math.sqrt(H)), g.normal((d, H), 1.5 / math.sqrt(H)), g.normal((d, H), 1.0 / math.sqrt(H))]
        g.P[p + "qkv.weight"] = torch.cat(rows)
        g.linear(p + "wo", H, H, bias=False)
        g.norm(p + "attention_norm", H, bias=False)
        g.norm(p + "ffn_norm", H, bias=False)
        if fused:
            g.linear(p + "ffn.w12", 2 * F_, H, bias=False, gain=FF_GAIN)
        else:
            g.linear(p + "ffn.w1", F_, H, bias=False, gain=FF_GAIN)
            g.linear(p + "ffn.w2", F_, H, bias=False, gain=FF_GAIN)
        g.linear(p + "ffn.w3", H, F_, bias=False)
    g.norm("layer_norm", H, bias=False)


def albert_params(g, c):
    H, E, I, V = c["hidden_size"], c["embedding_size"], c["intermediate_size"], c["vocab_size"]
    g.emb("embeddings.word_embeddings", V, E, 0.5)
    g.emb("embeddings.position_embeddings", c["max_position_embeddings"], E, 0.3)
    g.emb("embeddings.token_type_embeddings", c["type_vocab_size"], E, 0.3)
    g.norm("embeddings.LayerNorm", E)
    g.linear("encoder.embedding_hidden_mapping_in", H, E)
    for grp in range(c["num_hidden_groups"]):
        p = f"encoder.albert_layer_groups.{grp}.albert_layers.0."
        bert_layer_params(g, dict(q=p + "attention.query", k=p + "attention.key", v=p + "attention.value",
                                  o=p + "attention.dense", n1=p + "attention.LayerNorm", f1=p + "ffn", f2=p + "ffn_output",
                                  n2=p + "full_layer_layer_norm"), H, I)


def jina_v3_params(g, c):
    H, I, V, r, n = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["lora_rank"], len(c["lora_adaptations"])
    PO, LA, LB = ".parametrizations.weight.original", ".parametrizations.weight.0.lora_A", ".parametrizations.weight.0.lora_B"

    def emb(name, rows, cols, std):  # Embedding: A [n, V, r], B [n, r, C] (modeling_lora: fan_in_fan_out)
        g.P[name + PO] = g.normal((rows, cols), std)
        g.P[name + LA] = g.normal((n, rows, r), 0.5)
        g.P[name + LB] = g.normal((n, r, cols), 0.3)

    def linear(name, out, inp, gain=1.0):  # Linear: A [n, r, in], B [n, out, r]; trained, so B != 0
        g.P[name + PO] = g.normal((out, inp), gain / math.sqrt(inp))
        g.P[name + ".bias"] = g.normal((out,), 0.05)
        g.P[name + LA] = g.normal((n, r, inp), 1.0 / math.sqrt(inp))
        g.P[name + LB] = g.normal((n, out, r), 0.4 * gain / math.sqrt(r))

    emb("embeddings.word_embeddings", V, H, 0.5)
    emb("embeddings.token_type_embeddings", c["type_vocab_size"], H, 0.3)
    g.norm("emb_ln", H)
    for l in range(c["num_hidden_layers"]):
        p = f"encoder.layers.{l}."
        linear(p + "mixer.Wqkv", 3 * H, H, 1.3)
        linear(p + "mixer.out_proj", H, H)
        g.norm(p + "norm1", H)
        linear(p + "mlp.fc1", I, H, FF_GAIN)
        linear(p + "mlp.fc2", H, I)
        g.norm(p + "norm2", H)


# ----------------------------------------------------------------------------------------------
# tokenizers
# ----------------------------------------------------------------------------------------------

def tok_llama3():
    """EuroBERT-like byte-level BPE: <|begin_of_text|> A <|end_of_text|> (TemplateProcessing)."""
    front = ["<|begin_of_text|>", "<|end_of_text|>", "<|mask|>", "<|pad|>"]
    tj, vocab = mp.bpe_tokenizer_json([], front, lambda ids: mp.template(
        "<|begin_of_text|>:0 $A:0 <|end_of_text|>:0", "<|begin_of_text|>:0 $A:0 <|end_of_text|>:0 $B:0 <|end_of_text|>:0",
        [("<|begin_of_text|>", ids["<|begin_of_text|>"]), ("<|end_of_text|>", ids["<|end_of_text|>"])]))
    ids = {t: i for i, t in enumerate(vocab)}
    cfg = {"bos_token": "<|begin_of_text|>", "clean_up_tokenization_spaces": True, "eos_token": "<|end_of_text|>",
           "mask_token": "<|mask|>", "model_max_length": 8192, "pad_token": "<|end_of_text|>",
           "tokenizer_class": "PreTrainedTokenizerFast"}
    smap = {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>", "mask_token": "<|mask|>",
            "pad_token": "<|end_of_text|>"}
    seq = {"kind": "bpe", "bos": [ids["<|begin_of_text|>"]], "eos": [ids["<|end_of_text|>"]],
           "sep_pair": [ids["<|end_of_text|>"]], "lo": 0, "hi": ids["<|begin_of_text|>"], "pad": ids["<|end_of_text|>"]}
    return {"json": tj, "vocab": vocab, "config": cfg, "map": smap, "seq": seq, "ids": ids}


def tok_albert():
    """ALBERT-like Unigram (AlbertConverter: [CLS] A [SEP], pair type ids 1)."""
    front = ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
    tj, vocab = mp.unigram_tokenizer_json(front, mp.unigram_pieces(13), [], 1, lambda ids: mp.template(
        "[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1", [("[CLS]", 2), ("[SEP]", 3)]))
    cfg = {"bos_token": "[CLS]", "cls_token": "[CLS]", "do_lower_case": True, "eos_token": "[SEP]", "keep_accents": False,
           "mask_token": "[MASK]", "model_max_length": 512, "pad_token": "<pad>", "remove_space": True,
           "sep_token": "[SEP]", "tokenizer_class": "AlbertTokenizer", "unk_token": "<unk>"}
    smap = {"bos_token": "[CLS]", "cls_token": "[CLS]", "eos_token": "[SEP]", "mask_token": "[MASK]",
            "pad_token": "<pad>", "sep_token": "[SEP]", "unk_token": "<unk>"}
    seq = {"kind": "unigram", "bos": [2], "eos": [3], "sep_pair": [3], "lo": 5, "hi": len(vocab), "pad": 0}
    return {"json": tj, "vocab": vocab, "config": cfg, "map": smap, "seq": seq}


# ----------------------------------------------------------------------------------------------
# the cases
# ----------------------------------------------------------------------------------------------

TEXTS = ["Hello, world!", "The quick brown fox jumps over the lazy dog.", "what is a transformer? a model that encodes text"]


def labels(n):
    return {"id2label": {str(i): f"L{i}" for i in range(n)}, "label2id": {f"L{i}": i for i in range(n)}}


def bert_like_config(tok, **kw):
    c = {"attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
         "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-12, "max_position_embeddings": 128,
         "num_attention_heads": 4, "num_hidden_layers": 2, "pad_token_id": 0, "torch_dtype": "float32",
         "transformers_version": "4.46.0", "type_vocab_size": 2, "vocab_size": len(tok["vocab"])}
    c.update(kw)
    return c


def head_extras(g, task, H, n_labels=None, dense=None, out=None):
    """Head tensors under their HF names: dense [H, H] + out [labels, H]."""
    P = {}
    if dense:
        P[dense + ".weight"] = g.normal((H, H), 1.5 / math.sqrt(H))
        P[dense + ".bias"] = g.normal((H,), 0.05)
    if out:
        P[out + ".weight"] = g.normal((n_labels, H), 1.0 / math.sqrt(H))
        P[out + ".bias"] = g.normal((n_labels,), 0.1)
    return P


def case_electra_discriminator():
    name = "electra-discriminator"
    tok = mp.tok_wordpiece()
    c = bert_like_config(tok, architectures=["ElectraForPreTraining"], embedding_size=16, model_type="electra",
                         summary_activation="gelu", summary_type="first", summary_use_proj=True)
    g = Gen(name)
    electra_params(g, c)
    extras = {"discriminator_predictions.dense.weight": g.normal((32, 32), 0.2),
              "discriminator_predictions.dense.bias": g.normal((32,), 0.05),
              "discriminator_predictions.dense_prediction.weight": g.normal((1, 32), 0.2),
              "discriminator_predictions.dense_prediction.bias": g.normal((1,), 0.05)}
    batches = [[make_pair(g, tok, 20, 17), make_pair(g, tok, 5, 3)], [make_ids(g, tok, 6)]]
    return dict(name=name, family="electra", task="embedding", config=c, g=g, tok=tok, prefix="electra.", extras=extras,
                batches=batches, texts=TEXTS, expect={"embedDim": 16},
                notes="google/electra-*-discriminator layout: ElectraForPreTraining, 'electra.' prefix, "
                      "discriminator_predictions.* (the replaced-token head, ignored by an encoder), embedding_size 16 "
                      "< hidden_size 32 (embeddings_project after the 16-wide LayerNorm), token type pairs.")


def case_electra_seq():
    name = "electra-seq"
    tok = mp.tok_wordpiece()
    c = bert_like_config(tok, architectures=["ElectraForSequenceClassification"], embedding_size=32, model_type="electra",
                         hidden_act="gelu_new", **labels(3))
    g = Gen(name)
    electra_params(g, c)
    extras = head_extras(g, "sequence", 32, 3, "classifier.dense", "classifier.out_proj")
    batches = [[make_pair(g, tok, 9, 12), make_ids(g, tok, 30), make_ids(g, tok, 4)]]
    return dict(name=name, family="electra", task="sequence", config=c, g=g, tok=tok, prefix="electra.", extras=extras,
                batches=batches, notes="ElectraForSequenceClassification: classifier.dense + gelu (not BERT's tanh) + "
                                       "classifier.out_proj on the first token; embedding_size = hidden_size (no "
                                       "embeddings_project); gelu_new in the layers.")


def case_electra_generator():
    name = "electra-generator-mlm"
    tok = mp.tok_wordpiece()
    c = bert_like_config(tok, architectures=["ElectraForMaskedLM"], embedding_size=16, hidden_size=24,
                         num_attention_heads=3, intermediate_size=48, model_type="electra")
    g = Gen(name)
    electra_params(g, c)
    E, H, V = 16, 24, c["vocab_size"]
    extras = {"generator_predictions.dense.weight": g.normal((E, H), 1.5 / math.sqrt(H)),
              "generator_predictions.dense.bias": g.normal((E,), 0.05),
              "generator_predictions.LayerNorm.weight": g.normal((E,), 0.1, 1.0),
              "generator_predictions.LayerNorm.bias": g.normal((E,), 0.05),
              "generator_lm_head.bias": g.normal((V,), 0.1)}
    batches = [[make_ids(g, tok, 25), make_ids(g, tok, 7)]]
    return dict(name=name, family="electra", task="mlm", config=c, g=g, tok=tok, prefix="electra.", extras=extras,
                tied={"generator_lm_head.weight": "embeddings.word_embeddings.weight"}, batches=batches,
                notes="ElectraForMaskedLM (a generator): generator_predictions (dense 24 -> 16 = embedding_size, gelu, "
                      "LayerNorm) and generator_lm_head tied to the 16-wide token table, with its bias.")


def case_roformer_mlm():
    name = "roformer-mlm"
    tok = mp.tok_wordpiece()
    c = bert_like_config(tok, architectures=["RoFormerForMaskedLM"], embedding_size=16, model_type="roformer",
                         max_position_embeddings=64, rotary_value=False, use_cache=True)
    g = Gen(name)
    electra_params(g, c, position=False)
    E, H, V = 16, 32, c["vocab_size"]
    extras = {"cls.predictions.transform.dense.weight": g.normal((E, H), 1.5 / math.sqrt(H)),
              "cls.predictions.transform.dense.bias": g.normal((E,), 0.05),
              "cls.predictions.transform.LayerNorm.weight": g.normal((E,), 0.1, 1.0),
              "cls.predictions.transform.LayerNorm.bias": g.normal((E,), 0.05),
              "cls.predictions.bias": g.normal((V,), 0.1),
              "roformer.encoder.embed_positions.weight": roformer_sinusoids(64, 8)}
    batches = [[make_ids(g, tok, 40), make_ids(g, tok, 9)], [make_ids(g, tok, 3)]]
    return dict(name=name, family="roformer", task="mlm", config=c, g=g, tok=tok, prefix="roformer.", extras=extras,
                tied={"cls.predictions.decoder.weight": "embeddings.word_embeddings.weight"}, batches=batches,
                expect={"embedDim": 16},
                notes="RoFormerForMaskedLM: BERT's names without a position table, the fixed sinusoid table "
                      "encoder.embed_positions.weight [64, 8] saved (ignored), interleaved RoPE on q and k, "
                      "embedding_size 16 (embeddings_project), the MLM transform ending at 16 and the tied decoder.")


def case_roformer_seq():
    name = "roformer-seq"
    tok = mp.tok_wordpiece()
    c = bert_like_config(tok, architectures=["RoFormerForSequenceClassification"], model_type="roformer", hidden_act="gelu_new",
                         max_position_embeddings=64, **labels(2))
    g = Gen(name)
    electra_params(g, c, position=False)
    extras = head_extras(g, "sequence", 32, 2, "classifier.dense", "classifier.out_proj")
    batches = [[make_pair(g, tok, 12, 10), make_ids(g, tok, 5)]]
    return dict(name=name, family="roformer", task="sequence", config=c, g=g, tok=tok, prefix="roformer.", extras=extras,
                batches=batches, notes="RoFormerForSequenceClassification: classifier.dense + hidden_act (gelu_new) + out_proj.")


def case_roformer_token():
    name = "roformer-token"
    tok = mp.tok_wordpiece()
    c = bert_like_config(tok, architectures=["RoFormerForTokenClassification"], model_type="roformer",
                         max_position_embeddings=64, num_attention_heads=2, **labels(5))
    g = Gen(name)
    electra_params(g, c, position=False)
    extras = head_extras(g, "token", 32, 5, None, "classifier")
    batches = [[make_ids(g, tok, 33), make_ids(g, tok, 6)]]
    return dict(name=name, family="roformer", task="token", config=c, g=g, tok=tok, prefix="roformer.", extras=extras,
                batches=batches, notes="RoFormerForTokenClassification, 2 heads of 16.")


def gte_config(tok, **kw):
    c = {"architectures": ["NewModel"], "attention_probs_dropout_prob": 0.0,
         "auto_map": {"AutoConfig": "Alibaba-NLP/new-impl--configuration.NewConfig", "AutoModel": "Alibaba-NLP/new-impl--modeling.NewModel"},
         "classifier_dropout": None, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
         "initializer_range": 0.02, "intermediate_size": 48, "layer_norm_eps": 1e-12, "layer_norm_type": "layer_norm",
         "logn_attention_clip1": False, "logn_attention_scale": False, "max_position_embeddings": 8192,
         "model_type": "new", "num_attention_heads": 4, "num_hidden_layers": 2, "pack_qkv": True, "pad_token_id": 0,
         "position_embedding_type": "rope", "rope_scaling": {"factor": 2.0, "type": "ntk"}, "rope_theta": 500,
         "torch_dtype": "float32", "transformers_version": "4.39.1", "type_vocab_size": 0, "unpad_inputs": False,
         "use_memory_efficient_attention": False, "vocab_size": len(tok["vocab"])}
    c.update(kw)
    return c


def case_gte_embed():
    name = "gte-embed-ntk"
    tok = mp.tok_wordpiece()
    c = gte_config(tok)
    g = Gen(name)
    gte_params(g, c)
    st = {"modules": mp.st_modules(False, True), "sbert": {"max_seq_length": 8192, "do_lower_case": False},
          "pooling": mp.pooling_config(32, ["cls"]), "version": mp.st_version()}
    batches = [[make_ids(g, tok, 60), make_ids(g, tok, 13), make_ids(g, tok, 4)]]
    return dict(name=name, family="gte", task="embedding", config=c, g=g, tok=tok, st=st, pooling="cls", batches=batches,
                texts=TEXTS, expect={"positionOptions": {"base": 500, "style": "half", "scaling": {"type": "fixed-ntk", "factor": 2}}},
                notes="gte-base-en-v1.5-like NewModel, no prefix, no token types: fused qkv_proj, RoPE base 500 with "
                      "rope_scaling {type: ntk, factor 2} (NTKScalingRotaryEmbedding: (base f)^(-2i/d) / f^(2/d) at "
                      "every length), post-norm attn_ln / mlp_ln, up_gate_proj with up first and the gelu gate "
                      "second; ST folder: CLS pooling, Normalize.")


def case_gte_reranker():
    name = "gte-rerank"
    tok = mp.tok_xlmr()
    c = gte_config(tok, architectures=["NewForSequenceClassification"], rope_scaling={"factor": 8.0, "type": "ntk"},
                   rope_theta=160000, type_vocab_size=1, layer_norm_eps=1e-5, num_attention_heads=2, pad_token_id=1, **labels(1))
    g = Gen(name)
    gte_params(g, c)
    extras = head_extras(g, "sequence", 32, 1, "new.pooler.dense", "classifier")
    pairs = [make_pair(g, tok, 15, 20), make_pair(g, tok, 3, 4)]
    batches = [[(ids, [0] * len(ids)) for ids, _ in pairs]]  # one token type: every type id 0 (XLM-R pairs)
    return dict(name=name, family="gte", task="sequence", config=c, g=g, tok=tok, prefix="new.", extras=extras,
                batches=batches, notes="gte-multilingual-reranker-like NewForSequenceClassification: 'new.' prefix, "
                                       "one label (a score), new.pooler.dense + tanh + classifier, XLM-R Unigram pairs, "
                                       "one token type, NTK factor 8, base 160000, 2 heads of 16.")


def case_gte_mlm():
    name = "gte-mlm"
    tok = mp.tok_wordpiece()
    c = gte_config(tok, architectures=["NewForMaskedLM"], rope_scaling=None, type_vocab_size=2, hidden_act="gelu_new")
    g = Gen(name)
    gte_params(g, c)
    H, V = 32, c["vocab_size"]
    extras = {"lm_head.dense.weight": g.normal((H, H), 1.5 / math.sqrt(H)), "lm_head.dense.bias": g.normal((H,), 0.05),
              "lm_head.norm.weight": g.normal((H,), 0.1, 1.0), "lm_head.norm.bias": g.normal((H,), 0.05),
              "lm_head.decoder.bias": g.normal((V,), 0.1)}
    batches = [[make_pair(g, tok, 11, 8), make_ids(g, tok, 20)]]
    return dict(name=name, family="gte", task="mlm", config=c, g=g, tok=tok, prefix="new.", extras=extras,
                tied={"lm_head.decoder.weight": "embeddings.word_embeddings.weight"}, batches=batches,
                notes="NewForMaskedLM: lm_head.{dense, gelu_new, norm} and the tied decoder with its bias; no rope "
                      "scaling; two token types; the gelu_new gate.")


def eurobert_config(tok, **kw):
    c = {"architectures": ["EuroBertModel"], "attention_bias": False, "attention_dropout": 0.0,
         "bos_token_id": tok["ids"]["<|begin_of_text|>"], "eos_token_id": tok["ids"]["<|end_of_text|>"],
         "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 56,
         "mask_token_id": tok["ids"]["<|mask|>"], "max_position_embeddings": 8192, "mlp_bias": False,
         "model_type": "eurobert", "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
         "pad_token_id": tok["ids"]["<|end_of_text|>"], "rms_norm_eps": 1e-05, "rope_theta": 250000.0,
         "tie_word_embeddings": False, "torch_dtype": "float32", "transformers_version": "4.48.0",
         "vocab_size": len(tok["vocab"])}
    c.update(kw)
    return c


def case_eurobert_mlm():
    name = "eurobert-gqa-mlm"
    tok = tok_llama3()
    c = eurobert_config(tok, architectures=["EuroBertForMaskedLM"], head_dim=12, mlp_bias=True)
    g = Gen(name)
    eurobert_params(g, c, mlp_bias=True)
    V = c["vocab_size"]
    extras = {"lm_head.weight": g.normal((V, 32), 1.0 / math.sqrt(32)), "lm_head.bias": g.normal((V,), 0.1)}
    batches = [[make_ids(g, tok, 45), make_ids(g, tok, 8)], [make_ids(g, tok, 2)]]
    return dict(name=name, family="eurobert", task="mlm", config=c, g=g, tok=tok, prefix="model.", extras=extras,
                batches=batches, expect={"kvHeads": 2, "headDim": 12},
                notes="EuroBertForMaskedLM: 'model.' prefix, grouped-query attention (4 query heads on 2 kv heads), "
                      "head_dim 12 (attention width 48 != hidden 32), rope_theta 250000, pre-RMSNorm, SwiGLU with "
                      "mlp_bias, final norm; an untied lm_head with its bias (mlp_bias).")


def case_eurobert_seq_late():
    name = "eurobert-seq-late"
    tok = tok_llama3()
    c = eurobert_config(tok, architectures=["EuroBertForSequenceClassification"], num_key_value_heads=1,
                        rope_parameters={"rope_theta": 10000.0, "rope_type": "default"}, **labels(3))
    c.pop("rope_theta")
    g = Gen(name)
    eurobert_params(g, c)
    extras = head_extras(g, "sequence", 32, 3, "dense", "classifier")
    batches = [[make_ids(g, tok, 21), make_ids(g, tok, 5), make_ids(g, tok, 70)]]
    return dict(name=name, family="eurobert", task="sequence", config=c, g=g, tok=tok, prefix="model.", extras=extras,
                batches=batches, expect={"kvHeads": 1}, head={"pooling": "late"},
                notes="EuroBertForSequenceClassification without classifier_pooling: 'late' (dense, GELU, classifier on "
                      "every token, then the mean of the logits over the real tokens); one kv head for all 4 query "
                      "heads; rope_parameters (transformers v5 config).")


def case_eurobert_seq_mean():
    name = "eurobert-seq-mean"
    tok = tok_llama3()
    c = eurobert_config(tok, architectures=["EuroBertForSequenceClassification"], clf_pooling="mean", **labels(2))
    g = Gen(name)
    eurobert_params(g, c, attention_bias=True)
    extras = head_extras(g, "sequence", 32, 2, "dense", "classifier")
    batches = [[make_ids(g, tok, 14), make_ids(g, tok, 30)]]
    return dict(name=name, family="eurobert", task="sequence", config=c, g=g, tok=tok, prefix="model.", extras=extras,
                batches=batches, head={"pooling": "mean"},
                notes="The remote code's legacy key clf_pooling = 'mean'; attention_bias on q, k, v, o.")


def case_eurobert_token():
    name = "eurobert-token"
    tok = tok_llama3()
    c = eurobert_config(tok, architectures=["EuroBertForTokenClassification"], **labels(4))
    g = Gen(name)
    eurobert_params(g, c)
    extras = head_extras(g, "token", 32, 4, None, "classifier")
    batches = [[make_ids(g, tok, 17), make_ids(g, tok, 9)]]
    return dict(name=name, family="eurobert", task="token", config=c, g=g, tok=tok, prefix="model.", extras=extras,
                batches=batches, notes="EuroBertForTokenClassification.")


def neobert_config(tok, **kw):
    c = {"architectures": ["NeoBERTLMHead"], "auto_map": {"AutoConfig": "model.NeoBERTConfig", "AutoModel": "model.NeoBERT",
                                                         "AutoModelForMaskedLM": "model.NeoBERTLMHead"},
         "decoder_init_range": 0.02, "dim_head": 8, "embedding_init_range": 0.02, "hidden_size": 32,
         "intermediate_size": 64, "max_length": 4096, "model_type": "neobert", "norm_eps": 1e-06,
         "num_attention_heads": 4, "num_hidden_layers": 2, "pad_token_id": 0, "torch_dtype": "float32",
         "transformers_version": "4.48.2", "vocab_size": len(tok["vocab"])}
    c.update(kw)
    return c


def case_neobert_mlm():
    name = "neobert-mlm"
    tok = mp.tok_wordpiece()
    c = neobert_config(tok)
    g = Gen(name)
    neobert_params(g, c)
    V = c["vocab_size"]
    extras = {"decoder.weight": g.normal((V, 32), 1.0 / math.sqrt(32)), "decoder.bias": g.normal((V,), 0.1)}
    batches = [[make_ids(g, tok, 38), make_ids(g, tok, 11)], [make_ids(g, tok, 4)]]
    return dict(name=name, family="neobert", task="mlm", config=c, g=g, tok=tok, prefix="model.", extras=extras,
                batches=batches, expect={"ffDim": 48},
                notes="NeoBERTLMHead: 'model.' prefix, encoder.weight, qkv viewed (heads, 3 x head) and chunked (rows "
                      "interleave q, k, v per head), RoPE on complex pairs (interleaved), pre-RMSNorm, SwiGLU w12 = "
                      "[w1 | w2] of width 48 (2/3 of 64 rounded up to 8), final RMSNorm, an untied decoder with bias.")


def case_neobert_seq():
    name = "neobert-seq"
    tok = mp.tok_wordpiece()
    c = neobert_config(tok, architectures=["NeoBERTForSequenceClassification"], intermediate_size=40, **labels(2))
    g = Gen(name)
    neobert_params(g, c, fused=False)
    extras = head_extras(g, "sequence", 32, 2, "dense", "classifier")
    batches = [[make_ids(g, tok, 19), make_ids(g, tok, 7)]]
    return dict(name=name, family="neobert", task="sequence", config=c, g=g, tok=tok, prefix="model.", extras=extras,
                batches=batches, notes="NeoBERTForSequenceClassification: dense + tanh + classifier on the first token; "
                                       "the unfused SwiGLU names w1, w2, w3 (width 32).")


def albert_config(tok, **kw):
    c = {"architectures": ["AlbertModel"], "attention_probs_dropout_prob": 0, "bos_token_id": 2,
         "classifier_dropout_prob": 0.1, "embedding_size": 16, "eos_token_id": 3, "hidden_act": "gelu_new",
         "hidden_dropout_prob": 0, "hidden_size": 32, "initializer_range": 0.02, "inner_group_num": 1,
         "intermediate_size": 64, "layer_norm_eps": 1e-12, "max_position_embeddings": 64, "model_type": "albert",
         "num_attention_heads": 4, "num_hidden_groups": 1, "num_hidden_layers": 3, "pad_token_id": 0,
         "position_embedding_type": "absolute", "torch_dtype": "float32", "transformers_version": "4.46.0",
         "type_vocab_size": 2, "vocab_size": len(tok["vocab"])}
    c.update(kw)
    return c


def case_albert_mlm():
    name = "albert-mlm"
    tok = tok_albert()
    c = albert_config(tok, architectures=["AlbertForPreTraining"])
    g = Gen(name)
    albert_params(g, c)
    E, H, V = 16, 32, c["vocab_size"]
    extras = {"predictions.dense.weight": g.normal((E, H), 1.5 / math.sqrt(H)), "predictions.dense.bias": g.normal((E,), 0.05),
              "predictions.LayerNorm.weight": g.normal((E,), 0.1, 1.0), "predictions.LayerNorm.bias": g.normal((E,), 0.05),
              "predictions.bias": g.normal((V,), 0.1), "sop_classifier.classifier.weight": g.normal((2, H), 0.2),
              "sop_classifier.classifier.bias": g.normal((2,), 0.05), "albert.pooler.weight": g.normal((H, H), 0.2),
              "albert.pooler.bias": g.normal((H,), 0.05)}
    batches = [[make_pair(g, tok, 20, 14), make_ids(g, tok, 6)], [make_ids(g, tok, 64)]]
    return dict(name=name, family="albert", task="mlm", config=c, g=g, tok=tok, prefix="albert.", extras=extras,
                batches=batches,  # safetensors keeps one of tied tensors: no predictions.decoder.weight
                expect={"embedDim": 16, "layerGroups": 1, "layers": 3},
                notes="AlbertForPreTraining (albert-base-v2-like): embedding_size 16 projected by "
                      "embedding_hidden_mapping_in, one layer group run by all 3 layers, gelu_new, learned positions "
                      "(a 64-token sequence fills the table), predictions.{dense to 16, LayerNorm} + tied decoder + bias, "
                      "sop_classifier and pooler to ignore.")


def case_albert_seq():
    name = "albert-seq-groups"
    tok = tok_albert()
    c = albert_config(tok, architectures=["AlbertForSequenceClassification"], num_hidden_layers=4, num_hidden_groups=2,
                      hidden_act="gelu", embedding_size=24, **labels(3))
    g = Gen(name)
    albert_params(g, c)
    extras = head_extras(g, "sequence", 32, 3, "albert.pooler", "classifier")
    batches = [[make_pair(g, tok, 8, 11), make_ids(g, tok, 25)]]
    return dict(name=name, family="albert", task="sequence", config=c, g=g, tok=tok, prefix="albert.", extras=extras,
                batches=batches, expect={"embedDim": 24, "layerGroups": 2, "layers": 4},
                notes="AlbertForSequenceClassification with num_hidden_groups 2 over 4 layers (layers 0, 1 run group 0; "
                      "2, 3 group 1): albert.pooler (a bare Linear) + tanh + classifier.")


def case_albert_token():
    name = "albert-token"
    tok = tok_albert()
    c = albert_config(tok, architectures=["AlbertForTokenClassification"], **labels(4))
    g = Gen(name)
    albert_params(g, c)
    extras = head_extras(g, "token", 32, 4, None, "classifier")
    batches = [[make_ids(g, tok, 15), make_ids(g, tok, 5)]]
    return dict(name=name, family="albert", task="token", config=c, g=g, tok=tok, prefix="albert.", extras=extras,
                batches=batches, notes="AlbertForTokenClassification.")


JINA_TASKS = ["retrieval.query", "retrieval.passage", "separation", "classification", "text-matching"]
JINA_PROMPTS = {"retrieval.query": "Represent the query for retrieving evidence documents: ",
                "retrieval.passage": "Represent the document for retrieval: ", "separation": "", "classification": "",
                "text-matching": ""}


def case_jina_v3():
    name = "jina-v3"
    tok = mp.tok_xlmr()
    c = {"_name_or_path": "jinaai/jina-embeddings-v3", "architectures": ["XLMRobertaLoRA"], "attention_probs_dropout_prob": 0.1,
         "auto_map": {"AutoConfig": "jinaai/xlm-roberta-flash-implementation--configuration_xlm_roberta.XLMRobertaFlashConfig",
                      "AutoModel": "jinaai/xlm-roberta-flash-implementation--modeling_lora.XLMRobertaLoRA"},
         "bos_token_id": 0, "classifier_dropout": None, "emb_pooler": None, "eos_token_id": 2, "hidden_act": "gelu",
         "hidden_dropout_prob": 0.1, "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64,
         "layer_norm_eps": 1e-05, "load_trained_adapters": True, "lora_adaptations": JINA_TASKS, "lora_alpha": 2,
         "lora_dropout_p": 0.0, "lora_main_params_trainable": False, "lora_rank": 4,
         "matryoshka_dimensions": [8, 16, 32], "max_position_embeddings": 8194, "model_type": "xlm-roberta",
         "num_attention_heads": 4, "num_hidden_layers": 2, "output_past": True, "pad_token_id": 1,
         "position_embedding_type": "rotary", "rotary_emb_base": 20000.0, "task_instructions": JINA_PROMPTS,
         "torch_dtype": "float32", "transformers_version": "4.41.2", "truncate_dim": None, "type_vocab_size": 1,
         "use_cache": True, "use_flash_attn": True, "use_reentrant": False, "vocab_size": len(tok["vocab"])}
    g = Gen(name)
    jina_v3_params(g, c)
    modules = [{"idx": 0, "name": "transformer", "path": "", "type": "custom_st.Transformer"},
               {"idx": 1, "name": "pooler", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "normalizer", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    st = {"modules": modules, "sbert": None, "pooling": mp.pooling_config(32, ["mean"]),
          "version": mp.st_version(prompts=JINA_PROMPTS)}
    batches = [[make_ids(g, tok, 50), make_ids(g, tok, 12), make_ids(g, tok, 3)]]
    return dict(name=name, family="jina-v3", task="embedding", config=c, g=g, tok=tok, prefix="roberta.", st=st,
                batches=batches, texts=TEXTS, adapters=[None] + JINA_TASKS,
                notes="jina-embeddings-v3 layout: model_type xlm-roberta with position_embedding_type rotary, "
                      "'roberta.' prefix, every Linear and Embedding parametrized (parametrizations.weight.original + "
                      "5 task adapters lora_A / lora_B of rank 4, lora_alpha 2: scale 0.5), emb_ln, fused mixer.Wqkv, "
                      "RoPE base 20000, post-norm Blocks; ST folder with custom_st.Transformer, mean pooling, "
                      "Normalize and the task prompts. Expected per adapter (and none).")


CASES = [case_electra_discriminator, case_electra_seq, case_electra_generator, case_roformer_mlm, case_roformer_seq,
         case_roformer_token, case_gte_embed, case_gte_reranker, case_gte_mlm, case_eurobert_mlm, case_eurobert_seq_late,
         case_eurobert_seq_mean, case_eurobert_token, case_neobert_mlm, case_neobert_seq, case_albert_mlm,
         case_albert_seq, case_albert_token, case_jina_v3]


# ----------------------------------------------------------------------------------------------
# writing a case
# ----------------------------------------------------------------------------------------------

def pad_batch(case, seqs):
    """[(ids, types) or ids] -> padded ids, types [B, T], lengths, unpadded lists."""
    ids, types = [], []
    for s in seqs:
        if isinstance(s, tuple):
            ids.append(s[0])
            types.append(s[1])
        else:
            ids.append(s)
            types.append([0] * len(s))
    lengths = [len(s) for s in ids]
    T = max(lengths)
    pad = case["tok"]["seq"]["pad"]
    return (torch.tensor([s + [pad] * (T - len(s)) for s in ids]), torch.tensor([s + [0] * (T - len(s)) for s in types]),
            lengths, ids, types)


def forward(case, ids, types, lengths, adapter=None):
    fwd = FAMILIES[case["family"]][0]
    if case["family"] == "jina-v3":
        return fwd(case["P"], case["config"], ids, lengths, types, adapter)
    return fwd(case["P"], case["config"], ids, lengths, types)


def mask_positions(case, lengths, bi):
    """Two or three positions per sequence (the mlm head's rows), deterministic."""
    return [sorted({1, L // 2, L - 1}) if L > 2 else [0] for L in lengths]


def head_logits(case, hidden, lengths, positions):
    task = case["task"]
    head = FAMILIES[case["family"]][1]
    if task == "mlm":
        rows = torch.stack([hidden[b, t] for b, ps in enumerate(positions) for t in ps])
        return head(task, case["P"], case["config"], rows[None], lengths, positions)[0]
    out = head(task, case["P"], case["config"], hidden, lengths, positions)
    if task == "token":
        out = out * mp.key_mask(lengths, hidden.shape[1])[..., None].to(D)
    return out


def write_st(case, folder):
    st = case.get("st")
    if not st:
        return
    write_json(os.path.join(folder, "modules.json"), st["modules"])
    if st.get("sbert"):
        write_json(os.path.join(folder, "sentence_bert_config.json"), st["sbert"])
    write_json(os.path.join(folder, "config_sentence_transformers.json"), st["version"])
    write_json(os.path.join(folder, "1_Pooling", "config.json"), st["pooling"])


def emit(case):
    name, c = case["name"], case["config"]
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    # the encoder's parameters, then the head's (HF names; a prefix only on the encoder's, head names as given)
    P = {k: mp.storage_round(v, "F32") for k, v in case["g"].P.items()}
    extras = {k: mp.storage_round(v, "F32") for k, v in case.get("extras", {}).items()}
    prefix = case.get("prefix", "")
    saved = {prefix + k: v for k, v in P.items()}
    for k, v in extras.items():
        saved[k] = v
        # the head's parameters in the forward's names: without the base-model prefix
        P[k[len(prefix):] if prefix and k.startswith(prefix) else k] = v
    for k, src in case.get("tied", {}).items():  # a tied decoder's saved copy: the token table itself
        saved[k] = P[src]
    case["P"] = P
    entries = [(k, v, "F32") for k, v in saved.items()]
    mp.write_safetensors(os.path.join(folder, "model.safetensors"), entries, {"format": "pt"})
    meta, got = mp.read_safetensors(os.path.join(folder, "model.safetensors"))
    check(set(got) == set(saved), f"{name}: safetensors header")
    for k, v in saved.items():
        check(torch.equal(got[k][1], v), f"{name}: {k} round trip")
    write_json(os.path.join(folder, "config.json"), c)
    tok = case["tok"]
    write_json(os.path.join(folder, "tokenizer.json"), tok["json"])
    write_json(os.path.join(folder, "tokenizer_config.json"), tok["config"])
    write_json(os.path.join(folder, "special_tokens_map.json"), tok["map"])
    write_st(case, folder)

    adapters = case.get("adapters", [None])
    out = {"case": name, "family": case["family"], "folder": name, "task": case["task"], "modelType": c["model_type"],
           "architecture": c["architectures"][0], "notes": case["notes"], "expect": case.get("expect", {}),
           "head": case.get("head", {}), "pooling": case.get("pooling", "mean"), "runs": []}
    for adapter in adapters:
        run = {"adapter": adapter, "batches": []}
        for bi, seqs in enumerate(case["batches"]):
            ids, types, lengths, id_lists, type_lists = pad_batch(case, seqs)
            hidden = forward(case, ids, types, lengths, adapter)
            for i, s in enumerate(id_lists):  # padding changes nothing: each sequence alone
                alone = forward(case, torch.tensor([s]), torch.tensor([type_lists[i]]), [len(s)], adapter)
                close(hidden[i, :len(s)], alone[0], 1e-10, f"{name} [{adapter}]: batch {bi} seq {i} padded == alone")
            hidden = hidden * mp.key_mask(lengths, ids.shape[1])[..., None].to(D)
            entry = {"ids": id_lists, "lengths": lengths, "hidden": tensor_json(hidden)}
            if any(any(t) for t in type_lists):
                entry["typeIds"] = type_lists
            if case["task"] != "embedding":
                positions = mask_positions(case, lengths, bi) if case["task"] == "mlm" else None
                logits = head_logits(case, hidden, lengths, positions)
                if positions:
                    entry["positions"] = positions
                entry["logits"] = tensor_json(logits)
            run["batches"].append(entry)
        out["runs"].append(run)
    if case["task"] != "embedding":
        inputs = text_inputs(case, folder, None)
        logits = [input_logits(case, inp) for inp in inputs]
        out["inputs"] = inputs
        out["textLogits"] = [fmt(x.reshape(-1).tolist()) if x.dim() == 1 else [fmt(r) for r in x.tolist()] for x in logits]
    if case.get("texts"):
        res = mp.run_rust([{"tokenizer": os.path.join(folder, "tokenizer.json"),
                            "texts": case["texts"] + [JINA_PROMPTS["retrieval.query"] + t for t in case["texts"]]
                            if case["family"] == "jina-v3" else case["texts"]}])
        encs = res["results"][0]["texts"]
        out["tokenizers"] = res["tokenizersVersion"]
        texts = []
        for adapter in adapters:
            for with_prompt in ([False, True] if adapter == "retrieval.query" else [False]):
                group = encs[len(case["texts"]):] if with_prompt else encs[: len(case["texts"])]
                ids = [e["ids"] for e in group]
                pad = case["tok"]["seq"]["pad"]
                lengths = [len(s) for s in ids]
                T = max(lengths)
                tid = torch.tensor([s + [pad] * (T - len(s)) for s in ids])
                hidden = forward(case, tid, torch.zeros_like(tid), lengths, adapter)
                pooled = hidden[:, 0] if out["pooling"] == "cls" else masked_mean(hidden, lengths)
                emb = mp.l2_normalize(pooled)
                entry = {"adapter": adapter, "texts": case["texts"], "ids": ids, "embeddings": tensor_json(emb)}
                if with_prompt:
                    entry["promptName"] = adapter
                if case["family"] == "jina-v3":  # Matryoshka: truncate_dim, then normalize (XLMRobertaModel.encode)
                    entry["dimensions"] = 16
                    entry["truncated"] = tensor_json(mp.l2_normalize(pooled[:, :16]))
                texts.append(entry)
        out["texts"] = texts
    path = os.path.join(EXPECTED, name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


# the texts a task case's pipeline calls run on (make_family_pipelines.py): sequence cases single texts and
# pairs sharing a query (a reranker ranks them), token cases sentences, mlm cases texts with the mask token
SEQUENCE_TEXTS = ["Hello, world!", "The quick brown fox jumps over the lazy dog."]
QUERY = "what is a transformer?"
PASSAGES = ["a model that encodes text", "the lazy dog", "Hello world"]
TOKEN_TEXTS = ["The quick brown fox jumps over the lazy dog.", "hello world, what is a transformer?"]
MLM_TEXTS = ["The quick brown {m} jumps over the lazy dog.", "hello {m}, what is a {m}?"]
MASK = {"electra": "[MASK]", "roformer": "[MASK]", "gte": "[MASK]", "neobert": "[MASK]", "albert": "[MASK]", "eurobert": "<|mask|>"}
USES_TYPES = {"electra", "roformer", "albert"}  # the families with a token-type table the pairs' type ids reach


def text_inputs(case, folder, rust_json):
    """[{text, textPair?, ids, typeIds, tokens, specialTokensMask}] of the case's pipeline texts (Rust tokenizers)."""
    task = case["task"]
    if task == "sequence":
        singles, pairs = SEQUENCE_TEXTS, [[QUERY, p] for p in PASSAGES]
    elif task == "token":
        singles, pairs = TOKEN_TEXTS, []
    else:
        singles, pairs = [t.format(m=MASK[case["family"]]) for t in MLM_TEXTS], []
    res = mp.run_rust([{"tokenizer": os.path.join(folder, "tokenizer.json"), "texts": singles, "pairs": pairs}])["results"][0]
    out = []
    for text, e in zip(singles + pairs, res["texts"] + res["pairs"]):
        inp = {"text": text} if isinstance(text, str) else {"text": text[0], "textPair": text[1]}
        inp.update({k: e[k] for k in ("ids", "typeIds", "tokens", "specialTokensMask")})
        out.append(inp)
    return out


def input_logits(case, inp):
    """The head's float64 logits for one text as the pipeline sees them: sequence [labels], token [T, labels],
    mlm [masks, V] at the mask token's positions."""
    ids = torch.tensor([inp["ids"]])
    types = torch.tensor([inp["typeIds"] if case["family"] in USES_TYPES else [0] * len(inp["ids"])])
    hidden = forward(case, ids, types, [len(inp["ids"])])
    if case["task"] == "mlm":
        mask_id = case["tok"]["json"]["model"]["vocab"][MASK[case["family"]]] if isinstance(case["tok"]["json"]["model"]["vocab"], dict) \
            else next(i for i, (t, _) in enumerate(case["tok"]["json"]["model"]["vocab"]) if t == MASK[case["family"]])
        positions = [[t for t, x in enumerate(inp["ids"]) if x == mask_id]]
        check(len(positions[0]) >= 1, f"{case['name']}: {inp['text']!r} has its mask token")
        inp["maskPositions"] = positions[0]
        return head_logits(case, hidden, [len(inp["ids"])], positions)
    return head_logits(case, hidden, [len(inp["ids"])], None)[0]


def unit_checks():
    # RoFormer's rotation: pairs (2i, 2i+1) rotated by t 10000^(-2i/d), i.e. the complex form of NeoBERT's
    x = torch.randn(1, 2, 9, 8, dtype=D, generator=torch.Generator().manual_seed(3))
    a = roformer_rotate(x, roformer_sinusoids(9, 8).to(D))
    b = neobert_rotate(x.transpose(1, 2), neobert_freqs(8, 9)).transpose(1, 2)
    close(a, b, 1e-6, "RoFormer's sinusoid rotation == NeoBERT's complex pairs (float32 table)")
    # GTE's fixed NTK: scaled base and positions, the same angles as (base f) and t / f^(2/d)
    c = {"rope_theta": 500, "rope_scaling": {"type": "ntk", "factor": 2.0}}
    f = gte_inv_freq(c, 8)
    close(f, inv_freq(1000.0, 8) / 2 ** (2 / 8), 1e-15, "GTE NTK inv_freq == (base f)^(-2i/d) / f^(2/d)")
    check(abs(float(f[0]) - 2 ** (-0.25)) < 1e-15, "GTE NTK: even the first pair turns slower", f"{float(f[0])}")
    # repeat_kv: query head h reads kv head h // (heads / kv heads)
    k = torch.arange(2, dtype=D).view(1, 2, 1, 1).expand(1, 2, 3, 1)
    r = k[:, :, None].expand(1, 2, 2, 3, 1).reshape(1, 4, 3, 1)
    check(r[0, :, 0, 0].tolist() == [0, 0, 1, 1], "repeat_kv maps query heads 0,1 -> kv 0 and 2,3 -> kv 1")
    # ALBERT's groups
    check([int(l / (4 / 2)) for l in range(4)] == [0, 0, 1, 1], "ALBERT: 4 layers, 2 groups -> 0 0 1 1")
    check(neobert_width(64) == 48 and neobert_width(40) == 32 and neobert_width(3072) == 2048, "NeoBERT SwiGLU widths")


def main():
    os.makedirs(EXPECTED, exist_ok=True)
    for f in os.listdir(EXPECTED):
        os.remove(os.path.join(EXPECTED, f))
    unit_checks()
    for make in CASES:
        emit(make())
        print(f"  {make.__name__}: ok", file=sys.stderr)
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(OUT) for f in fs)
    print(f"{len(mp.CHECKS)} checks passed; tests/families is {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
