#!/usr/bin/env node
// Random mutations of real tokenizer.json files, for a bounded time: every
// outcome must be a working tokenizer (encode, decode and the vocabulary
// queries run) or a SwapformerError; any other exception is a failure. Run by
// tests/tokenizer-hardening.test.js in a child process with a timeout, so that
// a hang fails too (the mutation being tried is on stderr).
//
//   node tests/tokenizers/mutate.mjs [seconds=4] [seed=1]
//
// Prints one JSON line: {runs, built, refused: {code: count}, failures: [...]}.
import { readFileSync, readdirSync } from 'node:fs';
import { Tokenizer } from '../../bindings/tokenizers/tokenizer.js';
import { SwapformerError } from '../../bindings/utils/errors.js';
import { randomInts } from './random.js';
import * as real from './real.js';

const [seconds = '4', seed = '1'] = process.argv.slice(2);
const next = randomInts(Number(seed));
const pick = (list) => list[next(list.length)];
const here = (path) => new URL(`./${path}`, import.meta.url);
const readJson = (path) => JSON.parse(readFileSync(here(path), 'utf8'));

const FIXTURES = [
  ...readdirSync(here('hand')).filter((f) => f.endsWith('.json')).map((f) => [`hand/${f}`, readJson(`hand/${f}`)]),
  ...readdirSync(here('spm')).filter((f) => f.endsWith('.tokenizer.json')).map((f) => [`spm/${f}`, readJson(`spm/${f}`)]),
  ['gpt2 (300 merges)', real.gpt2({ merges: 300 })],
  ['roberta (300 merges)', real.roberta({ merges: 300 })],
  ['bert-base-uncased', real.bertBaseUncased()],
];

const TYPES = [
  'BertNormalizer', 'Precompiled', 'NFC', 'NFD', 'NFKC', 'NFKD', 'Lowercase', 'Strip', 'StripAccents', 'Nmt', 'Replace', 'Prepend',
  'BertPreTokenizer', 'Whitespace', 'WhitespaceSplit', 'Punctuation', 'Digits', 'CharDelimiterSplit', 'Split', 'Metaspace', 'ByteLevel',
  'WordPiece', 'BPE', 'Unigram', 'WordLevel', 'BertProcessing', 'RobertaProcessing', 'TemplateProcessing',
  'BPEDecoder', 'ByteFallback', 'Fuse', 'Sequence', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'prototype',
];
const PATTERNS = [
  '(a+)+$', '(a|a)*$', '(a|aa)+$', '^(a+)+b', '(\\w+\\s?)+$', '(?=a*b)a', '(?<=a+)b', '(a)\\1', '(a*)*', '\\', '[', '(', ')', '*',
  '(?i:é)', '\\p{Nope}', '\\s+', ' ?\\p{L}+', '.*', '', 'x{99999}', '(?:a{1000}){1000}', '((((a))))', '\\G', '[a-\\d]', '\\x{110000}',
];
const VALUES = [
  null, true, false, 0, -1, 1, 1.5, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 45, 2 ** 53, -0, 1e308, '', 'x', 'a'.repeat(300), '\ud800',
  '[UNK]', '<s>', '##', '▁', 'Ġ', [], [[]], {}, { type: 'NFC' }, ['a', 'b'], [0, 1], { A: 1 }, 'A', 'B', 'Isolated', 'Removed', 'Sideways',
];

function randomValue() {
  switch (next(4)) {
    case 0: return pick(TYPES);
    case 1: return pick(PATTERNS);
    default: return structuredClone(pick(VALUES));
  }
}

/** Sets an own property, even one named __proto__. */
const setOwn = (obj, key, value) => Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });

/** The containers of a JSON value, each as [container, key] (vocabularies and merges sampled, not listed). */
function slots(root) {
  const out = [];
  const walk = (v, depth) => {
    if (v === null || typeof v !== 'object' || depth > 12) return;
    const keys = Array.isArray(v) ? v.keys() : Object.keys(v);
    const list = [...keys];
    // Large containers (vocab, merges, charsmap pieces): a few random entries.
    const chosen = list.length > 24 ? Array.from({ length: 6 }, () => list[next(list.length)]) : list;
    for (const k of chosen) { out.push([v, k]); walk(v[k], depth + 1); }
  };
  walk(root, 0);
  return out;
}

const STAGE_LISTS = { normalizer: 'normalizers', pre_tokenizer: 'pretokenizers', post_processor: 'processors', decoder: 'decoders' };

