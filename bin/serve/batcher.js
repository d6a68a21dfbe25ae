// Dynamic batching, as TEI's queue (core/src/queue.rs): one entry per input,
// first in first out; while a batch runs, the inputs of every request that
// arrives wait, and the next batch takes them from the front of the queue
// while the padded tokens (longest input x inputs) stay within
// --max-batch-tokens and the inputs within --max-batch-requests. One batch
// runs at a time (the model's async calls run one after the other anyway).
//
// Unlike TEI, whose backend takes any mix, a batch is one library call, so
// its inputs share a key (the call and its options: normalize, dimensions,
// prompt...); an entry of another key keeps its place for a later batch, and
// the front entry always goes first (nothing starves). Entries whose client
// has gone are dropped when reached (te_request_failure{err="dropped"}) and
// rejected with DROPPED, so that every submitted promise settles.
// A batch that fails is run again input by input, so that an error stays
// with the input that caused it.

/** The rejection of an input whose client left before its batch. */
export const DROPPED = Symbol('dropped');

export class Batcher {
  #queue = [];
  #running = false;
  #scheduled = false;

  /**
   * run(key, items) -> one result per item (engine.js); metrics: metrics.js;
   * maxBatchTokens, maxBatchRequests (Infinity for none).
   */
  constructor({ run, metrics, maxBatchTokens, maxBatchRequests }) {
    this.runBatch = run;
    this.metrics = metrics;
    this.maxBatchTokens = maxBatchTokens;
    this.maxBatchRequests = maxBatchRequests;
  }

  /** Inputs waiting. */
  get size() { return this.#queue.length; }

  /**
   * Queues one input: key (what call it joins), tokens (its length), item
   * (what run gets), gone() (true once its client has left). Resolves to
   * {result, queue, inference} (seconds), or rejects with the input's error.
   */
  submit(key, tokens, item, gone) {
    return new Promise((resolve, reject) => {
      this.#queue.push({ key, tokens, item, gone, resolve, reject, queued: performance.now() });
      this.metrics.gauge('te_queue_size', this.#queue.length);
      this.#schedule();
    });
  }

  // After this turn of the event loop: the inputs of one request (and of the
  // requests read in the same turn) join the same batch.
  #schedule() {
    if (this.#scheduled || this.#running) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#next();
    });
  }

  /** The next batch: entries of the front entry's key, within the limits. */
  #take() {
    const batch = [];
    let key = null, longest = 0;
    for (let i = 0; i < this.#queue.length && batch.length < this.maxBatchRequests;) {
      const e = this.#queue[i];
      if (e.gone()) {
        this.#queue.splice(i, 1);
        this.metrics.count('te_request_failure', { err: 'dropped' });
        e.reject(DROPPED);
        continue;
      }
      key ??= e.key;
      if (e.key !== key) {
        i++;
        continue;
      }
      const padded = Math.max(longest, e.tokens) * (batch.length + 1);
      if (batch.length && padded > this.maxBatchTokens) break;
      longest = Math.max(longest, e.tokens);
      batch.push(e);
      this.#queue.splice(i, 1);
    }
    return batch;
  }

  async #next() {
    const batch = this.#take();
    this.metrics.gauge('te_queue_size', this.#queue.length);
    if (!batch.length) return;
    this.#running = true;
    this.metrics.observe('te_batch_next_size', batch.length);
    this.metrics.observe('te_batch_next_tokens', batch.reduce((s, e) => s + e.tokens, 0));
    const start = performance.now();
    try {
      const results = await this.runBatch(batch[0].key, batch.map((e) => e.item));
      const inference = (performance.now() - start) / 1000;
      batch.forEach((e, i) => e.resolve({ result: results[i], queue: (start - e.queued) / 1000, inference }));
    } catch (err) {
      if (batch.length === 1) batch[0].reject(err);
      else await this.#oneByOne(batch, start);
    } finally {
      this.#running = false;
      if (this.#queue.length) this.#schedule();
    }
  }

  async #oneByOne(batch, start) {
    for (const e of batch) {
      if (e.gone()) {
        e.reject(DROPPED);
        continue;
      }
      try {
        const [result] = await this.runBatch(e.key, [e.item]);
        e.resolve({ result, queue: (start - e.queued) / 1000, inference: (performance.now() - start) / 1000 });
      } catch (err) {
        e.reject(err);
      }
    }
  }
}
