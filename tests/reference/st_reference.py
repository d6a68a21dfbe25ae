#!/usr/bin/env python3
"""Independent reference for Pretrained.embed's sentence-transformers rules and the embeddings utilities.

Writes tests/st/minilm-prompts/ (a copy of tests/pretrained/bert-minilm with prompts, a default prompt,
include_prompt false and similarity_fn_name "dot") and tests/st/expected.json, which tests/st.test.js reads.
Nothing here is shared with swapformer: the rules are re-implemented from sentence-transformers
(UKPLab/sentence-transformers @85ec645, `sentence_transformers/`):

  - SentenceTransformer.encode: prompt (beats prompt_name) -> prompts[prompt_name] (unknown: ValueError) ->
    prompts[default_prompt_name]; a prompt is used only when non-empty (`prompt is not None and len(prompt) > 0`);
    input = prompt + text; order = np.argsort([-len(text)]) (len in code points, of the unstripped text);
    batches of batch_size in that order; results put back with np.argsort(order).
  - _get_prompt_length: tokenize([prompt]) (so stripped, lowercased and truncated like any text), its length,
    minus one when the last id is one of tokenizer.all_special_ids.
  - Transformer.tokenize: str(s).strip() (Python's whitespace), .lower() when do_lower_case, truncation at
    max_seq_length (longest_first: the content cut, the special tokens kept).
  - models/Pooling.py forward, transcribed with its in-place details: attention_mask[:, :prompt_length] = 0 when
    include_prompt is false; cls = token_embeddings[:, 0]; max sets masked rows to -1e9; mean / mean_sqrt_len
    clamp the count at 1e-9; weightedmean weights 1..T; lasttoken the last unmasked row (0 when none).
  - Dense act(W x + b), Normalize x / max(|x|, 1e-12) (F.normalize).
  - util/similarity.py: cos_sim, dot_score, euclidean_sim = -cdist(p=2), manhattan_sim = -cdist(p=1).
  - util/retrieval.py semantic_search: per query the top_k scores, best first. Upstream leaves the order of
    equal scores to torch.topk and heapq; swapformer's documented rule (lower corpus id first) is what is
    written here, and only exact ties (duplicate rows) are equal: other neighbours differ by > 1e-5.
  - quantization.py quantize_embeddings, on float32 numpy arrays as upstream runs it: ranges given, else
    np.min / np.max of the calibration embeddings, else of the embeddings; steps = (max - min) / 255;
    uint8 = ((x - starts) / steps).astype(np.uint8), int8 = ((x - starts) / steps - 128).astype(np.int8)
    (numpy's cast: truncated, out-of-range values wrap); ubinary = np.packbits(x > 0) per row,
    binary = (ubinary - 128).astype(np.int8).

The forwards are tests/reference/make_pretrained.py's (imported as a module), on the weights its case builders
make; the script first checks that those weights are the fixtures' files bit for bit and reproduce the stored
tests/pretrained/expected hidden states. Tokenisation is the Rust tokenizers' (tokenize_with_rust.cjs).

One upstream quirk is left out on purpose: with cls and max pooling both on and include_prompt false, Pooling's
max writes -1e9 into token_embeddings in place, and the cls output (a view of row 0, masked as part of the
prompt) becomes -1e9 too. No case below combines them (swapformer returns row 0's hidden state).

    /usr/bin/python3 tests/reference/st_reference.py      (deterministic; about 10 s)
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_pretrained as mp  # noqa: E402

D = torch.float64
ROOT = mp.ROOT
TESTS = os.path.join(ROOT, "tests")
ST_DIR = os.path.join(TESTS, "st")
PROMPTS_FOLDER = os.path.join(ST_DIR, "minilm-prompts")
CHECKS = []


def check(cond, name, detail=""):
    if not cond:
        raise AssertionError(f"self-check failed: {name} {detail}")
    CHECKS.append((name, detail))


# ----------------------------------------------------------------------------------------------
# the checkpoints: make_pretrained's case builders, checked against the fixture files
# ----------------------------------------------------------------------------------------------

def build_case(maker):
    case = maker()
    case["P"] = {k: mp.storage_round(v, case["dtype"]) for k, v in case["g"].P.items()}
    case["pad_id"] = case["tok"]["seq"]["pad"]
    case["Pd"] = None
    if case["st"] and case["st"].get("dense"):
        case["Pd"] = {k: mp.storage_round(v, "F32") for k, v in case["st"]["dense_params"].items()}
    folder = os.path.join(mp.OUT, case["name"])
    _, disk = mp.read_safetensors(os.path.join(folder, "model.safetensors"))
    prefix = case["save"].get("prefix", "")
    check(all(torch.equal(disk[prefix + k][1], v) for k, v in case["P"].items()), f"{case['name']}: weights == fixture file")
    if case["Pd"]:
        _, dd = mp.read_safetensors(os.path.join(folder, "2_Dense", "model.safetensors"))
        check(all(torch.equal(dd[k][1], v) for k, v in case["Pd"].items()), f"{case['name']}: Dense weights == fixture file")
    with open(os.path.join(mp.EXPECTED, case["name"] + ".json"), encoding="utf-8") as f:
        exp = json.load(f)
    for i, b in enumerate(exp["batches"]):
        h = mp.run_forward(case, b["ids"], b.get("typeIds"))
        want = torch.tensor(b["hidden"]["data"], dtype=D).reshape(b["hidden"]["shape"])
        err = float((h - want).abs().max())
        check(err < 1e-7, f"{case['name']}: batch {i} hidden == expected/{case['name']}.json", f"max|diff| {err:.2g}")
    return case


# ----------------------------------------------------------------------------------------------
# a folder as sentence-transformers reads it
# ----------------------------------------------------------------------------------------------

def read_json(folder, overrides, name, default=None):
    if name in overrides:
        return overrides[name]
    p = os.path.join(folder, name)
    if not os.path.exists(p):
        return default
    with open(p, encoding="utf-8") as f:
        return json.load(f)


POOL_KEYS = [("cls", "pooling_mode_cls_token", False), ("max", "pooling_mode_max_tokens", False),
             ("mean", "pooling_mode_mean_tokens", True), ("mean_sqrt_len", "pooling_mode_mean_sqrt_len_tokens", False),
             ("weightedmean", "pooling_mode_weightedmean_tokens", False), ("lasttoken", "pooling_mode_lasttoken", False)]


def token_id(tok_json, content):
    for a in tok_json.get("added_tokens", []):
        if a["content"] == content:
            return a["id"]
    vocab = tok_json["model"]["vocab"]
    if isinstance(vocab, dict):
        return vocab.get(content)
    for i, (piece, _) in enumerate(vocab):  # Unigram: [[piece, score], ...]
        if piece == content:
            return i
    return None


def all_special_ids(tok_json, tok_config, special_map):
    """transformers' all_special_ids: the ids of the SPECIAL_TOKENS_ATTRIBUTES tokens the configs name."""
    ids = set()
    for src in (special_map or {}, tok_config or {}):
        for k in ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]:
            v = src.get(k)
            if isinstance(v, dict):
                v = v.get("content")
            if isinstance(v, str) and token_id(tok_json, v) is not None:
                ids.add(token_id(tok_json, v))
        for v in src.get("additional_special_tokens", []) or []:
            v = v.get("content") if isinstance(v, dict) else v
            if token_id(tok_json, v) is not None:
                ids.add(token_id(tok_json, v))
    return ids


