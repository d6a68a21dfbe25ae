// PreTokenizedString and the pre-tokenizers of tokenizer.json (Rust:
// tokenizers/src/tokenizer/pre_tokenizer.rs and pre_tokenizers/*.rs). A
// pre-tokenizer is { preTokenize(preTokenizedString) } and splits the pieces
// further; pieces that already carry tokens (added tokens) are left alone.

import { NormalizedString, charPattern, regexPattern, invertPattern } from './normalized-string.js';
import { isWhitespace, isPunctuation, isNumeric, utf8 } from './unicode.js';
import { compileRegex, literalRegex } from './regex.js';
import { unsupported, field, boolField, own, show, builderOf, sequence } from './json.js';

// ------------------------------------------------------------------ PreTokenizedString

/** The pieces of one input sequence, each a NormalizedString with optional tokens. */
export class PreTokenizedString {
  constructor(original) {
    this.original = original;
    this.splits = [{ ns: NormalizedString.from(original), tokens: null }];
  }

  /**
   * Replaces each piece without tokens by what `fn(index, ns)` returns: a list of
   * NormalizedString or { ns, tokens }. Empty pieces are dropped.
   */
  split(fn) {
    const out = [];
    this.splits.forEach((piece, i) => {
      if (piece.tokens !== null) { out.push(piece); return; }
      for (const r of fn(i, piece.ns)) {
        const next = r instanceof NormalizedString ? { ns: r, tokens: null } : r;
        if (!next.ns.isEmpty()) out.push(next);
      }
    });
    this.splits = out;
  }

  /** Applies `fn(ns)` to each piece without tokens. */
  normalize(fn) {
    for (const piece of this.splits) if (piece.tokens === null) fn(piece.ns);
  }

  /**
   * Sets the tokens of each piece without tokens to `fn(normalizedText)`. With a
   * `limit`, stops after the piece that brings the count to at least `limit` and
   * drops the rest (Rust's tokenize_with_limit, its early exit when truncating;
   * like Rust, only a newly tokenized piece can stop it, not an added token).
   */
  tokenize(fn, limit = Infinity) {
    let total = 0;
    for (let i = 0; i < this.splits.length; i++) {
      const piece = this.splits[i];
      if (piece.tokens !== null) { total += piece.tokens.length; continue; }
      piece.tokens = fn(piece.ns.get());
      total += piece.tokens.length;
      if (total >= limit) { this.splits.length = i + 1; break; }
    }
  }

  /**
   * The tokens of sequence `seq` with their offsets in it, as Rust's into_encoding:
   * a token's normalized range is mapped back through the alignments of its piece.
   * Offsets are converted to code point units here, as the Node binding of Rust
   * does before post-processing (offset trimming counts characters).
   */
  intoEncoding(typeId, seq) {
    const enc = { ids: [], tokens: [], offsets: [], typeIds: [], seqs: [] };
    const toChar = codePointIndex(this.original);
    for (const { ns, tokens } of this.splits) {
      for (const t of tokens) {
        const [s, e] = ns.normalizedToOriginal(t.start, t.end) ?? [t.start, t.end];
        enc.ids.push(t.id);
        enc.tokens.push(t.value);
        enc.offsets.push([toChar[s], toChar[e]]);
        enc.typeIds.push(typeId);
        enc.seqs.push(seq);
      }
    }
    return enc;
  }
}

/**
 * For each UTF-16 position of s, the index of the code point it falls in (a
 * position inside a surrogate pair counts as its code point, as Rust maps a byte
 * inside a character to that character).
 */
export function codePointIndex(s) {
  const map = new Int32Array(s.length + 1);
  let k = 0;
  for (let i = 0; i < s.length; i++) {
    map[i] = k;
    const u = s.charCodeAt(i);
    if (u >= 0xD800 && u <= 0xDBFF && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xFC00) === 0xDC00) map[++i] = k;
    k++;
  }
  map[s.length] = k;
  return map;
}

// ------------------------------------------------------------------ byte-level alphabet

/** GPT-2's byte → printable character table (bytes_to_unicode). */
export const BYTE_TO_CHAR = (() => {
  const table = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    table[b] = String.fromCodePoint(printable ? b : 256 + n++);
  }
  return table;
})();

const BYTE_LEVEL_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

function byteLevel(json, path) {
  const addPrefixSpace = boolField(json, 'add_prefix_space', path, true);
  const useRegex = boolField(json, 'use_regex', path, true);
  const pattern = regexPattern(compileRegex(BYTE_LEVEL_REGEX, `${path} (GPT-2 split)`));
  return {
    preTokenize(pts) {
      pts.split((_, ns) => {
        if (addPrefixSpace && !ns.get().startsWith(' ')) ns.prepend(' ');
        return useRegex ? ns.split(pattern, 'Isolated') : [ns];
      });
      // Each character becomes one alphabet character per UTF-8 byte.
      pts.normalize((ns) => {
        const dest = [];
        for (const c of ns.get()) utf8(c).forEach((b, i) => dest.push([BYTE_TO_CHAR[b], i > 0 ? 1 : 0]));
        ns.transform(dest, 0);
      });
    },
  };
}

