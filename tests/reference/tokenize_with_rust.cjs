#!/usr/bin/env node
// Helper for tests/reference/make_pretrained.py and make_heads.py (never used at test run time).
//
// Reads a JSON job list on stdin:
//   {"jobs": [{"tokenizer": "/abs/path/tokenizer.json",
//              "texts": ["...", ...],            // optional: single sequences
//              "pairs": [["a", "b"], ...]}]}     // optional: sentence pairs
// loads every tokenizer.json with the Rust Hugging Face tokenizers (npm package
// `tokenizers`, N-API bindings of the Rust crate) and writes on stdout
//   {"tokenizersVersion": "...",
//    "results": [{"vocabSize": n, "texts": [{"ids", "typeIds", "tokens", "offsets",
//                 "specialTokensMask", "wordIds", "sequenceIds"}], "pairs": [...]}]}
// (offsets in characters of each input string, as the Rust encode gives them: a pair's
// second-sequence offsets count from the start of the second string).
// Special tokens are added (the tokenizer's post-processor); no truncation, no padding.
// Loading a tokenizer.json that the Rust crate rejects makes this script fail.
'use strict';
const path = require('path');
const fs = require('fs');

function loadTokenizers() {
  const candidates = [path.join(__dirname, '..', '..', 'node_modules', 'tokenizers'), '/tmp/tk/node_modules/tokenizers'];
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, 'package.json'))) {
      const mod = require(dir);
      const version = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
      return { mod, version };
    }
  }
  throw new Error('npm package "tokenizers" not found in ' + candidates.join(' or '));
}

async function main() {
  const input = JSON.parse(fs.readFileSync(0, 'utf8'));
  const { mod, version } = loadTokenizers();
  const results = [];
  for (const job of input.jobs) {
    const tok = mod.Tokenizer.fromFile(job.tokenizer);
    const one = async (a, b) => {
      const enc = await tok.encode(a, b === undefined ? null : b, { addSpecialTokens: true });
      return {
        ids: enc.getIds(),
        typeIds: enc.getTypeIds(),
        tokens: enc.getTokens(),
        offsets: enc.getOffsets(),
        specialTokensMask: enc.getSpecialTokensMask(),
        wordIds: enc.getWordIds(),
        sequenceIds: enc.getSequenceIds(),
      };
    };
    const res = { vocabSize: tok.getVocabSize(true), texts: [], pairs: [] };
    for (const t of job.texts || []) res.texts.push(await one(t));
    for (const [a, b] of job.pairs || []) res.pairs.push(await one(a, b));
    results.push(res);
  }
  process.stdout.write(JSON.stringify({ tokenizersVersion: version, results }));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + '\n');
  process.exit(1);
});