def st_model(name, case, folder, overrides=None, tokenizer_override=None):
    """What SentenceTransformer(folder) holds; `overrides` replace JSON files of the folder (same in the test)."""
    overrides = overrides or {}
    modules = read_json(folder, overrides, "modules.json")
    pooling_cfg = read_json(folder, overrides, "1_Pooling/config.json") if modules else None
    if pooling_cfg is None:  # no modules.json: the fixture's default recipe (mean + normalize)
        modes, include_prompt = ["mean"], True
    else:
        modes = [m for m, key, dflt in POOL_KEYS if pooling_cfg.get(key, dflt)]
        include_prompt = pooling_cfg.get("include_prompt", True)
    sbert = read_json(folder, overrides, "sentence_bert_config.json", {})
    cst = read_json(folder, overrides, "config_sentence_transformers.json", {}) or {}
    tok_json = tokenizer_override or read_json(folder, {}, "tokenizer.json")
    tok_path = os.path.join(folder, "tokenizer.json")
    if tokenizer_override is not None:
        tok_path = os.path.join(ST_DIR, f".{name}.tokenizer.json")
        with open(tok_path, "w", encoding="utf-8") as f:
            json.dump(tokenizer_override, f)
    limits = [x for x in [sbert.get("max_seq_length"), read_json(folder, {}, "tokenizer_config.json", {}).get("model_max_length")] if x]
    return dict(name=name, case=case, folder=folder, overrides=overrides, tok_path=tok_path, modes=modes,
                include_prompt=include_prompt, normalize=True, max_len=min(limits) if limits else 512,
                do_lower_case=sbert.get("do_lower_case", False), prompts=cst.get("prompts") or {},
                default_prompt_name=cst.get("default_prompt_name"), similarity_fn_name=cst.get("similarity_fn_name") or "cosine",
                special_ids=all_special_ids(tok_json, read_json(folder, {}, "tokenizer_config.json", {}),
                                            read_json(folder, {}, "special_tokens_map.json", {})),
                tokenizer_json=tokenizer_override)