/** One mutation of json in place; returns what it did. */
function mutate(json) {
  const all = slots(json);
  if (all.length === 0) return 'nothing';
  const [obj, key] = pick(all);
  const path = String(key);
  switch (next(11)) {
    case 9: {
      // A charsmap (or any string) with some characters changed: a corrupt trie.
      if (typeof obj[key] !== 'string' || obj[key].length === 0) return 'skip';
      const chars = [...obj[key]];
      for (let k = 0; k < 1 + next(8); k++) chars[next(chars.length)] = pick([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=']);
      obj[key] = chars.slice(0, next(2) ? chars.length : next(chars.length + 1)).join('');
      return `${path} corrupted`;
    }
    case 10: {
      // A key renamed (a vocabulary token, a field).
      if (Array.isArray(obj) || !(key in obj)) return 'skip';
      const v = obj[key];
      delete obj[key];
      setOwn(obj, pick(['__proto__', 'constructor', '', '\ud800', `${key}x`, 'a', '[UNK]']), v);
      return `${path} renamed`;
    }
    case 0: { const v = randomValue(); obj[key] = v; return `${path} = ${JSON.stringify(v)?.slice(0, 40)}`; }
    case 1: if (Array.isArray(obj)) obj.splice(key, 1); else delete obj[key]; return `delete ${path}`;
    case 2: {
      const name = pick(['__proto__', 'constructor', 'toString', 'type', 'polluted']);
      if (obj[key] && typeof obj[key] === 'object' && !Array.isArray(obj[key])) setOwn(obj[key], name, randomValue());
      return `${path}.${name} added`;
    }
    case 3: {
      const stage = pick(Object.keys(STAGE_LISTS));
      let v = json[stage];
      const depth = pick([1, 2, 63, 64, 65, 200]);
      for (let d = 0; d < depth; d++) v = { type: 'Sequence', [STAGE_LISTS[stage]]: [v] };
      json[stage] = v;
      return `${stage} nested ${depth} deep`;
    }
    case 4: if (typeof obj[key] === 'number') { obj[key] = pick([-1, 2 ** 31, 2 ** 32 + obj[key], obj[key] + 0.5, 1e9]); return `${path} number`; } return 'skip';
    case 5: if (Array.isArray(obj[key])) { obj[key] = next(2) ? obj[key].slice(0, next(obj[key].length + 1)) : [...obj[key], ...obj[key]]; return `${path} array`; } return 'skip';
    case 6: if (obj[key] && typeof obj[key] === 'object' && 'type' in obj[key]) { obj[key].type = pick(TYPES); return `${path}.type = ${obj[key].type}`; } return 'skip';
    case 7: { const p = pick(PATTERNS); obj[key] = next(2) ? { Regex: p } : { String: p }; return `${path} = pattern ${p}`; }
    default: if (typeof obj[key] === 'string') { obj[key] = pick(['', '\ud800', obj[key].repeat(3), 'x']); return `${path} string`; } return 'skip';
  }
}

const TEXTS = [
  'Hello, world! The quick brown fox.', '', ' ', 'Café naïve 日本語 🤗 a\u0301', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!', '[CLS] <s> <mask> ##ing ▁x',
  `${'a'.repeat(3000)}!`, '\ud800x\udc00', "I'm can't   spaces\n\nnew\r\nlines\t\t",
];

/** Exercises a built tokenizer: every call must return or throw a SwapformerError. */
function exercise(t) {
  for (const text of TEXTS) {
    const e = t.encode(text, { addSpecialTokens: next(2) === 0 });
    t.decode(e.ids);
    if (e.offsets.length !== e.ids.length) throw new Error('offsets and ids differ in length');
  }
  try { t.encode(pick(TEXTS), { pair: pick(TEXTS), maxLength: 8 + next(8) }); } catch (e) { if (!(e instanceof SwapformerError)) throw e; }
  t.decode([0, 1, 2, 5, 2 ** 31 - 1, 2 ** 40, t.vocabSize]);
  void [t.vocabSize, t.tokenToId('a'), t.idToToken(3), t.padTokenId, t.clsTokenId, t.sepTokenId, t.modelMaxLength];
}

const failures = [];
const refused = {};
let runs = 0, built = 0;
const deadline = performance.now() + 1000 * Number(seconds);
while (performance.now() < deadline) {
  const [name, fixture] = pick(FIXTURES);
  const json = structuredClone(fixture);
  const done = [];
  for (let k = 1 + next(3); k > 0; k--) done.push(mutate(json));
  const label = `${name}: ${done.join('; ')}`;
  process.stderr.write(`${label}\n`);
  runs++;
  let stage = 'build';
  try {
    const t = Tokenizer.fromJSON(next(4) === 0 ? json : JSON.stringify(json));
    built++;
    stage = 'use';
    exercise(t);
  } catch (e) {
    if (e instanceof SwapformerError) refused[`${stage} ${e.code}`] = (refused[`${stage} ${e.code}`] ?? 0) + 1;
    else failures.push({ label, stage, error: `${e?.name}: ${e?.message}`, at: String(e?.stack).split('\n').slice(1, 3).join(' | ') });
  }
}
process.stdout.write(JSON.stringify({ runs, built, refused, failures: failures.slice(0, 20), failureCount: failures.length }));
