// Character classes and Unicode normalization exactly as Hugging Face's Rust
// tokenizers sees them (see unicode-data.js for why some tables are frozen), plus
// small string helpers shared by the pipeline. All positions are UTF-16 code units.

import {
  OLD_CONTROL_FORMAT, OLD_NONSPACING_MARK, OLD_PUNCTUATION, NEWER_THAN_UNICODE_9_NORMALIZATION,
  NEWER_THAN_UNICODE_9_MARK,
} from './unicode-data.js';

// ------------------------------------------------------------------ range sets

/** Parses the compact range format of unicode-data.js into a sorted Uint32Array [s0,e0,s1,e1,...]. */
function parseRanges(text) {
  const parts = text.split(',');
  const out = new Uint32Array(parts.length * 2);
  parts.forEach((part, i) => {
    const [s, e = s] = part.split('-');
    out[2 * i] = parseInt(s, 36);
    out[2 * i + 1] = parseInt(e, 36);
  });
  return out;
}

function inRanges(ranges, cp) {
  let lo = 0, hi = ranges.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < ranges[2 * mid]) hi = mid - 1;
    else if (cp > ranges[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

const CONTROL_FORMAT = parseRanges(OLD_CONTROL_FORMAT);
const NONSPACING_MARK = parseRanges(OLD_NONSPACING_MARK);
const PUNCTUATION = parseRanges(OLD_PUNCTUATION);
const NORMALIZATION_OPAQUE = parseRanges(NEWER_THAN_UNICODE_9_NORMALIZATION);
const NEWER_MARK = parseRanges(NEWER_THAN_UNICODE_9_MARK);

// ------------------------------------------------------------------ classes

const WHITE_SPACE = /^\p{White_Space}$/u;
const NUMERIC = /^\p{N}$/u;
const COMBINING_MARK = /^\p{M}$/u;

const cp0 = (c) => c.codePointAt(0);

/** Rust's char::is_whitespace (the White_Space property). */
export function isWhitespace(c) {
  const u = c.charCodeAt(0);
  if (u < 0x80) return u === 0x20 || (u >= 0x09 && u <= 0x0D);
  return WHITE_SPACE.test(c);
}

/** Rust's char::is_numeric (general category N). */
export const isNumeric = (c) => NUMERIC.test(c);

/** A combining mark (Mn, Mc, Me) of Unicode 9.0: the StripAccents normalizer's test. */
export const isCombiningMark = (c) => COMBINING_MARK.test(c) && !inRanges(NEWER_MARK, cp0(c));

/** unicode_categories' is_mark_nonspacing (Unicode 8.0; the first is U+0300). */
export const isNonspacingMark = (c) => c.charCodeAt(0) >= 0x300 && inRanges(NONSPACING_MARK, cp0(c));

/** unicode_categories' is_other: Cc, Cf (Unicode 8.0) or private use. */
export function isOther(c) {
  const cp = cp0(c);
  if (cp < 0x80) return cp < 0x20 || cp === 0x7F;
  return inRanges(CONTROL_FORMAT, cp) || (cp >= 0xE000 && cp <= 0xF8FF)
    || (cp >= 0xF0000 && cp <= 0xFFFFD) || (cp >= 0x100000 && cp <= 0x10FFFD);
}

/** ASCII punctuation or unicode_categories' is_punctuation (Unicode 8.0). */
export function isPunctuation(c) {
  const cp = cp0(c);
  if (cp < 0x80) return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40)
    || (cp >= 0x5B && cp <= 0x60) || (cp >= 0x7B && cp <= 0x7E);
  return inRanges(PUNCTUATION, cp);
}

/** The CJK ideograph blocks BertNormalizer puts spaces around. */
export function isChineseChar(c) {
  const cp = cp0(c);
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF)
    || (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F)
    || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF)
    || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// ------------------------------------------------------------------ strings

/** UTF-8 byte length of a string (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x80) n += 1;
    else if (u < 0x800) n += 2;
    else if (u >= 0xD800 && u <= 0xDBFF && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xFC00) === 0xDC00) { n += 4; i++; }
    else n += 3;
  }
  return n;
}

const utf8Encoder = new TextEncoder();
/** UTF-8 bytes of a string. */
export const utf8 = (s) => utf8Encoder.encode(s);

let graphemeSegmenter = null;
const isAscii = (s, i) => i < s.length && s.charCodeAt(i) < 0x80;
/** Whether UAX #29 always breaks between s[i - 1] and s[i]: two ASCII characters other than CR LF. */
const asciiBreak = (s, i) => isAscii(s, i - 1) && isAscii(s, i) && !(s.charCodeAt(i - 1) === 13 && s.charCodeAt(i) === 10);

/**
 * Calls fn(cluster) for each extended grapheme cluster of s, in order (Rust uses
 * unicode-segmentation; Intl.Segmenter follows the same UAX #29). An ASCII
 * character between two breaks is a cluster by itself; only the stretches around
 * other characters go through Intl.Segmenter, so a long text needs no list.
 */
