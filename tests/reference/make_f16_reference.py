#!/usr/bin/python3
"""numpy's float32 -> float16 rounding, as the reference for the converter's F16 writer.

    /usr/bin/python3 tests/reference/make_f16_reference.py

Writes two fixtures (deterministic: a second run gives the same bytes):

* tests/fixtures/f16-rounding.bin: N float32 bit patterns (uint32 little-endian)
  followed by the N float16 bit patterns (uint16 little-endian) numpy's
  astype(np.float16) gives for them (N = file size / 6). The corpus covers every
  rounding case: for a spread of half values h (every exponent, the smallest and
  largest mantissas, odd and even), h itself, the exact tie between h and the
  next half value, and one float32 ulp below and above that tie; every float32
  exponent with the mantissas that sit on the half's rounding bits; the
  subnormal boundaries (2^-25, the tie to the smallest subnormal, 3 x 2^-25,
  the largest subnormal, the normal boundary 2^-14), overflow (65504 the
  largest finite, 65520 the tie that rounds to infinity, the float32 maximum,
  infinities), -0, NaNs (quiet, signalling, with payloads, negative); then
  random bit patterns and random values inside the half range.
* tests/fixtures/f16-bert-minilm.json: for every tensor of
  tests/pretrained/bert-minilm/model.safetensors (all F32), the sha256 of
  numpy's astype(np.float16) bytes (little-endian), for the converter's
  `--dtype f16` output.
"""
import hashlib
import json
import os
import struct

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')


def f32(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def half_to_f32_bits(h):
    return int(np.array([h], dtype='<u2').view('<f2').astype('<f4').view('<u4')[0])


def corpus():
    out = []
    # half values h, the tie to h + 1 and one float32 ulp either side of it
    for exp in range(31):
        for man in (0, 1, 2, 3, 0x155, 0x1ff, 0x200, 0x201, 0x2aa, 0x3fd, 0x3fe, 0x3ff):
            h = (exp << 10) | man
            lo, hi = half_to_f32_bits(h), half_to_f32_bits(h + 1) if h < 0x7bff else f32(65536.0)
            tie = (lo + hi) // 2 if exp else None
            if exp == 0:  # subnormal halves are not evenly spaced in float32 bits: the tie by value
                tie = f32((np.float64(np.array([h], dtype='<u2').view('<f2')[0]) + np.float64(np.array([h + 1], dtype='<u2').view('<f2')[0])) / 2)
            for u in (lo, tie - 1, tie, tie + 1):
                out += [u, u | 0x80000000]
    # every float32 exponent, with the mantissas around the half's rounding bits
    for exp in range(256):
        for man in (0, 1, 0xfff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x400000, 0x7fe000, 0x7fefff, 0x7ff000, 0x7fffff):
            u = (exp << 23) | man
            out += [u, u | 0x80000000]
    # the boundaries by value
    for x in (0.0, 2.0 ** -25, 2.0 ** -24, 1.5 * 2.0 ** -24, 3 * 2.0 ** -25, 2.0 ** -14, 2.0 ** -14 - 2.0 ** -24,
              2.0 ** -14 - 2.0 ** -25, 65504.0, 65519.0, 65520.0, 65536.0, 1e-45, 1.17549435e-38, 3.4028234663852886e38):
        u = f32(x)
        out += [u, u - 1 if u else 0, u + 1, u | 0x80000000]
    out += [0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc01234, 0x7fffe000, 0x7fffffff, 0x7f800001,
            0x7f802000, 0xff801fff, 0x7fa00000, 0x80000000]
    rng = np.random.default_rng(20251201)
    out += [int(u) for u in rng.integers(0, 2 ** 32, size=2048, dtype=np.uint64)]
    exps = rng.integers(100, 146, size=2048)
    mans = rng.integers(0, 2 ** 23, size=2048)
    signs = rng.integers(0, 2, size=2048)
    out += [int((s << 31) | (e << 23) | m) for s, e, m in zip(signs, exps, mans)]
    return [u & 0xffffffff for u in out]


def read_safetensors(path):
    with open(path, 'rb') as f:
        data = f.read()
    (n,) = struct.unpack('<Q', data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    for name, t in header.items():
        if name == '__metadata__':
            continue
        begin, end = t['data_offsets']
        yield name, t, data[base + begin:base + end]


def main():
    bits = np.array(corpus(), dtype='<u4')
    with np.errstate(all='ignore'):
        halves = bits.view('<f4').astype(np.float16).view('<u2')
    with open(os.path.join(ROOT, 'fixtures', 'f16-rounding.bin'), 'wb') as f:
        f.write(bits.tobytes())
        f.write(halves.astype('<u2').tobytes())
    print(f'f16-rounding.bin: {len(bits)} values')

    tensors = {}
    for name, t, raw in read_safetensors(os.path.join(ROOT, 'pretrained', 'bert-minilm', 'model.safetensors')):
        assert t['dtype'] == 'F32', name
        half = np.frombuffer(raw, dtype='<f4').astype('<f2').tobytes()
        tensors[name] = {'shape': t['shape'], 'sha256': hashlib.sha256(half).hexdigest()}
    doc = {'generator': 'tests/reference/make_f16_reference.py', 'numpy': np.__version__,
           'source': 'tests/pretrained/bert-minilm/model.safetensors', 'tensors': tensors}
    with open(os.path.join(ROOT, 'fixtures', 'f16-bert-minilm.json'), 'w') as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write('\n')
    print(f'f16-bert-minilm.json: {len(tensors)} tensors')


if __name__ == '__main__':
    main()