# ----------------------------------------------------------------------------------------------
# SentenceTransformer.encode
# ----------------------------------------------------------------------------------------------

def rust_encode(m, strings):
    """Rust ids + special-tokens mask for each string (special tokens added, no truncation)."""
    if not strings:
        return []
    out = mp.run_rust([{"tokenizer": m["tok_path"], "texts": list(strings)}])
    return out["results"][0]["texts"]


def st_tokenize(m, texts, max_len=None):
    """Transformer.tokenize: strip, lower, truncation (the content cut to fit, the specials kept)."""
    prepared = [str(s).strip() for s in texts]
    if m["do_lower_case"]:
        prepared = [s.lower() for s in prepared]
    limit = max_len or m["max_len"]
    out = []
    for e in rust_encode(m, prepared):
        ids, sp = e["ids"], e["specialTokensMask"]
        a = 0
        while a < len(ids) and sp[a]:
            a += 1
        b = len(ids)
        while b > a and sp[b - 1]:
            b -= 1
        head, content, tail = ids[:a], ids[a:b], ids[b:]
        keep = max(0, limit - len(head) - len(tail))
        out.append(head + content[:keep] + tail)
    return out


def prompt_length(m, prompt, max_len=None):
    ids = st_tokenize(m, [prompt], max_len)[0]
    n = len(ids)
    if ids and ids[-1] in m["special_ids"]:
        n -= 1
    return n


def st_pool(hidden, lengths, modes, prompt_len, include_prompt):
    """models/Pooling.py forward on a right-padded batch (see the module docstring)."""
    B, T, H = hidden.shape
    token_embeddings = hidden.clone()
    attention_mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).to(torch.int64)
    if not include_prompt and prompt_len is not None:
        attention_mask[:, :prompt_len] = 0
    outs = []
    if "cls" in modes:
        outs.append(token_embeddings[:, 0])
    if "max" in modes:
        mexp = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).to(D)
        token_embeddings[mexp == 0] = -1e9
        outs.append(torch.max(token_embeddings, 1)[0])
    if "mean" in modes or "mean_sqrt_len" in modes:
        mexp = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).to(D)
        s = torch.sum(token_embeddings * mexp, 1)
        n = torch.clamp(mexp.sum(1), min=1e-9)
        if "mean" in modes:
            outs.append(s / n)
        if "mean_sqrt_len" in modes:
            outs.append(s / torch.sqrt(n))
    if "weightedmean" in modes:
        mexp = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).to(D)
        w = torch.arange(1, T + 1).unsqueeze(0).unsqueeze(-1).expand(token_embeddings.size()).to(D)
        mexp = mexp * w
        s = torch.sum(token_embeddings * mexp, 1)
        outs.append(s / torch.clamp(mexp.sum(1), min=1e-9))
    if "lasttoken" in modes:
        values, indices = attention_mask.flip(1).max(1)
        indices = torch.where(values == 0, T - 1, indices)
        gather = (T - indices - 1).unsqueeze(-1).repeat(1, H).unsqueeze(1)
        mexp = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).to(D)
        outs.append(torch.gather(token_embeddings * mexp, 1, gather).squeeze(dim=1))
    return torch.cat(outs, 1)


def dense_normalize(m, x):
    case = m["case"]
    if case["Pd"] is not None:
        dn = case["st"]["dense"]
        x = x @ case["Pd"]["linear.weight"].T
        if dn["bias"]:
            x = x + case["Pd"]["linear.bias"]
        x = {"torch.nn.modules.activation.Tanh": torch.tanh, "torch.nn.modules.linear.Identity": lambda t: t}[dn["activation_function"]](x)
    if m["normalize"]:
        x = x / x.norm(dim=-1, keepdim=True).clamp(min=1e-12)
    return x


