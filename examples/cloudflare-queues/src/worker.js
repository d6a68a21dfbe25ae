// Embeddings through Cloudflare Queues with swapformer.
//
//   POST /jobs {"texts": [...], "id"?}  -> 202 {id, texts, messages}: the texts go to the
//                                          queue, TEXTS_PER_MESSAGE per message
//   GET  /jobs/<id>                     -> {id, total, done}
//   GET  /jobs/<id>/vectors?start=0&limit=100 -> {dim, vectors: [{index, embedding}]}
//   queue(batch)                        -> each message's texts embedded in one call,
//                                          the vectors written to D1 (little-endian float32 BLOBs)
//
// The model is a swapformer file (`swapformer convert <model> out.safetensors --dtype q8`:
// int8 weights, tokenizer and pooling inside) stored in R2, read once per isolate
// and kept for every later batch.
import { configure, loadPretrained, runtimeInfo } from 'swapformer';
import simd from 'swapformer/swapformer.wasm';
import relaxed from 'swapformer/swapformer-relaxed.wasm';

// A Worker compiles no WebAssembly from bytes: the builds come in as compiled modules.
configure({ wasmPaths: { simd, relaxed } });

const MAX_TEXTS = 10_000, MAX_TEXT_BYTES = 4096;
const SCHEMA = [
  'CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, total INTEGER NOT NULL)',
  'CREATE TABLE IF NOT EXISTS vectors (job TEXT NOT NULL, idx INTEGER NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (job, idx))',
];

let model = null; // a promise of the Pretrained: one per isolate
let schema = null;

function getModel(env) {
  model ??= env.MODELS.get(env.MODEL_KEY).then(async (object) => {
    if (!object) throw new Error(`R2 object ${env.MODEL_KEY} not found in the MODELS bucket`);
    return loadPretrained(new Uint8Array(await object.arrayBuffer()));
  });
  model.catch(() => { model = null; }); // a failed load is tried again by the next batch
  return model;
}

function getSchema(env) {
  schema ??= env.DB.batch(SCHEMA.map((sql) => env.DB.prepare(sql)));
  schema.catch(() => { schema = null; });
  return schema;
}

const json = (body, status = 200) => Response.json(body, { status });

/** The texts of a job request, checked: an array of strings within the limits. */
function readTexts(body) {
  const texts = body?.texts;
  if (!Array.isArray(texts) || texts.length === 0 || texts.length > MAX_TEXTS) return `texts must be an array of 1 to ${MAX_TEXTS} strings`;
  const encoder = new TextEncoder();
  const bad = texts.findIndex((t) => typeof t !== 'string' || encoder.encode(t).length > MAX_TEXT_BYTES);
  return bad >= 0 ? `texts[${bad}] must be a string of at most ${MAX_TEXT_BYTES} bytes` : texts;
}

/** Producer: the texts as queue messages, sent 100 at a time (sendBatch's limit). */
async function enqueue(request, env) {
  let body;
  try { body = await request.json(); } catch { return json({ error: 'the body must be JSON' }, 400); }
  const texts = readTexts(body);
  if (typeof texts === 'string') return json({ error: texts }, 422);
  const id = typeof body.id === 'string' && /^[\w-]{1,64}$/.test(body.id) ? body.id : crypto.randomUUID();
  const per = Number(env.TEXTS_PER_MESSAGE) || 25;
  await getSchema(env);
  await env.DB.prepare('INSERT OR REPLACE INTO jobs (id, total) VALUES (?, ?)').bind(id, texts.length).run();
  const messages = [];
  for (let start = 0; start < texts.length; start += per) messages.push({ body: { job: id, start, texts: texts.slice(start, start + per) } });
  for (let i = 0; i < messages.length; i += 100) await env.EMBED_QUEUE.sendBatch(messages.slice(i, i + 100));
  return json({ id, texts: texts.length, messages: messages.length }, 202);
}

/** Consumer: every message's texts embedded (one embed call each), its vectors written in one D1 batch. */
async function consume(batch, env) {
  const [m] = await Promise.all([getModel(env), getSchema(env)]);
  const insert = env.DB.prepare('INSERT OR REPLACE INTO vectors (job, idx, dim, vector) VALUES (?, ?, ?, ?)');
  for (const message of batch.messages) {
    try {
      const { job, start, texts } = message.body;
      const { data, shape: [n, dim] } = m.embed(texts);
      await env.DB.batch(Array.from({ length: n }, (_, k) => insert.bind(job, start + k, dim, data.slice(k * dim, (k + 1) * dim).buffer)));
      message.ack();
    } catch (e) {
      console.error(`swapformer-queues: message ${message.id}: ${e.message}`);
      message.retry();
    }
  }
}

async function route(request, env) {
  const url = new URL(request.url);
  const [, jobs, id, vectors] = url.pathname.split('/');
  if (jobs !== 'jobs') return url.pathname === '/stats' ? json(await stats(env)) : json({ error: 'not found' }, 404);
  if (request.method === 'POST' && !id) return enqueue(request, env);
  if (request.method !== 'GET' || !id) return json({ error: 'not found' }, 404);
  await getSchema(env);
  const job = await env.DB.prepare('SELECT total FROM jobs WHERE id = ?').bind(id).first();
  if (!job) return json({ error: `no job ${id}` }, 404);
  if (!vectors) {
    const { done } = await env.DB.prepare('SELECT COUNT(*) AS done FROM vectors WHERE job = ?').bind(id).first();
    return json({ id, total: job.total, done });
  }
  const start = Math.max(0, Number(url.searchParams.get('start')) || 0);
  const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get('limit')) || 100));
  const { results } = await env.DB.prepare('SELECT idx, dim, vector FROM vectors WHERE job = ? AND idx >= ? ORDER BY idx LIMIT ?').bind(id, start, limit).all();
  return json({ vectors: results.map((r) => ({ index: r.idx, embedding: Array.from(new Float32Array(new Uint8Array(r.vector).buffer)) })) });
}

/** What this isolate holds: the build, the wasm memory, the model's shape. */
async function stats(env) {
  const m = await getModel(env);
  const { build, memoryBytes } = await runtimeInfo();
  return { build, memoryBytes, family: m.family, dModel: m.encoder.config.dModel, dtype: m.encoder.dtype };
}

export default {
  fetch: route,
  queue: consume,
};
