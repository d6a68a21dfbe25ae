// One request's way through the server, as TEI's handlers take it
// (router/src/http/server.rs): the input count checked against
// --max-client-batch-size (422), one permit per input from
// --max-concurrent-requests (429 at once when there are not enough, TEI's
// try_acquire_permit), every input measured in tokens (422 when too long and
// not truncated), then all of them queued for the batcher and awaited
// together; a failing input fails its request (TEI's join_all + collect).
// Measuring is tokenizing, which takes a while for long texts (a 2 MB body,
// about a second): it goes in slices, the event loop served between them.
import { batchSize, overloaded } from './errors.js';
import { CLIENT_GONE } from './body.js';

/** The longest a request works before it lets the event loop serve others (ms). */
const SLICE_MS = 10;

/**
 * A request's slicer: call it between two pieces of work; once the work since
 * the last turn has taken SLICE_MS it waits a turn of the event loop, then
 * throws CLIENT_GONE if the client has left meanwhile.
 */
export function slicer(call) {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    if (call.gone()) throw CLIENT_GONE;
    since = performance.now();
  };
}

/** The permits of --max-concurrent-requests: one per input in flight. */
export class Permits {
  inUse = 0;

  constructor(max) {
    this.max = max;
  }

  /** n permits, or 429; returns their release (idempotent). */
  acquire(n, metrics) {
    if (this.inUse + n > this.max) {
      metrics.count('te_request_failure', { err: 'overloaded' });
      throw overloaded();
    }
    this.inUse += n;
    let held = true;
    return () => {
      if (held) this.inUse -= n;
      held = false;
    };
  }
}

/** 422 past --max-client-batch-size (TEI: err="batch_size"). */
export function checkBatchSize(svc, n, param) {
  if (n > svc.options.maxClientBatchSize) {
    svc.metrics.count('te_request_failure', { err: 'batch_size' });
    throw batchSize(n, svc.options.maxClientBatchSize, param);
  }
}

const chars = (s) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/**
 * Runs inputs ([{text, pair?}]) of one kind: key (the batch key, engine.js),
 * measure(input) -> its tokens, truncate, task ('embed' | 'predict', for the
 * te_embed_* / te_predict_* counters). Returns {results, meta} (meta: the
 * characters, tokens and times TEI reports in its x-* headers and metrics).
 */
export async function infer(svc, call, { key, inputs, measure, truncate, task }) {
  const { engine, batcher, metrics } = svc;
  const release = svc.permits.acquire(inputs.length, metrics);
  try {
    let tokenization = 0,
      tokens = 0,
      characters = 0;
    const lengths = [],
      slice = slicer(call);
    for (const input of inputs) {
      await slice();
      const t0 = performance.now();
      let n;
      try {
        n = engine.fit(measure(input), truncate);
      } catch (e) {
        metrics.count('te_request_failure', { err: 'validation' });
        throw e;
      }
      tokenization += (performance.now() - t0) / 1000;
      metrics.observe('te_request_input_length', n);
      tokens += n;
      characters += chars(input.text) + (input.pair === undefined ? 0 : chars(input.pair));
      lengths.push(n);
    }
    metrics.count(`te_${task}_count`, {}, inputs.length);
    const settled = await Promise.allSettled(inputs.map((input, i) => batcher.submit(key, lengths[i], input, call.gone)));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) {
      if (typeof failed.reason !== 'symbol') metrics.count('te_request_failure', { err: 'inference' });
      throw failed.reason;
    }
    const done = settled.map((s) => s.value);
    metrics.count(`te_${task}_success`, {}, inputs.length);
    const n = inputs.length;
    const meta = {
      characters,
      tokens,
      start: call.start,
      tokenization: tokenization / n,
      queue: done.reduce((s, d) => s + d.queue, 0) / n,
      inference: done.reduce((s, d) => s + d.inference, 0) / n,
    };
    return { results: done.map((d) => d.result), meta };
  } finally {
    release();
  }
}

/** TEI's ResponseMetadata: the x-* headers (ms) and the request histograms (s). */
export function record(svc, meta) {
  const total = (performance.now() - meta.start) / 1000;
  const { metrics } = svc;
  metrics.observe('te_request_duration', total);
  metrics.observe('te_request_tokenization_duration', meta.tokenization);
  metrics.observe('te_request_queue_duration', meta.queue);
  metrics.observe('te_request_inference_duration', meta.inference);
  const ms = (s) => String(Math.round(s * 1000));
  return {
    'x-compute-type': 'cpu+wasm',
    'x-compute-time': ms(total),
    'x-compute-characters': String(meta.characters),
    'x-compute-tokens': String(meta.tokens),
    'x-total-time': ms(total),
    'x-tokenization-time': ms(meta.tokenization),
    'x-queue-time': ms(meta.queue),
    'x-inference-time': ms(meta.inference),
  };
}