def st_encode(m, texts, prompt=None, prompt_name=None, batch_size=32, max_len=None):
    if prompt is None:
        if prompt_name is not None:
            prompt = m["prompts"][prompt_name]  # KeyError: upstream's ValueError
        elif m["default_prompt_name"] is not None:
            prompt = m["prompts"].get(m["default_prompt_name"])
    sentences = list(texts)
    plen = None
    if prompt is not None and len(prompt) > 0:
        sentences = [prompt + s for s in sentences]
        plen = prompt_length(m, prompt, max_len)
    order = np.argsort([-len(s) for s in sentences])  # len: code points
    check(list(order) == sorted(range(len(sentences)), key=lambda i: (-len(sentences[i]), i)),
          f"{m['name']}: np.argsort is stable on these {len(sentences)} lengths (the test compares batch members)")
    out = [None] * len(sentences)
    ids_of = [None] * len(sentences)
    batches = []
    for start in range(0, len(sentences), batch_size):
        idx = [int(i) for i in order[start:start + batch_size]]
        ids = st_tokenize(m, [sentences[i] for i in idx], max_len)
        hidden = mp.run_forward(m["case"], ids, [[0] * len(s) for s in ids] if m["case"]["family"] in mp.TAKES_TYPE_IDS else None)
        emb = dense_normalize(m, st_pool(hidden, [len(s) for s in ids], m["modes"], plen, m["include_prompt"]))
        for k, i in enumerate(idx):
            out[i] = emb[k]
            ids_of[i] = ids[k]
        batches.append(idx)
    emb = torch.stack(out)
    return {"promptLength": plen, "ids": ids_of, "batches": batches, "embeddings": {"shape": list(emb.shape), "data": mp.fmt(emb.reshape(-1).tolist())}}


# ----------------------------------------------------------------------------------------------
# similarity, semantic search, quantization
# ----------------------------------------------------------------------------------------------

def f32_list(a):
    return [float(x) for x in np.asarray(a, dtype=np.float32).reshape(-1)]


