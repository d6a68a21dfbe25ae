#!/usr/bin/env python3
"""Independent float64 reference for the encoder task heads and for MPNet ("heads, tasks and MPNet").

Writes tiny random checkpoints in the exact Hugging Face layouts of the task models (tests/heads/<case>/:
config.json with `architectures` and the label maps, model.safetensors with the HF tensor names and
prefixes, tokenizer.json + tokenizer_config.json + special_tokens_map.json, and the sentence-transformers
files for the MPNet embedding case) and, next to them, tests/heads/expected/<case>.json: the inputs as
the Rust tokenizers encode them, the float64 logits of the head and the encoder's last hidden states.

Every head below was written from what the Hugging Face modelling code computes (models/{bert,roberta,
xlm_roberta,distilbert,modernbert,mpnet}/modeling_*.py; see tests/heads/README.md for which detail was
read where).  The encoders of BERT / RoBERTa / XLM-R / DistilBERT / ModernBERT and the building blocks
(safetensors, random parameters, tokenizer.json writers) come from tests/reference/make_pretrained.py,
imported as a module; MPNet's encoder is new here.  Nothing of swapformer is used.

Regenerate everything with:

    /usr/bin/python3 tests/reference/make_heads.py

Deterministic (per-case seeds from crc32 of the case name, one torch thread).  Needs node and the npm
package `tokenizers` (via tests/reference/tokenize_with_rust.cjs).  Any failed self-check stops the script.
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_pretrained as mp  # noqa: E402  (the building blocks; its main() does not run on import)

D = mp.D
check, close = mp.check, mp.close
OUT = os.path.join(mp.ROOT, "tests", "heads")
EXPECTED = os.path.join(OUT, "expected")
TOL = 1e-10          # float64 agreement between two ways of computing the same thing
TRAP = 3e-4          # a known mistake must move some value by more than this (float32 noise is ~1e-6)
FOLDER_LIMIT = 200_000


# ----------------------------------------------------------------------------------------------
# activations by their config names (TF activations.py ACT2FN; RobertaLMHead / MPNetLMHead call `gelu`,
# the erf form; the classification heads call torch.tanh; DistilBERT's pre_classifier is followed by ReLU)
# ----------------------------------------------------------------------------------------------

ACT = dict(mp.ACT, tanh=torch.tanh, identity=lambda x: x)
CANONICAL_ACT = {"identity": "identity", "tanh": "tanh", "gelu": "gelu", "gelu_new": "gelu_tanh",
                 "gelu_pytorch_tanh": "gelu_tanh", "gelu_fast": "gelu_tanh", "relu": "relu", "silu": "silu",
                 "swish": "silu"}


def act_scalar(name, v):
    """The same activations on one Python float (the per-element loop form of the heads)."""
    if name == "identity":
        return v
    if name == "tanh":
        return math.tanh(v)
    if name == "gelu":
        return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return 0.5 * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))
    if name == "relu":
        return max(v, 0.0)
    if name in ("silu", "swish"):
        return v / (1.0 + math.exp(-v))
    raise ValueError(name)


# ----------------------------------------------------------------------------------------------
# MPNet encoder (TF models/mpnet/modeling_mpnet.py: MPNetEmbeddings, MPNetEncoder, MPNetSelfAttention)
# ----------------------------------------------------------------------------------------------

MPNET_PAD = 1         # MPNetEmbeddings.padding_idx is the constant 1, not config.pad_token_id
MPNET_BUCKETS = 32    # MPNetEncoder.compute_position_bias(num_buckets=32): the config value only sizes the table
MPNET_MAX_DISTANCE = 128


def mpnet_bucket_scalar(i, j):
    """MPNet's relative_position_bucket for query i and key j, as MPNet writes it: n = i - j (minus the
    relative position key - query); the upper half of the buckets for n < 0 (key after query); exact
    buckets for |n| < 8, then log-spaced up to max_distance 128, clamped at 15; the log step in float32."""
    n = i - j
    half = MPNET_BUCKETS // 2
    base = half if n < 0 else 0
    a = abs(n)
    exact = half // 2
    if a < exact:
        return base + a
    step = np.float32(np.log(np.float32(a) / np.float32(exact))) / np.float32(math.log(MPNET_MAX_DISTANCE / exact))
    return base + min(half - 1, exact + int(np.float32(step * np.float32(half - exact))))


def mpnet_bias(table, T, variant):
    """[h, T, T] bias, computed once over arange(T) (independent of padding) and shared by every layer."""
    rel = torch.arange(T)[None, :] - torch.arange(T)[:, None]  # key - query
    if variant.get("flip_sign"):
        rel = -rel
    return table[mp.t5_bucket(rel, MPNET_BUCKETS, MPNET_MAX_DISTANCE)].permute(2, 0, 1)


def mpnet_forward(P, cfg, ids, lengths, impl="matrix", variant=None):
    """variant: relative=False drops the relative bias (bias term 0), absolute=False drops the learned
    positions (position embeddings 0); the remaining keys are deliberate mistakes for the trap checks."""
    variant = variant or {}
    B, T = ids.shape
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    d = H // nh
    eps = cfg["layer_norm_eps"]
    real = (ids != MPNET_PAD).long()
    pos = torch.arange(T)[None, :].expand(B, T) if variant.get("positions_from_zero") else \
        torch.cumsum(real, dim=1) * real + MPNET_PAD  # create_position_ids_from_input_ids
    x = P["embeddings.word_embeddings.weight"][ids]
    if variant.get("absolute", True):
        x = x + P["embeddings.position_embeddings.weight"][pos]
    x = mp.ln(x, P, "embeddings.LayerNorm", eps)
    table = P["encoder.relative_attention_bias.weight"]  # [buckets, heads]
    bias, bias_fn = None, None
    if variant.get("relative", True):
        bias = mpnet_bias(table, T, variant)
        tnp = table.numpy()
        bias_fn = lambda h, i, j: tnp[mpnet_bucket_scalar(i, j), h]
    att = mp.Attention(lengths, T, impl)
    scale = 1.0 / math.sqrt(d)
    act = ACT[cfg["hidden_act"]]
    for l in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{l}."
        q = mp.split_heads(mp.linear(x, P, p + "attention.attn.q"), nh)
        k = mp.split_heads(mp.linear(x, P, p + "attention.attn.k"), nh)
        v = mp.split_heads(mp.linear(x, P, p + "attention.attn.v"), nh)
        b = bias
        if b is not None and variant.get("bias_scaled"):      # trap: bias added before the 1/sqrt(d)
            b = b * scale
        if b is not None and variant.get("bias_first_layer") and l > 0:
            b = None
        fn = bias_fn if b is bias else None
        ctx = mp.merge_heads(att(q, k, v, scale, bias=b, bias_fn=fn))  # q.k/sqrt(d) + bias, then the pad mask
        x = mp.ln(mp.linear(ctx, P, p + "attention.attn.o") + x, P, p + "attention.LayerNorm", eps)
        y = mp.linear(act(mp.linear(x, P, p + "intermediate.dense")), P, p + "output.dense")
        x = mp.ln(y + x, P, p + "output.LayerNorm", eps)
    return x


MPNET_TO_BERT = (("attention.attn.q", "attention.self.query"), ("attention.attn.k", "attention.self.key"),
                 ("attention.attn.v", "attention.self.value"), ("attention.attn.o", "attention.output.dense"),
                 ("attention.LayerNorm", "attention.output.LayerNorm"))


def rename(k, pairs):
    for a, b in pairs:
        k = k.replace(a, b)
    return k


def mpnet_params(g, c, pooler):
    """BERT's parameter set under MPNet's names (attention.attn.{q,k,v,o}, attention.LayerNorm), without
    token types, plus the relative bias table."""
    mp.bert_params(g, dict(c, type_vocab_size=1), pooler=pooler)
    del g.P["embeddings.token_type_embeddings.weight"]
    back = [(b, a) for a, b in MPNET_TO_BERT]
    g.P = {rename(k, back): v for k, v in g.P.items()}
    # std 1: the bias moves attention as much as q.k/sqrt(d) does, so dropping it shows
    g.P["encoder.relative_attention_bias.weight"] = g.normal((c["relative_attention_num_buckets"],
                                                              c["num_attention_heads"]), 1.0)


def encode(case, ids_list, type_list=None, impl="matrix", cfg=None, variant=None):
    """Right-padded batch, key-only mask; hidden [B, T, C] with the rows past each length set to 0."""
    fam, P = case["family"], case["enc"]
    cfg = cfg or case["config"]
    lengths = [len(s) for s in ids_list]
    T = max(lengths)
    pad = case["tok"]["seq"]["pad"]
    ids = torch.tensor([s + [pad] * (T - len(s)) for s in ids_list])
    if fam == "mpnet":
        h = mpnet_forward(P, cfg, ids, lengths, impl, variant)
    elif fam == "distilbert":
        h = mp.distilbert_forward(P, cfg, ids, lengths, impl)
    elif fam == "modernbert":
        h = mp.modernbert_forward(P, cfg, ids, lengths, impl)
    else:
        types = None
        if fam == "bert" and type_list is not None:
            types = torch.tensor([s + [0] * (T - len(s)) for s in type_list])
        h = mp.bert_family_forward(P, cfg, ids, lengths, types, impl)
    return h * mp.key_mask(lengths, T)[..., None].to(D)


# ----------------------------------------------------------------------------------------------
# heads.  A head spec names the HF tensors (as saved) of:  rows -> dense -> act -> norm -> out.
#   pool: 'cls' (row 0) | 'mean' (sum of the real rows / their count: ModernBERT, no clamp) | None
#   dense / norm: Linear / LayerNorm name or None;  outWeight / outBias: tensor names (outBias may be None)
# ----------------------------------------------------------------------------------------------

def head_rows(case, hidden, lengths, inputs, spec=None):
    """The rows the head is applied to: [R, C], and how to split the result back per input."""
    spec = spec or case["spec"]
    task = case["task"]
    if task == "sequence":
        if spec["pool"] == "mean":
            rows = torch.stack([hidden[b, :L].sum(0) / L for b, L in enumerate(lengths)])
        else:
            rows = hidden[:, 0]
        return rows, [1] * len(lengths)
    if task == "token":
        return torch.cat([hidden[b, :L] for b, L in enumerate(lengths)]), list(lengths)
    pos = [inp["maskPositions"] for inp in inputs]
    return torch.cat([hidden[b, ps] for b, ps in enumerate(pos)]), [len(ps) for ps in pos]


def head_matrix(W, spec, x):
    if spec["dense"]:
        x = mp.linear(x, W, spec["dense"])
    x = ACT[spec["act"]](x)
    if spec["norm"]:
        x = mp.ln(x, W, spec["norm"], spec["eps"])
    y = x @ W[spec["outWeight"]].T
    return y if spec["outBias"] is None else y + W[spec["outBias"]]


def head_loop(W, spec, x):
    """The same head one row and one output at a time in plain Python floats (an independent form)."""
    Wn = {k: v.numpy() for k, v in W.items()}
    out = []
    for row in x.numpy():
        v = [float(t) for t in row]
        if spec["dense"]:
            w, b = Wn[spec["dense"] + ".weight"], Wn.get(spec["dense"] + ".bias")
            v = [float(np.dot(w[i], v)) + (0.0 if b is None else float(b[i])) for i in range(w.shape[0])]
        v = [act_scalar(spec["act"], t) for t in v]
        if spec["norm"]:
            mu = sum(v) / len(v)
            var = sum((t - mu) ** 2 for t in v) / len(v)
            w, b = Wn[spec["norm"] + ".weight"], Wn.get(spec["norm"] + ".bias")
            v = [(t - mu) / math.sqrt(var + spec["eps"]) * float(w[i]) + (0.0 if b is None else float(b[i]))
                 for i, t in enumerate(v)]
        w = Wn[spec["outWeight"]]
        b = None if spec["outBias"] is None else Wn[spec["outBias"]]
        out.append([float(np.dot(w[i], v)) + (0.0 if b is None else float(b[i])) for i in range(w.shape[0])])
    return torch.tensor(out, dtype=D)


def split_rows(y, counts, task):
    out, at = [], 0
    for n in counts:
        out.append(y[at] if task == "sequence" else y[at:at + n])
        at += n
    return out


def run_case(case, inputs, cfg=None, spec=None, W=None, variant=None, types=True):
    """(hidden [B, T, C], per-input logits) for the case's inputs in one padded batch."""
    ids = [inp["ids"] for inp in inputs]
    tl = [inp["typeIds"] for inp in inputs] if types else None
    hidden = encode(case, ids, tl, cfg=cfg, variant=variant)
    lengths = [len(s) for s in ids]
    spec = spec or case["spec"]
    rows, counts = head_rows(case, hidden, lengths, inputs, spec)
    return hidden, split_rows(head_matrix(W or case["W"], spec, rows), counts, case["task"])


