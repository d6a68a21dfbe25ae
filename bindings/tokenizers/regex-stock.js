// Hand-written scanners for the split patterns of real tokenizers, linear in
// the text and giving exactly the matches of the pattern (tests/
// tokenizer-hardening.test.js compares them with the pattern's JS RegExp on
// random strings):
// - GPT-2 / RoBERTa byte-level (the ByteLevel pre-tokenizer's own):
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// - GPT-4 (cl100k) / Llama 3, and Qwen 2 (\p{N} one at a time):
//     (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//     | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// Every character is a letter, a number, whitespace or other, so each pattern
// matches at every position: a scanner returns where the match that starts
// there ends, trying the alternatives in order as the pattern does.

import { CharSet } from './regex-vm.js';

const OTHER = 0, LETTER = 1, NUMBER = 2, SPACE = 3;

const blocks = new Array(256);
const astral = new Map();
let classes = null;

/** The kind of a code point: \p{L}, \p{N}, \s (White_Space) or other. */
function kind(cp) {
  classes ??= [CharSet.of('\\p{L}'), CharSet.of('\\p{N}'), CharSet.of('\\p{White_Space}')];
  const of = (c) => (classes[0].has(c) ? LETTER : classes[1].has(c) ? NUMBER : classes[2].has(c) ? SPACE : OTHER);
  if (cp < 0x10000) {
    let block = blocks[cp >> 8];
    if (block === undefined) {
      block = new Uint8Array(256);
      for (let k = 0; k < 256; k++) block[k] = of((cp & ~255) + k);
      blocks[cp >> 8] = block;
    }
    return block[cp & 255];
  }
  let k = astral.get(cp);
  if (k === undefined) { k = of(cp); if (astral.size < 4096) astral.set(cp, k); }
  return k;
}

/** The code point at s[p] (a lone surrogate is its own) and its length in units. */
let width = 1;
function at(s, p) {
  const u = s.charCodeAt(p);
  if ((u & 0xFC00) === 0xD800 && (s.charCodeAt(p + 1) & 0xFC00) === 0xDC00) { width = 2; return ((u - 0xD800) << 10) + (s.charCodeAt(p + 1) - 0xDC00) + 0x10000; }
  width = 1;
  return u;
}

/** The end of the run of characters of kind k that starts at p (at most `max` of them). */
function run(s, p, k, max = Infinity) {
  const n = s.length;
  for (let count = 0; p < n && count < max; count++) {
    const cp = at(s, p);
    if (kind(cp) !== k) break;
    p += width;
  }
  return p;
}

/** The length of a contraction 's 't 're 've 'm 'll 'd at s[p] (its apostrophe), or 0; `fold` for (?i:...). */
function contraction(s, p, fold) {
  const lower = (q) => { const u = s.charCodeAt(q); return fold && u >= 0x41 && u <= 0x5A ? u + 32 : u; };
  if (s.charCodeAt(p) !== 0x27 || p + 1 >= s.length) return 0;
  const c1 = lower(p + 1);
  if (c1 === 0x73 || c1 === 0x74 || c1 === 0x6D || c1 === 0x64) return 2; // s t m d
  if (p + 2 >= s.length) return 0;
  const c2 = lower(p + 2);
  return (c1 === 0x72 && c2 === 0x65) || (c1 === 0x76 && c2 === 0x65) || (c1 === 0x6C && c2 === 0x6C) ? 3 : 0; // re ve ll
}

/** \s+(?!\S)|\s+ at p, a space: the run, less its last character when a non-space follows. */
function spaces(s, p) {
  const end = run(s, p, SPACE);
  return end < s.length && end - 1 > p ? end - 1 : end; // spaces are one unit each
}

/** GPT-2's pattern at p < s.length. */
function gpt2(s, p) {
  const c = contraction(s, p, false);
  if (c > 0) return p + c;
  // ' ?X+' for X = letters, numbers, other: the space first, then without it.
  if (s.charCodeAt(p) === 0x20 && p + 1 < s.length) {
    const k = kind(at(s, p + 1));
    if (k !== SPACE) return run(s, p + 1, k);
  }
  const k = kind(at(s, p));
  return k === SPACE ? spaces(s, p) : run(s, p, k);
}

const isLineBreak = (u) => u === 0x0A || u === 0x0D;

/** GPT-4's pattern at p < s.length, with at most `digits` numbers in a row. */
function gpt4(s, p, digits) {
  const n = s.length;
  const c = contraction(s, p, true);
  if (c > 0) return p + c;
  const cp = at(s, p);
  const w = width;
  const k = kind(cp);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (k !== LETTER && k !== NUMBER && !isLineBreak(cp) && p + w < n && kind(at(s, p + w)) === LETTER) return run(s, p + w, LETTER);
  if (k === LETTER) return run(s, p, LETTER);
  // \p{N}{1,3}
  if (k === NUMBER) return run(s, p, NUMBER, digits);
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  const otherFrom = cp === 0x20 && p + 1 < n && kind(at(s, p + 1)) === OTHER ? p + 1 : k === OTHER ? p : -1;
  if (otherFrom >= 0) {
    let e = run(s, otherFrom, OTHER);
    while (e < n && isLineBreak(s.charCodeAt(e))) e++;
    return e;
  }
  // k is SPACE. \s*[\r\n]+: up to the last line break of the run of spaces.
  const end = run(s, p, SPACE);
  for (let q = end - 1; q >= p; q--) if (isLineBreak(s.charCodeAt(q))) return q + 1;
  // \s+(?!\S)|\s+
  return spaces(s, p);
}

export const STOCK_PATTERNS = {
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  gpt4: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  qwen2: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

const SCANNERS = {
  [STOCK_PATTERNS.gpt2]: gpt2,
  [STOCK_PATTERNS.gpt4]: (s, p) => gpt4(s, p, 3),
  [STOCK_PATTERNS.qwen2]: (s, p) => gpt4(s, p, 1),
};

/** The matcher of a stock pattern (regexPattern's exec interface), or null for any other pattern. */
export function stockMatcher(pattern) {
  if (!Object.hasOwn(SCANNERS, pattern)) return null;
  const scan = SCANNERS[pattern];
  return {
    start: 0, end: 0,
    exec(s, from) {
      if (from >= s.length) return false;
      this.start = from;
      this.end = scan(s, from);
      return true;
    },
  };
}
