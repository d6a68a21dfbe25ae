// Shared test helpers.
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';

export const fixture = (name) => new URL(`./fixtures/${name}`, import.meta.url);
export const golden = JSON.parse(readFileSync(fixture('golden.json'), 'utf8'));
export const readFixture = (file) => new Uint8Array(readFileSync(fixture(file)));

/** max |a - b| / max |b| over all elements. */
export function relMaxError(actual, expected) {
  assert.equal(actual.length, expected.length, 'length');
  let diff = 0, scale = 0;
  for (let i = 0; i < expected.length; i++) {
    diff = Math.max(diff, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  return diff / (scale || 1);
}

export function assertBitIdentical(a, b, what = 'output') {
  assert.equal(a.length, b.length, `${what}: length`);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length), ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) assert.fail(`${what}: element ${i} differs (${a[i]} vs ${b[i]})`);
}

/** Row t of sequence b of a [B, T, C] result. */
export const row = (out, b, t) => {
  const [, T, C] = out.shape;
  return out.data.subarray((b * T + t) * C, (b * T + t + 1) * C);
};

export const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);

export async function rejects(promiseOrFn, code, fieldRe) {
  let err;
  try {
    const r = typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn;
    if (r && typeof r.then === 'function') await r;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected a ${code} error, nothing was thrown`);
  assert.equal(err.name, 'SwapformerError', `expected SwapformerError, got ${err.name}: ${err.message}`);
  assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
  if (fieldRe) assert.match(err.message, fieldRe);
  return err;
}
