// Shared test helpers.
import { existsSync, readFileSync } from 'node:fs';
import assert from 'node:assert/strict';

export const fixture = (name) => new URL(`./fixtures/${name}`, import.meta.url);
export const golden = JSON.parse(readFileSync(fixture('golden.json'), 'utf8'));
export const readFixture = (file) => new Uint8Array(readFileSync(fixture(file)));

/** max |a - b| / max |b| over all elements (one number for the whole tensor: a
 * small element can be far off and pass; prefer elementError / assertClose). */
export function relMaxError(actual, expected) {
  assert.equal(actual.length, expected.length, 'length');
  let diff = 0,
    scale = 0;
  for (let i = 0; i < expected.length; i++) {
    diff = Math.max(diff, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  return diff / (scale || 1);
}

/**
 * Per-element error against a float64 reference: the largest
 *   |a_i - e_i| / (rms + |e_i|)
 * over all elements, rms = the root mean square of the reference's nonzero
 * elements (padded rows and columns are exact zeros and do not count). Every
 * element then satisfies |a - e| <= tol * rms + tol * |e| when the result is
 * <= tol: an absolute tolerance relative to the tensor's typical size, plus a
 * relative one. NaN or infinity in actual gives Infinity.
 * Returns { error, index, actual, expected, rms }: the worst element.
 */
export function elementError(actual, expected) {
  assert.equal(actual.length, expected.length, 'length');
  let ss = 0,
    n = 0;
  for (let i = 0; i < expected.length; i++)
    if (expected[i] !== 0) {
      ss += expected[i] * expected[i];
      n++;
    }
  const rms = n ? Math.sqrt(ss / n) : 1;
  let error = 0,
    index = -1;
  for (let i = 0; i < expected.length; i++) {
    const r = Math.abs(actual[i] - expected[i]) / (rms + Math.abs(expected[i]));
    if (!(r <= error)) {
      // NaN compares false: it wins, and stays
      error = Number.isNaN(r) ? Infinity : r;
      index = i;
      if (error === Infinity) break;
    }
  }
  return { error, index, actual: actual[index], expected: expected[index], rms };
}

/** The golden fixtures' tolerance on elementError (tests/golden.test.js explains
 * the measured errors it rests on); cases whose raw attention scores pass 100
 * (maxScore) carry a float32 rounding error about 10x larger. */
export const GOLDEN_TOLERANCE = 1e-5;
export const GOLDEN_TOLERANCE_LARGE_SCORES = 8e-5;
export const goldenTolerance = (c) => (c.maxScore > 20 ? GOLDEN_TOLERANCE_LARGE_SCORES : GOLDEN_TOLERANCE);

/** Fails unless elementError(actual, expected).error <= tol; returns that error. */
export function assertClose(actual, expected, tol, what = 'output') {
  const e = elementError(actual, expected);
  if (!(e.error <= tol))
    assert.fail(
      `${what}: per-element error ${e.error.toExponential(2)} > ${tol} at element ${e.index} ` +
        `(got ${e.actual}, expected ${e.expected}, reference rms ${e.rms.toPrecision(3)})`,
    );
  return e.error;
}

export function assertBitIdentical(a, b, what = 'output') {
  assert.equal(a.length, b.length, `${what}: length`);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length),
    ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
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

/** Debian's Chromium (or $SWAPFORMER_CHROMIUM) headless through playwright-core: missing either is a failure, not a skip. */
export async function launchChromium() {
  const executablePath = process.env.SWAPFORMER_CHROMIUM || '/usr/bin/chromium';
  assert.ok(existsSync(executablePath), `Chromium is missing at ${executablePath}: install it with 'apt-get install chromium' (./build.sh test does)`);
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (e) {
    assert.fail(`playwright-core is missing (run 'npm ci'): ${e.message}`);
  }
  const args = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-quic',
    '--no-first-run',
    '--disable-sync',
    '--disable-dev-shm-usage',
  ];
  return chromium.launch({ executablePath, headless: true, args, timeout: 60_000 });
}

/** The forward options of a head fixture case's inputs: token types where the model has them, the head. */
export function headOptions(c, m) {
  const o = m.encoder.config.typeVocabSize > 1 ? { typeIds: c.inputs.map((i) => i.typeIds) } : {};
  if (c.task === 'mlm') o.headPositions = c.inputs.map((i) => i.maskPositions);
  else if (c.task !== 'embedding') o.head = true;
  return o;
}

/** A head fixture's reference logits laid out as forward's result.head: [B, L], [B, T, L] (padded rows 0), [R, V]. */
export function expectedLogits(c, T) {
  if (c.task === 'sequence') return c.logits.flat();
  if (c.task === 'mlm') return c.logits.flat(2);
  const L = c.logits[0][0].length,
    out = new Float64Array(c.inputs.length * T * L);
  c.logits.forEach((seq, b) => seq.forEach((r, t) => out.set(r, (b * T + t) * L)));
  return out;
}
