#!/usr/bin/python3
"""Train swapformer's demo models: tiny encoders with an output head on three
order-dependent per-position tasks, one model per position plugin per task.

    /usr/bin/python3 tools/train.py            # re-creates models/ (about 10 min on 2 idle cores)
    /usr/bin/python3 tools/train.py --jobs 1   # one worker process instead of two
    /usr/bin/python3 tools/train.py --only reverse-rope,sort-alibi --out /tmp/m   # a subset, elsewhere

Writes models/<task>-<position>.safetensors (F16, swapformer's own model file
format, config in __metadata__.config with "outputHead": true), models/index.json
(what each model is, how to encode an input and decode the output, and the
accuracy PyTorch measured), and models/golden.json (float64 logits of a few
inputs, computed from the F16-widened weights, for swapformer's tests).

The forward pass is tools/sfmodel.py: swapformer's math (the README), float32
with autograd for training, float64 for the golden logits.  The golden logits
are cross-checked against tests/reference/make_fixtures.py's independent
reference ("float64 formulas", plus the head) to 1e-9.

Tasks (V = 18 tokens: '^' BOS = 0, '$' EOS = 1, 'a'..'p' = 2..17).  An input is
'^' + n symbols + '$' (length T = n + 2).  The target at the two markers is the
marker itself; at content position t (1..n) it is
  reverse: x[n + 1 - t]             (the mirrored symbol: needs both ends)
  sort:    the t-th smallest symbol  (needs ranks, and t counted from '^')
  shift:   x[t - 1], and '^' at t=1  (the previous token: a purely relative rule)
Accuracy counts content positions only.

Reproducible: every random draw comes from generators seeded by the model's
name; one thread per worker; torch.use_deterministic_algorithms.  The floats
depend on the BLAS (see blas_setup), so models/ is byte-identical only with the
same torch build, BLAS and CPU kind.
"""

import argparse
import json
import math
import os
import re
import sys
import time
import zlib

sys.dont_write_bytecode = True   # no __pycache__ in tools/ or tests/reference/
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-serial"


def blas_setup():
    """Debian's torch calls the system libblas.so.3; the reference (netlib) BLAS
    is ~20x slower than OpenBLAS here.  If Debian's libopenblas0-serial is
    installed, re-exec with it first on the library path (for this process
    only; the system default is left alone)."""
    if os.path.isdir(OPENBLAS) and OPENBLAS not in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = OPENBLAS + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def blas_in_use():
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line}
        return sorted(os.path.realpath(l) for l in libs if l.startswith("/"))
    except OSError:
        return []


if __name__ == "__main__":
    blas_setup()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, HERE)
import sfmodel  # noqa: E402

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

# --------------------------------------------------------------------------
# vocabulary and tasks
# --------------------------------------------------------------------------

SYMBOLS = "abcdefghijklmnop"
VOCAB = ["^", "$"] + list(SYMBOLS)
BOS, EOS, FIRST = 0, 1, 2
NSYM = len(SYMBOLS)
V = len(VOCAB)
TRAIN_MIN, TRAIN_MAX = 8, 32          # total lengths (markers included) seen in training
POSITIONS = ["sinusoidal", "learned", "rope", "alibi", "none"]
TASKS = ["reverse", "sort", "shift"]

TASK_DOC = {
    "reverse": "output at content position t is the input symbol at the mirrored position n+1-t "
               "('^dcba$' -> 'abcd'): global, depends on where both ends are",
    "sort": "output at content position t is the t-th smallest input symbol, duplicates kept "
            "('^dbca$' -> 'abcd'): needs each symbol's rank and the output position counted from '^'",
    "shift": "output at content position t is the input symbol at t-1, '^' at t=1 "
             "('^abcd$' -> '^abc'): purely relative (look one token left), the same rule at every offset",
}