def canonical_head(case):
    """The swapformer head this HF head maps to (heads-design.md sections 1 and 3), for the lead's reference."""
    spec, W, task = case["spec"], case["W"], case["task"]
    out = {"task": task, "labels": int(W[spec["outWeight"]].shape[0])}
    if task == "sequence":
        out["pooling"] = spec["pool"]
    out["dense"] = spec["dense"] is not None
    if spec["dense"]:
        out["denseBias"] = spec["dense"] + ".bias" in W
    out["activation"] = CANONICAL_ACT[spec["act"]]
    out["norm"] = "layernorm" if spec["norm"] else "none"
    if spec["norm"]:
        out["normBias"] = spec["norm"] + ".bias" in W
        out["normEps"] = spec["eps"]
    out["outBias"] = spec["outBias"] is not None
    if task == "mlm":
        out["tied"] = True
    return out


def head_tensors(case):
    """canonical head tensor -> the HF tensor in model.safetensors (the tied decoder names its source)."""
    spec, W = case["spec"], case["W"]
    ren = case["save"].get("rename", lambda k: k)
    m = {}
    for canon, name in (("head.dense", spec["dense"]), ("head.norm", spec["norm"])):
        if name:
            for part in ("weight", "bias"):
                if f"{name}.{part}" in W:
                    m[f"{canon}.{part}"] = ren(f"{name}.{part}")
    if case["task"] == "mlm":
        m["embed.tokens (tied decoder)"] = ren(spec["outWeight"])
    else:
        m["head.out.weight"] = ren(spec["outWeight"])
    if spec["outBias"]:
        m["head.out.bias"] = ren(spec["outBias"])
    return m


# ----------------------------------------------------------------------------------------------
# tokenizers
# ----------------------------------------------------------------------------------------------

