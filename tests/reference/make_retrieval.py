#!/usr/bin/env python3
"""Independent float64 references for question answering, SPLADE, ColBERT and bge-m3.

Writes tiny random checkpoints in the exact folder layouts of each kind (tests/retrieval/<case>/) and,
next to them, tests/retrieval/expected/<case>.json: the inputs as the Rust tokenizers encode them and
what the upstream code computes from them, transcribed here in float64 torch ops (no PyPI: the rules
are re-read from the upstream files named below, nothing of swapformer is used):

  question answering  transformers pipelines/question_answering.py (tests/reference/pipeline_rules.py
                      question_answering, its windows from the Rust tokenizer), the heads of
                      models/{bert,roberta,distilbert,modernbert,mpnet}/modeling_*.py *ForQuestionAnswering
                      (qa_outputs; ModernBERT head + classifier)
  SPLADE              sentence-transformers sparse_encoder/models/{MLMTransformer,SpladePooling}.py,
                      SparseEncoder.encode (max_active_dims: util/tensor.py select_max_active_dims), decode
  ColBERT             lightonai/pylate models/colbert.py (tokenize, insert_prefix_token, encode: skiplist,
                      expansion, normalisation), models/Dense.py (from_stanford_weights, use_residual),
                      scores/colbert.py colbert_scores (over real tokens here: see the README)
  bge-m3              FlagOpen/FlagEmbedding inference/embedder/encoder_only/m3.py (M3Embedder: _dense_embedding,
                      _sparse_embedding, _colbert_embedding, _process_token_weights, _process_colbert_vecs,
                      compute_lexical_matching_score, colbert_score) and finetune/.../m3/runner.py (the heads
                      loaded with torch.load from colbert_linear.pt / sparse_linear.pt, written here with
                      torch.save as modeling.py save does)

    /usr/bin/python3 tests/reference/make_retrieval.py

Deterministic (seeds from crc32 of the case name). Needs node and the npm package `tokenizers`.
"""
import collections
import json
import math
import os
import shutil
import sys
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_pretrained as mp  # noqa: E402
import make_heads as mh  # noqa: E402
import make_families as mf  # noqa: E402  (jina_v3_forward: the XLM-R flash backbone of jina-colbert-v2)
import pipeline_rules as pr  # noqa: E402

D = mp.D
check, close = mp.check, mp.close
OUT = os.path.join(mp.ROOT, "tests", "retrieval")
EXPECTED = os.path.join(OUT, "expected")
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")  # Python's string.punctuation: PyLate's default skiplist_words
torch.set_num_threads(1)


# ----------------------------------------------------------------------------------------------
# forwards (last hidden states, every row computed; keys limited to the first `lengths` tokens)
# ----------------------------------------------------------------------------------------------

def forward(case, ids_list, attend=None, types=None):
    """[B, T, H] for right-padded ids, keys limited to attend[b] tokens (default: each sequence's own)."""
    fam, P, cfg = case["family"], case["enc"], case["config"]
    lengths = [len(s) for s in ids_list]
    T = max(lengths)
    pad = case["tok"]["seq"]["pad"]
    ids = torch.tensor([s + [pad] * (T - len(s)) for s in ids_list])
    att = attend or lengths
    if fam == "distilbert":
        return mp.distilbert_forward(P, cfg, ids, att)
    if fam == "modernbert":
        return mp.modernbert_forward(P, cfg, ids, att)
    if fam == "mpnet":
        return mh.mpnet_forward(P, cfg, ids, att)
    if fam == "jina-v3":  # no adapters: the original weights (jina_v3_weights with no task)
        return mf.jina_v3_forward(P, dict(cfg, lora_alpha=1, lora_rank=1), ids, att, torch.zeros_like(ids))
    tt = None
    if types is not None and fam == "bert":
        tt = torch.tensor([s + [0] * (T - len(s)) for s in types])
    return mp.bert_family_forward(P, cfg, ids, att, tt)


def finalize(case):
    case["enc"] = {k: mp.storage_round(v, "F32") for k, v in case["g"].P.items()}
    case["head"] = {k: mp.storage_round(v, "F32") for k, v in case["head"].items()}


def write_folder(case, folder, extra_weights=()):
    W = {case["prefix"] + k: v for k, v in case["enc"].items()}
    W.update(case["head"])
    entries = [(k, v, "F32") for k, v in W.items()] + list(extra_weights)
    mp.write_safetensors(os.path.join(folder, "model.safetensors"), entries, {"format": "pt"})
    _, got = mp.read_safetensors(os.path.join(folder, "model.safetensors"))
    check(set(got) == {e[0] for e in entries}, f"{case['name']}: safetensors round trip")
    mp.write_json(os.path.join(folder, "config.json"), case["config"], sort_keys=True)
    tok = case["tok"]
    mp.write_json(os.path.join(folder, "tokenizer.json"), tok["json"])
    mp.write_json(os.path.join(folder, "tokenizer_config.json"), tok["config"])
    mp.write_json(os.path.join(folder, "special_tokens_map.json"), tok["map"])


