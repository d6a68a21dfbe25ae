#!/usr/bin/env node
// Helper for tests/reference/pipeline_rules.py (never used at test run time):
// Hugging Face's Rust `tokenizers` (the npm package, N-API bindings of the Rust
// crate; the backend of transformers' fast tokenizers) as a line-based JSON
// service, so that the Python pipeline rules ask the real backend for what
// transformers asks it: encodings with offsets and the special-tokens mask,
// decode, the decoder over token strings, token <-> id.
//
// One request per stdin line, one answer per stdout line:
//   {"tokenizer": {"file": "tests/pretrained/x/tokenizer.json"} | {"real": "bert-base-uncased" | "roberta"},
//    "op": "info" | "encode" | "windows" | "addedTokens" | "decode" | "tokensToString" | "tokenToId" | "idToToken" | "vocabSize", ...}
//   (encode: text, pair?, addSpecialTokens?, truncation?: {maxLength, strategy: "LongestFirst" | "OnlyFirst"};
//    windows: text, pair, truncation "only_first" | "only_second", room (tokens of a window for the
//    sequence cut, or null: one window), stride; addedTokens: pair?)
//   -> {"ok": <result>} or {"error": "<message>"}
// "real" tokenizers are tests/tokenizers/real.js's tokenizer.json objects.
'use strict';
const path = require('path');
const fs = require('fs');
const readline = require('readline');
const { pathToFileURL } = require('url');

const REPO = path.join(__dirname, '..', '..');
const { Tokenizer } = require(path.join(REPO, 'node_modules', 'tokenizers'));
const cache = new Map();

async function load(spec) {
  const key = JSON.stringify(spec);
  if (cache.has(key)) return cache.get(key);
  let json;
  if (spec.file) json = fs.readFileSync(path.resolve(REPO, spec.file), 'utf8');
  else {
    const real = await import(pathToFileURL(path.join(REPO, 'tests', 'tokenizers', 'real.js')).href);
    const build = { 'bert-base-uncased': real.bertBaseUncased, roberta: () => real.roberta() }[spec.real];
    if (!build) throw new Error(`unknown real tokenizer ${spec.real}`);
    json = JSON.stringify(build());
  }
  const parsed = JSON.parse(json);
  const entry = { tok: Tokenizer.fromString(json), json, model: parsed.model, decoder: parsed.decoder ?? null };
  cache.set(key, entry);
  return entry;
}

async function answer(req) {
  const { tok, json, model } = await load(req.tokenizer);
  switch (req.op) {
    case 'info':
      // what transformers reads off the Rust model: its type, continuing_subword_prefix
      return {
        modelType: model.type,
        continuingSubwordPrefix: model.type === 'WordPiece' ? (model.continuing_subword_prefix ?? '##') : (model.continuing_subword_prefix ?? null),
      };
    case 'encode': {
      // truncation: {maxLength, strategy: 'LongestFirst' | 'OnlyFirst'} on a fresh copy (the cached one stays untruncated)
      let t = tok;
      if (req.truncation) {
        t = Tokenizer.fromString(json);
        t.setTruncation(req.truncation.maxLength, { strategy: req.truncation.strategy });
      }
      const e = await t.encode(req.text, req.pair ?? null, { addSpecialTokens: req.addSpecialTokens !== false });
      return { ids: e.getIds(), typeIds: e.getTypeIds(), tokens: e.getTokens(), offsets: e.getOffsets(), specialTokensMask: e.getSpecialTokensMask() };
    }
    case 'windows': {
      // the question-answering pipeline's windows as tokenizers <= 0.22 made them: each sequence
      // tokenized whole (no post-processor: offsets untrimmed), the one cut split with
      // Encoding.truncate(room, stride, 'right'), each window post-processed with the other
      // (Tokenizer.postProcess pairs them, adds the specials, trims RoBERTa's offsets once)
      const raw = rawTokenizer(req.tokenizer, json, true);
      const pp = rawTokenizer(req.tokenizer, json, false);
      const a = await raw.encode(req.text, null, { addSpecialTokens: false });
      const b = await raw.encode(req.pair, null, { addSpecialTokens: false });
      const cutFirst = req.truncation === 'only_first';
      const cut = cutFirst ? a : b;
      const windows = [];
      if (req.room !== null) {
        cut.truncate(req.room, req.stride, 'right');
        windows.push(cut, ...cut.getOverflowing());
      } else windows.push(cut);
      const out = [];
      for (let k = 0; k < windows.length; k++) {
        const other = await raw.encode(cutFirst ? req.pair : req.text, null, { addSpecialTokens: false });
        const e = cutFirst ? pp.postProcess(windows[k], other, true) : pp.postProcess(other, windows[k], true);
        out.push({
          ids: e.getIds(),
          typeIds: e.getTypeIds(),
          offsets: e.getOffsets(),
          wordIds: e.getWordIds().map((w) => (w === undefined ? null : w)),
          sequenceIds: e.getSequenceIds().map((w) => (w === undefined ? null : w)),
          specialTokensMask: e.getSpecialTokensMask(),
        });
      }
      return out;
    }
    case 'addedTokens':
      // the special tokens the post-processor adds to one sequence, or a pair
      return (await tok.encode('', req.pair ? '' : null)).getLength();
    case 'decode':
      return tok.decode(req.ids, req.skipSpecialTokens === true);
    case 'tokensToString': {
      const d = tok.getDecoder();
      return d ? d.decode(req.tokens) : req.tokens.join(' ');
    }
    case 'tokenToId':
      return tok.tokenToId(req.token);
    case 'idToToken':
      return tok.idToToken(req.id);
    case 'vocabSize':
      return Math.max(...Object.values(tok.getVocab(true))) + 1; // the largest id + 1, added tokens included
    default:
      throw new Error(`unknown op ${req.op}`);
  }
}

/** The tokenizer without the truncation and padding tokenizer.json may set, and (bare) without its
 * post-processor: sequences as they come, before special tokens and offset trimming. */
const raws = new Map();
function rawTokenizer(spec, json, bare) {
  const key = JSON.stringify([spec, bare]);
  const parsed = { ...JSON.parse(json), truncation: null, padding: null };
  if (bare) parsed.post_processor = null;
  if (!raws.has(key)) raws.set(key, Tokenizer.fromString(JSON.stringify(parsed)));
  return raws.get(key);
}

const rl = readline.createInterface({ input: process.stdin });
const queue = [];
let busy = false;
async function drain() {
  if (busy) return;
  busy = true;
  while (queue.length) {
    const line = queue.shift();
    let out;
    try {
      out = { ok: await answer(JSON.parse(line)) };
    } catch (e) {
      out = { error: String(e && e.message ? e.message : e) };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  }
  busy = false;
}
rl.on('line', (line) => {
  if (line.trim()) {
    queue.push(line);
    drain();
  }
});