NER_LABELS = ["O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]  # dslim/bert-base-NER
NER_WORDS = ["John", "Smith", "lives", "in", "New", "York", "and", "works", "for", "Hu", "##gging", "Face", "Ang",
             "##ela", "Mer", "##kel", "visited", "Z", "##ür", "##ich", "Paris", "the", "European", "Union", "said",
             "Jos", "##é", "Mü", "##ller", "from", "met", "at", "Google", "Wolf", "##gang", "Amadeus", "Moz", "##art",
             "was", "born", "Salz", "##burg", "Austria", "é", "ü", "ö", "##ü", "##ö"]
NER_TEXTS = [("Angela Merkel visited Zürich and Paris.",
              "[CLS] Ang ##ela Mer ##kel visited Z ##ür ##ich and Paris . [SEP]"),
             ("José Müller works for Hugging Face in New York!",
              "[CLS] Jos ##é Mü ##ller works for Hu ##gging Face in New York ! [SEP]"),
             ("Wolfgang Amadeus Mozart was born in Salzburg, (Austria).",
              "[CLS] Wolf ##gang Amadeus Moz ##art was born in Salz ##burg , ( Austria ) . [SEP]"),
             ("Ørsted met the European Union at Google.",
              "[CLS] [UNK] met the European Union at Google . [SEP]")]


def tok_cased_ner():
    """bert-base-cased-like WordPiece (lowercase false: accents kept), words split into 2-3 pieces."""
    punct = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    vocab = []
    for t in mp.WP_SPECIALS + punct + list("0123456789") + letters + ["##" + c for c in letters] + NER_WORDS:
        if t not in vocab:
            vocab.append(t)
    tj = mp.wordpiece_tokenizer_json(vocab)
    tj["normalizer"]["lowercase"] = False
    cfg = {"clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "do_basic_tokenize": True,
           "do_lower_case": False, "mask_token": "[MASK]", "model_max_length": 512, "never_split": None,
           "pad_token": "[PAD]", "sep_token": "[SEP]", "strip_accents": None, "tokenize_chinese_chars": True,
           "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]"}
    smap = {"cls_token": "[CLS]", "mask_token": "[MASK]", "pad_token": "[PAD]", "sep_token": "[SEP]",
            "unk_token": "[UNK]"}
    return {"json": tj, "vocab": vocab, "config": cfg, "map": smap, "seq": {"pad": 0}, "mask": None}


MPNET_FRONT = ["<s>", "<pad>", "</s>", "<unk>"]


def tok_mpnet(model_max_length=512):
    """MPNetTokenizerFast's tokenizer.json: the BERT uncased vocabulary behind <s> <pad> </s> <unk> (so [UNK]
    moves up by 4), <mask> last (lstrip, MPNetTokenizerFast.mask_token), BertNormalizer lowercase +
    BertPreTokenizer + WordPiece (unk [UNK]), and MPNetConverter's template: <s> A </s>, pair
    <s> A </s> </s> B </s> with type id 1 on the second part (convert_slow_tokenizer.py)."""
    vocab = MPNET_FRONT + mp.wordpiece_vocab() + ["<mask>"]
    ids = {t: i for i, t in enumerate(vocab)}
    tj = mp.wordpiece_tokenizer_json(vocab)
    tj["added_tokens"] = [mp.added(t, ids[t]) for t in MPNET_FRONT + ["[UNK]"]] + \
        [mp.added("<mask>", ids["<mask>"], lstrip=True)]
    tj["post_processor"] = mp.template("<s>:0 $A:0 </s>:0", "<s>:0 $A:0 </s>:0 </s>:0 $B:1 </s>:1",
                                       [("<s>", ids["<s>"]), ("</s>", ids["</s>"])])
    cfg = {"bos_token": "<s>", "clean_up_tokenization_spaces": True, "cls_token": "<s>", "do_lower_case": True,
           "eos_token": "</s>", "mask_token": "<mask>", "model_max_length": model_max_length, "pad_token": "<pad>",
           "sep_token": "</s>", "strip_accents": None, "tokenize_chinese_chars": True,
           "tokenizer_class": "MPNetTokenizer", "unk_token": "[UNK]"}
    smap = {"bos_token": "<s>", "cls_token": "<s>", "eos_token": "</s>",
            "mask_token": {"content": "<mask>", "lstrip": True, "normalized": False, "rstrip": False,
                           "single_word": False},
            "pad_token": "<pad>", "sep_token": "</s>", "unk_token": "[UNK]"}
    return {"json": tj, "vocab": vocab, "config": cfg, "map": smap, "seq": {"pad": ids["<pad>"]}, "mask": "<mask>"}


def with_mask(tok, mask):
    tok = dict(tok)
    tok["mask"] = mask
    return tok


TOKENIZERS = {
    "uncased": lambda: with_mask(mp.tok_wordpiece(), "[MASK]"),
    "cased": tok_cased_ner,
    "roberta": lambda: with_mask(mp.tok_roberta(), "<mask>"),
    "xlmr": lambda: with_mask(mp.tok_xlmr(), "<mask>"),
    "modernbert": lambda: with_mask(mp.tok_modernbert(), "[MASK]"),
    "mpnet": tok_mpnet,
}


# ----------------------------------------------------------------------------------------------
# configs (key sets as the Hub's config.json files of each family have them; no num_labels: HF derives
# it from id2label, whose keys are strings in the file)
# ----------------------------------------------------------------------------------------------

def label_maps(names):
    return {"id2label": {str(i): n for i, n in enumerate(names)}, "label2id": {n: i for i, n in enumerate(names)}}


def bert_config(tok, arch, labels=None, **kw):
    c = {"architectures": [arch], "attention_probs_dropout_prob": 0.1, "classifier_dropout": None,
         "gradient_checkpointing": False, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
         "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-12, "max_position_embeddings": 128,
         "model_type": "bert", "num_attention_heads": 4, "num_hidden_layers": 2, "pad_token_id": 0,
         "position_embedding_type": "absolute", "torch_dtype": "float32", "transformers_version": "4.41.2",
         "type_vocab_size": 2, "use_cache": True, "vocab_size": len(tok["vocab"])}
    if labels:
        c.update(label_maps(labels))
    c.update(kw)
    return c


def roberta_config(tok, arch, labels=None, model_type="roberta", **kw):
    c = {"architectures": [arch], "attention_probs_dropout_prob": 0.1, "bos_token_id": 0, "classifier_dropout": None,
         "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
         "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-05,
         "max_position_embeddings": 130 if model_type == "roberta" else 80, "model_type": model_type,
         "num_attention_heads": 4, "num_hidden_layers": 2, "pad_token_id": 1, "position_embedding_type": "absolute",
         "torch_dtype": "float32", "transformers_version": "4.41.2", "type_vocab_size": 1, "use_cache": True,
         "vocab_size": len(tok["vocab"])}
    if labels:
        c.update(label_maps(labels))
    c.update(kw)
    return c


def distilbert_config(tok, arch, labels=None, **kw):
    c = {"activation": "gelu", "architectures": [arch], "attention_dropout": 0.1, "dim": 32, "dropout": 0.1,
         "hidden_dim": 64, "initializer_range": 0.02, "max_position_embeddings": 128, "model_type": "distilbert",
         "n_heads": 4, "n_layers": 2, "pad_token_id": 0, "qa_dropout": 0.1, "seq_classif_dropout": 0.2,
         "sinusoidal_pos_embds": False, "tie_weights_": True, "torch_dtype": "float32",
         "transformers_version": "4.41.2", "vocab_size": len(tok["vocab"])}
    if labels:
        c.update(label_maps(labels))
    c.update(kw)
    return c


def modernbert_config(tok, arch, labels=None, **kw):
    c = mp.modernbert_old_config(tok, architectures=[arch], num_hidden_layers=3, intermediate_size=48)
    if labels:
        c.update(label_maps(labels))
    c.update(kw)
    return c


def mpnet_config(tok, arch, labels=None, **kw):
    c = {"architectures": [arch], "attention_probs_dropout_prob": 0.1, "bos_token_id": 0, "eos_token_id": 2,
         "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32, "initializer_range": 0.02,
         "intermediate_size": 64, "layer_norm_eps": 1e-05, "max_position_embeddings": 130, "model_type": "mpnet",
         "num_attention_heads": 4, "num_hidden_layers": 2, "pad_token_id": 1, "relative_attention_num_buckets": 32,
         "torch_dtype": "float32", "transformers_version": "4.41.2", "vocab_size": len(tok["vocab"])}
    if labels:
        c.update(label_maps(labels))
    c.update(kw)
    return c


# ----------------------------------------------------------------------------------------------
# the cases: encoder parameters (no prefix) + head tensors (full HF names) + the spec that reads them
# ----------------------------------------------------------------------------------------------

def base_case(name, family, arch, task, tok, config, prefix, notes, texts=(), pairs=(), gen=None):
    g = mp.Gen(gen or name)
    return {"name": name, "family": family, "arch": arch, "task": task, "tok": tok, "config": config, "g": g,
            "prefix": prefix, "notes": notes, "texts": list(texts), "pairs": list(pairs), "head": {},
            "save": {}, "st": None}


def encoder_params(case, pooler=False):
    g, c, fam = case["g"], case["config"], case["family"]
    if fam in ("bert", "roberta", "xlm-roberta"):
        mp.bert_params(g, c, pooler=pooler)
    elif fam == "distilbert":
        mp.distilbert_params(g, c)
    elif fam == "modernbert":
        mp.modernbert_params(g, c)
    else:
        mpnet_params(g, c, pooler)


def hidden_size(c):
    return c.get("hidden_size", c.get("dim"))


def head_linear(case, name, n_out, bias=True, gain=2.0):
    g = case["g"]
    n_in = hidden_size(case["config"])
    case["head"][name + ".weight"] = g.normal((n_out, n_in), gain / math.sqrt(n_in))
    if bias:
        case["head"][name + ".bias"] = g.normal((n_out,), 0.3)


def head_norm(case, name, bias=True):
    g, C = case["g"], hidden_size(case["config"])
    case["head"][name + ".weight"] = g.normal((C,), 0.1, 1.0)
    if bias:
        case["head"][name + ".bias"] = g.normal((C,), 0.05)


def spec(pool=None, dense=None, act="identity", norm=None, eps=None, out="classifier", out_weight=None,
         out_bias="default"):
    return {"pool": pool, "dense": dense, "act": act, "norm": norm, "eps": eps,
            "outWeight": out_weight or out + ".weight", "outBias": out + ".bias" if out_bias == "default" else out_bias}


def n_labels(case):
    return len(case["config"]["id2label"])


# --- sequence classification --------------------------------------------------------------------

SEQ_TEXTS = ["Hello, world!", "The quick brown fox jumps over the lazy dog.",
             "Café naïve résumé: a short test of the model."]
CE_PAIRS = [["what is a transformer?", "A transformer encodes sentence embeddings."],
            ["what is a transformer?", "The quick brown fox jumps over the lazy dog."],
            ["how to embed a long document?", "Represent the passage, then search the query."]]
BPE_TEXTS = ["Hello world, the Swapformer model in WebAssembly.", "The quick brown fox jumps over the lazy dog!",
             "Café naïve: 2024 tokens, the text."]


def bert_seq(name, labels, notes, problem_type=None, texts=SEQ_TEXTS, pairs=(), gen=None, extra_config=None,
             pair_only=False):
    tok = TOKENIZERS["uncased"]()
    kw = dict(extra_config or {})
    if problem_type:
        kw["problem_type"] = problem_type
    c = bert_config(tok, "BertForSequenceClassification", labels, **kw)
    case = base_case(name, "bert", "BertForSequenceClassification", "sequence", tok, c, "bert.", notes,
                     () if pair_only else texts, pairs, gen)
    encoder_params(case, pooler=True)
    head_linear(case, "classifier", n_labels(case))
    case["spec"] = spec(pool="cls", dense="bert.pooler.dense", act="tanh")
    return case


def case_bert_seq3():
    return bert_seq("bert-seq-3", ["negative", "neutral", "positive"],
                    "BertForSequenceClassification, 3 labels, problem_type single_label_classification: "
                    "logits = classifier(tanh(bert.pooler.dense(h[:, 0]))); texts and one pair (token type 1 on B).",
                    "single_label_classification", pairs=CE_PAIRS[:1])


def case_bert_multilabel():
    return bert_seq("bert-seq-multilabel", ["toxic", "insult", "threat", "obscene"],
                    "BertForSequenceClassification with problem_type multi_label_classification (the pipeline "
                    "applies a sigmoid per label); the logits are the same pooler + classifier head.",
                    "multi_label_classification")


def case_bert_regression():
    return bert_seq("bert-seq-regression", ["LABEL_0"],
                    "BertForSequenceClassification with num_labels 1 (id2label {'0': 'LABEL_0'}) and problem_type "
                    "regression: one raw score per input.", "regression")


def cross_encoder(name, st_key, notes):
    return bert_seq(name, ["LABEL_0"], notes, pairs=CE_PAIRS, gen="cross-encoder-msmarco", pair_only=True,
                    extra_config=st_key)


def case_ce_identity():
    return cross_encoder("cross-encoder-msmarco", {"sentence_transformers": {
        "activation_fn": "torch.nn.modules.linear.Identity", "version": "4.0.1"}},
        "cross-encoder/ms-marco-MiniLM-L-6-v2 layout: BertForSequenceClassification, num_labels 1, config.json "
        "'sentence_transformers': {'activation_fn': 'torch.nn.modules.linear.Identity'} (CrossEncoder."
        "get_default_activation_fn reads it: scores are the raw logits); (query, passage) pairs with token type 1 "
        "on the passage.")


def case_ce_default():
    return cross_encoder("cross-encoder-msmarco-default", None,
                         "Same weights and inputs as cross-encoder-msmarco, config.json without any activation key: "
                         "CrossEncoder defaults to Sigmoid for num_labels 1 (the logits here are the same).")


def case_ce_legacy():
    return cross_encoder("cross-encoder-msmarco-legacy", {
        "sbert_ce_default_activation_function": "torch.nn.modules.linear.Identity"},
        "Same weights and inputs as cross-encoder-msmarco, with the sentence-transformers < 4 key "
        "'sbert_ce_default_activation_function' (read when 'sentence_transformers.activation_fn' is absent).")


def roberta_like_seq(name, family, labels, notes, tok_name, texts, pairs=(), model_type="roberta", arch=None):
    tok = TOKENIZERS[tok_name]()
    arch = arch or ("XLMRobertaForSequenceClassification" if family == "xlm-roberta" else
                    "RobertaForSequenceClassification")
    c = roberta_config(tok, arch, labels, model_type=model_type)
    case = base_case(name, family, arch, "sequence", tok, c, "roberta.", notes, texts, pairs)
    encoder_params(case)
    head_linear(case, "classifier.dense", hidden_size(c))
    head_linear(case, "classifier.out_proj", n_labels(case))
    case["spec"] = spec(pool="cls", dense="classifier.dense", act="tanh", out="classifier.out_proj")
    return case


def case_roberta_seq():
    return roberta_like_seq("roberta-seq", "roberta", ["negative", "positive"],
                            "RobertaForSequenceClassification (RobertaClassificationHead): "
                            "out_proj(tanh(dense(h[:, 0]))), no pooler; byte-level BPE, pad 1, positions from 2.",
                            "roberta", BPE_TEXTS)


def case_xlmr_seq():
    return roberta_like_seq("xlmr-seq", "xlm-roberta", ["LABEL_0", "LABEL_1", "LABEL_2"],
                            "XLMRobertaForSequenceClassification (same head as RoBERTa, prefix roberta.), default "
                            "LABEL_i names; Unigram + Metaspace tokenizer.", "xlmr",
                            ["query: how to encode text?", "Ünïcödé café — naïve résumé 2024!",
                             "Hello world"],
                            model_type="xlm-roberta")


def case_distilbert_sst2():
    tok = TOKENIZERS["uncased"]()
    c = distilbert_config(tok, "DistilBertForSequenceClassification", ["NEGATIVE", "POSITIVE"],
                          finetuning_task="sst-2", output_past=True)
    case = base_case("distilbert-sst2", "distilbert", "DistilBertForSequenceClassification", "sequence", tok, c,
                     "distilbert.", "distilbert-base-uncased-finetuned-sst-2-english layout: id2label NEGATIVE/"
                     "POSITIVE, finetuning_task sst-2; classifier(relu(pre_classifier(h[:, 0]))).", SEQ_TEXTS)
    encoder_params(case)
    head_linear(case, "pre_classifier", hidden_size(c))
    head_linear(case, "classifier", n_labels(case))
    case["spec"] = spec(pool="cls", dense="pre_classifier", act="relu")
    return case


def modernbert_head(case, name_dense="head.dense", name_norm="head.norm"):
    c = case["config"]
    head_linear(case, name_dense, hidden_size(c), bias=c["classifier_bias"], gain=mp.FF_GAIN)
    head_norm(case, name_norm, bias=c["norm_bias"])


def modernbert_seq(name, pooling, labels, notes, texts=BPE_TEXTS, **kw):
    tok = TOKENIZERS["modernbert"]()
    c = modernbert_config(tok, "ModernBertForSequenceClassification", labels, classifier_pooling=pooling, **kw)
    case = base_case(name, "modernbert", "ModernBertForSequenceClassification", "sequence", tok, c, "model.", notes,
                     texts)
    encoder_params(case)
    modernbert_head(case)
    head_linear(case, "classifier", n_labels(case))
    case["spec"] = spec(pool=pooling, dense="head.dense", act=c["classifier_activation"], norm="head.norm",
                        eps=c["norm_eps"])
    return case


def case_modernbert_seq_cls():
    return modernbert_seq("modernbert-seq-cls", "cls", ["business", "sports", "tech"],
                          "ModernBertForSequenceClassification, classifier_pooling cls, classifier_bias false, "
                          "norm_bias false (defaults): classifier(head.norm(gelu(head.dense(h[:, 0])))), head.dense "
                          "and head.norm without bias, encoder under 'model.'.")


def case_modernbert_seq_mean():
    return modernbert_seq("modernbert-seq-mean", "mean", ["negative", "positive"],
                          "ModernBertForSequenceClassification, classifier_pooling mean (sum of the real rows / their "
                          "count), classifier_bias true, norm_bias true (so every encoder LayerNorm has a bias too), "
                          "classifier_activation silu (the head reads classifier_activation, not hidden_activation "
                          "gelu).", classifier_bias=True, norm_bias=True, classifier_activation="silu")


def case_mpnet_seq():
    tok = TOKENIZERS["mpnet"]()
    c = mpnet_config(tok, "MPNetForSequenceClassification", ["negative", "neutral", "positive"])
    case = base_case("mpnet-seq", "mpnet", "MPNetForSequenceClassification", "sequence", tok, c, "mpnet.",
                     "MPNetForSequenceClassification (MPNetClassificationHead): out_proj(tanh(dense(h[:, 0]))); "
                     "relative bias + learned positions; one pair (<s> A </s> </s> B </s>).", SEQ_TEXTS, CE_PAIRS[:1])
    encoder_params(case)
    head_linear(case, "classifier.dense", hidden_size(c))
    head_linear(case, "classifier.out_proj", n_labels(case))
    case["spec"] = spec(pool="cls", dense="classifier.dense", act="tanh", out="classifier.out_proj")
    return case


ZS_PREMISES = ["The quick brown fox jumps over the lazy dog.", "A transformer encodes sentence embeddings."]
ZS_LABELS = ["animals", "sports", "technology"]
ZS_TEMPLATE = "This example is {}."


def zero_shot(case, labels_key):
    case["pairs"] = [[p, ZS_TEMPLATE.format(l)] for p in ZS_PREMISES for l in ZS_LABELS]
    case["zeroShot"] = {"premises": ZS_PREMISES, "candidateLabels": ZS_LABELS, "hypothesisTemplate": ZS_TEMPLATE,
                        "entailmentId": [i for i, n in enumerate(labels_key) if n.lower().startswith("entail")][0],
                        "pairOrder": "premise-major: input i is premise i // 3 with label i % 3"}
    return case


def case_nli_roberta():
    labels = ["contradiction", "neutral", "entailment"]
    case = roberta_like_seq("nli-roberta", "roberta", labels,
                            "RobertaForSequenceClassification NLI model (roberta-large-mnli style label order: "
                            "0 contradiction, 1 neutral, 2 entailment) for zero-shot: (premise, 'This example is "
                            "{label}.') pairs, RobertaProcessing <s> A </s></s> B </s> with all type ids 0.",
                            "roberta", [])
    return zero_shot(case, labels)


def case_nli_bert():
    labels = ["ENTAILMENT", "NEUTRAL", "CONTRADICTION"]
    case = bert_seq("nli-bert-entail0", labels,
                    "BertForSequenceClassification NLI model with entailment as label 0 (ENTAILMENT, NEUTRAL, "
                    "CONTRADICTION, upper case): zero-shot pairs with token type 1 on the hypothesis.", pair_only=True)
    return zero_shot(case, labels)


# --- token classification -----------------------------------------------------------------------

def case_bert_ner():
    tok = TOKENIZERS["cased"]()
    c = bert_config(tok, "BertForTokenClassification", NER_LABELS, _name_or_path="dslim/bert-base-NER",
                    output_past=True)
    case = base_case("bert-ner", "bert", "BertForTokenClassification", "token", tok, c, "bert.",
                     "dslim/bert-base-NER layout (O, B-MISC, I-MISC, B-PER, I-PER, B-ORG, I-ORG, B-LOC, I-LOC): "
                     "classifier(h) on every token; bert.pooler.* present but unused (BertForTokenClassification "
                     "builds BertModel(add_pooling_layer=False) and ignores a saved pooler: "
                     "_keys_to_ignore_on_load_unexpected ['pooler']); cased WordPiece "
                     "(lowercase false, accents kept) with words in 2-3 pieces (Ang ##ela, Z ##ür ##ich, Jos ##é), "
                     "punctuation split out, and a word that is one [UNK] (Ørsted).", [t for t, _ in NER_TEXTS])
    case["expectTokens"] = [want.split() for _, want in NER_TEXTS]
    encoder_params(case, pooler=True)
    head_linear(case, "classifier", n_labels(case), gain=2.0)
    case["spec"] = spec()
    return case


def case_roberta_token():
    tok = TOKENIZERS["roberta"]()
    labels = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
    c = roberta_config(tok, "RobertaForTokenClassification", labels)
    case = base_case("roberta-token", "roberta", "RobertaForTokenClassification", "token", tok, c, "roberta.",
                     "RobertaForTokenClassification: classifier(h); byte-level BPE where a word's continuation "
                     "pieces are the tokens without the leading 'Ġ' (no continuing_subword_prefix): 'Swap' 'former', "
                     "'ĠWeb' 'Assembly', byte pieces of 'é'.", BPE_TEXTS + [" hello World"])
    encoder_params(case)
    head_linear(case, "classifier", n_labels(case), gain=2.0)
    case["spec"] = spec()
    return case


TOKEN_TEXTS = ["Hello world, the swapformer model!", "Café naïve résumé in the web assembly test.",
               "the quick brown fox"]


def case_distilbert_token():
    tok = TOKENIZERS["uncased"]()
    c = distilbert_config(tok, "DistilBertForTokenClassification", NER_LABELS)
    case = base_case("distilbert-token", "distilbert", "DistilBertForTokenClassification", "token", tok, c,
                     "distilbert.", "DistilBertForTokenClassification: classifier(h) on every token (no "
                     "pre_classifier); uncased WordPiece (swap ##former).", TOKEN_TEXTS)
    encoder_params(case)
    head_linear(case, "classifier", n_labels(case), gain=2.0)
    case["spec"] = spec()
    return case


def case_modernbert_token():
    tok = TOKENIZERS["modernbert"]()
    c = modernbert_config(tok, "ModernBertForTokenClassification", ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])
    case = base_case("modernbert-token", "modernbert", "ModernBertForTokenClassification", "token", tok, c, "model.",
                     "ModernBertForTokenClassification: classifier(head.norm(gelu(head.dense(h)))) on every token "
                     "(the prediction head runs per token too).", BPE_TEXTS)
    encoder_params(case)
    modernbert_head(case)
    head_linear(case, "classifier", n_labels(case), gain=2.0)
    case["spec"] = spec(dense="head.dense", act=c["classifier_activation"], norm="head.norm", eps=c["norm_eps"])
    return case