def rust_encode(folder, texts, pairs=()):
    jobs = [{"tokenizer": os.path.join(folder, "tokenizer.json"), "texts": list(texts), "pairs": [list(p) for p in pairs]}]
    r = mp.run_rust(jobs)
    return r["results"][0]["texts"], r["results"][0]["pairs"], r["tokenizersVersion"]


def nested(t):
    return mh.nested(t)


def new_case(name, family, tok, config, prefix, notes, gen=None):
    return {"name": name, "family": family, "tok": tok, "config": config, "g": mp.Gen(gen or name),
            "prefix": prefix, "notes": notes, "head": {}}


def params(case, pooler=False):
    mh.encoder_params(case, pooler=pooler)


def head_linear(case, name, n_out, bias=True, gain=2.0):
    mh.head_linear(case, name, n_out, bias, gain)


# ----------------------------------------------------------------------------------------------
# question answering
# ----------------------------------------------------------------------------------------------

QA_CONTEXT = ("The quick brown fox jumps over the lazy dog. Hello world, this is a short test of the model. "
              "A transformer encodes sentence embeddings for search: represent the passage, then the query. ")
QA_INPUTS = [("what is a transformer?", QA_CONTEXT, 384, 128),
             ("how does the fox jump?", QA_CONTEXT * 3, 40, 12),
             ("what is the test?", "  Hello world,   this is a short test.  ", 384, 128)]
QA_VARIANTS = [{}, {"topK": 3}, {"topK": 4, "maxAnswerLen": 3}, {"handleImpossibleAnswer": True, "topK": 2},
               {"alignToWords": False, "topK": 3}]


def qa_case(name, family, tok_name, notes, modernbert=False):
    tok = mh.TOKENIZERS[tok_name]()
    arch = {"bert": "BertForQuestionAnswering", "roberta": "RobertaForQuestionAnswering",
            "xlm-roberta": "XLMRobertaForQuestionAnswering", "distilbert": "DistilBertForQuestionAnswering",
            "modernbert": "ModernBertForQuestionAnswering", "mpnet": "MPNetForQuestionAnswering"}[family]
    cfg = {"bert": mh.bert_config, "roberta": mh.roberta_config, "xlm-roberta": lambda t, a: mh.roberta_config(t, a, model_type="xlm-roberta"),
           "distilbert": mh.distilbert_config, "modernbert": mh.modernbert_config, "mpnet": mh.mpnet_config}[family](tok, arch)
    if family in ("roberta", "xlm-roberta", "bert", "mpnet"):
        cfg["max_position_embeddings"] = max(cfg["max_position_embeddings"], 130)
    prefix = {"bert": "bert.", "roberta": "roberta.", "xlm-roberta": "roberta.", "distilbert": "distilbert.",
              "modernbert": "model.", "mpnet": "mpnet."}[family]
    case = new_case(name, family, tok, cfg, prefix, notes)
    params(case)
    if modernbert:  # ModernBertForQuestionAnswering: head (dense, act, norm) then classifier [2, H]
        mh.modernbert_head(case)
        head_linear(case, "classifier", 2)
        case["qa"] = {"dense": "head.dense", "norm": "head.norm", "out": "classifier"}
    else:
        head_linear(case, "qa_outputs", 2)
        case["qa"] = {"out": "qa_outputs"}
    case["kind"] = "qa"
    return case


def qa_logits(case, windows):
    """The start and end logits of each window (each its own batch of one, as the pipeline runs them)."""
    out = []
    for w in windows:
        h = forward(case, [w["ids"]], types=[w["typeIds"]])[0]
        spec = case["qa"]
        if "dense" in spec:
            c = case["config"]
            h = mp.ACT[c["classifier_activation"]](mp.linear(h, case["head"], spec["dense"]))
            h = mp.layer_norm(h, case["head"][spec["norm"] + ".weight"], case["head"].get(spec["norm"] + ".bias"), c["norm_eps"])
        y = mp.linear(h, case["head"], spec["out"])
        out.append(y)
    return out


def emit_qa(case, folder):
    rust = pr.RustTokenizers()
    try:
        tok = pr.FastTokenizer(rust, {"file": os.path.relpath(os.path.join(folder, "tokenizer.json"), mp.ROOT)})
        cls_id = tok.special_token_id("cls")
        items = []
        for q, c, max_seq_len, stride in QA_INPUTS:
            max_len = case["tok"]["config"].get("model_max_length", 512)
            windows = pr.qa_windows(tok, q, c, max_seq_len, stride)
            logits = qa_logits(case, windows)
            variants = []
            for v in QA_VARIANTS:
                problem = {"windows": windows, "logits": [l.tolist() for l in logits], "context": c, "options": v,
                           "questionFirst": True, "clsTokenId": cls_id}
                variants.append({"options": v, "expected": pr.question_answering(problem, rust)})
            items.append({"question": q, "context": c, "maxSeqLen": max_seq_len, "docStride": stride,
                          "windows": [w["ids"] for w in windows], "logits": [nested(l) for l in logits],
                          "variants": variants})
            check(len(windows) >= (3 if max_seq_len == 40 else 1), f"{case['name']}: {len(windows)} windows")
            del max_len
        return {"qa": items}
    finally:
        rust.close()


