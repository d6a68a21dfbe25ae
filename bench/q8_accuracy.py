#!/usr/bin/python3
"""How much int8 costs a whole forward pass, emulated in PyTorch before it runs in wasm.

    /usr/bin/python3 bench/q8_accuracy.py MODEL.safetensors [MODEL2 ...] [--T 128] [--outliers 10]

The model files are swapformer's (as bench/bench.js writes them into bench/.cache/),
run through bench/export_onnx.py's float32 module; every Linear layer is replaced
by fake quantization: weights per output channel, symmetric int8 (s = max|w| / 127,
round half to even), activations asymmetric unsigned with

  per-row u8   [0, 255]  swapformer's SIMD128 build (core/qgemm.c)
  per-row u7   [0, 127]  swapformer's relaxed-SIMD build (the 7-bit operand of
                         the relaxed dot: one bit less, so that every engine
                         computes the same integers)
  per-tensor u8          onnxruntime's DynamicQuantizeLinear (its q8 graphs)

and the result is compared with the float32 forward: max |q8 - f32| / max |f32|
over the hidden states, the relative RMS error, the smallest cosine similarity
of a token's hidden state, and the cosine of the mean-pooled embeddings.
--outliers F multiplies two LayerNorm gains of every layer by F (features 7
and 100), as trained BERTs have a few outlier features (bert-base's 308 and
381): per-tensor quantization suffers most from them.
"""

import argparse
import importlib.util
import os

import torch

spec = importlib.util.spec_from_file_location("export_onnx", os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_onnx.py"))
ex = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ex)
torch.set_num_threads(2)


def fake_weight(w):
    s = w.abs().amax(dim=1, keepdim=True) / 127.0
    safe = torch.where(s > 0, s, torch.ones_like(s))
    return torch.where(s > 0, torch.clamp(torch.round(w / safe), -127, 127) * s, torch.zeros_like(w))


def fake_activation(x, amax, per_row):
    dims = (-1,) if per_row else tuple(range(x.dim()))
    lo = torch.clamp(x.amin(dim=dims, keepdim=True), max=0)
    hi = torch.clamp(x.amax(dim=dims, keepdim=True), min=0)
    s = hi / amax - lo / amax
    s = torch.where(s > 0, s, torch.ones_like(s))
    zp = torch.round(-lo / s)
    return (torch.clamp(torch.round(x / s + zp), 0, amax) - zp) * s


class QLinear(torch.nn.Module):
    def __init__(self, lin, amax, per_row):
        super().__init__()
        self.w, self.b, self.amax, self.per_row = fake_weight(lin.weight.data), lin.bias.data, amax, per_row

    def forward(self, x):
        return torch.nn.functional.linear(fake_activation(x, self.amax, self.per_row), self.w, self.b)


SCHEMES = (("per-row u8 (swapformer SIMD128)", 255, True), ("per-row u7 (swapformer relaxed)", 127, True),
           ("per-tensor u8 (onnxruntime)", 255, False))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--T", type=int, default=128)
    ap.add_argument("--outliers", type=float, default=0)
    a = ap.parse_args()
    for path in a.models:
        cfg, W = ex.read_model(path)
        cfg = ex.resolve(cfg)
        if a.outliers:
            for k in W:
                if k.endswith("norm1.weight") or k.endswith("norm2.weight"):
                    W[k][[7, 100]] *= a.outliers
        ids = torch.randint(1, cfg["vocabSize"], (1, a.T), generator=torch.Generator().manual_seed(7))
        with torch.no_grad():
            y = ex.Encoder(cfg, W, "plain").eval()(ids)[0].double()
        name = os.path.basename(path) + (" (outliers x%g)" % a.outliers if a.outliers else "")
        for label, amax, per_row in SCHEMES:
            m = ex.Encoder(cfg, W, "plain").eval()
            for layer in m.layers:
                for n in ("q", "k", "v", "o", "up", "down"):
                    setattr(layer, n, QLinear(getattr(layer, n), amax, per_row))
            with torch.no_grad():
                q = m(ids)[0].double()
            cos = torch.nn.functional.cosine_similarity(q, y, dim=-1)
            emb = torch.nn.functional.cosine_similarity(q.mean(0), y.mean(0), dim=0)
            print("%s T=%d %s: max|q8-f32|/max|f32| %.2e, relative RMS %.2e, min token cosine %.5f, mean-pooled cosine %.6f"
                  % (name, a.T, label, float((q - y).abs().max() / y.abs().max()), float((q - y).norm() / y.norm()), float(cos.min()), float(emb)))


if __name__ == "__main__":
    main()
