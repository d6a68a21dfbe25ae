// The trained models' tasks: how an input is written as token ids, what the
// right answer is at each position, and how a prediction is scored. Shared by
// tools/evaluate.mjs, tests/models.test.js and the demo's "Trained models"
// panel. No dependencies; the vocabulary comes from models/index.json.
//
// An input is '^' + n symbols + '$' (T = n + 2 tokens). At content position t
// (1..n) the model must output
//   reverse: the symbol at n + 1 - t     (needs both ends)
//   sort:    the t-th smallest symbol     (needs ranks, and t counted from '^')
//   shift:   the symbol at t - 1, '^' at t = 1   (one to the left: purely relative)
// Each marker predicts itself. Accuracy counts content positions only.

export const TASKS = ['reverse', 'sort', 'shift'];

export const BOS = 0,
  EOS = 1,
  FIRST_SYMBOL = 2;

/** Token ids of a string of symbols ('abc' -> [0, 2, 3, 4, 1]); unknown characters throw. */
export function encode(text, symbols) {
  const ids = [BOS];
  for (const ch of text) {
    const k = symbols.indexOf(ch);
    if (k < 0) throw new Error(`'${ch}' is not one of the symbols '${symbols}'`);
    ids.push(FIRST_SYMBOL + k);
  }
  ids.push(EOS);
  return ids;
}

/** The token string of ids, with the markers ('^', '$'). */
export const decode = (ids, vocab) => Array.from(ids, (id) => vocab[id] ?? '?').join('');

/** The right output ids for input ids (markers included). */
export function target(task, ids) {
  const n = ids.length - 2,
    x = ids.slice(1, n + 1),
    out = [BOS];
  if (task === 'reverse') for (let t = 1; t <= n; t++) out.push(x[n - t]);
  else if (task === 'sort') out.push(...[...x].sort((a, b) => a - b));
  else if (task === 'shift') for (let t = 1; t <= n; t++) out.push(t === 1 ? BOS : x[t - 2]);
  else throw new Error(`unknown task '${task}'`);
  out.push(EOS);
  return out;
}

/** Correct content positions of a prediction: {right, total, allRight}. */
export function score(task, ids, predicted) {
  const want = target(task, ids);
  let right = 0;
  for (let t = 1; t < ids.length - 1; t++) right += predicted[t] === want[t];
  return { right, total: ids.length - 2, allRight: right === ids.length - 2 };
}

/** A deterministic stream of numbers in [0, 1) from a 32-bit seed (mulberry32). */
export function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/** A deterministic stream of random inputs: count sequences of total length T. */
export function sampleInputs(count, T, symbolCount, seed = 1) {
  const rand = random(seed);
  return Array.from({ length: count }, () => [BOS, ...Array.from({ length: T - 2 }, () => FIRST_SYMBOL + Math.floor(rand() * symbolCount)), EOS]);
}

/** Token and sequence accuracy of an encoder on inputs (one batch per call of size batch). */
export function accuracy(encoder, task, inputs, batch = 64) {
  let right = 0,
    total = 0,
    sequences = 0;
  for (let i = 0; i < inputs.length; i += batch) {
    const chunk = inputs.slice(i, i + batch),
      preds = encoder.predict(chunk);
    chunk.forEach((ids, b) => {
      const s = score(task, ids, preds[b]);
      right += s.right;
      total += s.total;
      sequences += s.allRight;
    });
  }
  return { token: right / total, sequence: sequences / inputs.length };
}
