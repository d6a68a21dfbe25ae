#!/usr/bin/python3
"""Train swapformer's small masked-LM BERT on English text from WordNet: a
Hugging Face BertForMaskedLM folder, so that the demo shows what positions do
to a real pretrained model offline.

    nice -n 19 /usr/bin/python3 tools/train_mlm.py               # re-creates models/wordnet-bert/ (~40 CPU-min, 1 thread)
    /usr/bin/python3 tools/train_mlm.py --smoke --out /tmp/wb    # 1/50 of the steps: checks the pipeline
    /usr/bin/python3 tools/train_mlm.py --new-vocab              # also re-learns the WordPiece vocabulary

Data: the glosses of WordNet 3.0 (Debian's wordnet-base, /usr/share/wordnet/
data.{noun,verb,adj,adv}; the WordNet 3.0 license, permissive: see
models/wordnet-bert/README.md): each synset's definition and its quoted
example sentences, one segment each (about 166,000 segments, 2 M words).
Synsets are split by a hash of their offset: 2% are held out (their
definitions and examples never reach the vocabulary or the training).

Vocabulary: tools/wordpiece.cjs, Hugging Face's Rust tokenizers (npm), a
WordPiece of VOCAB tokens trained on the training segments with the BERT
uncased pipeline; tokenizer.json as BertWordPieceTokenizer saves it. The Rust
trainer breaks ties between merges of equal count in hash order, so a fresh
vocabulary can number tied tokens differently: the shipped tokenizer.json is
reused unless --new-vocab (or when the output folder has none).

Model: BERT (post-norm LayerNorm, GELU erf, learned absolute positions,
token types) with the masked-LM head, Hugging Face's parameter names, the
decoder tied to the word embeddings; standard masking (15% of the tokens of a
segment, at least one: 80% [MASK], 10% a random token, 10% unchanged), loss on
the chosen tokens only. Written as model.safetensors in F16 (the tied decoder
and its bias alias not saved, as save_pretrained does), config.json,
tokenizer.json, tokenizer_config.json, special_tokens_map.json, vocab.txt.

Also written: models/wordnet-bert-heldout.json (the held-out segments, for
tools/evaluate.mjs's fill-mask accuracy through swapformer) and
models/wordnet-bert-golden.json (float64 logits of the F16 weights at the
masks of a few held-out inputs, for tests/models.test.js).

Reproducible: seeds everywhere, one thread, torch.use_deterministic_algorithms;
the floats depend on the BLAS (tools/train.py's blas_setup: OpenBLAS when
present, here or at $SWAPFORMER_OPENBLAS).
"""

import argparse
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import train  # noqa: E402  (blas_setup, blas_in_use)

if os.environ.get("SWAPFORMER_OPENBLAS"):
    train.OPENBLAS = os.environ["SWAPFORMER_OPENBLAS"]
if __name__ == "__main__":
    train.blas_setup()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

WORDNET = "/usr/share/wordnet"
NAME = "wordnet-bert"
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PAD, UNK, CLS, SEP, MASK = range(5)
HELDOUT_PER_MILLE = 20

HP = {"vocab": 6000, "hidden": 128, "layers": 4, "heads": 4, "intermediate": 512, "maxPositions": 128,
      "maxTrainLen": 64, "batch": 128, "steps": 10000, "lr": 1e-3, "warmup": 500, "weightDecay": 0.01,
      "betas": [0.9, 0.98], "adamEps": 1e-6, "clip": 1.0, "dropout": 0.1, "initStd": 0.02,
      "maskFraction": 0.15, "seed": 20240601, "layerNormEps": 1e-12}


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------