# model families: which norm / placement / activation each task's models use
FAMILIES = {
    # SwiGLU has three FFN matrices: ffDim 96 keeps the FFN about as large as GELU's two at 128
    "modern": {"norm": "rmsnorm", "normPlacement": "pre", "finalNorm": True, "activation": "swiglu", "ffDim": 96},
    "classic": {"norm": "layernorm", "normPlacement": "post", "finalNorm": False, "activation": "gelu", "ffDim": 128},
}
TASK_FAMILY = {"reverse": "modern", "sort": "classic", "shift": "modern"}
TASK_STEPS = {"reverse": 4000, "sort": 3000, "shift": 1200}
NONE_STEP_FRACTION = 3                 # 'none' gets 1/3 of the steps: it plateaus at once (see report)

HP = {"dModel": 64, "heads": 4, "layers": 2, "batch": 32, "lr": 2e-3, "warmup": 200,
      "minLrFraction": 0.1, "weightDecay": 0.01, "betas": [0.9, 0.98], "clip": 1.0,
      "maxLenEvery": 5, "learnedInitStd": 1.0}


def targets(task, x):
    """x: LongTensor [B, n] of symbol indices 0..15 -> target symbol-or-marker ids [B, n] (vocab ids)."""
    if task == "reverse":
        return x.flip(1) + FIRST
    if task == "sort":
        return x.sort(dim=1).values + FIRST
    if task == "shift":
        return torch.cat([torch.full((x.shape[0], 1), BOS, dtype=torch.long), x[:, :-1] + FIRST], 1)
    raise ValueError(task)


def make_batch(task, gen, B, T):
    n = T - 2
    x = torch.randint(0, NSYM, (B, n), generator=gen)
    bos = torch.full((B, 1), BOS, dtype=torch.long)
    eos = torch.full((B, 1), EOS, dtype=torch.long)
    ids = torch.cat([bos, x + FIRST, eos], 1)
    tgt = torch.cat([bos, targets(task, x), eos], 1)
    return ids, tgt


def encode(s):
    return [BOS] + [FIRST + SYMBOLS.index(c) for c in s] + [EOS]


def model_config(task, position):
    fam = FAMILIES[TASK_FAMILY[task]]
    cfg = {"vocabSize": V, "dModel": HP["dModel"], "heads": HP["heads"], "layers": HP["layers"],
           "ffDim": fam["ffDim"]}
    if position == "learned":
        cfg["maxLen"] = TRAIN_MAX
    cfg["position"] = position
    if position == "sinusoidal":
        cfg["positionOptions"] = {"base": 10000}
    elif position == "rope":
        cfg["positionOptions"] = {"base": 10000, "style": "interleaved"}
    cfg.update({"norm": fam["norm"], "normPlacement": fam["normPlacement"], "finalNorm": fam["finalNorm"],
                "activation": fam["activation"], "outputHead": True})
    return cfg


def model_name(task, position):
    return "%s-%s" % (task, position)


def steps_for(task, position):
    s = TASK_STEPS[task]
    return s // NONE_STEP_FRACTION if position == "none" else s


# --------------------------------------------------------------------------
# training (one model, in a worker process)
# --------------------------------------------------------------------------

def lr_at(step, total):
    warm = min(1.0, (step + 1) / HP["warmup"])
    cos = 0.5 * (1 + math.cos(math.pi * step / total))
    return HP["lr"] * warm * (HP["minLrFraction"] + (1 - HP["minLrFraction"]) * cos)