# ----------------------------------------------------------------------------------------------
# SPLADE
# ----------------------------------------------------------------------------------------------

SPLADE_TEXTS = ["  The quick brown fox jumps over the lazy dog.  ", "what is a transformer?",
                "Hello world, this is a short test of the model. " * 6]  # over 64 tokens: pooled in two chunks


def mlm_logits(case, h):
    """The masked-LM head's logits on every row: LN(act(dense(h))) . E^T + bias (BERT, DistilBERT, RoBERTa)."""
    s = case["mlm"]
    x = mp.ACT[s["act"]](mp.linear(h, case["head"], s["dense"]))
    x = mp.layer_norm(x, case["head"][s["norm"] + ".weight"], case["head"][s["norm"] + ".bias"], s["eps"])
    W = case["head"][s["decoder"]] if s["decoder"] in case["head"] else case["enc"][s["decoder"]]
    return x @ W.T + case["head"][s["bias"]]


def splade_case(name, family, notes, pooling="max", activation="relu", modules=True, untied=False, max_len=24):
    tok = mh.TOKENIZERS["roberta" if family == "roberta" else "uncased"]()
    arch = {"bert": "BertForMaskedLM", "distilbert": "DistilBertForMaskedLM", "roberta": "RobertaForMaskedLM"}[family]
    cfg = {"bert": mh.bert_config, "distilbert": mh.distilbert_config, "roberta": mh.roberta_config}[family](tok, arch)
    prefix = {"bert": "bert.", "distilbert": "distilbert.", "roberta": "roberta."}[family]
    case = new_case(name, family, tok, cfg, prefix, notes)
    params(case)
    H, V = mh.hidden_size(cfg), cfg["vocab_size"]
    names = {"bert": ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.bias",
                      "embeddings.word_embeddings.weight"),
             "distilbert": ("vocab_transform", "vocab_layer_norm", "vocab_projector.bias", "embeddings.word_embeddings.weight"),
             "roberta": ("lm_head.dense", "lm_head.layer_norm", "lm_head.bias", "embeddings.word_embeddings.weight")}[family]
    head_linear(case, names[0], H, gain=mp.FF_GAIN)
    mh.head_norm(case, names[1])
    case["head"][names[2]] = case["g"].normal((V,), 0.3) - 1.0  # most logits below 0: sparse after relu
    decoder = names[3]
    if untied:  # a decoder that is not the token table: saved, and used
        decoder = "vocab_projector.weight"
        case["head"][decoder] = case["g"].normal((V, H), 0.5)
    act = cfg.get("hidden_act", cfg.get("activation", "gelu")) if family != "roberta" else "gelu"
    case["mlm"] = {"dense": names[0], "norm": names[1], "bias": names[2], "decoder": decoder, "act": act,
                   "eps": 1e-12 if family == "distilbert" else cfg["layer_norm_eps"]}
    case["splade"] = {"pooling": pooling, "activation": activation, "modules": modules, "maxLen": max_len if modules else None}
    case["kind"] = "splade"
    return case


def splade_vectors(case, encodings):
    out = []
    for e in encodings:
        h = forward(case, [e["ids"]])[0]
        x = torch.relu(mlm_logits(case, h))
        x = torch.log1p(x)
        if case["splade"]["activation"] == "log1p_relu":
            x = torch.log1p(x)
        v = x.sum(0) if case["splade"]["pooling"] == "sum" else x.max(0).values
        out.append(v)
    return out


def sparse_json(v):
    idx = torch.nonzero(v).flatten().tolist()
    return {"indices": idx, "values": [nested(v[i]) for i in idx]}


def emit_splade(case, folder):
    s = case["splade"]
    if s["modules"]:
        mp.write_json(os.path.join(folder, "modules.json"), [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.sparse_encoder.models.MLMTransformer"},
            {"idx": 1, "name": "1", "path": "1_SpladePooling", "type": "sentence_transformers.sparse_encoder.models.SpladePooling"}])
        mp.write_json(os.path.join(folder, "1_SpladePooling", "config.json"),
                      {"pooling_strategy": s["pooling"], "activation_function": s["activation"],
                       "word_embedding_dimension": case["config"]["vocab_size"]})
        mp.write_json(os.path.join(folder, "sentence_bert_config.json"), {"max_seq_length": s["maxLen"], "do_lower_case": False})
        mp.write_json(os.path.join(folder, "config_sentence_transformers.json"),
                      {"model_type": "SparseEncoder", "__version__": {"sentence_transformers": "5.0.0"},
                       "prompts": {"query": "", "document": ""}, "default_prompt_name": None, "similarity_fn_name": "dot"})
    max_len = s["maxLen"]
    texts = [t.strip() for t in SPLADE_TEXTS]  # MLMTransformer.tokenize strips (with or without modules.json)
    enc, _, _ = rust_encode(folder, texts)
    if max_len:  # truncation at max_seq_length, the last token kept a special one (Rust's post-processor)
        for e in enc:
            if len(e["ids"]) > max_len:
                e["ids"] = e["ids"][:max_len - 1] + [e["ids"][-1]]
    vecs = splade_vectors(case, enc)
    sims = torch.stack(vecs) @ torch.stack(vecs).T
    k = 5
    top = []
    for v in vecs:  # select_max_active_dims: the k largest |value| (ties: the lower index, our choice)
        order = sorted(range(len(v)), key=lambda i: (-abs(float(v[i])), i))[:k]
        t = torch.zeros_like(v)
        t[order] = v[order]
        top.append(sparse_json(t))
    check(all(0 < len(torch.nonzero(v)) < len(v) for v in vecs), f"{case['name']}: sparse vectors (some zeros, some not)",
          str([len(torch.nonzero(v)) for v in vecs]))
    return {"texts": SPLADE_TEXTS, "ids": [e["ids"] for e in enc], "sparse": [sparse_json(v) for v in vecs],
            "maxActiveDims": k, "top": top, "similarity": nested(sims),
            "decodeTop": [[[case["tok"]["vocab"][i], nested(v[i])] for i in sorted(range(len(v)), key=lambda i: (-float(v[i]), i))[:3]]
                          for v in vecs]}