def case_mpnet_token():
    tok = TOKENIZERS["mpnet"]()
    c = mpnet_config(tok, "MPNetForTokenClassification", NER_LABELS)
    case = base_case("mpnet-token", "mpnet", "MPNetForTokenClassification", "token", tok, c, "mpnet.",
                     "MPNetForTokenClassification (exists upstream): classifier(h) on every token.", TOKEN_TEXTS)
    encoder_params(case)
    head_linear(case, "classifier", n_labels(case), gain=2.0)
    case["spec"] = spec()
    return case


# --- masked LM -----------------------------------------------------------------------------------

def mlm_texts(mask):
    return [f"The quick brown {mask} jumps over the lazy dog.", f"Hello {mask}, this is a {mask} test.",
            f"A transformer encodes sentence {mask}."]


def gamma_beta(k):
    return k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")


def mlm_head(case, dense, norm, bias, act, eps, out_weight):
    """dense -> act -> LayerNorm -> tied decoder + bias: the BERT, RoBERTa, DistilBERT and MPNet LM heads."""
    H, V = hidden_size(case["config"]), case["config"]["vocab_size"]
    head_linear(case, dense, H, gain=mp.FF_GAIN)
    head_norm(case, norm)
    case["head"][bias] = case["g"].normal((V,), 0.3)
    case["spec"] = spec(dense=dense, act=act, norm=norm, eps=eps, out_weight=out_weight, out_bias=bias)


