// Writes the fuzzers' seed corpus: tiny model files of every plugin and
// dtype (through swapformer's own save(), then re-encoded as F16/BF16).
//   node tests/fuzz/make_corpus.mjs
import { writeFileSync, mkdirSync } from 'node:fs';
import { createEncoder } from '../../bindings/index.js';

const dir = new URL('./corpus/model/', import.meta.url);
mkdirSync(dir, { recursive: true });
const base = { vocabSize: 3, dModel: 4, heads: 2, layers: 1, ffDim: 4, maxLen: 4, normPlacement: 'pre', activation: 'swiglu' };
const variants = [
  { position: 'learned', norm: 'layernorm' },
  { position: 'sinusoidal', norm: 'rmsnorm', normPlacement: 'post', activation: 'gelu' },
  { position: 'rope', norm: 'rmsnorm', positionOptions: { style: 'half', base: 100 } },
  { position: 'alibi', norm: 'layernorm', heads: 4, dModel: 4, activation: 'geglu' },
  { position: 'none', norm: 'layernorm', layers: 0, activation: 'relu' },
];

// Re-encode a saved F32 file with 2-byte floats.
function narrow(bytes, dtype) {
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const data = new Float32Array(bytes.buffer.slice(8 + n));
  const out = [],
    u32 = new Uint32Array(1),
    f32 = new Float32Array(u32.buffer);
  let at = 0;
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [b, e] = t.data_offsets,
      count = (e - b) / 4;
    for (let i = 0; i < count; i++) {
      f32[0] = data[b / 4 + i];
      out.push(dtype === 'BF16' ? u32[0] >>> 16 : toHalf(f32[0]));
    }
    t.dtype = dtype;
    t.data_offsets = [at, at + 2 * count];
    at += 2 * count;
  }
  let text = JSON.stringify(header);
  while ((8 + text.length) % 8) text += ' ';
  const file = new Uint8Array(8 + text.length + 2 * out.length);
  new DataView(file.buffer).setBigUint64(0, BigInt(text.length), true);
  file.set(new TextEncoder().encode(text), 8);
  new Uint16Array(file.buffer, 8 + text.length).set(out);
  return file;
}
function toHalf(x) {
  // round to nearest, normal range only (seed weights are small)
  const u = new Uint32Array(new Float32Array([x]).buffer)[0];
  const sign = (u >>> 16) & 0x8000,
    exp = ((u >>> 23) & 0xff) - 127 + 15,
    man = u & 0x7fffff;
  if (exp <= 0) return sign;
  return sign | (exp << 10) | Math.round(man / 8192);
}

for (const [i, v] of variants.entries()) {
  const enc = await createEncoder({ ...base, ...v }, { seed: i });
  const bytes = enc.save();
  writeFileSync(new URL(`${v.position}.safetensors`, dir), bytes);
  if (i === 1) writeFileSync(new URL(`${v.position}_f16.safetensors`, dir), narrow(bytes, 'F16'));
  if (i === 2) writeFileSync(new URL(`${v.position}_bf16.safetensors`, dir), narrow(bytes, 'BF16'));
}