# ----------------------------------------------------------------------------------------------
# ColBERT
# ----------------------------------------------------------------------------------------------

COLBERT_QUERIES = ["what is a transformer?", "  the quick brown fox  ", "how to search a long document with the query and the passage?"]
COLBERT_DOCS = ["A transformer encodes sentence embeddings, for search!", "The quick brown fox jumps over the lazy dog.",
                "Hello: world. " * 6, "fox"]


def tok_wordpiece_unused():
    """BERT's layout: [PAD] [unused0] [unused1] ... [UNK] [CLS] [SEP] [MASK] (the unused tokens plain vocabulary)."""
    base = mp.wordpiece_vocab()
    vocab = ["[PAD]", "[unused0]", "[unused1]"] + [t for t in base if t != "[PAD]"]
    t = mp.tok_wordpiece()
    tj = mp.wordpiece_tokenizer_json(vocab)
    ids = {w: i for i, w in enumerate(vocab)}
    seq = dict(t["seq"], bos=[ids["[CLS]"]], eos=[ids["[SEP]"]], sep_pair=[ids["[SEP]"]], pad=ids["[PAD]"])
    return {"json": tj, "vocab": vocab, "config": t["config"], "map": t["map"], "seq": seq}


def tok_xlmr_markers():
    """XLM-R's Unigram tokenizer with jina-colbert-v2's markers added as tokens (PyLate's add_tokens)."""
    t = mp.tok_xlmr()
    vocab = t["vocab"] + ["[QueryMarker]", "[DocumentMarker]"]
    tj = json.loads(json.dumps(t["json"]))
    for w in ("[QueryMarker]", "[DocumentMarker]"):
        tj["added_tokens"].append(mp.added(w, vocab.index(w), special=False))
    return dict(t, json=tj, vocab=vocab)


def jina_colbert_config(tok):
    """jinaai/jina-colbert-v2's config.json as its XLM-R flash backbone reads it (XLMRobertaFlashConfig,
    model_type xlm-roberta, position_embedding_type rotary), HF_ColBERT, no task adapters; small sizes."""
    return {"_name_or_path": "jinaai/jina-colbert-v2", "architectures": ["HF_ColBERT"], "attention_probs_dropout_prob": 0.0,
            "auto_map": {"AutoConfig": "jinaai/xlm-roberta-flash-implementation--configuration_xlm_roberta.XLMRobertaFlashConfig",
                         "AutoModel": "jinaai/xlm-roberta-flash-implementation--modeling_xlm_roberta.XLMRobertaModel"},
            "bos_token_id": 0, "classifier_dropout": None, "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
            "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-05,
            "max_position_embeddings": 8194, "model_type": "xlm-roberta", "num_attention_heads": 4, "num_hidden_layers": 2,
            "pad_token_id": 1, "position_embedding_type": "rotary", "rotary_emb_base": 10000.0, "torch_dtype": "float32",
            "transformers_version": "4.41.2", "type_vocab_size": 1, "use_flash_attn": True, "vocab_size": len(tok["vocab"])}


def jina_colbert_params(g, c):
    """The backbone's tensors (names under roberta.): word and type embeddings, emb_ln, per layer mixer.Wqkv
    (q, k, v stacked), mixer.out_proj, norm1, mlp.fc1, mlp.fc2, norm2; every Linear with a bias."""
    H, I = c["hidden_size"], c["intermediate_size"]
    g.emb("embeddings.word_embeddings", c["vocab_size"], H)
    g.emb("embeddings.token_type_embeddings", c["type_vocab_size"], H, std=0.3)
    g.norm("emb_ln", H)
    for l in range(c["num_hidden_layers"]):
        p = f"encoder.layers.{l}."
        g.linear(p + "mixer.Wqkv", 3 * H, H, gain=1.3)
        g.linear(p + "mixer.out_proj", H, H)
        g.norm(p + "norm1", H)
        g.linear(p + "mlp.fc1", I, H, gain=mp.FF_GAIN)
        g.linear(p + "mlp.fc2", H, I)
        g.norm(p + "norm2", H)