def bert_mlm(name, notes, style):
    tok = TOKENIZERS["uncased"]()
    c = bert_config(tok, "BertForMaskedLM")
    case = base_case(name, "bert", "BertForMaskedLM", "mlm", tok, c, "bert.", notes, mlm_texts("[MASK]"))
    encoder_params(case, pooler=style == "old")  # BertForMaskedLM has no pooler; a BertForPreTraining save does
    H = hidden_size(c)
    decoder = "bert.embeddings.word_embeddings.weight"
    if style in ("decoder", "old"):  # the tied decoder saved as its own tensor, equal to the word embeddings
        decoder = "cls.predictions.decoder.weight"
        case["save"]["alias"] = {decoder: "embeddings.word_embeddings.weight"}
    if style == "decoder":
        case["save"]["alias"]["cls.predictions.decoder.bias"] = "cls.predictions.bias"
    if style == "old":
        case["config"]["transformers_version"] = "4.6.0.dev0"
        case["save"]["rename"] = gamma_beta
        case["save"]["i64"] = {"bert.embeddings.position_ids": torch.arange(c["max_position_embeddings"])[None, :]}
        case["head"]["cls.seq_relationship.weight"] = case["g"].normal((2, H), 0.2)
        case["head"]["cls.seq_relationship.bias"] = case["g"].normal((2,), 0.05)
    mlm_head(case, "cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.bias",
             c["hidden_act"], c["layer_norm_eps"], decoder)
    return case


def case_bert_mlm():
    return bert_mlm("bert-mlm", "BertForMaskedLM as saved now: bert.* (no pooler) + cls.predictions.transform."
                    "{dense,LayerNorm} + cls.predictions.bias; the decoder is tied to bert.embeddings.word_embeddings "
                    "and not saved: logits = LN(gelu(dense(h))) . E^T + bias, at the [MASK] positions.", "tied")


def case_bert_mlm_decoder():
    return bert_mlm("bert-mlm-decoder", "BertForMaskedLM save that keeps the tied tensors: cls.predictions.decoder."
                    "weight (== bert.embeddings.word_embeddings.weight) and cls.predictions.decoder.bias "
                    "(== cls.predictions.bias) present.", "decoder")


def case_bert_mlm_old():
    return bert_mlm("bert-mlm-old", "Old (TF-converted, bert-base-uncased-like) save: every LayerNorm as "
                    "LayerNorm.gamma/beta (cls.predictions.transform.LayerNorm too), cls.predictions.decoder.weight "
                    "(== word embeddings) with cls.predictions.bias only (no decoder.bias), bert.pooler.* and "
                    "cls.seq_relationship.* to ignore, and the int64 buffer bert.embeddings.position_ids.", "old")