// ------------------------------------------------------------------ Metaspace

/**
 * prepend_scheme (default "always"). The legacy add_prefix_space: false is accepted
 * only next to prepend_scheme "never", as Rust does (it refuses the file otherwise).
 */
export function prependScheme(json, path) {
  const scheme = own(json, 'prepend_scheme') ?? 'always';
  if (!['always', 'first', 'never'].includes(scheme)) throw unsupported(`${path}.prepend_scheme`, scheme);
  if (own(json, 'add_prefix_space') === false && scheme !== 'never') throw unsupported(`${path}.add_prefix_space`, false);
  return scheme;
}

/** The replacement character (exactly one character). */
export function replacementChar(json, path) {
  const r = field(json, 'replacement', path, 'string');
  if (Array.from(r).length !== 1) throw unsupported(`${path}.replacement`, r);
  return r;
}

function metaspace(json, path) {
  const replacement = replacementChar(json, path);
  const scheme = prependScheme(json, path);
  const split = boolField(json, 'split', path, true);
  const spaces = charPattern((c) => c === ' ');
  const marks = charPattern((c) => c === replacement);
  return {
    preTokenize(pts) {
      pts.split((_, ns) => {
        ns.replace(spaces, replacement);
        const prepend = scheme === 'always' || (scheme === 'first' && ns.offsetsOriginal()[0] === 0);
        if (prepend && !ns.get().startsWith(replacement)) ns.prepend(replacement);
        return split ? ns.split(marks, 'MergedWithNext') : [ns];
      });
    },
  };
}

// ------------------------------------------------------------------ the others

const BEHAVIORS = ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'];

function behaviorField(json, path, fallback) {
  const b = own(json, 'behavior') ?? fallback;
  if (!BEHAVIORS.includes(b)) throw unsupported(`${path}.behavior`, own(json, 'behavior') ?? '(missing)');
  return b;
}

/** A pre-tokenizer that splits every piece on `pattern` with `behavior`. */
const splitter = (pattern, behavior) => ({
  preTokenize(pts) { pts.split((_, ns) => ns.split(pattern, behavior)); },
});

// Rust's regex crate \w (Alphabetic, M, Nd, Pc, Join_Control) and \s.
const RUST_WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}';
const WHITESPACE_WORDS = new RegExp(`[${RUST_WORD}]+|[^${RUST_WORD}\\p{White_Space}]+`, 'gu');

function splitPreTokenizer(json, path) {
  const p = field(json, 'pattern', path, 'object');
  let regex;
  if (typeof own(p, 'String') === 'string') regex = literalRegex(p.String);
  else if (typeof own(p, 'Regex') === 'string') regex = compileRegex(p.Regex, `${path}.pattern.Regex`);
  else throw unsupported(`${path}.pattern`, show(p));
  const pattern = regexPattern(regex);
  const invert = boolField(json, 'invert', path, false);
  return splitter(invert ? invertPattern(pattern) : pattern, behaviorField(json, path));
}

const BUILDERS = {
  BertPreTokenizer: () => ({
    preTokenize(pts) {
      pts.split((_, ns) => ns.split(charPattern(isWhitespace), 'Removed'));
      pts.split((_, ns) => ns.split(charPattern(isPunctuation), 'Isolated'));
    },
  }),
  Whitespace: () => splitter(invertPattern(regexPattern(WHITESPACE_WORDS)), 'Removed'),
  WhitespaceSplit: () => splitter(charPattern(isWhitespace), 'Removed'),
  Punctuation: (json, path) => splitter(charPattern(isPunctuation), behaviorField(json, path, 'Isolated')),
  Digits: (json, path) => splitter(charPattern(isNumeric),
    boolField(json, 'individual_digits', path, false) ? 'Isolated' : 'Contiguous'),
  CharDelimiterSplit(json, path) {
    const d = field(json, 'delimiter', path, 'string');
    if (Array.from(d).length !== 1) throw unsupported(`${path}.delimiter`, d);
    return splitter(charPattern((c) => c === d), 'Removed');
  },
  Split: splitPreTokenizer,
  Metaspace: metaspace,
  ByteLevel: byteLevel,
  Sequence(json, path, depth) {
    const list = sequence(json, 'pretokenizers', path, depth, buildPreTokenizer);
    return { preTokenize: (pts) => { for (const p of list) p.preTokenize(pts); } };
  },
};

/** Builds a pre-tokenizer from its tokenizer.json object (null at the top → none); `depth` counts enclosing Sequences. */
export function buildPreTokenizer(json, path = 'pre_tokenizer', depth = 0) {
  if (json == null && depth === 0) return null;
  return builderOf(BUILDERS, json, path, depth)(json, path, depth);
}
