#!/usr/bin/python3
"""DeBERTa-v3-xsmall's shape and BERT's layout of the same shape, on random weights, for
bench/deberta-ort.mjs: a swapformer model file and a float32 ONNX graph of each.

    /usr/bin/python3 bench/export_deberta.py [--out bench/.cache/deberta] [--check-len 200]

The shape: hidden 384, 12 layers, 6 heads of 64, FFN 1536, GELU (erf), post-LayerNorm with eps 1e-7,
a vocabulary of 8,192 rows (as bench/deberta.mjs: the embedding is a lookup, its size changes the
memory, not the time).
  deberta-v3-xsmall  relative_attention, position_buckets 256, max_relative_positions 512 (the table's
                     512 rows), share_att_key, norm_rel_ebd layer_norm, pos_att_type [p2c, c2p], no
                     absolute positions, no token types
  bert-xsmall        learned positions (512), token types (2; type 0 added), the embeddings' LayerNorm

The weights are Hugging Face's parameters as tests/reference/make_deberta.py (deberta_params) and
make_pretrained.py (bert_params) draw them (seeded by the names below), rounded to float32, then
renamed to swapformer's canonical tensors (docs/file-format.md; core/encoder.c's tables and
plugins/position/disentangled.c's embed.rel_table). Files written into --out:

  deberta-v3-xsmall.safetensors, bert-xsmall.safetensors   swapformer model files (F32)
  deberta-v3-xsmall.onnx                                   torch.onnx.export of the module below
  bert-xsmall.onnx, bert-xsmall-fused.onnx                 BERT's plain and fused graphs (the layers of
                                                           bench/export_onnx.py: PlainLayer, FusedLayer)
  deberta-v3-xsmall-q8.onnx, bert-xsmall-q8.onnx           the plain graphs as onnxruntime's quantize_dynamic
                                                           writes them (export_onnx.py quantize_dynamic_onnx,
                                                           per-channel int8 weights)

Every graph: input_ids int64 [1, T] (T a dynamic axis) -> last_hidden_state float32 [1, T, 384]; no
attention mask (one sequence, every token real). The DeBERTa graph is DebertaV2Model's forward as
transformers writes it, unfused: q, k, v projections; q.k^T; c2p = q.PK^T [T, 512] and p2c = k.PQ^T
[T, 512] gathered at the rows of make_log_bucket_position (computed in the graph from T, in float32
as PyTorch computes it: make_deberta.py's relative_rows); every term over sqrt(64 x 3); softmax; v.
The layers' projections of the normed table (PK = key_proj(LayerNorm(rel_embeddings)), PQ =
query_proj(...)) are constants of the graph, as onnxruntime's constant folding makes them of a
Hugging Face export and as swapformer computes them once at load.

Before exporting, each float32 module is checked against the float64 forwards of tests/reference
(make_deberta.deberta_forward, make_pretrained.bert_family_forward) at T = --check-len (200 reaches
the logarithmic buckets, |i - j| > 128): relative max error printed, at most 1e-4. The swapformer
against onnxruntime-web check is bench/deberta-ort.mjs's.
"""

import argparse
import json
import math
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "reference"))
sys.path.insert(0, HERE)
import make_deberta as md  # noqa: E402  (the float64 DeBERTa-v2/v3 reference, its parameters and buckets)
import make_pretrained as mp  # noqa: E402  (Gen, bert_params, bert_family_forward, write_safetensors)
import export_onnx as eo  # noqa: E402  (BERT's PlainLayer and FusedLayer, read from canonical names)

warnings.filterwarnings("ignore")
torch.set_num_threads(1)

VOCAB = 8192
SHAPE = dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
             layer_norm_eps=1e-7, hidden_act="gelu", max_position_embeddings=512, vocab_size=VOCAB)
DEBERTA_HF = md.v3_config(VOCAB, **SHAPE, position_buckets=256, max_relative_positions=-1, pooler_hidden_size=384)
BERT_HF = dict(SHAPE, model_type="bert", type_vocab_size=2, pad_token_id=0)

# swapformer's configs (as bench/deberta.mjs's, vocabSize 8192)
SF_SHAPE = {"vocabSize": VOCAB, "dModel": 384, "heads": 6, "layers": 12, "ffDim": 1536, "norm": "layernorm",
            "normPlacement": "post", "activation": "gelu", "embedNorm": True, "eps": 1e-7}
DEBERTA_SF = dict(SF_SHAPE, position="none", relativeBias="disentangled",
                  relativeBiasOptions={"buckets": 256, "maxDistance": 512, "terms": ["c2p", "p2c"], "shareKey": True,
                                       "normTable": True}, attnScale=1 / math.sqrt(64 * 3))
BERT_SF = dict(SF_SHAPE, position="learned", maxLen=512, typeVocabSize=2)