def colbert_case(name, layout, notes):
    if layout == "jina":
        tok = tok_xlmr_markers()
        cfg = jina_colbert_config(tok)
        case = new_case(name, "jina-v3", tok, cfg, "roberta.", notes)
        jina_colbert_params(case["g"], cfg)
        case["dense"] = [{"in": 32, "out": 12, "bias": False, "residual": False}]
        case["colbert"] = {"query_prefix": "[QueryMarker]", "document_prefix": "[DocumentMarker]", "query_length": 12,
                           "document_length": 20, "attend_to_expansion_tokens": True, "do_query_expansion": True,
                           "skiplist_words": None, "lower": False}
    elif layout == "xlmr":
        tok = tok_xlmr_markers()
        cfg = mh.roberta_config(tok, "XLMRobertaModel", model_type="xlm-roberta")
        case = new_case(name, "xlm-roberta", tok, cfg, "", notes)
        params(case)
        H = 32
        # two Dense layers (bias; the second with a residual): PyLate folds nothing, we fold them into one
        case["dense"] = [{"in": H, "out": 16, "bias": True, "residual": False}, {"in": 16, "out": 16, "bias": True, "residual": True}]
        case["colbert"] = {"query_prefix": "[QueryMarker]", "document_prefix": "[DocumentMarker]", "query_length": 14,
                           "document_length": 18, "attend_to_expansion_tokens": True, "do_query_expansion": True,
                           "skiplist_words": None, "lower": False}
    else:
        tok = tok_wordpiece_unused()
        arch = "HF_ColBERT" if layout == "stanford" else "BertModel"
        cfg = mh.bert_config(tok, arch)
        case = new_case(name, "bert", tok, cfg, "bert." if layout == "stanford" else "", notes)
        params(case)
        H = mh.hidden_size(cfg)
        case["dense"] = [{"in": H, "out": 12 if layout == "pylate" else 8, "bias": False, "residual": False}]
        if layout == "pylate":  # answerai-colbert-small-v1's settings, smaller lengths
            case["colbert"] = {"query_prefix": "[unused0]", "document_prefix": "[unused1]", "query_length": 12,
                               "document_length": 16, "attend_to_expansion_tokens": False, "do_query_expansion": True,
                               "skiplist_words": PUNCT, "lower": True}
        else:
            case["colbert"] = {"query_prefix": "[unused0]", "document_prefix": "[unused1]", "query_length": 10,
                               "document_length": 14, "attend_to_expansion_tokens": False, "do_query_expansion": True,
                               "skiplist_words": None, "lower": False}
    g = case["g"]
    for i, d in enumerate(case["dense"]):
        d["W"] = mp.storage_round(g.normal((d["out"], d["in"]), 1.0 / math.sqrt(d["in"])), "F32")
        d["b"] = mp.storage_round(g.normal((d["out"],), 0.1), "F32") if d["bias"] else None
    case["layout"] = layout
    case["kind"] = "colbert"
    return case


def colbert_encode(case, folder, texts, is_query):
    """PyLate: Transformer.tokenize (strip, lower with do_lower_case, max_length = length - 1, padding
    max_length for expanded queries with pad := mask), insert_prefix_token at 1 (mask 1, type 0),
    attend_to_expansion_tokens -> mask all 1; forward with that mask; Dense; keep (documents: attention and
    not in the skiplist; expanded queries: all); L2-normalise."""
    c = case["colbert"]
    vocab = case["tok"]["vocab"]
    length = c["query_length"] if is_query else c["document_length"]
    prefix = vocab.index(c["query_prefix"] if is_query else c["document_prefix"])
    prepared = [t.strip().lower() if c["lower"] else t.strip() for t in texts]
    enc, _, _ = rust_encode(folder, prepared)
    mask_id = vocab.index("[MASK]" if "[MASK]" in vocab else "<mask>")
    unk = vocab.index("[UNK]" if "[UNK]" in vocab else "<unk>")
    skip = set(vocab.index(w) if w in vocab else unk for w in (c["skiplist_words"] or PUNCT))
    out = []
    for e in enc:
        ids = e["ids"]
        max_len = length - 1
        if len(ids) > max_len:
            ids = ids[:max_len - 1] + [ids[-1]]  # truncation keeps the post-processor's last token
        real = len(ids)
        expand = is_query and c["do_query_expansion"]
        if expand:
            ids = ids + [mask_id] * (max_len - len(ids))
        ids = [ids[0], prefix] + ids[1:]
        real += 1
        attend = len(ids) if (is_query and c["attend_to_expansion_tokens"]) else real
        h = forward(case, [ids], attend=[attend])[0]
        for d in case["dense"]:
            y = h @ d["W"].T + (d["b"] if d["b"] is not None else 0)
            h = y + (h if d["residual"] else 0)
        keep = list(range(len(ids))) if expand else [t for t in range(real) if is_query or ids[t] not in skip]
        v = h[keep]
        v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        out.append({"ids": ids, "attend": attend, "keep": keep, "vectors": v})
    return out


