// The masked-LM BERT's fill-mask accuracy through swapformer (models/wordnet-bert,
// trained by tools/train_mlm.py), with its learned positions, with them removed
// and with other position plugins swapped in on the same weights
// (Pretrained.withConfig). Called by tools/evaluate.mjs (npm run evaluate),
// which writes the result into models/results.json ("mlm") and RESULTS.md, and
// by tests/models.test.js on a subset.
//
// Items: each held-out segment (models/wordnet-bert-heldout.json: synsets never
// trained on) with one whole word masked, chosen by a seeded generator among
// its tokens that are a whole lowercase word of one WordPiece token; the
// prediction is Pretrained.fillMask(text with [MASK] in that word's place,
// {topK: 5}), right when the word's token is first (top-1) or among the five.
import { readFileSync } from 'node:fs';
import { loadPretrained } from '../bindings/index.js';
import { random } from '../models/tasks.js';

const MODELS = new URL('../models/', import.meta.url);
export const MLM_NAME = 'wordnet-bert';
export const MLM_FOLDER = new URL(`${MLM_NAME}/`, MODELS);

/** The checkpoint's positions, then the same weights with each other scheme. */
export const MLM_VARIANTS = [
  { name: 'learned', label: 'learned (as trained)', changes: null },
  { name: 'none', label: 'positions removed', changes: { position: 'none' } },
  { name: 'sinusoidal', label: 'sinusoidal swapped in', changes: { position: 'sinusoidal' } },
  { name: 'rope', label: 'RoPE swapped in', changes: { position: 'rope' } },
  { name: 'alibi', label: 'ALiBi swapped in', changes: { position: 'alibi' } },
];

/** Sentences where the word order decides the answer (the demo's and README's examples). */
export const WORD_ORDER_EXAMPLES = [
  ['the roman catholic [MASK]', 'the [MASK] catholic roman'],
  ['a city in southern [MASK]', 'a [MASK] in southern city'],
  ['the dog bit the [MASK]', 'the [MASK] bit the dog'],
];

/**
 * The fill-mask items of the held-out segments: {text, masked, answer, word}
 * (answer: the token id). Segments without a candidate word, or whose masked
 * text does not tokenize to the same ids with [MASK] in place, are skipped.
 */
export function maskedItems(p, segments, { count = Infinity, seed = 1 } = {}) {
  const next = random(seed), items = [];
  const mask = p.tokenizer.tokenToId('[MASK]');
  for (const text of segments) {
    if (items.length >= count) break;
    const enc = p.tokenizer.encode(text);
    if (enc.ids.length > p.maxLength) continue;
    const whole = [];
    for (let i = 1; i < enc.tokens.length - 1; i++) {
      if (/^[a-z]+$/.test(enc.tokens[i]) && !enc.tokens[i + 1].startsWith('##')) whole.push(i);
    }
    if (whole.length < 2) continue; // one word alone: nothing to read its place from
    const i = whole[Math.floor(next() * whole.length)];
    const [s, e] = enc.offsets[i];
    const masked = `${text.slice(0, s)}[MASK]${text.slice(e)}`;
    const check = p.tokenizer.encode(masked).ids;
    if (check.length !== enc.ids.length || check[i] !== mask || check.some((id, j) => j !== i && id !== enc.ids[j])) continue;
    items.push({ text, masked, answer: enc.ids[i], word: enc.tokens[i] });
  }
  return items;
}

/** top-1 and top-5 accuracy of fillMask on the items. */
export function fillMaskAccuracy(p, items) {
  let top1 = 0, top5 = 0;
  for (const it of items) {
    const best = p.fillMask(it.masked, { topK: 5 });
    if (best[0].token === it.answer) top1++;
    if (best.some((b) => b.token === it.answer)) top5++;
  }
  return { top1: top1 / items.length, top5: top5 / items.length };
}

/** The best three tokens and their scores at the mask of `text` (one mask). */
const best3 = (p, text) => p.fillMask(text, { topK: 3 }).map((b) => ({ token: b.tokenStr, score: Number(b.score.toFixed(4)) }));

/**
 * Every variant's accuracy on `count` held-out items (all by default), the
 * frequency baseline (always the most common answer), and the word-order
 * examples' best tokens under each variant.
 */
export async function evaluateMlm({ count = Infinity, seed = 1 } = {}) {
  const held = JSON.parse(readFileSync(new URL(`${MLM_NAME}-heldout.json`, MODELS), 'utf8'));
  const base = await loadPretrained(MLM_FOLDER);
  try {
    const items = maskedItems(base, held.segments, { count, seed });
    const freq = new Map();
    for (const it of items) freq.set(it.answer, (freq.get(it.answer) ?? 0) + 1);
    const [commonId, commonCount] = [...freq].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
    const variants = {}, examples = WORD_ORDER_EXAMPLES.map((pair) => ({ texts: pair, variants: {} }));
    for (const v of MLM_VARIANTS) {
      const p = v.changes ? await base.withConfig(v.changes) : base;
      try {
        variants[v.name] = { label: v.label, changes: v.changes, ...fillMaskAccuracy(p, items) };
        for (const ex of examples) ex.variants[v.name] = ex.texts.map((t) => best3(p, t));
      } finally {
        if (p !== base) p.dispose();
      }
    }
    return {
      name: MLM_NAME, items: items.length, seed,
      how: 'one whole word masked per segment (a seeded choice), predicted by Pretrained.fillMask with topK 5',
      baseline: { token: base.tokenizer.idToToken(commonId), top1: commonCount / items.length },
      variants, examples,
    };
  } finally {
    base.dispose();
  }
}