def roberta_mlm(name, family, tok_name, notes, texts_fn=mlm_texts):
    tok = TOKENIZERS[tok_name]()
    arch = "XLMRobertaForMaskedLM" if family == "xlm-roberta" else "RobertaForMaskedLM"
    c = roberta_config(tok, arch, model_type=family)
    case = base_case(name, family, arch, "mlm", tok, c, "roberta.", notes, texts_fn("<mask>"))
    encoder_params(case)
    mlm_head(case, "lm_head.dense", "lm_head.layer_norm", "lm_head.bias", "gelu", c["layer_norm_eps"],
             "roberta.embeddings.word_embeddings.weight")
    return case


def case_roberta_mlm():
    return roberta_mlm("roberta-mlm", "roberta", "roberta",
                       "RobertaForMaskedLM: lm_head.dense -> gelu (erf, fixed) -> lm_head.layer_norm (eps 1e-5 from "
                       "the config) -> tied decoder + lm_head.bias (lm_head.decoder.* not saved: "
                       "_keys_to_ignore_on_save); <mask> is an added token with lstrip, so 'brown <mask>' gives "
                       "'Ġbrown' '<mask>' (the space goes into the mask).")


def case_xlmr_mlm():
    return roberta_mlm("xlmr-mlm", "xlm-roberta", "xlmr",
                       "XLMRobertaForMaskedLM: the RoBERTa LM head under roberta.* / lm_head.*; Unigram tokenizer with "
                       "<mask> (lstrip) as the last id.",
                       lambda m: [f"The quick brown {m} jumps over the lazy dog.", f"Hello {m} world, a {m} test.",
                                  f"query: how to encode {m}?"])


def case_distilbert_mlm():
    tok = TOKENIZERS["uncased"]()
    c = distilbert_config(tok, "DistilBertForMaskedLM")
    case = base_case("distilbert-mlm", "distilbert", "DistilBertForMaskedLM", "mlm", tok, c, "distilbert.",
                     "DistilBertForMaskedLM: vocab_projector(vocab_layer_norm(gelu(vocab_transform(h)))) with "
                     "vocab_layer_norm eps 1e-12 (hard-coded), the activation from config 'activation', "
                     "vocab_projector.weight tied to distilbert.embeddings.word_embeddings (absent), "
                     "vocab_projector.bias present.", mlm_texts("[MASK]"))
    encoder_params(case)
    mlm_head(case, "vocab_transform", "vocab_layer_norm", "vocab_projector.bias", c["activation"], 1e-12,
             "distilbert.embeddings.word_embeddings.weight")
    return case


def case_modernbert_mlm():
    tok = TOKENIZERS["modernbert"]()
    c = modernbert_config(tok, "ModernBertForMaskedLM", tie_word_embeddings=True)
    case = base_case("modernbert-mlm", "modernbert", "ModernBertForMaskedLM", "mlm", tok, c, "model.",
                     "ModernBertForMaskedLM: decoder(head(h)), head = head.norm(gelu(head.dense(h))) (no biases: "
                     "classifier_bias/norm_bias false), decoder.weight tied to model.embeddings.tok_embeddings and "
                     "absent, decoder.bias present (decoder_bias true); [MASK] with lstrip; the logits cover the "
                     "padded vocab_size (448), not only the tokenizer's 410 tokens.", mlm_texts("[MASK]"))
    encoder_params(case)
    V = c["vocab_size"]
    modernbert_head(case)
    case["head"]["decoder.bias"] = case["g"].normal((V,), 0.3)
    case["spec"] = spec(dense="head.dense", act=c["classifier_activation"], norm="head.norm", eps=c["norm_eps"],
                        out="decoder", out_weight="model.embeddings.tok_embeddings.weight")
    return case


def case_mpnet_mlm():
    tok = TOKENIZERS["mpnet"]()
    c = mpnet_config(tok, "MPNetForMaskedLM")
    case = base_case("mpnet-mlm", "mpnet", "MPNetForMaskedLM", "mlm", tok, c, "mpnet.",
                     "MPNetForMaskedLM (MPNetLMHead): lm_head.dense -> gelu -> lm_head.layer_norm -> decoder tied to "
                     "mpnet.embeddings.word_embeddings + lm_head.bias (lm_head.decoder.* not saved); <mask> (lstrip) "
                     "is the last id.", mlm_texts("<mask>"))
    encoder_params(case)
    mlm_head(case, "lm_head.dense", "lm_head.layer_norm", "lm_head.bias", "gelu", c["layer_norm_eps"],
             "mpnet.embeddings.word_embeddings.weight")
    return case


# --- MPNet sentence embeddings -----------------------------------------------------------------

MPNET_EMBED_TEXTS = ["Hello, world!", "The quick brown fox jumps over the lazy dog.",
                     "what is a transformer? " + " ".join(["a transformer encodes sentence embeddings for search"]
                                                          * 11)]


def case_mpnet_embed():
    tok = tok_mpnet(model_max_length=512)
    c = mpnet_config(tok, "MPNetForMaskedLM", _name_or_path="microsoft/mpnet-base", max_position_embeddings=514,
                     transformers_version="4.8.2")
    c.pop("torch_dtype")
    case = base_case("mpnet-embed", "mpnet", "MPNetModel (config: MPNetForMaskedLM)", "embedding", tok, c, "",
                     "all-mpnet-base-v2 layout: sentence-transformers folder (modules.json Transformer -> 1_Pooling "
                     "mean (old-style 4-key config) -> 2_Normalize; sentence_bert_config max_seq_length 384 < 514 "
                     "positions); config.json says architectures ['MPNetForMaskedLM'] but the weights are the base "
                     "MPNetModel's, without prefix: embeddings.*, encoder.* (with encoder.relative_attention_bias."
                     "weight [32, heads]), pooler.dense.* (unused) and the int64 buffer embeddings.position_ids "
                     "(transformers 4.8 saved it); no lm_head.*. Expected: hidden states as is, with the relative "
                     "bias removed (hiddenNoRelativeBias) and with the learned positions removed (hiddenNoAbsolute), "
                     "and the mean + normalize embeddings of each. The third text is long enough (> 91 tokens) that "
                     "every reachable bucket is used (31 of the 32: bucket 16, key after query at distance 0, "
                     "cannot occur).", MPNET_EMBED_TEXTS)
    encoder_params(case, pooler=True)
    case["save"]["i64"] = {"embeddings.position_ids": torch.arange(c["max_position_embeddings"])[None, :]}
    case["st"] = {"modules": mp.st_modules(False, True), "sbert": {"max_seq_length": 384, "do_lower_case": False},
                  "pooling": mp.pooling_config(hidden_size(c), ["mean"], old_style=True),
                  "version": mp.st_version(new=False)}
    case["spec"] = None
    return case


# --- past the head's 64-row chunk --------------------------------------------------------------------
# The core runs a head 64 rows at a time (SF_CHUNK): the sequence head over 64 sequences of a batch, the
# token head over 64 tokens of a sequence, the MLM head over 64 mask rows of a batch.  These cases put rows
# past the first chunk: a token head on 150 tokens, 74 mask rows (70 in one 143-token input, past position
# 64), and a sequence head (mean pooling over 150 tokens) on a batch of 66 inputs.

LONG_NER = " ".join(t for t, _ in NER_TEXTS * 3)
LONG_MASKS = " ".join(["the [MASK]"] * 70) + "."
SEQ_MANY = [f"{i} fox" for i in range(62)]


def case_bert_ner_long():
    tok = TOKENIZERS["cased"]()
    c = bert_config(tok, "BertForTokenClassification", NER_LABELS, max_position_embeddings=256)
    case = base_case("bert-ner-long", "bert", "BertForTokenClassification", "token", tok, c, "bert.",
                     "bert-ner's head (classifier(h) on every token) on inputs past the head's 64-row chunk: "
                     "the NER texts three times over (about 150 tokens), and one short text; "
                     "max_position_embeddings 256.", [LONG_NER, NER_TEXTS[0][0]])
    encoder_params(case, pooler=True)
    head_linear(case, "classifier", n_labels(case), gain=2.0)
    case["spec"] = spec()
    return case


def case_bert_mlm_long():
    tok = TOKENIZERS["uncased"]()
    c = bert_config(tok, "BertForMaskedLM", max_position_embeddings=256)
    case = base_case("bert-mlm-long", "bert", "BertForMaskedLM", "mlm", tok, c, "bert.",
                     "bert-mlm's head on 74 mask rows in one batch (past the head's 64-row chunk): the three "
                     "short texts (4 masks) and one of 143 tokens with 70 masks, at positions 2 to 140; "
                     "max_position_embeddings 256.", mlm_texts("[MASK]") + [LONG_MASKS])
    encoder_params(case)
    mlm_head(case, "cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.bias",
             c["hidden_act"], c["layer_norm_eps"], "bert.embeddings.word_embeddings.weight")
    return case