def maxsim(q, d):
    """colbert_scores for one pair over real tokens: sum over the query's vectors of the max dot product."""
    return float((q @ d.T).max(dim=1).values.sum())


def emit_colbert(case, folder):
    c = case["colbert"]
    if case["layout"] in ("stanford", "jina"):
        mp.write_json(os.path.join(folder, "artifact.metadata"),
                      {"query_token_id": c["query_prefix"], "doc_token_id": c["document_prefix"], "query_maxlen": c["query_length"],
                       "doc_maxlen": c["document_length"], "dim": case["dense"][0]["out"], "similarity": "cosine",
                       "attend_to_mask_tokens": c["attend_to_expansion_tokens"], "mask_punctuation": True,
                       "interaction": "colbert", "nbits": 2})
    else:
        mods = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]
        for i, d in enumerate(case["dense"]):
            path = f"{i + 1}_Dense"
            mods.append({"idx": i + 1, "name": str(i + 1), "path": path, "type": "pylate.models.Dense.Dense"})
            mp.write_json(os.path.join(folder, path, "config.json"),
                          {"in_features": d["in"], "out_features": d["out"], "bias": d["bias"],
                           "activation_function": "torch.nn.modules.linear.Identity", "use_residual": d["residual"]})
            ws = [("linear.weight", d["W"], "F32")] + ([("linear.bias", d["b"], "F32")] if d["bias"] else [])
            mp.write_safetensors(os.path.join(folder, path, "model.safetensors"), ws, {"format": "pt"})
        mp.write_json(os.path.join(folder, "modules.json"), mods)
        mp.write_json(os.path.join(folder, "sentence_bert_config.json"), {"max_seq_length": c["document_length"] - 1, "do_lower_case": c["lower"]})
        st = {"__version__": {"sentence_transformers": "3.0.1", "pylate": "1.1.4"}, "prompts": {}, "default_prompt_name": None,
              "similarity_fn_name": "MaxSim", "query_prefix": c["query_prefix"], "document_prefix": c["document_prefix"],
              "query_length": c["query_length"], "document_length": c["document_length"],
              "attend_to_expansion_tokens": c["attend_to_expansion_tokens"]}
        if c["skiplist_words"] is not None:
            st["skiplist_words"] = c["skiplist_words"]
        mp.write_json(os.path.join(folder, "config_sentence_transformers.json"), st)
    q = colbert_encode(case, folder, COLBERT_QUERIES, True)
    d = colbert_encode(case, folder, COLBERT_DOCS, False)
    scores = [[maxsim(a["vectors"], b["vectors"]) for b in d] for a in q]
    check(any(len(x["keep"]) < len(x["ids"]) for x in d), f"{case['name']}: the skiplist drops a document token")
    return {"queries": COLBERT_QUERIES, "documents": COLBERT_DOCS,
            "queryTokens": [{"ids": x["ids"], "attend": x["attend"], "keep": x["keep"], "vectors": nested(x["vectors"])} for x in q],
            "documentTokens": [{"ids": x["ids"], "attend": x["attend"], "keep": x["keep"], "vectors": nested(x["vectors"])} for x in d],
            "maxSim": scores}


# ----------------------------------------------------------------------------------------------
# bge-m3
# ----------------------------------------------------------------------------------------------

M3_TEXTS = ["what is BGE M3?", "BGE M3 is an embedding model supporting dense retrieval, lexical matching and multi-vector interaction.",
            "Definition of BM25", "BM25 is a bag-of-words retrieval function that ranks a set of documents based on the query terms.",
            "  hello hello hello world  "]


def m3_case(name, notes, pt=True):
    tok = mh.TOKENIZERS["xlmr"]()
    tok["config"] = dict(tok["config"], model_max_length=8192)
    cfg = mh.roberta_config(tok, "XLMRobertaModel", model_type="xlm-roberta", max_position_embeddings=258)
    case = new_case(name, "xlm-roberta", tok, cfg, "", notes, gen="bge-m3")
    params(case)
    H = 32
    g = case["g"]
    case["m3"] = {"colbert": {"weight": g.normal((H, H), 1.0 / math.sqrt(H)), "bias": g.normal((H,), 0.1)},
                  "sparse": {"weight": g.normal((1, H), 1.0 / math.sqrt(H)), "bias": g.normal((1,), 0.1) + 0.8}, "pt": pt}
    case["kind"] = "bge-m3"
    return case


def m3_encode(case, folder, texts):
    """M3Embedder.encode: tokenizer(texts, truncation, max_length) (no strip), last hidden state ->
    dense normalize(h[0]); sparse relu(sparse_linear(h)) max per id, unused tokens dropped, > 0;
    colbert normalize(colbert_linear(h[1:])) for the n - 1 tokens after CLS."""
    enc, _, _ = rust_encode(folder, texts)
    vocab = case["tok"]["vocab"]
    unused = {vocab.index(t) for t in ("<s>", "</s>", "<pad>", "<unk>")}
    m3 = case["m3"]
    out = []
    for e in enc:
        ids = e["ids"]
        h = forward(case, [ids])[0]
        dense = h[0] / h[0].norm()
        w = torch.relu(h @ m3["sparse"]["weight"].T + m3["sparse"]["bias"])[:, 0]
        lex = {}
        for t, i in enumerate(ids):
            if i in unused or not float(w[t]) > 0:
                continue
            lex[i] = max(lex.get(i, 0.0), float(w[t]))
        col = h[1:] @ m3["colbert"]["weight"].T + m3["colbert"]["bias"]
        col = col / col.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        out.append({"ids": ids, "dense": dense, "lex": lex, "colbert": col[:len(ids) - 1]})
    return out


