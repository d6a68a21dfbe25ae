// The shipped trained models (models/): swapformer's logits equal PyTorch's
// (models/golden.json, written by tools/train.py in float64), and the
// evidence the accuracy table shows holds when measured afresh here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createEncoder, loadModel } from '../bindings/index.js';
import { assertClose } from './helpers.js';
import { evaluate } from '../tools/evaluate.mjs';
import { encode, decode, target, TASKS } from '../models/tasks.js';

const models = new URL('../models/', import.meta.url);
const index = JSON.parse(readFileSync(new URL('index.json', models), 'utf8'));
const golden = JSON.parse(readFileSync(new URL('golden.json', models), 'utf8'));
// Per element (helpers.js elementError): |a - e| <= TOLERANCE * (rms(e) + |e|).
// Measured on every case, both builds: worst 6.8e-5 (reverse-rope at T = 64: a
// trained model's sharp attention has large scores), 1e-5 to 3e-5 for the other
// rope and alibi cases, under 1e-5 for the rest. models/golden.json's own
// "tolerance" (1e-4) is for the whole-tensor relative max error it was written with.
const TOLERANCE = 2e-4;

test('every task x position plugin is shipped, with both norm placements', () => {
  for (const task of TASKS)
    for (const position of ['sinusoidal', 'learned', 'rope', 'alibi', 'none'])
      assert.ok(index.models.some((m) => m.task === task && m.position === position), `${task}-${position}`);
  assert.ok(index.models.some((m) => m.config.norm === 'rmsnorm' && m.config.normPlacement === 'pre'));
  assert.ok(index.models.some((m) => m.config.norm === 'layernorm' && m.config.normPlacement === 'post'));
  assert.ok(index.models.every((m) => m.config.outputHead));
});

for (const m of golden.models) {
  test(`golden logits: ${m.file} (PyTorch float64, ${m.cases.length} inputs)`, async () => {
    const base = await loadModel(readFileSync(new URL(m.file, models)));
    for (const c of m.cases) { // a case with positionOptions runs the same weights with them (RoPE scaling)
      const enc = c.positionOptions
        ? await createEncoder({ ...base.config, positionOptions: c.positionOptions }, { weights: base.getWeights() })
        : base;
      const out = enc.forward(c.ids);
      assert.deepEqual(out.logits.shape, c.shape);
      assertClose(out.logits.data, c.logits, TOLERANCE, `${c.text} ${JSON.stringify(c.positionOptions ?? {})}: logits`);
      if (enc !== base) enc.dispose();
    }
    base.dispose();
  });
}

test('tasks: encode, decode and targets', () => {
  const symbols = index.symbols.tokens, ids = encode('dbca', symbols);
  assert.equal(decode(ids, index.vocab), '^dbca$');
  assert.equal(decode(target('reverse', ids), index.vocab), '^acbd$');
  assert.equal(decode(target('sort', ids), index.vocab), '^abcd$');
  assert.equal(decode(target('shift', ids), index.vocab), '^^dbc$');
  assert.throws(() => encode('dbz', symbols), /'z'/);
});

test('the evidence, measured afresh through swapformer (64 inputs per cell)', async () => {
  const { trainT, rows } = await evaluate({ count: 64 });
  for (const r of rows) {
    const at1x = r.accuracy[trainT].token;
    if (r.position === 'none') {
      assert.ok(at1x < 0.5, `${r.name}: an order-blind model cannot do ${r.task} (${at1x})`);
      continue;
    }
    assert.ok(at1x >= 0.95, `${r.name}: ${at1x} at the training length`);
    assert.ok(r.ablatedToNone.token < 0.5, `${r.name}: ablating positions must collapse ${r.task} (${r.ablatedToNone.token})`);
    if (r.position === 'learned') {
      for (const T of [2 * trainT, 4 * trainT]) assert.equal(r.accuracy[T].refused, 'SEQUENCE_TOO_LONG', `${r.name} at ${T}`);
    } else {
      for (const T of [2 * trainT, 4 * trainT]) assert.ok(Number.isFinite(r.accuracy[T].token), `${r.name} runs at ${T}`);
    }
  }
  const shiftRope = rows.find((r) => r.name === 'shift-rope');
  assert.ok(shiftRope.accuracy[4 * trainT].token >= 0.95, 'RoPE extrapolates the purely relative task');
  assert.ok(shiftRope.ropeScaling.ntk[2 * trainT].token > shiftRope.ropeScaling.linear[2 * trainT].token,
    'NTK-aware scaling keeps the local resolution that position interpolation squeezes');
});
