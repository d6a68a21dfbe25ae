// The lifecycle of async calls on a threaded runtime: dispose() while a pass
// runs in the pool's driver, concurrent async calls (a FIFO queue, each with
// the bits it has alone), the pool's threads used only as far as an encoder
// asks, work really spread over the workers, and every size-thresholded
// parallel path (matrix products, attention, activations, int8 quantization)
// on both sides of its threshold at 1, 2 and 3 threads. Runs that could hang
// run in a child process with a timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createEncoder, runtimeInfo, loadPretrained } from '../bindings/index.js';
import { assertBitIdentical } from './helpers.js';
import { NODE_FLAGS } from '../tools/node-flags.js';

const BINDINGS = fileURLToPath(new URL('../bindings/index.js', import.meta.url));
const MINILM = fileURLToPath(new URL('./pretrained/bert-minilm/', import.meta.url));

/** Runs an ES module in a fresh Node with a timeout; returns its parsed last stdout line. */
function child(script, timeout = 60000) {
  const r = spawnSync(process.execPath, [...NODE_FLAGS, '--input-type=module', '-e', script], { encoding: 'utf8', timeout });
  assert.equal(r.signal, null, `the child hung (killed after ${timeout} ms): ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

const CFG = { vocabSize: 1000, dModel: 128, heads: 4, layers: 3, ffDim: 256, position: 'rope', norm: 'rmsnorm', normPlacement: 'pre', activation: 'swiglu' };

test('dispose() while forwardAsync runs: the promise settles with DISPOSED, memory is freed after the pass, the runtime stays usable', () => {
  const out = child(`
    import { createEncoder, loadPretrained } from ${JSON.stringify(BINDINGS)};
    const cfg = ${JSON.stringify(CFG)};
    const ids = Array.from({ length: 4 }, (_, b) => Array.from({ length: 200 }, (_, i) => (i * 7 + b) % 1000));
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const codes = [];
    for (let round = 0; round < 6; round++) {
      const e = await createEncoder(cfg, { seed: round, threads: 2 });
      const p = e.forwardAsync(ids);
      await sleep(round % 3); // disposed before, at and during the pass
      e.dispose();
      codes.push(await p.then(() => 'resolved', (err) => err.code));
      // queued calls of a disposed encoder reject too, and do not block the queue
      codes.push(await e.forwardAsync(ids).then(() => 'resolved', (err) => err.code));
    }
    // later allocations and passes on the same runtime are sound
    const m = await loadPretrained(${JSON.stringify(MINILM)}, { threads: 2 });
    const a = m.embed(['after the disposals']).data;
    const b = (await m.embedAsync(['after the disposals'])).data;
    const e2 = await createEncoder(cfg, { seed: 9, threads: 2 });
    const sync = e2.forward(ids).data, asyn = (await e2.forwardAsync(ids)).data;
    console.log(JSON.stringify({ codes, same: a.every((x, i) => x === b[i]) && sync.every((x, i) => x === asyn[i]) }));
    m.dispose(); e2.dispose();
  `);
  assert.deepEqual(out.codes, Array(12).fill('DISPOSED'));
  assert.equal(out.same, true);
});

test('concurrent async calls wait their turn (FIFO), none is refused, each gives the bits it gives alone', async () => {
  const m = await loadPretrained(MINILM, { threads: 2 });
  const texts = (k) => Array.from({ length: 10 + k * 7 }, (_, i) => `text ${i} of call ${k}, ${'word '.repeat(i % 9)}`);
  const alone = Array.from({ length: 8 }, (_, k) => m.embed(texts(k)).data);
  const order = [];
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, k) =>
      m.embedAsync(texts(k)).then((r) => {
        order.push(k);
        return r.data;
      }),
    ),
  );
  results.forEach((r, k) => assertBitIdentical(r, alone[k], `embedAsync call ${k}`));
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7], 'the calls finish in the order they were made');
  // forwardAsync of several encoders of one runtime, interleaved with creating one
  const a = await createEncoder(CFG, { seed: 1, threads: 2 }),
    b = await createEncoder(CFG, { seed: 2, threads: 2 });
  const ids = [Array.from({ length: 150 }, (_, i) => (i * 11) % 1000)];
  const wantA = a.forward(ids).data,
    wantB = b.forward(ids).data;
  const [ra, rb, c, ra2] = await Promise.all([a.forwardAsync(ids), b.forwardAsync(ids), createEncoder(CFG, { seed: 3, threads: 2 }), a.forwardAsync(ids)]);
  assertBitIdentical(ra.data, wantA, 'a');
  assertBitIdentical(rb.data, wantB, 'b');
  assertBitIdentical(ra2.data, wantA, 'a again');
  assert.deepEqual(c.forward(ids).shape, [1, 150, 128]);
  // async calls while another encoder's pass of the same runtime runs wait too (embedAsync read the
  // model's length limit, withConfig the source's weights, before queueing: BUSY)
  const long = Array.from({ length: 4 }, (_, s) => Array.from({ length: 500 }, (_, i) => (i * 13 + s) % 1000));
  const busy = () => {
    try {
      b.weightShapes(); // a sync call: BUSY while a pass runs in the driver
      return false;
    } catch (e) {
      if (e.code !== 'BUSY') throw e;
      return true;
    }
  };
  let seen = 0;
  for (let tries = 0; tries < 5 && !seen; tries++) {
    const pass = a.forwardAsync(long);
    for (let i = 0; i < 1000 && !busy(); i++) await new Promise((r) => setImmediate(r));
    if (!busy()) {
      await pass;
      continue; // the pass ended before it was seen: again
    }
    seen++;
    const limit = m.maxLength; // a read, not a pass: no BUSY
    const [emb, swapped, swappedModel] = await Promise.all([
      m.embedAsync(texts(0)),
      b.withConfig({ position: 'alibi', positionOptions: {} }), // reads b's weights in its turn
      m.withConfig({ position: 'alibi', positionOptions: {} }),
      pass,
    ]);
    assertBitIdentical(emb.data, alone[0], "embedAsync behind another encoder's pass");
    assert.equal(limit, m.maxLength);
    assert.equal(swapped.config.position, 'alibi');
    assert.equal(swappedModel.encoder.config.position, 'alibi');
    swapped.dispose();
    swappedModel.dispose();
    // a source disposed while its withConfig waits for its turn: DISPOSED, nothing read from freed memory
    const d = await createEncoder(CFG, { seed: 4, threads: 2 });
    const next = a.forwardAsync(long);
    const waiting = d.withConfig({ position: 'alibi', positionOptions: {} });
    d.dispose();
    await assert.rejects(waiting, { code: 'DISPOSED' });
    await next;
  }
  assert.equal(seen, 1, 'a pass was seen running');
  for (const e of [a, b, c]) e.dispose();
  m.dispose();
});

test("a region uses only its encoder's threads: a 16-thread encoder (disposed or alive) leaves a 2-thread one's regions to 2 threads", () => {
  const out = child(`
    import { createEncoder, runtimeInfo } from ${JSON.stringify(BINDINGS)};
    const cfg = ${JSON.stringify(CFG)};
    const ids = [Array.from({ length: 256 }, (_, i) => (i * 7) % 1000)];
    const big = await createEncoder(cfg, { seed: 1, threads: 16 });
    // on two cores, fourteen of sixteen threads wake late: the first passes may end before any
    // of them claims a task, so pass until one has (or twenty passes)
    let before;
    for (let i = 0; i < 20; i++) {
      big.forward(ids);
      before = (await runtimeInfo({ threads: 16 })).poolTasks;
      if (before.slice(2).some((n) => n > 0)) break;
    }
    const two = await createEncoder(cfg, { seed: 1, threads: 2 });
    const time = () => { const t = performance.now(); two.forward(ids); return performance.now() - t; };
    for (let i = 0; i < 3; i++) time();
    const alive = Math.min(...Array.from({ length: 5 }, time));
    big.dispose();
    const disposed = Math.min(...Array.from({ length: 5 }, time));
    const after = (await runtimeInfo({ threads: 2 })).poolTasks;
    console.log(JSON.stringify({ before, after, alive, disposed }));
    two.dispose();
  `);
  console.log(JSON.stringify(out));
  assert.equal(out.before.length, 16, 'the pool has 16 threads');
  assert.ok(
    out.before.slice(2).some((n) => n > 0),
    'the 16-thread encoder spread its work over the workers',
  );
  assert.ok(out.after[1] > out.before[1], "worker 1 ran the 2-thread encoder's tasks");
  assert.deepEqual(out.after.slice(2), out.before.slice(2), 'workers 2..15 ran no task of the 2-thread encoder');
});

test("threads: 2 really runs on two threads (runtimeInfo reports the pool's size; the worker ran tasks)", async () => {
  const info0 = await runtimeInfo({ threads: 2 });
  assert.equal(info0.threads, 2);
  assert.ok(info0.poolTasks.length >= 2);
  const e = await createEncoder(CFG, { seed: 4, threads: 2 });
  e.forward([Array.from({ length: 128 }, (_, i) => i)]);
  const info = await runtimeInfo({ threads: 2 });
  assert.ok(info.poolTasks[1] > info0.poolTasks[1], `worker 1 ran tasks (${info0.poolTasks} -> ${info.poolTasks})`);
  e.dispose();
});

// Each parallel path switches on at a size (core/encoder.c): matrix products and
// attention at 65,536 multiply-adds, the int8 quantizer at 65,536 values, the
// activations at 4,096 values. The rows of a chunk (at most 64) times the
// width decide them, so a model whose widths sit at the thresholds, run on
// sequences just below, at and above them, crosses every one.
test('every size-thresholded parallel path, on both sides of its threshold, f32 and q8: 1, 2 and 3 threads give the same bits, and the parallel side ran on the workers', async () => {
  // ffDim 1024: the down projection's input is 1024 wide, so 64 rows quantize
  // on threads (65,536 values) and 63 do not; up: 64 x 64 x 1024 products.
  const cfg = { vocabSize: 300, dModel: 64, heads: 4, layers: 2, ffDim: 1024, position: 'alibi', norm: 'layernorm', normPlacement: 'pre', activation: 'gelu' };
  const seqs = [1, 15, 16, 63, 64, 65, 127, 128, 200].map((n) => Array.from({ length: n }, (_, i) => (i * 13 + n) % 300));
  for (const dtype of ['f32', 'q8']) {
    const ref = await createEncoder(cfg, { seed: 11, threads: 1, dtype });
    const want = seqs.map((s) => ref.forward(s, { outputHiddenStates: true }));
    ref.dispose();
    for (const threads of [2, 3]) {
      const e = await createEncoder(cfg, { seed: 11, threads, dtype });
      for (const [k, s] of seqs.entries()) {
        // with more threads than cores a worker can wake after the main thread has claimed a
        // pass's last task: up to ten passes for each worker to have run one of them
        const workers = Array(threads - 1).fill(0);
        for (let pass = 0; pass < 10; pass++) {
          const before = (await runtimeInfo({ threads })).poolTasks;
          const got = e.forward(s, { outputHiddenStates: true });
          const after = (await runtimeInfo({ threads })).poolTasks;
          assertBitIdentical(got.data, want[k].data, `${dtype}, ${threads} threads, ${s.length} tokens`);
          got.hiddenStates.forEach((h, l) =>
            assertBitIdentical(h.data, want[k].hiddenStates[l].data, `${dtype}, ${threads} threads, ${s.length} tokens, hidden ${l}`),
          );
          after.slice(1, threads).forEach((n, i) => {
            workers[i] += n - before[i + 1];
          });
          if (s.length < 64 || workers.every((n) => n > 0)) break;
        }
        if (s.length >= 64)
          assert.ok(
            workers.every((n) => n > 0),
            `${dtype}, ${s.length} tokens: every worker ran tasks (${workers})`,
          );
      }
      e.dispose();
    }
  }
  // and the batched form, several sequences packed into chunks that straddle sequence ends
  const e1 = await createEncoder(cfg, { seed: 12, threads: 1, dtype: 'q8' }),
    e3 = await createEncoder(cfg, { seed: 12, threads: 3, dtype: 'q8' });
  assertBitIdentical(e3.forward(seqs).data, e1.forward(seqs).data, 'a batch of every length, q8, 3 threads');
  e1.dispose();
  e3.dispose();
});

test('stress: random interleavings of forwardAsync, embedAsync, forward, dispose and loading across encoders of 1, 2 and 3 threads: no trap, no hang, the bits of sequential runs', () => {
  const out = child(
    `
    import { createEncoder, loadPretrained } from ${JSON.stringify(BINDINGS)};
    let seed = 12345;
    const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
    const cfgs = [
      { vocabSize: 200, dModel: 32, heads: 2, layers: 2, ffDim: 64, position: 'rope', norm: 'rmsnorm', normPlacement: 'pre', activation: 'swiglu' },
      { vocabSize: 200, dModel: 48, heads: 3, layers: 1, ffDim: 96, position: 'alibi', norm: 'layernorm', normPlacement: 'post', activation: 'gelu' },
    ];
    const idsOf = (k) => Array.from({ length: 1 + (k % 3) }, (_, b) => Array.from({ length: 1 + ((k * 37 + b * 11) % 90) }, (_, i) => (i * 7 + k) % 200));
    // references, one thread, sequentially
    const refs = new Map();
    const want = async (c, s, k) => {
      const key = c + ':' + s + ':' + k;
      if (!refs.has(key)) { const e = await createEncoder(cfgs[c], { seed: s, threads: 1 }); refs.set(key, e.forward(idsOf(k)).data); e.dispose(); }
      return refs.get(key);
    };
    const model = await loadPretrained(${JSON.stringify(MINILM)}, { threads: 2 });
    const textsOf = (k) => Array.from({ length: 1 + (k % 40) }, (_, i) => 'text ' + i + ' ' + 'x'.repeat(k % 13));
    // the references before the loop: a sync embed while an embedAsync runs is BUSY by design
    const embedRef = new Map(Array.from({ length: 60 }, (_, k) => [k, model.embed(textsOf(k)).data]));
    const live = [];
    let ops = 0, mismatches = 0, disposedRejections = 0, busy = 0, unexpected = [];
    const pending = [];
    for (let step = 0; step < 1500; step++) {
      const op = rand(10);
      try {
        if (op <= 1 || live.length === 0) { // create
          const c = rand(2), s = rand(3), threads = 1 + rand(3);
          pending.push(createEncoder(cfgs[c], { seed: s, threads }).then((e) => live.push({ e, c, s })));
        } else if (op <= 5) { // forwardAsync, checked later
          const { e, c, s } = live[rand(live.length)], k = rand(50);
          pending.push(e.forwardAsync(idsOf(k)).then(async (r) => { const w = await want(c, s, k); if (!r.data.every((x, i) => x === w[i])) mismatches++; },
            (err) => { if (err.code === 'DISPOSED') disposedRejections++; else unexpected.push(err.code + ' ' + err.message); }));
        } else if (op === 6) { // a sync forward: its result, or BUSY while a pass runs
          const { e, c, s } = live[rand(live.length)], k = rand(50);
          try { const r = e.forward(idsOf(k)); pending.push(want(c, s, k).then((w) => { if (!r.data.every((x, i) => x === w[i])) mismatches++; })); }
          catch (err) { if (err.code === 'BUSY') busy++; else if (err.code !== 'DISPOSED') unexpected.push(err.code + ' ' + err.message); }
        } else if (op === 7) { // embedAsync on the pretrained model
          const k = rand(60), w = embedRef.get(k);
          pending.push(model.embedAsync(textsOf(k)).then((r) => { if (!r.data.every((x, i) => x === w[i])) mismatches++; }, (err) => unexpected.push(err.code + ' ' + err.message)));
        } else { // dispose one, maybe while its pass runs
          const i = rand(live.length);
          if (rand(2) === 0) // a pass asked for just before: queued or running, it settles with DISPOSED
            pending.push(live[i].e.forwardAsync(idsOf(rand(50))).then(() => unexpected.push('a pass of a disposed encoder resolved'),
              (err) => { if (err.code === 'DISPOSED') disposedRejections++; else unexpected.push(err.code + ' ' + err.message); }));
          live[i].e.dispose();
          live.splice(i, 1);
        }
        ops++;
      } catch (err) { unexpected.push(String(err.code ?? err)); }
      if (rand(4) === 0) await new Promise((r) => setTimeout(r, rand(3)));
    }
    await Promise.all(pending);
    for (const { e } of live) e.dispose();
    model.dispose();
    console.log(JSON.stringify({ ops, mismatches, disposedRejections, busy, unexpected: unexpected.slice(0, 5) }));
  `,
    240000,
  );
  console.log(JSON.stringify(out));
  assert.equal(out.ops, 1500);
  assert.deepEqual(out.unexpected, []);
  assert.equal(out.mismatches, 0);
  assert.ok(out.disposedRejections > 0, `some passes were disposed under (${out.disposedRejections})`);
});