def m3_scores(a, b, weights=(1.0, 1.0, 1.0)):
    dense = float(a["dense"] @ b["dense"])
    sparse = sum(w * b["lex"][i] for i, w in a["lex"].items() if i in b["lex"])  # compute_lexical_matching_score
    colbert = float((a["colbert"] @ b["colbert"].T).max(dim=1).values.sum()) / a["colbert"].shape[0]
    w0, w1, w2 = weights
    return {"dense": dense, "sparse": sparse, "colbert": colbert, "sparseDense": (w1 * sparse + w0 * dense) / (w0 + w1),
            "colbertSparseDense": (w0 * dense + w1 * sparse + w2 * colbert) / (w0 + w1 + w2)}


def emit_m3(case, folder):
    m3 = case["m3"]
    mp.write_json(os.path.join(folder, "modules.json"), mp.st_modules(False, True))
    mp.write_json(os.path.join(folder, "1_Pooling", "config.json"), mp.pooling_config(32, ["cls"]))
    mp.write_json(os.path.join(folder, "sentence_bert_config.json"), {"max_seq_length": 256, "do_lower_case": False})
    mp.write_json(os.path.join(folder, "config_sentence_transformers.json"), mp.st_version())
    for head in ("colbert", "sparse"):
        sd = collections.OrderedDict((k, v.to(torch.float32)) for k, v in m3[head].items())
        if m3["pt"]:  # modeling.py save: torch.save(type(sd)({k: v.clone().cpu()})), torch.load(weights_only=True) back
            torch.save(type(sd)({k: v.clone().cpu() for k, v in sd.items()}), os.path.join(folder, f"{head}_linear.pt"))
            back = torch.load(os.path.join(folder, f"{head}_linear.pt"), map_location="cpu")
            check(all(torch.equal(back[k], sd[k]) for k in sd), f"{case['name']}: {head}_linear.pt round trip")
        else:
            mp.write_safetensors(os.path.join(folder, f"{head}_linear.safetensors"), [(k, v.to(D), "F32") for k, v in sd.items()], {"format": "pt"})
    for head in ("colbert", "sparse"):
        m3[head] = {k: mp.storage_round(v, "F32") for k, v in m3[head].items()}
    enc = m3_encode(case, folder, M3_TEXTS)
    pairs = [(0, 1), (0, 3), (2, 3), (2, 1), (4, 4)]
    score = {str(list(w)): [m3_scores(enc[a], enc[b], w) for a, b in pairs] for w in ((1.0, 1.0, 1.0), (0.4, 0.2, 0.4))}
    check(sum(len(e["lex"]) > 0 for e in enc) >= 3, f"{case['name']}: texts with lexical weights (one without: a case too)")
    check(all(len(e["ids"]) <= 256 for e in enc), f"{case['name']}: texts within max_seq_length 256 (no truncation)")
    check(len(set(enc[4]["ids"])) < len(enc[4]["ids"]), f"{case['name']}: a text with a repeated token id (max per id)")
    return {"texts": M3_TEXTS, "ids": [e["ids"] for e in enc], "dense": [nested(e["dense"]) for e in enc],
            "sparse": [{"indices": sorted(e["lex"]), "values": [nested(e["lex"][i]) for i in sorted(e["lex"])]} for e in enc],
            "colbert": [nested(e["colbert"]) for e in enc], "pairs": pairs, "scores": score}


# ----------------------------------------------------------------------------------------------
# the cases
# ----------------------------------------------------------------------------------------------