def similarities(a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    na = a64 / np.maximum(np.linalg.norm(a64, axis=1, keepdims=True), 1e-12)
    nb = b64 / np.maximum(np.linalg.norm(b64, axis=1, keepdims=True), 1e-12)
    diff = a64[:, None, :] - b64[None, :, :]
    return {"cosine": na @ nb.T, "dot": a64 @ b64.T, "euclidean": -np.sqrt((diff ** 2).sum(-1)), "manhattan": -np.abs(diff).sum(-1)}


def top_k(scores, k, what):
    """Per query [(id, score)] best first, ties by the lower id; non-tied neighbours must differ by > 1e-5."""
    out, smallest = [], np.inf
    for row in scores:
        order = sorted(range(len(row)), key=lambda i: (-row[i], i))
        nxt = order[:min(k + 1, len(row))]
        gaps = [row[x] - row[y] for x, y in zip(nxt, nxt[1:])]
        smallest = min([smallest] + [g for g in gaps if g != 0])
        out.append([{"corpusId": i, "score": float(row[i])} for i in order[:min(k, len(row))]])
    check(smallest > 1e-5, f"{what}: neighbours are exact ties or more than 1e-5 apart", f"smallest gap {smallest:.3g}")
    return out


def search_cases():
    rng = np.random.default_rng(20240601)
    D_ = 16
    corpus = rng.standard_normal((40, D_)).astype(np.float32)
    corpus[23] = corpus[7]  # exact ties: duplicate rows score the same bit for bit
    corpus[12] = corpus[11]
    corpus[30] = corpus[5] * np.float32(2)  # the same direction: a cosine tie that dot and distances break
    queries = rng.standard_normal((4, D_)).astype(np.float32)
    queries[1] = corpus[7]  # its best two are the tie 7, 23
    queries[2] = corpus[5]
    sims = similarities(queries, corpus)
    out = {"queries": {"shape": list(queries.shape), "data": f32_list(queries)},
           "corpus": {"shape": list(corpus.shape), "data": f32_list(corpus)}, "results": {}}
    for fn, s in sims.items():
        if fn == "cosine":  # corpus 5 and 30 are parallel: equal in float64, maybe not in float32: leave 30 out of the check
            s = s.copy()
            s[:, 30] = s[:, 5]
        for k in (1, 3, 10, 50):
            out["results"][f"{fn}:{k}"] = top_k(s, k, f"search {fn} top {k}")
    # Hamming over the packed signs of 64 dimensions
    c64 = rng.standard_normal((60, 64)).astype(np.float32)
    c64[41] = c64[9]
    q64 = rng.standard_normal((3, 64)).astype(np.float32)
    q64[0] = c64[9]
    cb, qb = np.packbits(c64 > 0, axis=1), np.packbits(q64 > 0, axis=1)
    dist = np.array([[int(np.unpackbits(qb[i] ^ cb[j]).sum()) for j in range(len(cb))] for i in range(len(qb))])
    ham = {}
    for k in (1, 5, 100):
        res = []
        for row in dist:
            order = sorted(range(len(row)), key=lambda j: (row[j], j))[:min(k, len(row))]
            res.append([{"corpusId": j, "score": -float(row[j])} for j in order])
        ham[str(k)] = res
    out["hamming"] = {"queries": {"shape": list(q64.shape), "data": f32_list(q64)},
                      "corpus": {"shape": list(c64.shape), "data": f32_list(c64)},
                      "ubinaryQueries": qb.reshape(-1).tolist(), "ubinaryCorpus": cb.reshape(-1).tolist(), "results": ham}
    return out


def width_cases():
    """Rows whose widths leave tails after the core's blocks: float dimensions 13 and 37 (dot products run
    16 and 4 at a time, the distances 8 at a time) and packed bits of 40 and 312 dimensions (5 and 39 bytes:
    Hamming distances run 4 bytes at a time). Scores of every pair (cosine, dot, euclidean, manhattan) and
    top-k searches; packbits and Hamming top-k over the packed rows."""
    rng = np.random.default_rng(4)
    out = {"float": [], "bits": []}
    for d in (13, 37):
        corpus = rng.standard_normal((30, d)).astype(np.float32)
        queries = rng.standard_normal((3, d)).astype(np.float32)
        queries[1] = corpus[4]
        corpus[17] = corpus[4]  # an exact tie: the lower id first
        sims = similarities(queries, corpus)
        out["float"].append({"dimensions": d, "queries": {"shape": list(queries.shape), "data": f32_list(queries)},
                             "corpus": {"shape": list(corpus.shape), "data": f32_list(corpus)},
                             "scores": {fn: v.reshape(-1).tolist() for fn, v in sims.items()},
                             "results": {f"{fn}:{k}": top_k(v, k, f"width {d}: {fn} top {k}") for fn, v in sims.items() for k in (3, 30)}})
    for d in (40, 312):
        corpus = rng.standard_normal((50, d)).astype(np.float32)
        queries = rng.standard_normal((3, d)).astype(np.float32)
        queries[0] = corpus[9]
        corpus[33] = corpus[9]
        # rows that differ only in the last bits: a Hamming distance that is all tail
        corpus[20] = corpus[9]
        corpus[20, -3:] = -np.abs(corpus[9, -3:]) * np.sign(corpus[9, -3:] + 1e-30) + 0.0
        cb, qb = np.packbits(corpus > 0, axis=1), np.packbits(queries > 0, axis=1)
        dist = np.array([[int(np.unpackbits(qb[i] ^ cb[j]).sum()) for j in range(len(cb))] for i in range(len(qb))])
        check(int(dist[0, 20]) >= 1 and int(dist[0, 20]) <= 3, f"width {d}: row 20 differs from query 0 in its last bits only",
              str(dist[0, 20]))
        res = {}
        for k in (5, 50):
            rows = []
            for row in dist:
                order = sorted(range(len(row)), key=lambda j: (row[j], j))[:min(k, len(row))]
                rows.append([{"corpusId": j, "score": -float(row[j])} for j in order])
            res[str(k)] = rows
        out["bits"].append({"dimensions": d, "bytes": int(cb.shape[1]), "queries": {"shape": list(queries.shape), "data": f32_list(queries)},
                            "corpus": {"shape": list(corpus.shape), "data": f32_list(corpus)},
                            "ubinaryQueries": qb.reshape(-1).tolist(), "ubinaryCorpus": cb.reshape(-1).tolist(), "results": res})
    return out


def similarity_cases():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 24)).astype(np.float32)
    b = rng.standard_normal((5, 24)).astype(np.float32)
    b[4] = 0  # a zero row: cosine 0 (norm clamped at 1e-12)
    s = similarities(a, b)
    return {"a": {"shape": list(a.shape), "data": f32_list(a)}, "b": {"shape": list(b.shape), "data": f32_list(b)},
            "scores": {fn: v.reshape(-1).tolist() for fn, v in s.items()}}


def quantize_embeddings(emb, precision, ranges=None, calibration=None):
    """quantization.py quantize_embeddings, on float32 arrays."""
    if precision.endswith("int8"):
        if ranges is None:
            src = calibration if calibration is not None else emb
            ranges = np.vstack((np.min(src, axis=0), np.max(src, axis=0)))
        starts = ranges[0, :]
        steps = (ranges[1, :] - ranges[0, :]) / 255
        with np.errstate(invalid="ignore"):
            if precision == "uint8":
                return ((emb - starts) / steps).astype(np.uint8)
            return ((emb - starts) / steps - 128).astype(np.int8)
    if precision == "binary":
        return (np.packbits(emb > 0).reshape(emb.shape[0], -1) - 128).astype(np.int8)
    return np.packbits(emb > 0).reshape(emb.shape[0], -1)


