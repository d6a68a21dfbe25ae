#!/usr/bin/env node
// Time and peak RSS of one Tokenizer.encode on a large text, in this process
// (run it as a child process: the peak is the process's own maxRSS).
//
//   node tests/tokenizers/measure.mjs <fixture> <megabytes> [english|mixed] [offsets]
//
// fixture: bert (bert-base-uncased WordPiece), gpt2, roberta (byte-level BPE).
// english: the Debian licence texts (/usr/share/common-licenses) repeated;
// mixed: tests/tokenizers/corpus.json repeated (accents, CJK, emoji...).
// offsets: also read the result's offsets (made on first read: 72 bytes a token).
// Prints one JSON line: {fixture, kind, chars, tokens, loadMs, encodeMs, rssBeforeMB, peakRssMB}.
import { readFileSync, existsSync } from 'node:fs';
import { Tokenizer } from '../../bindings/tokenizers/tokenizer.js';
import * as real from './real.js';

const [fixture = 'gpt2', mb = '1', kind = 'english', offsets] = process.argv.slice(2);
const BUILD = { bert: real.bertBaseUncased, gpt2: real.gpt2, roberta: real.roberta };

/** About `chars` characters of text of the given kind. */
export function makeText(chars, textKind) {
  let unit;
  const licences = ['GPL-3', 'Apache-2.0', 'GFDL-1.3'].map((f) => `/usr/share/common-licenses/${f}`);
  if (textKind === 'english' && !licences.every(existsSync)) throw new Error(`english: the Debian licence texts are missing (${licences.join(', ')}: the base-files package)`);
  if (textKind === 'english') unit = licences.map((f) => readFileSync(f, 'utf8')).join('\n');
  else unit = `${JSON.parse(readFileSync(new URL('./corpus.json', import.meta.url), 'utf8')).join(' ')} `;
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  const tokenizer = Tokenizer.fromJSON(BUILD[fixture]());
  const loadMs = performance.now() - t0;
  const text = makeText(Math.round(Number(mb) * 1e6), kind);
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const t1 = performance.now();
  const enc = tokenizer.encode(text);
  if (offsets === 'offsets' && enc.offsets.length !== enc.ids.length) throw new Error('offsets');
  const encodeMs = performance.now() - t1;
  const peak = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify({
    fixture, kind: offsets ? `${kind}+offsets` : kind, chars: text.length, tokens: enc.ids.length, loadMs: Math.round(loadMs), encodeMs: Math.round(encodeMs),
    rssBeforeMB: Math.round(rssBefore / 1e6), peakRssMB: Math.round(peak / 1e6),
  }));
}