def train_one(task, position):
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    name = model_name(task, position)
    seed = zlib.crc32(name.encode())
    cfg = model_config(task, position)
    rcfg = sfmodel.resolve(cfg)
    P = sfmodel.init_params(rcfg, torch.Generator().manual_seed(seed), pos_std=HP["learnedInitStd"])
    opt = torch.optim.AdamW(list(P.values()), lr=HP["lr"], betas=tuple(HP["betas"]),
                            weight_decay=HP["weightDecay"])
    data = torch.Generator().manual_seed(seed + 1)
    steps = steps_for(task, position)
    log, t0, acc_loss = [], time.time(), 0.0
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps)
        T = int(torch.randint(TRAIN_MIN, TRAIN_MAX + 1, (1,), generator=data))
        if HP["maxLenEvery"] and step % HP["maxLenEvery"] == 0:
            T = TRAIN_MAX
        ids, tgt = make_batch(task, data, HP["batch"], T)
        logits = sfmodel.forward(rcfg, P, ids)
        loss = F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1))
        if step == 0:
            loss0 = float(loss)
            print("%-18s first loss %.4f  (ln V = ln %d = %.4f)" % (name, loss0, V, math.log(V)), flush=True)
            if abs(loss0 - math.log(V)) > 0.5:
                raise SystemExit("%s: first loss %.3f is far from ln V = %.3f" % (name, loss0, math.log(V)))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(P.values()), HP["clip"])
        opt.step()
        acc_loss += float(loss)
        if step % 100 == 99 or step == steps - 1:
            log.append([step + 1, round(acc_loss / (step % 100 + 1), 5)])   # mean over those steps
            acc_loss = 0.0
    secs = time.time() - t0
    print("%-18s %d steps, last loss %.4f, %.0f s" % (name, steps, log[-1][1], secs), flush=True)
    weights = [(k, P[k].detach().numpy().astype(np.float64)) for k, _ in sfmodel.param_shapes(rcfg)]
    return {"name": name, "task": task, "position": position, "config": cfg, "weights": weights,
            "loss0": loss0, "lossLog": log, "steps": steps, "seconds": secs}


# --------------------------------------------------------------------------
# evaluation (of the F16-widened weights, i.e. what swapformer loads)
# --------------------------------------------------------------------------

EVAL_SEQS = 512