LAYER_NAMES = {  # Hugging Face's names in a layer -> swapformer's
    "deberta": {"attention.self.query_proj": "attn.q", "attention.self.key_proj": "attn.k",
                "attention.self.value_proj": "attn.v", "attention.output.dense": "attn.o",
                "attention.output.LayerNorm": "norm1", "intermediate.dense": "ffn.up", "output.dense": "ffn.down",
                "output.LayerNorm": "norm2"},
    "bert": {"attention.self.query": "attn.q", "attention.self.key": "attn.k", "attention.self.value": "attn.v",
             "attention.output.dense": "attn.o", "attention.output.LayerNorm": "norm1", "intermediate.dense": "ffn.up",
             "output.dense": "ffn.down", "output.LayerNorm": "norm2"},
}
EMBED_NAMES = {
    "embeddings.word_embeddings.weight": "embed.tokens", "embeddings.position_embeddings.weight": "embed.positions",
    "embeddings.token_type_embeddings.weight": "embed.types", "embeddings.LayerNorm.weight": "embed.norm.weight",
    "embeddings.LayerNorm.bias": "embed.norm.bias", "encoder.rel_embeddings.weight": "embed.rel_table",
    "encoder.LayerNorm.weight": "embed.rel_norm.weight", "encoder.LayerNorm.bias": "embed.rel_norm.bias",
}


def canonical(P, family):
    """Hugging Face's parameter names -> swapformer's (every name mapped, none left over)."""
    out = {}
    for name, t in P.items():
        if name in EMBED_NAMES:
            out[EMBED_NAMES[name]] = t
            continue
        parts = name.split(".")  # encoder.layer.<l>.<module...>.<weight|bias>
        assert parts[:2] == ["encoder", "layer"], name
        out["layers.%s.%s.%s" % (parts[2], LAYER_NAMES[family][".".join(parts[3:-1])], parts[-1])] = t
    return out


def rel_err(a, b):
    return float((a.double() - b.double()).abs().max() / b.double().abs().max())


# ------------------------------------------------------------------ the float32 modules

def const(t):
    return nn.Parameter(t.to(torch.float32).contiguous(), requires_grad=False)


class Deberta(nn.Module):
    """DebertaV2Model's forward for one unmasked sequence, float32, from Hugging Face's parameters P."""

    def __init__(self, P, cfg):
        super().__init__()
        self.o = md.rel_options(cfg)
        self.h, self.eps, self.L = cfg["num_attention_heads"], cfg["layer_norm_eps"], cfg["num_hidden_layers"]
        H = cfg["hidden_size"]
        self.d = H // self.h
        self.scale = math.sqrt(self.d * (1 + int(self.o["c2p"]) + int(self.o["p2c"])))
        self.w = nn.ParameterDict()
        for name, t in P.items():
            self.w[name.replace(".", "__")] = const(t)
        # the normed table projected by every layer's key and query projections (share_att_key), in float32
        R = F.layer_norm(self.p("encoder.rel_embeddings.weight"), (H,), self.p("encoder.LayerNorm.weight"),
                         self.p("encoder.LayerNorm.bias"), self.eps)
        for l in range(self.L):
            s = "encoder.layer.%d.attention.self." % l
            self.w["pk%d" % l] = const(self.heads(self.lin(R[None], s + "key_proj")))  # [1, h, 512, d]
            self.w["pq%d" % l] = const(self.heads(self.lin(R[None], s + "query_proj")))

    def p(self, name):
        return self.w[name.replace(".", "__")]

    def lin(self, x, name):
        return F.linear(x, self.p(name + ".weight"), self.p(name + ".bias"))

    def ln(self, x, name):
        return F.layer_norm(x, (self.h * self.d,), self.p(name + ".weight"), self.p(name + ".bias"), self.eps)

    def heads(self, x):  # [1, T, H] -> [1, h, T, d]
        return x.view(1, -1, self.h, self.d).transpose(1, 2)

    def forward(self, input_ids):
        T = input_ids.shape[1]
        x = self.ln(F.embedding(input_ids, self.p("embeddings.word_embeddings.weight")), "embeddings.LayerNorm")
        pos = torch.arange(T)
        rel = pos[:, None] - pos[None, :]  # query - key
        c2p_rows = md.relative_rows(rel, self.o).expand(1, self.h, T, T)
        p2c_rows = md.relative_rows(-rel, self.o).expand(1, self.h, T, T)
        for l in range(self.L):
            a = "encoder.layer.%d.attention." % l
            q, k, v = (self.heads(self.lin(x, a + "self." + n)) for n in ("query_proj", "key_proj", "value_proj"))
            s = q @ k.transpose(-1, -2) / self.scale
            s = s + torch.gather(q @ self.w["pk%d" % l].transpose(-1, -2), -1, c2p_rows) / self.scale
            s = s + torch.gather(k @ self.w["pq%d" % l].transpose(-1, -2), -1, p2c_rows).transpose(-1, -2) / self.scale
            ctx = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(1, T, self.h * self.d)
            x = self.ln(self.lin(ctx, a + "output.dense") + x, a + "output.LayerNorm")
            f = "encoder.layer.%d." % l
            y = self.lin(F.gelu(self.lin(x, f + "intermediate.dense")), f + "output.dense")
            x = self.ln(y + x, f + "output.LayerNorm")
        return x