def case_modernbert_seq_long():
    return modernbert_seq("modernbert-seq-long", "mean", ["negative", "positive"],
                          "modernbert-seq-mean's head (mean pooling, silu) on a batch of 66 inputs, past the head's "
                          "64-row chunk: the three texts, one of about 160 tokens (the mean over all its rows), and "
                          "62 short ones.", classifier_bias=True, norm_bias=True, classifier_activation="silu",
                          texts=BPE_TEXTS + [" ".join(BPE_TEXTS * 4)] + SEQ_MANY)


CASES = [case_bert_seq3, case_bert_multilabel, case_bert_regression, case_ce_identity, case_ce_default,
         case_ce_legacy, case_roberta_seq, case_xlmr_seq, case_distilbert_sst2, case_modernbert_seq_cls,
         case_modernbert_seq_mean, case_mpnet_seq, case_nli_roberta, case_nli_bert,
         case_bert_ner, case_roberta_token, case_distilbert_token, case_modernbert_token, case_mpnet_token,
         case_bert_mlm, case_bert_mlm_decoder, case_bert_mlm_old, case_roberta_mlm, case_xlmr_mlm,
         case_distilbert_mlm, case_modernbert_mlm, case_mpnet_mlm, case_mpnet_embed,
         case_bert_ner_long, case_bert_mlm_long, case_modernbert_seq_long]


# ----------------------------------------------------------------------------------------------
# writing a case
# ----------------------------------------------------------------------------------------------

def finalize_params(case):
    """Round everything to float32 (what a loader reads back) and build W: every tensor by its saved
    (pre-rename) HF name, aliases included, for the head forward."""
    case["enc"] = {k: mp.storage_round(v, "F32") for k, v in case["g"].P.items()}
    case["head"] = {k: mp.storage_round(v, "F32") for k, v in case["head"].items()}
    W = {case["prefix"] + k: v for k, v in case["enc"].items()}
    W.update(case["head"])
    for name, src in case["save"].get("alias", {}).items():
        W[name] = W[case["prefix"] + src] if case["prefix"] + src in W else W[src]
    case["W"] = W


def save_weights(case, folder):
    ren = case["save"].get("rename", lambda k: k)
    entries = [(ren(k), v, "F32") for k, v in case["W"].items()]
    entries += [(k, v, "I64") for k, v in case["save"].get("i64", {}).items()]
    names = [e[0] for e in entries]
    check(len(set(names)) == len(names), f"{case['name']}: tensor names unique")
    path = os.path.join(folder, "model.safetensors")
    mp.write_safetensors(path, entries, {"format": "pt"})
    meta, got = mp.read_safetensors(path)
    check(meta == {"format": "pt"} and set(got) == set(names), f"{case['name']}: safetensors header round trip")
    for name, t, dt in entries:
        gd, gt = got[name]
        check(gd == dt and list(gt.shape) == list(t.shape) and torch.equal(gt, t.to(gt.dtype)),
              f"{case['name']}: {name} round trip")
    for name, src in case["save"].get("alias", {}).items():
        check(torch.equal(got[ren(name)][1], got[ren(case["prefix"] + src if case["prefix"] + src in case["W"]
                                                         else src)][1]),
              f"{case['name']}: {name} saved equal to its tied source")
    return {n: {"dtype": d, "shape": list(t.shape)} for n, t, d in sorted(entries, key=lambda e: e[0])}


def tokenize(case, folder):
    jobs = [{"tokenizer": os.path.join(folder, "tokenizer.json"), "texts": [t]} for t in case["texts"]]
    jobs += [{"tokenizer": os.path.join(folder, "tokenizer.json"), "pairs": [p]} for p in case["pairs"]]
    rust = mp.run_rust(jobs)
    vocab = case["tok"]["vocab"]
    check(all(r["vocabSize"] == len(vocab) for r in rust["results"]),
          f"{case['name']}: Rust loads tokenizer.json, vocab size {len(vocab)}")
    check(len(vocab) <= case["config"]["vocab_size"], f"{case['name']}: tokenizer fits vocab_size")
    inputs = []
    srcs = [{"text": t} for t in case["texts"]] + [{"text": a, "textPair": b} for a, b in case["pairs"]]
    for src, res in zip(srcs, rust["results"]):
        enc = (res["texts"] + res["pairs"])[0]
        inp = dict(src)
        for k in ("ids", "typeIds", "tokens", "offsets", "specialTokensMask", "wordIds", "sequenceIds"):
            inp[k] = enc[k]
        if case["task"] == "mlm":
            mid = vocab.index(case["tok"]["mask"])
            inp["maskPositions"] = [i for i, t in enumerate(enc["ids"]) if t == mid]
        inputs.append(inp)
    return inputs, rust["tokenizersVersion"]


def check_tokens(case, inputs):
    name, vocab, tj = case["name"], case["tok"]["vocab"], case["tok"]["json"]
    for inp in inputs:
        n = len(inp["ids"])
        check(all(len(inp[k]) == n for k in ("typeIds", "tokens", "offsets", "specialTokensMask")),
              f"{name}: encoding fields of equal length for {inp['text']!r}")
        check(all(0 <= i < case["config"]["vocab_size"] for i in inp["ids"]), f"{name}: ids < vocab_size")
    if tj["model"]["type"] == "WordPiece" and tj["normalizer"]["lowercase"]:
        # independent Python WordPiece (make_pretrained.py) on the single texts without added tokens
        for inp in inputs:
            if "textPair" in inp or "[MASK]" in inp["text"] or "<mask>" in inp["text"]:
                continue
            py = mp.py_wordpiece(inp["text"], vocab)
            check(py[1:-1] == inp["ids"][1:-1], f"{name}: Python WordPiece == Rust for {inp['text']!r}")
    for want, inp in zip(case.get("expectTokens", []), inputs):
        check(inp["tokens"] == want, f"{name}: crafted pieces {' '.join(want)}")
    if case["task"] == "mlm":
        counts = [len(inp["maskPositions"]) for inp in inputs]
        check(1 in counts and 2 in counts, f"{name}: inputs with one and with two masks", str(counts))
        for inp in inputs:
            for p in inp["maskPositions"]:
                check(inp["specialTokensMask"][p] == 0, f"{name}: the mask is not a special-mask token")
                prev = inp["tokens"][p - 1]
                check(prev not in ("Ġ", "▁", " "), f"{name}: lstrip mask absorbs the space", f"prev {prev!r}")
    if case["family"] == "roberta" and case["task"] == "token":
        toks = inputs[0]["tokens"]
        at = toks.index("ĠSwap") if "ĠSwap" in toks else -2
        check(toks[at + 1] == "former" and inputs[0]["wordIds"][at] == inputs[0]["wordIds"][at + 1],
              f"{name}: 'ĠSwap' continued by 'former' (no 'Ġ', same word)", " ".join(toks))


def nested(t):
    if isinstance(t, torch.Tensor):
        t = t.tolist()
    if isinstance(t, list):
        return [nested(x) for x in t]
    return 0 if t == 0 else float(format(float(t), ".9g"))