def quantize_cases():
    rng = np.random.default_rng(99)
    emb = (rng.standard_normal((30, 16)) * 0.3).astype(np.float32)
    emb[3, 2] = 0  # exactly 0: not > 0, a 0 bit
    emb[4, 5] = np.float32(-0.0)
    calibration = (rng.standard_normal((200, 16)) * 0.1).astype(np.float32)  # narrower: many values out of range, wrapped
    ranges = np.vstack((np.full(16, -0.5, np.float32), np.full(16, 0.25, np.float32))).astype(np.float32)
    ranges[0, 3], ranges[1, 3] = np.float32(-1e-3), np.float32(1e-3)  # steps of 7.8e-6: values far out of range
    out = {"embeddings": {"shape": list(emb.shape), "data": f32_list(emb)},
           "calibration": {"shape": list(calibration.shape), "data": f32_list(calibration)},
           "ranges": {"shape": list(ranges.shape), "data": f32_list(ranges)}, "results": {}}
    wrapped = 0
    for prec in ("int8", "uint8"):
        for how, kw in (("own", {}), ("calibration", {"calibration": calibration}), ("ranges", {"ranges": ranges})):
            q = quantize_embeddings(emb, prec, **kw)
            out["results"][f"{prec}:{how}"] = q.reshape(-1).tolist()
            if how != "own":
                r = kw.get("ranges")
                if r is None:
                    r = np.vstack((calibration.min(0), calibration.max(0)))
                wrapped += int(((emb < r[0]) | (emb > r[1])).sum())
    check(wrapped > 100, "quantize: many values fall outside the calibration / given ranges (the wrap is exercised)", str(wrapped))
    for prec in ("binary", "ubinary"):
        out["results"][prec] = quantize_embeddings(emb, prec).reshape(-1).tolist()
    return out


# ----------------------------------------------------------------------------------------------
# the cases
# ----------------------------------------------------------------------------------------------

PROMPTS = {"query": "query: ", "passage": "passage: ", "empty": "", "instruct": "Represent this sentence for searching relevant passages: "}


def pooling_json(modes, include_prompt):
    cfg = {"word_embedding_dimension": 32}
    for m, key, _ in POOL_KEYS:
        cfg[key] = m in modes
    cfg["include_prompt"] = include_prompt
    return cfg


def st_config(prompts, default, fn):
    cfg = {"model_type": "SentenceTransformer",
           "__version__": {"sentence_transformers": "3.0.1", "transformers": "4.41.2", "pytorch": "2.3.0"},
           "prompts": prompts, "default_prompt_name": default}
    if fn is not None:
        cfg["similarity_fn_name"] = fn
    return cfg


def write_prompts_folder():
    """tests/st/minilm-prompts: bert-minilm's files, prompts with a default, include_prompt false, dot."""
    if os.path.isdir(PROMPTS_FOLDER):
        shutil.rmtree(PROMPTS_FOLDER)
    shutil.copytree(os.path.join(mp.OUT, "bert-minilm"), PROMPTS_FOLDER)
    mp.write_json(os.path.join(PROMPTS_FOLDER, "config_sentence_transformers.json"), st_config(PROMPTS, "query", "dot"))
    mp.write_json(os.path.join(PROMPTS_FOLDER, "1_Pooling", "config.json"), pooling_json(["mean"], False))


TEXTS = ["Hello, world!", "  The quick brown fox jumps over the lazy dog.  ", "what is a transformer?",
         "Café naïve résumé: Swapformer's WebAssembly encoder (2024) — 中文 tests?", "a", "",
         "search query document", "😀😀😀 emoji text", "how are you", "long long long text"]
LONG = " ".join(["the quick brown fox jumps over the lazy dog"] * 14)  # > 96 tokens: truncated at max_seq_length
STRIP_TEXTS = ["\x85Hello world", "The world\x1c", "\x1f\x1eThe quick brown fox", "\ufeffHello world", "Hello model\u3000", "\u2028 tokens\x1d"]
GROUP_TEXTS = ["😀😀😀 b", "abcdefg", "      x", "abcde", "héllo wörld", "𝒜𝒜𝒜𝒜𝒜𝒜 c", "12345678901"]  # distinct token ids each