def wordnet_segments():
    """[(synset key, segment)]: each synset's definition and quoted examples, in file order."""
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(WORDNET, "data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:   # the license header
                    continue
                key = pos + ":" + line.split(" ", 1)[0]
                gloss = line.split("|", 1)[1].strip()
                definition = re.sub(r'"[^"]*"', "", gloss).strip(" ;").strip()
                if definition:
                    out.append((key, definition))
                for ex in re.findall(r'"([^"]+)"', gloss):
                    ex = ex.strip()
                    if ex:
                        out.append((key, ex))
    return out


def split(segments):
    train_s, held = [], []
    for key, text in segments:
        (held if zlib.crc32(key.encode()) % 1000 < HELDOUT_PER_MILLE else train_s).append(text)
    return train_s, held


def node(*args):
    r = subprocess.run(["node", os.path.join(HERE, "wordpiece.cjs"), *args], check=True, capture_output=True, text=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def encode_all(tokenizer_json, texts, tmp):
    """Token ids of every text ([CLS] ... [SEP]) by the Rust tokenizer: a list of int lists."""
    tj, bin_ = os.path.join(tmp, "texts.json"), os.path.join(tmp, "ids.bin")
    with open(tj, "w") as f:
        json.dump(texts, f)
    info = node("encode", tokenizer_json, tj, bin_)
    raw = open(bin_, "rb").read()
    n = struct.unpack("<I", raw[:4])[0]
    lengths = np.frombuffer(raw[4:4 + 4 * n], dtype="<u4")
    ids = np.frombuffer(raw[4 + 4 * n:], dtype="<u2").astype(np.int64)
    ends = np.cumsum(lengths)
    return [ids[e - l:e] for e, l in zip(ends, lengths)], info


# --------------------------------------------------------------------------
# the model: Hugging Face's BertForMaskedLM, its parameter names
# --------------------------------------------------------------------------

class Embeddings(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.word_embeddings = nn.Embedding(c["vocab"], c["hidden"])
        s.position_embeddings = nn.Embedding(c["maxPositions"], c["hidden"])
        s.token_type_embeddings = nn.Embedding(2, c["hidden"])
        s.LayerNorm = nn.LayerNorm(c["hidden"], eps=c["layerNormEps"])
        s.dropout = nn.Dropout(c["dropout"])

    def forward(s, ids):
        T = ids.shape[1]
        x = s.word_embeddings(ids) + s.position_embeddings.weight[:T] + s.token_type_embeddings.weight[0]
        return s.dropout(s.LayerNorm(x))


class SelfAttention(nn.Module):
    def __init__(s, c):
        super().__init__()
        d = c["hidden"]
        s.heads = c["heads"]
        s.query, s.key, s.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        s.dropout = nn.Dropout(c["dropout"])

    def forward(s, x, bias):
        B, T, d = x.shape
        H = s.heads
        split_heads = lambda t: t.view(B, T, H, d // H).transpose(1, 2)   # noqa: E731
        q, k, v = split_heads(s.query(x)), split_heads(s.key(x)), split_heads(s.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // H) + bias
        ctx = s.dropout(scores.softmax(-1)) @ v
        return ctx.transpose(1, 2).reshape(B, T, d)


class DenseNorm(nn.Module):
    """BertSelfOutput / BertOutput: dense, dropout, residual, LayerNorm."""

    def __init__(s, c, fan_in):
        super().__init__()
        s.dense = nn.Linear(fan_in, c["hidden"])
        s.LayerNorm = nn.LayerNorm(c["hidden"], eps=c["layerNormEps"])
        s.dropout = nn.Dropout(c["dropout"])

    def forward(s, h, residual):
        return s.LayerNorm(s.dropout(s.dense(h)) + residual)


def box(**children):
    """A module that only names its children (Hugging Face's containers: the names make the state_dict keys)."""
    m = nn.Module()
    for name, child in children.items():
        setattr(m, name, child)
    return m


class Layer(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.attention = box(self=SelfAttention(c), output=DenseNorm(c, c["hidden"]))
        s.intermediate = box(dense=nn.Linear(c["hidden"], c["intermediate"]))
        s.output = DenseNorm(c, c["intermediate"])

    def forward(s, x, bias):
        a = s.attention.output(s.attention.self(x, bias), x)
        return s.output(F.gelu(s.intermediate.dense(a)), a)


class BertModel(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.embeddings = Embeddings(c)
        s.encoder = box(layer=nn.ModuleList(Layer(c) for _ in range(c["layers"])))

    def forward(s, ids):
        # padding keys get the most negative score, as Hugging Face's extended attention mask
        bias = torch.zeros(ids.shape, dtype=s.embeddings.word_embeddings.weight.dtype)
        bias = bias.masked_fill(ids == PAD, torch.finfo(bias.dtype).min)[:, None, None, :]
        x = s.embeddings(ids)
        for layer in s.encoder.layer:
            x = layer(x, bias)
        return x


class BertForMaskedLM(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.bert = BertModel(c)
        transform = box(dense=nn.Linear(c["hidden"], c["hidden"]), LayerNorm=nn.LayerNorm(c["hidden"], eps=c["layerNormEps"]))
        s.cls = box(predictions=box(transform=transform, bias=nn.Parameter(torch.zeros(c["vocab"]))))

    def mlm_logits(s, hidden_rows):
        """The head at the chosen rows [R, hidden] -> [R, vocab]; the decoder is the word embeddings."""
        t = s.cls.predictions.transform
        h = t.LayerNorm(F.gelu(t.dense(hidden_rows)))
        return h @ s.bert.embeddings.word_embeddings.weight.t() + s.cls.predictions.bias

    def forward(s, ids, rows):
        """rows: a bool mask [B, T] of the positions to predict -> logits [R, vocab] in row-major order."""
        return s.mlm_logits(s.bert(ids)[rows])


def init_weights(model, std, gen):
    """As BertPreTrainedModel._init_weights: N(0, std) weights, zero biases, LayerNorm 1 and 0."""
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            with torch.no_grad():
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * std)
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)
        if isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
    nn.init.zeros_(model.cls.predictions.bias)


# --------------------------------------------------------------------------
# batches and masking
# --------------------------------------------------------------------------

def batches(seqs, gen, batch, pool=64):
    """An endless stream of padded LongTensors [batch, T]: a shuffled epoch, length-sorted within
    pools of `pool` batches (less padding), the batches of a pool in random order."""
    n = len(seqs)
    while True:
        order = torch.randperm(n, generator=gen).tolist()
        for p in range(0, n - batch + 1, batch * pool):
            chunk = sorted(order[p:p + batch * pool], key=lambda i: len(seqs[i]))
            group = [chunk[b:b + batch] for b in range(0, len(chunk) - batch + 1, batch)]
            for g in torch.randperm(len(group), generator=gen).tolist():
                yield pad([seqs[i] for i in group[g]])


def pad(rows):
    T = max(len(r) for r in rows)
    out = torch.full((len(rows), T), PAD, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, :len(r)] = torch.as_tensor(r)
    return out


def mask_batch(ids, gen, vocab, fraction):
    """BERT's masking: per segment round(fraction * n) of its n ordinary tokens (at least one); of
    those 80% -> [MASK], 10% -> a random ordinary token, 10% unchanged. -> (inputs, rows, targets)."""
    ordinary = ids >= len(SPECIAL)
    noise = torch.rand(ids.shape, generator=gen).masked_fill(~ordinary, 2.0)
    counts = (ordinary.sum(1).float() * fraction).round().clamp(min=1).long()
    rank = noise.argsort(1).argsort(1)
    rows = (rank < counts[:, None]) & ordinary
    targets = ids[rows]
    choice = torch.rand(ids.shape, generator=gen)
    random_tokens = torch.randint(len(SPECIAL), vocab, ids.shape, generator=gen)
    inputs = ids.clone()
    inputs[rows & (choice < 0.8)] = MASK
    swap = rows & (choice >= 0.8) & (choice < 0.9)
    inputs[swap] = random_tokens[swap]
    return inputs, rows, targets


def lr_at(step):
    """Linear warmup, then linear decay to 0."""
    return HP["lr"] * min(1.0, (step + 1) / HP["warmup"]) * max(0.0, 1 - step / HP["steps"])


# --------------------------------------------------------------------------
# evaluation (PyTorch side; the official numbers come through swapformer: tools/evaluate.mjs)
# --------------------------------------------------------------------------

def heldout_metrics(model, seqs, seed):
    """Masked-LM loss and top-1 / top-5 accuracy on the held-out segments (one fixed masking)."""
    gen = torch.Generator().manual_seed(seed)
    model.eval()
    loss = n = top1 = top5 = 0
    with torch.no_grad():
        for s in range(0, len(seqs), 256):
            ids = pad(seqs[s:s + 256])
            inputs, rows, targets = mask_batch(ids, gen, HP["vocab"], HP["maskFraction"])
            logits = model(inputs, rows)
            loss += float(F.cross_entropy(logits, targets, reduction="sum"))
            best = logits.topk(5, -1).indices
            top1 += int((best[:, 0] == targets).sum())
            top5 += int((best == targets[:, None]).any(1).sum())
            n += len(targets)
    model.train()
    return {"loss": round(loss / n, 4), "top1": round(top1 / n, 4), "top5": round(top5 / n, 4), "masked": n}


# --------------------------------------------------------------------------
# the Hugging Face folder
# --------------------------------------------------------------------------

def write_safetensors(path, tensors, dtype="F16"):
    """tensors: {name: float tensor}; names sorted, as safetensors' torch writer; 8-byte aligned header."""
    np_dt = {"F16": "<f2", "F32": "<f4"}[dtype]
    header, blobs, off, stored = {"__metadata__": {"format": "pt"}}, [], 0, {}
    for name in sorted(tensors):
        a = tensors[name].detach().numpy().astype(np_dt)
        assert np.all(np.isfinite(a)), name
        raw = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
        stored[name] = torch.tensor(a.astype(np.float64))
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((-(8 + len(hj))) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
    return stored


def hf_config():
    return {
        "architectures": ["BertForMaskedLM"], "model_type": "bert",
        "attention_probs_dropout_prob": HP["dropout"], "hidden_dropout_prob": HP["dropout"],
        "hidden_act": "gelu", "hidden_size": HP["hidden"], "initializer_range": HP["initStd"],
        "intermediate_size": HP["intermediate"], "layer_norm_eps": HP["layerNormEps"],
        "max_position_embeddings": HP["maxPositions"], "num_attention_heads": HP["heads"],
        "num_hidden_layers": HP["layers"], "pad_token_id": PAD, "position_embedding_type": "absolute",
        "torch_dtype": "float16", "type_vocab_size": 2, "vocab_size": HP["vocab"],
    }


def write_folder(out, model, tokenizer_json):
    os.makedirs(out, exist_ok=True)
    state = {k: v for k, v in model.state_dict().items()}
    stored = write_safetensors(os.path.join(out, "model.safetensors"), state)
    dump = lambda name, obj: open(os.path.join(out, name), "w").write(json.dumps(obj, indent=2) + "\n")  # noqa: E731
    dump("config.json", hf_config())
    dump("tokenizer_config.json", {
        "clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "do_basic_tokenize": True, "do_lower_case": True,
        "mask_token": "[MASK]", "model_max_length": HP["maxPositions"], "never_split": None, "pad_token": "[PAD]",
        "sep_token": "[SEP]", "strip_accents": None, "tokenize_chinese_chars": True, "tokenizer_class": "BertTokenizer",
        "unk_token": "[UNK]"})
    dump("special_tokens_map.json", {"cls_token": "[CLS]", "mask_token": "[MASK]", "pad_token": "[PAD]",
                                     "sep_token": "[SEP]", "unk_token": "[UNK]"})
    if os.path.abspath(tokenizer_json) != os.path.abspath(os.path.join(out, "tokenizer.json")):
        with open(tokenizer_json) as f, open(os.path.join(out, "tokenizer.json"), "w") as g:
            g.write(f.read())
    vocab = json.load(open(os.path.join(out, "tokenizer.json")))["model"]["vocab"]
    with open(os.path.join(out, "vocab.txt"), "w") as f:
        f.write("".join(t + "\n" for t in sorted(vocab, key=vocab.get)))
    return stored


def golden(model, stored, texts, seqs, count=3):
    """float64 logits of the F16 weights at the [MASK] rows of `count` held-out inputs (every
    eighth position from 1 masked), with the text and its unmasked ids (the Rust tokenizer's), for
    tests/models.test.js."""
    m64 = BertForMaskedLM(HP).double().eval()
    m64.load_state_dict({k: stored[k] for k in model.state_dict()})
    cases = []
    with torch.no_grad():
        for text, ids in list(zip(texts, seqs))[:count]:
            masked = torch.as_tensor(ids)[None].clone()
            pos = list(range(1, masked.shape[1] - 1, 8))
            masked[0, pos] = MASK
            rows = torch.zeros(masked.shape, dtype=torch.bool)
            rows[0, pos] = True
            logits = m64(masked, rows)
            cases.append({"text": text, "ids": [int(i) for i in ids], "maskPositions": pos,
                          "logits": [[float("%.7g" % v) for v in row] for row in logits.tolist()]})
    return cases


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "models", NAME))
    ap.add_argument("--new-vocab", action="store_true", help="re-learn the WordPiece vocabulary")
    ap.add_argument("--smoke", action="store_true", help="1/50 of the steps")
    ap.add_argument("--hp", action="append", default=[], help="override a hyperparameter: --hp steps=3000")
    args = ap.parse_args()
    for kv in args.hp:
        k, v = kv.split("=", 1)
        assert k in HP, k
        HP[k] = type(HP[k])(v)
    if args.smoke:
        HP["steps"] //= 50
        HP["warmup"] //= 50
    side = os.path.dirname(os.path.abspath(args.out))   # heldout and golden files beside the folder
    print("torch %s, 1 thread, BLAS: %s" % (torch.__version__, ", ".join(train.blas_in_use()) or "?"), flush=True)
    t_start = time.time()

    segments = wordnet_segments()
    train_texts, held_texts = split(segments)
    print("WordNet: %d segments, %d for training, %d held out" % (len(segments), len(train_texts), len(held_texts)))
    with tempfile.TemporaryDirectory() as tmp:
        tok = os.path.join(args.out, "tokenizer.json")
        if args.new_vocab or not os.path.exists(tok):
            os.makedirs(args.out, exist_ok=True)
            corpus = os.path.join(tmp, "train.txt")
            with open(corpus, "w") as f:
                f.write("\n".join(train_texts) + "\n")
            print("vocabulary:", node("build", corpus, str(HP["vocab"]), tok))
        train_seqs, info = encode_all(tok, train_texts, tmp)
        held_seqs, hinfo = encode_all(tok, held_texts, tmp)
    print("tokens: training %d, held out %d" % (info["tokens"], hinfo["tokens"]))
    cut = HP["maxTrainLen"]
    train_seqs = [s if len(s) <= cut else np.concatenate([s[:cut - 1], [SEP]]) for s in train_seqs]

    torch.manual_seed(HP["seed"])   # dropout
    model = BertForMaskedLM(HP)
    init_weights(model, HP["initStd"], torch.Generator().manual_seed(HP["seed"] + 1))
    nparams = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and "LayerNorm" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (n.endswith("weight") and "LayerNorm" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": HP["weightDecay"]}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=HP["lr"], betas=tuple(HP["betas"]), eps=HP["adamEps"])
    data = batches(train_seqs, torch.Generator().manual_seed(HP["seed"] + 2), HP["batch"])
    mgen = torch.Generator().manual_seed(HP["seed"] + 3)
    log, acc, t0 = [], 0.0, time.time()
    print("model: %d parameters; %d steps of %d segments" % (nparams, HP["steps"], HP["batch"]), flush=True)
    for step in range(HP["steps"]):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        inputs, rows, targets = mask_batch(next(data), mgen, HP["vocab"], HP["maskFraction"])
        loss = F.cross_entropy(model(inputs, rows), targets)
        if step == 0:
            print("first loss %.4f (ln V = %.4f)" % (float(loss), math.log(HP["vocab"])), flush=True)
            if abs(float(loss) - math.log(HP["vocab"])) > 0.5:
                raise SystemExit("the first loss is far from ln V: initialisation or normalisation is wrong")
            loss0 = float(loss)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), HP["clip"])
        opt.step()
        acc += float(loss)
        every = max(1, HP["steps"] // 40)
        if (step + 1) % every == 0 or step == HP["steps"] - 1:
            entry = {"step": step + 1, "trainLoss": round(acc / ((step % every) + 1), 4), "seconds": round(time.time() - t0)}
            if (step + 1) % (every * 5) == 0 or step == HP["steps"] - 1:
                entry["heldout"] = heldout_metrics(model, held_seqs, 7)
            log.append(entry)
            acc = 0.0
            print(json.dumps(entry), flush=True)
    train_seconds = time.time() - t0
    model.eval()

    stored = write_folder(args.out, model, os.path.join(args.out, "tokenizer.json"))
    # what swapformer loads: the F16 weights, measured again
    f16 = BertForMaskedLM(HP).eval()
    f16.load_state_dict({k: stored[k].float() if k in stored else v for k, v in model.state_dict().items()})
    final = heldout_metrics(f16, held_seqs, 7)
    with open(os.path.join(side, NAME + "-heldout.json"), "w") as f:
        json.dump({"source": "WordNet 3.0 glosses (Debian wordnet-base), synsets held out by tools/train_mlm.py",
                   "segments": held_texts}, f, indent=0)
        f.write("\n")
    with open(os.path.join(side, NAME + "-golden.json"), "w") as f:
        f.write(json.dumps({"generator": "tools/train_mlm.py", "torch": torch.__version__,
                            "note": "float64 logits of model.safetensors' F16 weights at the [MASK] rows "
                                    "(every eighth position from 1 masked) of held-out inputs, 7 significant digits",
                            "cases": golden(model, stored, held_texts, held_seqs)}, separators=(",", ":")) + "\n")
    training = {"generator": "tools/train_mlm.py", "torch": torch.__version__, "blas": [os.path.basename(b) for b in train.blas_in_use()],
                "data": {"source": "WordNet 3.0 (Debian package wordnet-base 1:3.0-37), /usr/share/wordnet/data.{noun,verb,adj,adv}: "
                                   "each synset's definition and example sentences",
                         "license": "WordNet 3.0 license (permissive, BSD-style; the notice is in README.md)",
                         "segments": len(segments), "trainSegments": len(train_texts), "heldoutSegments": len(held_texts),
                         "trainTokens": info["tokens"], "heldoutTokens": hinfo["tokens"]},
                "hyperparameters": HP, "parameters": nparams, "firstLoss": round(loss0, 4), "lnV": round(math.log(HP["vocab"]), 4),
                "trainSeconds": round(train_seconds), "totalSeconds": round(time.time() - t_start),
                "log": log, "pytorchHeldout": final}
    with open(os.path.join(args.out, "training.json"), "w") as f:
        f.write(json.dumps(training, indent=1) + "\n")
    print("held out (F16 weights, PyTorch): %s; %.0f s training; %s: %d bytes"
          % (json.dumps(final), train_seconds, args.out,
             sum(os.path.getsize(os.path.join(args.out, x)) for x in os.listdir(args.out))))


if __name__ == "__main__":
    main()
