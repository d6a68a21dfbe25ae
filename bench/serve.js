// Load figures for `swapformer serve` (README "Server"): autocannon against a
// server in a child process, batched (the defaults) and unbatched
// (--max-batch-requests 1), on the tiny test fixture and on a MiniLM-L6-shaped
// model (6 layers, dModel 384, 12 heads, ffDim 1536, random weights, the
// fixture's tokenizer), one text per request.
//
//   node bench/serve.js [--requests 2000] [--connections 64] [--threads N] [--backends native,wasm]
//          [--json]
//
// --backends: the servers' backends (SWAPFORMER_BACKEND in the server's environment), each
// model and batching with each, side by side (default: the default backend alone); --json: one
// JSON line of the rows at the end.
//
// Prints a Markdown table: requests/s (= texts/s), latency p50 / p99 (ms), the
// batches the server ran and their mean size (its te_batch_next_size metric).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { NODE_FLAGS } from '../tools/node-flags.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = path.join(REPO, 'tests', 'pretrained', 'bert-minilm');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const REQUESTS = Number(arg('--requests', 2000)),
  CONNECTIONS = Number(arg('--connections', 64)),
  THREADS = arg('--threads', undefined),
  BACKENDS = arg('--backends', '').split(',').filter(Boolean),
  JSON_OUT = process.argv.includes('--json');

/** The fixture's folder with its config scaled to MiniLM-L6's shape and random weights of that shape (safetensors written here). */
function miniLmShaped(dir) {
  cpSync(FIXTURE, dir, { recursive: true });
  const config = JSON.parse(readFileSync(path.join(FIXTURE, 'config.json'), 'utf8'));
  Object.assign(config, { hidden_size: 384, intermediate_size: 1536, num_attention_heads: 12, num_hidden_layers: 6, max_position_embeddings: 512 });
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  const src = readFileSync(path.join(FIXTURE, 'model.safetensors'));
  const header = JSON.parse(src.subarray(8, 8 + Number(src.readBigUInt64LE(0))).toString());
  const scale = { 32: 384, 64: 1536, 128: 512 };
  const tensors = [];
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const layer = name.match(/^encoder\.layer\.(\d+)\./);
    const copies = layer ? (Number(layer[1]) === 0 ? 6 : 0) : 1; // layer 0's tensors as the template of all six
    for (let l = 0; l < copies; l++) {
      const shape = info.shape.map((d, i) =>
        name.startsWith('embeddings.word') && i === 0 ? d : name.includes('token_type') && i === 0 ? d : (scale[d] ?? d),
      );
      tensors.push({ name: layer ? name.replace(/^encoder\.layer\.0\./, `encoder.layer.${l}.`) : name, shape, norm: name.includes('LayerNorm') });
    }
  }
  let seed = 1,
    offset = 0;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.08;
  const out = {},
    blobs = [];
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1),
      data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = t.norm && t.name.endsWith('weight') ? 1 : random();
    out[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + n * 4] };
    offset += n * 4;
    blobs.push(Buffer.from(data.buffer));
  }
  const head = Buffer.from(JSON.stringify(out));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(head.length));
  writeFileSync(path.join(dir, 'model.safetensors'), Buffer.concat([len, head, ...blobs]));
  return dir;
}

async function server(model, flags, backend) {
  const args = [...NODE_FLAGS, path.join(REPO, 'bin', 'serve.js'), model, '--port', '0', ...(THREADS ? ['--threads', THREADS] : []), ...flags];
  const env = backend ? { ...process.env, SWAPFORMER_BACKEND: backend } : process.env;
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
  let log = '';
  child.stdout.on('data', (d) => {
    log += d;
  });
  for (let i = 0; i < 600 && !/listening on/.test(log); i++) await new Promise((r) => setTimeout(r, 50));
  const url = log.match(/listening on (\S+)/)?.[1];
  if (!url) throw new Error(`the server did not start:\n${log}`);
  return {
    url,
    stop: () =>
      new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGTERM');
      }),
  };
}

const WORDS = 'the quick brown fox jumps over a lazy dog while servers batch many small requests into one pass'.split(' ');
const texts = Array.from({ length: 64 }, (_, i) => Array.from({ length: 4 + ((i * 5) % 29) }, (_, k) => WORDS[(i + k * 3) % WORDS.length]).join(' '));

async function run(model, name, flags, amount, backend) {
  const s = await server(model, flags, backend);
  const requests = texts.map((t) => ({ method: 'POST', body: JSON.stringify({ inputs: t }) }));
  await autocannon({ url: `${s.url}/embed`, method: 'POST', headers: { 'content-type': 'application/json' }, connections: 8, amount: 200, requests }); // warm-up
  const before = await (await fetch(`${s.url}/metrics`)).text();
  const r = await autocannon({
    url: `${s.url}/embed`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    connections: CONNECTIONS,
    amount,
    requests,
    timeout: 120,
  });
  const after = await (await fetch(`${s.url}/metrics`)).text();
  await s.stop();
  const batches = (m) => Number(m.match(/^te_batch_next_size_count (\S+)$/m)[1]);
  const n = batches(after) - batches(before);
  return {
    name,
    backend: backend || 'default',
    amount,
    rps: amount / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.non2xx + r.timeouts,
    batches: n,
    mean: amount / n,
  };
}

const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-bench-serve-'));
try {
  // the MiniLM shape computes about 70 ms per text here: fewer requests keep its runs near a minute
  const models = [
    ['fixture (2 layers, dModel 32)', FIXTURE, REQUESTS],
    ['MiniLM-L6 shape (6 layers, dModel 384)', miniLmShaped(path.join(dir, 'minilm')), Math.ceil(REQUESTS / 4)],
  ];
  console.log(
    `${CONNECTIONS} connections, one text each (5-32 words, 10-96 tokens, mean 51); ${cpus().length} cores shared by the server and autocannon; threads ${THREADS ?? 'default'}\n`,
  );
  console.log('| model | backend | server | requests | requests/s (= texts/s) | p50 ms | p99 ms | errors | batches | inputs per batch |');
  console.log('|:--|:--|:--|--:|--:|--:|--:|--:|--:|--:|');
  const rows = [];
  for (const [label, model, amount] of models) {
    for (const [name, flags] of [
      ['batched', []],
      ['unbatched (--max-batch-requests 1)', ['--max-batch-requests', '1']],
    ]) {
      for (const backend of BACKENDS.length ? BACKENDS : ['']) {
        const r = await run(model, name, flags, amount, backend);
        rows.push({ model: label, ...r });
        console.log(
          `| ${label} | ${r.backend} | ${r.name} | ${r.amount} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.batches} | ${r.mean.toFixed(1)} |`,
        );
      }
    }
  }
  if (JSON_OUT) console.log(JSON.stringify(rows));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
