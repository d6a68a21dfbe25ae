// Prometheus metrics under TEI's names (core/src/{infer,queue}.rs,
// router/src/{lib,prometheus}.rs), in the text exposition format (0.0.4):
//
//   counters    te_request_count{method}, te_request_success{method},
//               te_request_failure{err}, te_embed_count, te_embed_success,
//               te_predict_count, te_predict_success
//   histograms  te_request_duration, te_request_tokenization_duration,
//               te_request_queue_duration, te_request_inference_duration (s),
//               te_request_input_length (tokens), te_batch_next_size (inputs),
//               te_batch_next_tokens (padded tokens: max length x inputs)
//   gauge       te_queue_size
//
// Buckets as TEI's: durations 1e-5 * 1.5^k (k = 1..35), input lengths 2^k up
// to the longest input, batch sizes 2^0..2^12, batch tokens 2^0..2^20.

const DURATION_BUCKETS = Array.from({ length: 35 }, (_, k) => 1e-5 * 1.5 ** (k + 1));
const powers = (n) => Array.from({ length: n }, (_, k) => 2 ** k);

class Histogram {
  constructor(buckets) {
    this.buckets = buckets;
    this.counts = new Float64Array(buckets.length);
    this.sum = 0;
    this.count = 0;
  }

  observe(v) {
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]) this.counts[i]++;
  }
}

const escape = (v) => String(v).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labelText = (labels) => {
  const keys = Object.keys(labels);
  return keys.length ? `{${keys.map((k) => `${k}="${escape(labels[k])}"`).join(',')}}` : '';
};

export class Metrics {
  #counters = new Map(); // name -> Map(label text -> value)
  #histograms = new Map();
  #gauges = new Map();

  constructor({ maxInputLength }) {
    const lengths = powers(20).filter((x) => x <= maxInputLength);
    for (const name of ['te_request_duration', 'te_request_tokenization_duration', 'te_request_queue_duration', 'te_request_inference_duration']) {
      this.#histograms.set(name, new Histogram(DURATION_BUCKETS));
    }
    this.#histograms.set('te_request_input_length', new Histogram(lengths));
    this.#histograms.set('te_batch_next_size', new Histogram(powers(13)));
    this.#histograms.set('te_batch_next_tokens', new Histogram(powers(21)));
    this.#gauges.set('te_queue_size', 0);
  }

  /** Adds n to a counter (labels: {method} or {err}). */
  count(name, labels = {}, n = 1) {
    if (!this.#counters.has(name)) this.#counters.set(name, new Map());
    const series = this.#counters.get(name), key = labelText(labels);
    series.set(key, (series.get(key) ?? 0) + n);
  }

  /** A counter's value (tests and the load report read them). */
  counter(name, labels = {}) {
    return this.#counters.get(name)?.get(labelText(labels)) ?? 0;
  }

  observe(name, v) { this.#histograms.get(name).observe(v); }

  histogram(name) { return this.#histograms.get(name); }

  gauge(name, v) { this.#gauges.set(name, v); }

  /** The exposition text. */
  render() {
    const out = [];
    for (const [name, series] of this.#counters) {
      out.push(`# TYPE ${name} counter`);
      for (const [labels, v] of series) out.push(`${name}${labels} ${v}`);
    }
    for (const [name, v] of this.#gauges) out.push(`# TYPE ${name} gauge`, `${name} ${v}`);
    for (const [name, h] of this.#histograms) {
      out.push(`# TYPE ${name} histogram`);
      h.buckets.forEach((le, i) => out.push(`${name}_bucket{le="${le}"} ${h.counts[i]}`));
      out.push(`${name}_bucket{le="+Inf"} ${h.count}`, `${name}_sum ${h.sum}`, `${name}_count ${h.count}`);
    }
    return `${out.join('\n')}\n`;
  }
}