export function eachGrapheme(s, fn) {
  const n = s.length;
  for (let i = 0; i < n;) {
    if (isAscii(s, i) && (i + 1 === n || asciiBreak(s, i + 1))) { fn(s[i]); i++; continue; }
    let p = i + 1;
    while (p < n && !asciiBreak(s, p)) p++;
    graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    for (const { segment } of graphemeSegmenter.segment(s.slice(i, p))) fn(segment);
    i = p;
  }
}

// ------------------------------------------------------------------ normalization with alignments

const decompositionCache = { NFD: new Map(), NFKD: new Map() };

/** The full decomposition of one character, as an array of characters. */
function decompose(c, form) {
  const cache = decompositionCache[form];
  let d = cache.get(c);
  if (d === undefined) { d = Array.from(c.normalize(form)); cache.set(c, d); }
  return d;
}

/**
 * Decomposes `chars` (no opaque character inside) and returns [char, change] pairs in
 * canonical order. As in Rust: the first character of each decomposition replaces
 * the source character (change 0), the others are insertions (+1); canonical
 * reordering moves the pairs with their characters. JS gives the reordered string;
 * the stable reordering lets us match each output character to the first unused
 * equal character of the unordered list.
 */
function decomposeWithChanges(chars, form) {
  const pending = [];
  for (const c of chars) decompose(c, form).forEach((d, i) => pending.push([d, i === 0 ? 0 : 1]));
  const ordered = Array.from(chars.join('').normalize(form));
  const used = new Uint8Array(pending.length);
  const out = [];
  let p = 0;
  for (const c of ordered) {
    let q = p;
    while (used[q] || pending[q][0] !== c) q++;
    used[q] = 1;
    out.push(pending[q]);
    while (p < pending.length && used[p]) p++;
  }
  return out;
}

/**
 * Composes a decomposed [char, change] list as Rust's Recompositions does: a
 * composite's change is the sum of the changes of the characters it absorbed, minus
 * one per absorbed character. JS gives the composed string; the canonical
 * decomposition of each composite tells which characters it absorbed.
 */
function composeWithChanges(decomposed, composedText) {
  const used = new Uint8Array(decomposed.length);
  const out = [];
  let p = 0;
  for (const c of composedText) {
    const parts = decompose(c, 'NFD');
    let change = decomposed[p][1];
    used[p] = 1;
    let q = p;
    for (let i = 1; i < parts.length; i++) {
      do q++; while (used[q] || decomposed[q][0] !== parts[i]);
      used[q] = 1;
      change += decomposed[q][1] - 1;
    }
    out.push([c, change]);
    while (p < decomposed.length && used[p]) p++;
  }
  return out;
}

/** Normalizes a run of characters that contains no opaque character, as [char, change] pairs. */
function normalizeRun(chars, form) {
  const text = chars.join('');
  const normalized = text.normalize(form);
  if (normalized === text) return chars.map((c) => [c, 0]);
  const decomposed = decomposeWithChanges(chars, form === 'NFC' || form === 'NFD' ? 'NFD' : 'NFKD');
  return form === 'NFD' || form === 'NFKD' ? decomposed : composeWithChanges(decomposed, normalized);
}

/** Feeds the [char, change] pairs of a window to `out` (runs split at opaque characters). */
function normalizeWindow(window, form, out) {
  let run = [];
  const flush = () => { if (run.length) { for (const [c, change] of normalizeRun(run, form)) out.push(c, change); run = []; } };
  for (const c of window) {
    if (inRanges(NORMALIZATION_OPAQUE, cp0(c))) { flush(); out.push(c, 0); } else run.push(c);
  }
  flush();
}

/**
 * Unicode normalization (form NFC, NFD, NFKC or NFKD) of `s` as the [char,
 * change] pairs that Rust computes, fed to `out.push(char, change)`, with
 * `out.keepUnits(n)` for n units that stay as they are (NormalizedString's
 * rewrite). Characters newer than Unicode 9 stay untouched and block composition,
 * as in Rust. ASCII is left as it is by every form and never composes with what
 * precedes it, so each run of other characters, with the ASCII character before
 * it, is normalized on its own: no per-character list of the whole text.
 */
export function normalizeWithChanges(s, form, out) {
  const n = s.length;
  for (let i = 0; i < n;) {
    let j = i;
    while (j < n && s.charCodeAt(j) < 0x80) j++;
    if (j === n) { out.keepUnits(n - i); break; }
    const start = j > i ? j - 1 : j;
    if (start > i) out.keepUnits(start - i);
    let k = j;
    while (k < n && s.charCodeAt(k) >= 0x80) k++;
    normalizeWindow(s.slice(start, k), form, out);
    i = k;
  }
}