CASES = [
    lambda: qa_case("qa-bert", "bert", "uncased", "BertForQuestionAnswering: bert.* (no pooler) + qa_outputs [2, H]; "
                    "token types 0 / 1 for question / context."),
    lambda: qa_case("qa-roberta", "roberta", "roberta", "RobertaForQuestionAnswering: roberta.* + qa_outputs; byte-level "
                    "BPE with trimmed offsets, windows whose first token keeps its space."),
    lambda: qa_case("qa-xlmr", "xlm-roberta", "xlmr", "XLMRobertaForQuestionAnswering: Unigram + Metaspace."),
    lambda: qa_case("qa-distilbert", "distilbert", "uncased", "DistilBertForQuestionAnswering: distilbert.* + qa_outputs."),
    lambda: qa_case("qa-modernbert", "modernbert", "modernbert", "ModernBertForQuestionAnswering: model.* + head.{dense, "
                    "norm} (gelu) + classifier [2, H].", modernbert=True),
    lambda: qa_case("qa-mpnet", "mpnet", "mpnet", "MPNetForQuestionAnswering: mpnet.* + qa_outputs."),
    lambda: splade_case("splade-bert", "bert", "SparseEncoder (naver/splade-v3 layout): modules.json MLMTransformer + "
                        "1_SpladePooling (max, relu), BertForMaskedLM with the decoder tied (not saved), max_seq_length 24."),
    lambda: splade_case("splade-distilbert-sum", "distilbert", "SparseEncoder over DistilBertForMaskedLM with an untied "
                        "vocab_projector.weight, SpladePooling sum + log1p_relu (opensearch's v3 pooling), "
                        "max_seq_length 100 (a text pooled in two chunks).",
                        pooling="sum", activation="log1p_relu", untied=True, max_len=100),
    lambda: splade_case("splade-roberta-plain", "roberta", "RobertaForMaskedLM without modules.json: SparseEncoder's "
                        "default MLMTransformer + SpladePooling(max, relu) (texts stripped all the same), no truncation (a "
                        "text of over 64 tokens: two chunks).",
                        modules=False),
    lambda: colbert_case("colbert-pylate-bert", "pylate", "answerai-colbert-small-v1 layout (PyLate): modules.json "
                         "Transformer + pylate.models.Dense.Dense (1_Dense, no bias, Identity), prefixes [unused0] / "
                         "[unused1] (plain vocabulary), query_length 12, document_length 16, attend_to_expansion_tokens "
                         "false (the [MASK] expansion computed but not attended), 32 punctuation skiplist words, "
                         "do_lower_case true."),
    lambda: colbert_case("colbert-pylate-xlmr", "xlmr", "jina-colbert-v2's ColBERT layout on an XLM-R backbone: markers "
                         "[QueryMarker] / [DocumentMarker] added as tokens, attend_to_expansion_tokens true, <mask> "
                         "expansion, no skiplist_words (PyLate's default: string.punctuation, unknown words as <unk>), two "
                         "Dense layers with biases, the second with use_residual."),
    lambda: colbert_case("colbert-stanford", "stanford", "colbert-ai HF_ColBERT: bert.* + linear.weight [8, H] beside the "
                         "encoder, artifact.metadata (query_maxlen 10, doc_maxlen 14, [unused0] / [unused1]); read "
                         "with PyLate's defaults (string.punctuation skiplist, expansion)."),
    lambda: colbert_case("colbert-jina-v2", "jina", "jinaai/jina-colbert-v2 layout: HF_ColBERT over the XLM-R flash "
                         "backbone (model_type xlm-roberta, position_embedding_type rotary, base 10000, no task adapters; "
                         "roberta.* with emb_ln, fused mixer.Wqkv, post-norm Blocks) + linear.weight [12, H] (no bias) "
                         "beside it; artifact.metadata with the markers [QueryMarker] / [DocumentMarker] (added tokens), "
                         "attend_to_mask_tokens true (the <mask> expansion attended), query_maxlen 12, doc_maxlen 20; "
                         "read with PyLate's defaults (string.punctuation skiplist)."),
    lambda: m3_case("bge-m3", "bge-m3 layout: XLMRobertaModel + sentence-transformers (CLS, Normalize) + "
                    "colbert_linear.pt [H, H] + bias and sparse_linear.pt [1, H] + bias, written by torch.save as "
                    "FlagEmbedding's modeling.py save does (read here without unpickling)."),
    lambda: m3_case("bge-m3-safetensors", "bge-m3 with its heads converted to colbert_linear.safetensors and "
                    "sparse_linear.safetensors (weight, bias): the same numbers as bge-m3.", pt=False),
]


def emit(case):
    name = case["name"]
    folder = os.path.join(OUT, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    finalize(case)
    extra = []
    if case["kind"] == "colbert" and case["layout"] in ("stanford", "jina"):
        extra = [("linear.weight", case["dense"][0]["W"], "F32")]
    if case["kind"] == "colbert" and case["layout"] == "xlmr":
        case["config"]["vocab_size"] = len(case["tok"]["vocab"])
        # the embeddings resized for the two markers (PyLate's resize_token_embeddings)
    write_folder(case, folder, extra)
    obj = {"case": name, "kind": case["kind"], "notes": case["notes"]}
    obj.update({"qa": emit_qa, "splade": emit_splade, "colbert": emit_colbert, "bge-m3": emit_m3}[case["kind"]](case, folder))
    obj["generator"] = {"script": "tests/reference/make_retrieval.py", "torch": torch.__version__}
    with open(os.path.join(EXPECTED, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(folder) for f in fs)
    check(size < 250_000, f"{name}: folder under 250 kB", f"{size} bytes")
    return size


def main():
    os.makedirs(EXPECTED, exist_ok=True)
    for f in os.listdir(EXPECTED):
        os.remove(os.path.join(EXPECTED, f))
    for make in CASES:
        case = make()
        size = emit(case)
        print(f"  {case['name']}: {size / 1000:.0f} kB", file=sys.stderr)
    print(f"{len(mp.CHECKS)} checks passed; {len(CASES)} cases")


if __name__ == "__main__":
    main()