def write_expected(path, obj, per_line):
    """JSON with one element per line for the long arrays (inputs, logits, hidden states)."""
    items = list(obj.items())
    lines = ["{"]
    for n, (k, v) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        if k in per_line and isinstance(v, list):
            inner = ",\n".join("    " + json.dumps(x, separators=(",", ":"), ensure_ascii=False) for x in v)
            lines.append(f"  {json.dumps(k)}: [\n{inner}\n  ]{comma}")
        else:
            lines.append(f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'), ensure_ascii=False)}{comma}")
    lines.append("}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def st_files(case, folder):
    st = case["st"]
    if not st:
        return
    mp.write_json(os.path.join(folder, "modules.json"), st["modules"])
    mp.write_json(os.path.join(folder, "sentence_bert_config.json"), st["sbert"])
    mp.write_json(os.path.join(folder, "config_sentence_transformers.json"), st["version"])
    mp.write_json(os.path.join(folder, "1_Pooling", "config.json"), st["pooling"])


def self_checks(case, inputs, hidden, logits):
    """Each input alone == its row of the padded batch; the loop attention == the matrix one on the longest
    input; the head's matrix form == its per-element loop; BERT / DistilBERT layers == torch's own."""
    name = case["name"]
    ids = [inp["ids"] for inp in inputs]
    types = [inp["typeIds"] for inp in inputs]
    for b, inp in enumerate(inputs):
        h1, l1 = run_case(case, [inp]) if case["spec"] else (encode(case, [inp["ids"]], [inp["typeIds"]]), None)
        close(h1[0], hidden[b, :len(inp["ids"])], TOL, f"{name}: input {b} alone == padded batch (hidden)")
        if l1 is not None:
            close(l1[0], logits[b], TOL, f"{name}: input {b} alone == padded batch (logits)")
    k = max(range(len(ids)), key=lambda i: len(ids[i]))
    close(encode(case, [ids[k]], [types[k]], impl="loop"), encode(case, [ids[k]], [types[k]]), TOL,
          f"{name}: per-element loop attention == matrix attention (len {len(ids[k])})")
    if case["spec"]:
        rows, _ = head_rows(case, hidden, [len(s) for s in ids], inputs)
        close(head_loop(case["W"], case["spec"], rows), head_matrix(case["W"], case["spec"], rows), TOL,
              f"{name}: head per-element loop == matrix form ({rows.shape[0]} rows)")
    if case["family"] in ("bert", "distilbert"):
        view = {"name": case["name"], "P": case["enc"], "config": case["config"], "family": case["family"],
                "pad_id": case["tok"]["seq"]["pad"]}
        mp.layer_check_with_torch(view, ids, types if case["family"] == "bert" else None)


def mpnet_checks(case, inputs, hidden):
    """MPNet without its relative bias is RoBERTa's computation (positions from pad 1 + 1, post-norm layers),
    so the bias-free variant must equal make_pretrained's BERT-family forward on renamed weights."""
    name, P, c = case["name"], case["enc"], case["config"]
    R = {rename(k, MPNET_TO_BERT): v for k, v in P.items()}
    R["embeddings.token_type_embeddings.weight"] = torch.zeros(1, c["hidden_size"], dtype=D)
    rc = dict(c, model_type="roberta", pad_token_id=MPNET_PAD)
    ids = [inp["ids"] for inp in inputs]
    lengths = [len(s) for s in ids]
    T = max(lengths)
    idt = torch.tensor([s + [MPNET_PAD] * (T - len(s)) for s in ids])
    ref = mp.bert_family_forward(R, rc, idt, lengths) * mp.key_mask(lengths, T)[..., None].to(D)
    close(encode(case, ids, variant={"relative": False}), ref, TOL,
          f"{name}: MPNet without relative bias == RoBERTa forward on renamed weights")
    rel = torch.arange(-600, 601)
    vec = mp.t5_bucket(rel, MPNET_BUCKETS, MPNET_MAX_DISTANCE)
    sc = torch.tensor([mpnet_bucket_scalar(0, int(r)) for r in rel])
    check(torch.equal(vec, sc), f"{name}: MPNet bucket (n = i - j, float32 log) == T5 bucket of j - i, |j - i| <= 600")


def trap_checks(case, inputs, logits, hidden):
    """Known mistakes must move the expected values well beyond float32 noise."""
    name, c, sp = case["name"], case["config"], case["spec"]

    def moved(label, new, ref=logits):
        diff = max(float((a - b).abs().max()) for a, b in zip(new, ref))
        check(diff > TRAP, f"trap detectable: {name}: {label}", f"max|diff|={diff:.3g}")

    if case["family"] == "mpnet":
        for label, var in (("relative bias with the sign of i - j flipped", {"flip_sign": True}),
                           ("relative bias scaled by 1/sqrt(d)", {"bias_scaled": True}),
                           ("relative bias only in layer 0", {"bias_first_layer": True}),
                           ("positions from 0 instead of padding_idx + 1", {"positions_from_zero": True})):
            h, lg = (encode(case, [i["ids"] for i in inputs], variant=var), None) if not sp else \
                run_case(case, inputs, variant=var)
            moved(label, [h] if lg is None else lg, [hidden] if lg is None else logits)
    if not sp:
        return
    if sp["act"] != "identity":
        other = "gelu_new" if sp["act"] == "gelu" else "gelu" if sp["act"] in ("silu", "relu") else "identity"
        moved(f"head activation {other} instead of {sp['act']}", run_case(case, inputs, spec=dict(sp, act=other))[1])
    if sp["outBias"]:
        W = dict(case["W"])
        W[sp["outBias"]] = torch.zeros_like(W[sp["outBias"]])
        moved("output bias dropped", run_case(case, inputs, W=W)[1])
    if sp["pool"] in ("cls", "mean"):
        other = "mean" if sp["pool"] == "cls" else "cls"
        moved(f"{other} pooling instead of {sp['pool']}", run_case(case, inputs, spec=dict(sp, pool=other))[1])
    if any(any(i["typeIds"]) for i in inputs) and case["family"] == "bert":
        moved("token type ids ignored", run_case(case, inputs, types=False)[1])


def emit(case):
    name = case["name"]
    folder = os.path.join(OUT, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    finalize_params(case)
    mp.write_json(os.path.join(folder, "config.json"), case["config"], sort_keys=True)
    tensors = save_weights(case, folder)
    tok = case["tok"]
    mp.write_json(os.path.join(folder, "tokenizer.json"), tok["json"])
    mp.write_json(os.path.join(folder, "tokenizer_config.json"), tok["config"])
    mp.write_json(os.path.join(folder, "special_tokens_map.json"), tok["map"])
    st_files(case, folder)
    inputs, version = tokenize(case, folder)
    check_tokens(case, inputs)
    obj = {"case": name, "family": case["family"], "architecture": case["arch"], "task": case["task"],
           "modelType": case["config"]["model_type"], "notes": case["notes"]}
    if case["spec"]:
        hidden, logits = run_case(case, inputs)
        obj.update({"head": canonical_head(case), "headTensors": head_tensors(case)})
    else:
        hidden, logits = encode(case, [i["ids"] for i in inputs]), None
    self_checks(case, inputs, hidden, logits)
    if case["family"] == "mpnet":
        mpnet_checks(case, inputs, hidden)
    trap_checks(case, inputs, logits, hidden)
    lengths = [len(i["ids"]) for i in inputs]
    rows = lambda h: [h[b, :L] for b, L in enumerate(lengths)]
    obj["tensors"] = tensors
    if "zeroShot" in case:
        obj["zeroShot"] = case["zeroShot"]
    obj["inputs"] = inputs
    if logits is not None:
        obj["logits"] = nested(logits)
    obj["hidden"] = nested(rows(hidden))
    if case["task"] == "embedding":
        variants = {"": hidden, "NoRelativeBias": encode(case, [i["ids"] for i in inputs], variant={"relative": False}),
                    "NoAbsolute": encode(case, [i["ids"] for i in inputs], variant={"absolute": False})}
        close(variants[""], encode(case, [i["ids"] for i in inputs], variant={"relative": True, "absolute": True}), 0.0,
              f"{name}: default variant == both position parts on")
        for a in ("NoRelativeBias", "NoAbsolute"):
            diff = float((variants[a] - hidden).abs().max())
            check(diff > 0.05, f"{name}: hidden{a} differs from hidden", f"max|diff|={diff:.3g}")
        used = set(mp.t5_bucket(torch.arange(max(lengths))[None, :] - torch.arange(max(lengths))[:, None],
                                MPNET_BUCKETS, MPNET_MAX_DISTANCE).flatten().tolist())
        # bucket 16 (key after the query at distance 0) cannot occur: the other 31 all do
        check(used == set(range(MPNET_BUCKETS)) - {MPNET_BUCKETS // 2},
              f"{name}: every reachable bucket used (31 of 32, T = {max(lengths)})")
        for a, h in variants.items():
            if a:
                obj["hidden" + a] = nested(rows(h))
            emb = mp.l2_normalize(mp.pool_all(h, lengths)["mean"])
            close(emb.norm(dim=-1), torch.ones(len(lengths), dtype=D), 1e-12, f"{name}: embeddings{a} unit norm")
            obj["embeddings" + a] = nested(emb)
    obj["generator"] = {"script": "tests/reference/make_heads.py", "torch": torch.__version__, "tokenizers": version}
    write_expected(os.path.join(EXPECTED, name + ".json"), obj,
                   {"inputs", "logits", "hidden", "hiddenNoRelativeBias", "hiddenNoAbsolute"})
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(folder) for f in fs)
    check(size < FOLDER_LIMIT, f"{name}: folder under {FOLDER_LIMIT // 1000} kB", f"{size} bytes")
    return size


def main():
    os.makedirs(EXPECTED, exist_ok=True)
    for f in os.listdir(EXPECTED):
        if f.endswith(".json"):
            os.remove(os.path.join(EXPECTED, f))
    sizes = {}
    built = [make() for make in CASES]
    keep = {c["name"] for c in built} | {"expected"}
    for f in os.listdir(OUT):  # folders of cases that no longer exist
        if os.path.isdir(os.path.join(OUT, f)) and f not in keep:
            shutil.rmtree(os.path.join(OUT, f))
    for case in built:
        sizes[case["name"]] = emit(case)
        print(f"  {case['name']}: {sizes[case['name']] / 1000:.0f} kB", file=sys.stderr)
    for n, d in mp.CHECKS:
        print(f"check ok: {n} {d}".rstrip())
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(OUT) for f in fs)
    print(f"{len(mp.CHECKS)} checks passed; {len(sizes)} cases; tests/heads is {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