def accuracy(task, cfg, P, T, seed):
    """Per-token accuracy over content positions and exact-match rate, at total length T
    (T=None: lengths TRAIN_MIN..TRAIN_MAX, equally many of each)."""
    gen = torch.Generator().manual_seed(seed)
    lengths = list(range(TRAIN_MIN, TRAIN_MAX + 1)) if T is None else [T]
    per = max(1, EVAL_SEQS // len(lengths))
    right = total = exact = nseq = 0
    with torch.no_grad():
        for L in lengths:
            ids, tgt = make_batch(task, gen, per, L)
            pred = sfmodel.forward(cfg, P, ids).argmax(-1)[:, 1:-1]
            ok = pred == tgt[:, 1:-1]
            right += int(ok.sum())
            total += ok.numel()
            exact += int(ok.all(dim=1).sum())
            nseq += per
    return {"token": round(right / total, 4), "sequence": round(exact / nseq, 4)}


# inside the training lengths (8..32 with the markers), then 2x for the non-learned
EXAMPLES = {"reverse": ["deadbeef", "abcdefghijklmnop", "abcdefghijklmnopabcdefghijklmn"],
            "sort": ["deadbeef", "ponmlkjihgfedcba", "ponmlkjihgfedcbaponmlkjihgfedc"],
            "shift": ["deadbeef", "abcdefghijklmnop", "abcdefghijklmnopabcdefghijklmn"]}


def expected_output(task, s):
    if task == "reverse":
        return s[::-1]
    if task == "sort":
        return "".join(sorted(s))
    return "^" + s[:-1]


def examples(task, cfg, W):
    """A few strings through the shipped weights (float64), decoded."""
    P = {k: torch.tensor(v, dtype=torch.float64) for k, v in W.items()}
    out = []
    strings = list(EXAMPLES[task])
    if cfg["position"] != "learned":
        strings.append(strings[-1] * 2 + "ab")   # 64 tokens with the markers: 2x
    for s in strings:
        with torch.no_grad():
            pred = sfmodel.forward(cfg, P, torch.tensor([encode(s)]))[0].argmax(-1).tolist()
        got = "".join(VOCAB[i] for i in pred[1:-1])
        out.append({"input": "^" + s + "$", "length": len(s) + 2, "expected": expected_output(task, s),
                    "pytorch": got})
    return out


def scaled(cfg, scaling):
    c = json.loads(json.dumps(cfg))
    c["positionOptions"] = dict(c["positionOptions"], scaling=scaling)
    return c


def evaluate(task, cfg, W):
    P = {k: torch.tensor(v, dtype=torch.float32) for k, v in W.items()}
    ev = {"trainLengths": accuracy(task, cfg, P, None, 7), "32": accuracy(task, cfg, P, 32, 8)}
    for T in (64, 128):
        ev[str(T)] = None if cfg["position"] == "learned" else accuracy(task, cfg, P, T, 9 + T)
    ablate = dict(cfg, position="none")
    ablate.pop("positionOptions", None)
    ablate.pop("maxLen", None)
    ev["ablatedToNone@32"] = accuracy(task, ablate, P, 32, 8) if cfg["position"] != "none" else None
    if cfg["position"] == "rope":
        rs = {}
        for T in (64, 128):
            f = T / TRAIN_MAX
            for label, sc in (("linear", {"type": "linear", "factor": f}),
                              ("ntk", {"type": "ntk", "factor": f}),
                              ("yarn", {"type": "yarn", "factor": f, "originalMaxLen": TRAIN_MAX})):
                rs["%s@%d" % (label, T)] = {"scaling": sc, **accuracy(task, scaled(cfg, sc), P, T, 9 + T)}
        ev["ropeScaling"] = rs
    return ev


# --------------------------------------------------------------------------
# golden logits (float64), cross-checked with tests/reference/make_fixtures.py
# --------------------------------------------------------------------------

GOLDEN_SIG = 10   # significant digits kept in golden.json (the test's tolerance is 1e-4 relative)


def golden_inputs(name, position):
    rng = np.random.default_rng(zlib.crc32(("golden:" + name).encode()))
    lens = [12, 32] + ([] if position == "learned" else [64])
    return [[BOS] + [FIRST + int(v) for v in rng.integers(0, NSYM, size=L - 2)] + [EOS] for L in lens]


def round_sig(a):
    return [float("%.*g" % (GOLDEN_SIG, v)) for v in np.asarray(a).reshape(-1).tolist()]


def reference_logits(cfg, W64, ids):
    """make_fixtures.py's reference B (hidden states) + the head, one sequence."""
    import make_fixtures as mf
    rc = mf.resolve(cfg)
    out, _ = mf.ref_b(rc, W64, [ids])
    x = out[0]
    return x @ W64["head.weight"].t() + W64["head.bias"]


def golden_for(m, W):
    sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
    cfg = m["config"]
    P = {k: torch.tensor(v, dtype=torch.float64) for k, v in W.items()}
    entry = {"file": m["name"] + ".safetensors", "cases": []}
    worst = 0.0
    runs = [(None, ids) for ids in golden_inputs(m["name"], cfg["position"])]
    if cfg["position"] == "rope":
        long_ids = runs[-1][1]
        f = len(long_ids) / TRAIN_MAX
        for sc in ({"type": "linear", "factor": f}, {"type": "ntk", "factor": f},
                   {"type": "yarn", "factor": f, "originalMaxLen": TRAIN_MAX}):
            runs.append((sc, long_ids))
    for sc, ids in runs:
        c = scaled(cfg, sc) if sc else cfg
        with torch.no_grad():
            lg = sfmodel.forward(c, P, torch.tensor([ids]))[0]
        ref = reference_logits(c, P, ids)
        worst = max(worst, float((lg - ref).abs().max() / ref.abs().max()))
        case = {"ids": ids, "text": "".join(VOCAB[i] for i in ids)}
        if sc:
            case["positionOptions"] = c["positionOptions"]
        case["shape"] = [1, len(ids), V]
        case["logits"] = round_sig(lg.numpy())
        entry["cases"].append(case)
    if not worst <= 1e-9:
        raise SystemExit("%s: golden logits differ from make_fixtures' reference by %.2e" % (m["name"], worst))
    return entry, worst


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def work(args):
    task, position, steps, hp = args
    TASK_STEPS.update(steps)   # spawned workers re-import this module: carry the overrides over
    HP.update(hp)
    return train_one(task, position)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="worker processes, one thread each (default 2)")
    ap.add_argument("--only", default="", help="comma-separated model names, e.g. reverse-rope")
    ap.add_argument("--out", default=os.path.join(ROOT, "models"))
    ap.add_argument("--hp", action="append", default=[],
                    help="override a hyperparameter, for experiments: --hp lr=1e-3, --hp reverse.steps=3000")
    ap.add_argument("--smoke", action="store_true", help="1/20 of the steps (a quick check of the pipeline)")
    args = ap.parse_args()
    for kv in args.hp:   # experiments: --hp lr=1e-3 --hp reverse.steps=3000
        k, v = kv.split("=", 1)
        if k.endswith(".steps"):
            TASK_STEPS[k[:-6]] = int(v)
        else:
            assert k in HP, k
            HP[k] = type(HP[k])(v) if not isinstance(HP[k], list) else json.loads(v)
    if args.smoke:
        for t in TASK_STEPS:
            TASK_STEPS[t] //= 20
        HP["warmup"] //= 20
    blas = blas_in_use()
    print("torch %s, 1 thread per worker, %d worker(s), BLAS: %s" % (torch.__version__, args.jobs, ", ".join(blas) or "?"))
    jobs = [(t, p) for t in TASKS for p in POSITIONS]
    if args.only:
        want = set(args.only.split(","))
        jobs = [j for j in jobs if model_name(*j) in want]
        assert len(jobs) == len(want), "unknown model name in --only"
    order = sorted(jobs, key=lambda j: -steps_for(*j))   # longest first: balances the workers
    t0 = time.time()
    if args.jobs > 1:
        import multiprocessing as mp
        with mp.get_context("spawn").Pool(args.jobs) as pool:
            trained = pool.map(work, [(t, p, TASK_STEPS, HP) for t, p in order], chunksize=1)
    else:
        trained = [work((t, p, TASK_STEPS, HP)) for t, p in order]
    train_wall = time.time() - t0
    by_name = {m["name"]: m for m in trained}

    os.makedirs(args.out, exist_ok=True)
    if not args.only:
        for f in os.listdir(args.out):
            if f.endswith(".safetensors") or f in ("index.json", "golden.json"):
                os.remove(os.path.join(args.out, f))
    index_models, golden_models, report = [], [], []
    for task, position in jobs:
        m = by_name[model_name(task, position)]
        path = os.path.join(args.out, m["name"] + ".safetensors")
        stored = sfmodel.write_model(path, m["config"], m["weights"], "F16")
        cfg_back, W = sfmodel.read_model(path)
        assert cfg_back == m["config"] and all(np.array_equal(W[k], stored[k]) for k in stored)
        ev = evaluate(task, m["config"], W)
        g, gerr = golden_for(m, W)
        golden_models.append(g)
        nparams = int(sum(v.size for v in W.values()))
        fam = TASK_FAMILY[task]
        index_models.append({
            "name": m["name"], "file": m["name"] + ".safetensors", "task": task, "position": position,
            "family": fam, "norm": FAMILIES[fam]["norm"], "normPlacement": FAMILIES[fam]["normPlacement"],
            "activation": FAMILIES[fam]["activation"], "config": m["config"], "dtype": "F16",
            "parameters": nparams, "bytes": os.path.getsize(path),
            "training": {"lengths": [TRAIN_MIN, TRAIN_MAX], "steps": m["steps"], "batch": HP["batch"],
                         "firstLoss": round(m["loss0"], 4), "lnV": round(math.log(V), 4),
                         "lastLoss": m["lossLog"][-1][1],
                         "meanLossPer100Steps": [l for _, l in m["lossLog"]]},
            "pytorchAccuracy": ev,
            "examples": examples(task, m["config"], W),
        })
        report.append((m, ev, gerr))

    index = {
        "generator": "tools/train.py", "torch": torch.__version__,
        "blas": [os.path.basename(b) for b in blas],
        "vocab": VOCAB,
        "markers": {"bos": {"id": BOS, "token": VOCAB[BOS]}, "eos": {"id": EOS, "token": VOCAB[EOS]}},
        "symbols": {"first": FIRST, "tokens": SYMBOLS, "order": "alphabetical = id order (sort uses it)"},
        "encode": "ids = [0] + [2 + 'abcdefghijklmnop'.indexOf(c) for each symbol c] + [1]: "
                  "'^' + n symbols + '$', total length T = n + 2; no padding token (one sequence per "
                  "forward, or swapformer's padded batches)",
        "decode": "logits [1, T, 18]: the answer is vocab[argmax(logits[t])] for t = 1..n (the content "
                  "positions); the marker positions predict their own marker",
        "tasks": TASK_DOC,
        "trainLengths": {"min": TRAIN_MIN, "max": TRAIN_MAX,
                         "note": "total lengths including '^' and '$'; each batch has one length, uniform "
                                 "in [min, max], and every %d-th batch has length max" % HP["maxLenEvery"]},
        "accuracyKeys": {"trainLengths": "lengths 8..32, equally many of each",
                         "32": "length 32 (1x, the longest trained)", "64": "2x (null: learned refuses)",
                         "128": "4x", "ablatedToNone@32": "the same weights with position 'none'",
                         "ropeScaling": "rope models at 2x/4x with positionOptions.scaling (factor = T/32, "
                                        "yarn originalMaxLen 32)",
                         "token": "per-token accuracy over content positions",
                         "sequence": "fraction of sequences entirely right"},
        "hyperparameters": dict(HP, families=FAMILIES, taskFamily=TASK_FAMILY, taskSteps=TASK_STEPS,
                                noneSteps="1/%d of the task's steps" % NONE_STEP_FRACTION,
                                optimizer="AdamW, linear warmup then cosine to minLrFraction, "
                                          "grad-norm clip, cross-entropy of the head's logits at every position",
                                init="as swapformer's createEncoder: nn.Embedding N(0,1), nn.Linear "
                                     "U(+-1/sqrt(in)), biases 0, norm weights 1"),
        "models": index_models,
    }
    text = json.dumps(index, indent=1)
    # lists of numbers and short lists of strings on one line
    text = re.sub(r"\[\n\s*([-0-9.e\s,\n]+?)\n\s*\]",
                  lambda mm: "[" + re.sub(r",\n\s*", ", ", mm.group(1).strip()) + "]", text)
    text = re.sub(r'\[\n\s*((?:"[^"\n]{0,40}",?\n\s*)+)\]',
                  lambda mm: "[" + ", ".join(x.strip().rstrip(",") for x in mm.group(1).strip().split("\n")) + "]", text)
    assert json.loads(text) == index
    with open(os.path.join(args.out, "index.json"), "w") as f:
        f.write(text + "\n")
    golden = {"generator": "tools/train.py", "torch": torch.__version__,
              "note": "float64 logits of each model file's F16 weights widened to float64 (what swapformer "
                      "loads), every sequence on its own, rounded to %d significant digits; cases with "
                      "positionOptions run the same weights with that positionOptions (RoPE scaling). "
                      "Cross-checked against tests/reference/make_fixtures.py's reference B + head." % GOLDEN_SIG,
              "tolerance": 1e-4, "models": golden_models}
    with open(os.path.join(args.out, "golden.json"), "w") as f:
        head = {k: v for k, v in golden.items() if k != "models"}
        f.write(json.dumps(head, separators=(",", ":"))[:-1] + ',"models":[\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in golden_models))
        f.write("\n]}\n")

    def fmt(a):
        return "   n/a" if a is None else "%6.1f" % (100 * a["token"])

    print("\n%-18s %-8s %6s %7s %6s %6s %6s %6s  %s" % ("model", "family", "params", "bytes", "1x", "@32",
                                                        "2x", "4x", "none@32"))
    for m, ev, gerr in report:
        im = next(x for x in index_models if x["name"] == m["name"])
        print("%-18s %-8s %6d %7d %s %s %s %s  %s" % (m["name"], im["family"], im["parameters"], im["bytes"],
                                                      fmt(ev["trainLengths"]), fmt(ev["32"]), fmt(ev["64"]),
                                                      fmt(ev["128"]), fmt(ev["ablatedToNone@32"])))
        for k, v in (ev.get("ropeScaling") or {}).items():
            print("%28s %-10s %s" % ("", k, fmt(v)))
    total = sum(os.path.getsize(os.path.join(args.out, f)) for f in os.listdir(args.out))
    print("training wall time %.0f s (%d jobs); max golden diff vs make_fixtures %.1e; %s: %d bytes"
          % (train_wall, args.jobs, max(r[2] for r in report), args.out, total))


if __name__ == "__main__":
    main()