class Bert(nn.Module):
    """BERT's embeddings (tokens + positions + type 0, LayerNorm) and export_onnx.py's layers, float32,
    from swapformer's canonical tensors W."""

    def __init__(self, W, graph):
        super().__init__()
        cfg = eo.resolve(BERT_SF)
        self.eps = cfg["eps"]
        self.tokens, self.positions = const(W["embed.tokens"]), const(W["embed.positions"])
        self.type0, self.nw, self.nb = const(W["embed.types"][0]), const(W["embed.norm.weight"]), const(W["embed.norm.bias"])
        W32 = {k: v.to(torch.float32) for k, v in W.items()}
        Layer = eo.FusedLayer if graph == "fused" else eo.PlainLayer
        self.layers = nn.ModuleList(Layer(cfg, W32, l) for l in range(cfg["layers"]))

    def forward(self, input_ids):
        T = input_ids.shape[1]
        x = F.embedding(input_ids, self.tokens) + self.positions[:T] + self.type0
        x = F.layer_norm(x, (self.nw.shape[0],), self.nw, self.nb, self.eps)
        for layer in self.layers:
            x = layer(x)
        return x


# ------------------------------------------------------------------ main

def export(model, path, check_ids, ref, label):
    with torch.no_grad():
        err = rel_err(model(check_ids), ref)
    print("export_deberta: %s: float32 PyTorch vs the float64 reference at T=%d: relative max error %.2e"
          % (label, check_ids.shape[1], err))
    if not err <= 1e-4:
        sys.exit("export_deberta: %s does not reproduce the reference" % label)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, (check_ids,), tmp, input_names=["input_ids"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": {1: "T"}, "last_hidden_state": {1: "T"}}, opset_version=17,
                          do_constant_folding=True, custom_opsets={"com.microsoft": 1})
    os.replace(tmp, path)
    print("export_deberta: wrote %s (%d bytes)" % (os.path.relpath(path), os.path.getsize(path)))


def save_model(path, W, cfg):
    mp.write_safetensors(path, [(n, t, "F32") for n, t in W.items()],
                         {"format": "swapformer", "config": json.dumps(cfg, separators=(",", ":"))})
    print("export_deberta: wrote %s (%d bytes)" % (os.path.relpath(path), os.path.getsize(path)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, ".cache", "deberta"))
    ap.add_argument("--check-len", type=int, default=200)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    ids = torch.randint(1, VOCAB, (1, a.check_len), generator=torch.Generator().manual_seed(0))

    g = mp.Gen("bench-deberta-v3-xsmall")
    md.deberta_params(g, DEBERTA_HF)
    P = {k: mp.storage_round(v, "F32") for k, v in g.P.items()}  # float64 holding float32 values
    ref = md.deberta_forward(P, DEBERTA_HF, ids, [a.check_len])
    save_model(os.path.join(a.out, "deberta-v3-xsmall.safetensors"), canonical(P, "deberta"), DEBERTA_SF)
    export(Deberta(P, DEBERTA_HF).eval(), os.path.join(a.out, "deberta-v3-xsmall.onnx"), ids, ref, "deberta-v3-xsmall")

    g = mp.Gen("bench-bert-xsmall")
    mp.bert_params(g, BERT_HF, pooler=False)
    P = {k: mp.storage_round(v, "F32") for k, v in g.P.items()}
    ref = mp.bert_family_forward(P, BERT_HF, ids, [a.check_len])
    W = canonical(P, "bert")
    save_model(os.path.join(a.out, "bert-xsmall.safetensors"), W, BERT_SF)
    for graph, name in (("plain", "bert-xsmall.onnx"), ("fused", "bert-xsmall-fused.onnx")):
        export(Bert(W, graph).eval(), os.path.join(a.out, name), ids, ref, "bert-xsmall (%s graph)" % graph)

    # q8: the plain graphs as onnxruntime's quantize_dynamic writes them (per-channel int8 weights)
    for name in ("deberta-v3-xsmall", "bert-xsmall"):
        src, dst = os.path.join(a.out, name + ".onnx"), os.path.join(a.out, name + "-q8.onnx")
        n = eo.quantize_dynamic_onnx(src, dst, per_channel=True)
        print("export_deberta: wrote %s (%d MatMuls quantized, %d bytes)" % (os.path.relpath(dst), n, os.path.getsize(dst)))


if __name__ == "__main__":
    main()