def main():
    os.makedirs(ST_DIR, exist_ok=True)
    minilm = build_case(mp.case_bert_minilm)
    t5 = build_case(mp.case_sentence_t5)
    roberta = build_case(mp.case_roberta)
    write_prompts_folder()
    check(all(c.isspace() == (c.strip() == "") for c in map(chr, range(0x3100))), "Python's strip removes exactly isspace()")
    check([hex(c) for c in range(0x110000) if chr(c).isspace()] == [hex(c) for c in list(range(9, 14)) + list(range(0x1c, 0x21)) + [0x85, 0xa0, 0x1680] + list(range(0x2000, 0x200b)) + [0x2028, 0x2029, 0x202f, 0x205f, 0x3000]],
          "Python's whitespace: \\t-\\r, \\x1c-\\x20, \\x85, \\xa0, \\u1680, \\u2000-\\u200a, \\u2028, \\u2029, \\u202f, \\u205f, \\u3000")

    # the models: a folder (relative to tests/) and the JSON files the test writes over a copy of it
    variants = [
        ("minilm-prompts", minilm, "st/minilm-prompts", {}, None),
        ("minilm-include", minilm, "st/minilm-prompts", {"1_Pooling/config.json": pooling_json(["mean"], True),
                                                         "config_sentence_transformers.json": st_config(PROMPTS, "query", "cosine")}, None),
        ("minilm-pool-mix", minilm, "st/minilm-prompts", {"1_Pooling/config.json": pooling_json(["max", "mean_sqrt_len", "weightedmean", "lasttoken"], False),
                                                          "config_sentence_transformers.json": st_config(PROMPTS, None, "euclidean")}, None),
        ("minilm-cls-mean", minilm, "st/minilm-prompts", {"1_Pooling/config.json": pooling_json(["cls", "mean"], False),
                                                          "config_sentence_transformers.json": st_config(PROMPTS, "passage", "manhattan")}, None),
        ("t5-prompts", t5, "pretrained/sentence-t5", {"1_Pooling/config.json": pooling_json(["mean"], False),
                                                      "config_sentence_transformers.json": st_config(PROMPTS, "query", None)}, None),
        ("roberta", roberta, "pretrained/roberta-bpe", {}, None),
    ]
    nopp = json.load(open(os.path.join(PROMPTS_FOLDER, "tokenizer.json"), encoding="utf-8"))
    nopp["post_processor"] = None  # no special tokens added: a prompt's last token is a special one only if it is one itself
    variants.append(("minilm-no-post-processor", minilm, "st/minilm-prompts", {}, nopp))
    models = {}
    out_models = []
    for name, case, rel, files, tok in variants:
        m = st_model(name, case, os.path.join(TESTS, rel), files, tok)
        models[name] = m
        if tok is not None:
            files = dict(files, **{"tokenizer.json": tok})
        out_models.append({"name": name, "folder": rel, "files": files, "modes": m["modes"], "includePrompt": m["include_prompt"],
                           "prompts": m["prompts"], "defaultPromptName": m["default_prompt_name"],
                           "similarityFnName": m["similarity_fn_name"], "maxSeqLength": m["max_len"]})

    cases = []

    def add(label, model, texts, **opts):
        r = st_encode(models[model], texts, **{k: v for k, v in opts.items() if k in ("prompt", "prompt_name", "batch_size", "max_len")})
        js = {"prompt": opts.get("prompt"), "promptName": opts.get("prompt_name"), "batchSize": opts.get("batch_size"), "maxLength": opts.get("max_len")}
        cases.append({"label": label, "model": model, "texts": texts, "options": {k: v for k, v in js.items() if v is not None}, **r})

    T = TEXTS + [LONG]
    add("default prompt (query), include_prompt false", "minilm-prompts", T)
    add("promptName passage", "minilm-prompts", T, prompt_name="passage")
    add("prompt beats promptName", "minilm-prompts", T, prompt="Represent this sentence for searching relevant passages: ", prompt_name="passage")
    add("prompt '' = none", "minilm-prompts", T, prompt="")
    add("promptName of an empty prompt = none", "minilm-prompts", T, prompt_name="empty")
    add("batchSize 3", "minilm-prompts", T, batch_size=3)
    add("batchSize 1", "minilm-prompts", T, batch_size=1)
    add("a prompt longer than maxLength (its length as tokenized and truncated)", "minilm-prompts", TEXTS[:4],
        prompt=" ".join(["represent the query"] * 12) + ": ", max_len=24)
    add("include_prompt true", "minilm-include", T)
    add("max, mean_sqrt_len, weightedmean, lasttoken without the prompt", "minilm-pool-mix", T, prompt_name="instruct")
    add("max, mean_sqrt_len, weightedmean, lasttoken, no prompt", "minilm-pool-mix", T)
    add("cls + mean without the prompt (default passage)", "minilm-cls-mean", T)
    add("T5: $A </s>, the prompt's </s> not counted", "t5-prompts", TEXTS)
    add("T5 instruct", "t5-prompts", TEXTS, prompt_name="instruct", batch_size=4)
    add("Python's strip (\\x85, \\x1c-\\x1f stripped; \\ufeff kept)", "roberta", STRIP_TEXTS)
    add("Python's strip with a prompt", "roberta", STRIP_TEXTS, prompt="\x85query: ")
    add("grouping by code points of the unstripped text", "minilm-prompts", GROUP_TEXTS, prompt="", batch_size=2)
    add("no post-processor: the prompt's last token [UNK] is special", "minilm-no-post-processor", ["hello world", "the quick brown fox"], prompt="query ☃ ")
    add("no post-processor: an ordinary last token counts", "minilm-no-post-processor", ["hello world", "the quick brown fox"], prompt="query: ")

    # self-checks that make the cases able to fail
    by = {c["label"]: c for c in cases}
    emb = lambda label: torch.tensor(by[label]["embeddings"]["data"], dtype=D)
    check(by["default prompt (query), include_prompt false"]["promptLength"] == 3, "prompt length of 'query: ' = [CLS] query : -> 3")
    check(by["T5: $A </s>, the prompt's </s> not counted"]["promptLength"] == 2, "T5 prompt length of 'query: ' = query : -> 2")
    check(by["no post-processor: the prompt's last token [UNK] is special"]["promptLength"] == 1, "no post-processor: 'query ☃' = query [UNK] -> 1")
    check(by["no post-processor: an ordinary last token counts"]["promptLength"] == 2, "no post-processor: 'query:' -> 2")
    check(by["a prompt longer than maxLength (its length as tokenized and truncated)"]["promptLength"] == 23, "long prompt: truncated at 24, minus [SEP]")
    for a, b in [("default prompt (query), include_prompt false", "include_prompt true"),
                 ("default prompt (query), include_prompt false", "prompt '' = none"),
                 ("max, mean_sqrt_len, weightedmean, lasttoken without the prompt", "max, mean_sqrt_len, weightedmean, lasttoken, no prompt")]:
        d = float((emb(a) - emb(b)).abs().max())
        check(d > 1e-2, f"'{a}' differs from '{b}'", f"{d:.3g}")
    check(torch.equal(emb("prompt '' = none"), emb("promptName of an empty prompt = none")), "'' and an empty named prompt agree")
    d = float((emb("default prompt (query), include_prompt false") - emb("batchSize 3")).abs().max())
    check(d < 1e-12, "batches do not change the result", f"{d:.2g}")
    s = by["Python's strip (\\x85, \\x1c-\\x1f stripped; \\ufeff kept)"]
    hello, the = st_tokenize(models["roberta"], ["Hello world", "The world"])
    check(s["ids"][0] == hello and s["ids"][1] == the and s["ids"][3] != hello, "\\x85 and \\x1c stripped, \\ufeff kept by Python's strip")
    g = by["grouping by code points of the unstripped text"]
    check(g["batches"] == [[4, 6], [5, 1], [2, 0], [3]], "grouping: 11, 11, 8 code points (the 𝒜 text: 14 UTF-16 units), 7, 7 with spaces, 5, 5")
    check(len({tuple(x) for x in g["ids"]}) == len(g["ids"]) and len({tuple(x) for x in s["ids"]}) == len(s["ids"]), "grouping and strip texts: distinct ids (the test maps batches back by ids)")

    out = {
        "generator": {"script": "tests/reference/st_reference.py", "torch": torch.__version__, "numpy": np.__version__,
                      "tokenizers": mp.run_rust([{"tokenizer": models["roberta"]["tok_path"], "texts": []}])["tokenizersVersion"]},
        "models": out_models, "cases": cases, "similarity": similarity_cases(), "search": search_cases(), "quantize": quantize_cases(),
        "widths": width_cases(),
    }
    for m in models.values():
        if m["tokenizer_json"] is not None:
            os.remove(m["tok_path"])
    mp.write_expected(os.path.join(ST_DIR, "expected.json"), out)
    for n, d in CHECKS:
        print(f"check ok: {n} {d}".rstrip())
    print(f"{len(CHECKS)} checks passed; {len(cases)} embedding cases")


if __name__ == "__main__":
    main()
