// The pre-tokenizers of tokenizer.json (Rust: tokenizers/src/pre_tokenizers/*.rs).
// A pre-tokenizer is { preTokenize(ns, emit) }: it splits one NormalizedString
// piece further and calls emit(piece) for each non-empty piece, in order (Rust
// splits every piece with the first pre-tokenizer, then with the next...; a piece
// never depends on the others, so going depth first gives the same pieces
// without a list of all of them).

import { charPattern, regexPattern, regExpMatcher, invertPattern, unitsAt } from './normalized-string.js';
import { isWhitespace, isPunctuation, isNumeric } from './unicode.js';
import { compileRegex, literalMatcher } from './regex.js';
import { unsupported, field, boolField, own, show, builderOf, sequence } from './json.js';

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
const BYTE_UNIT = Uint16Array.from(BYTE_TO_CHAR, (c) => c.charCodeAt(0));

/**
 * Each character becomes one alphabet character per UTF-8 byte, the first
 * replacing it, the others inserted (a lone surrogate is U+FFFD, as TextEncoder
 * and Rust's strings have it).
 */
function toByteAlphabet(ns) {
  const s = ns.get();
  ns.transformWith((r) => {
    for (let i = 0; i < s.length;) {
      const m = unitsAt(s, i);
      let cp = m === 2 ? s.codePointAt(i) : s.charCodeAt(i);
      i += m;
      if (cp < 0x80) { r.pushUnit(BYTE_UNIT[cp], 0); continue; }
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
      if (cp < 0x800) {
        r.pushUnit(BYTE_UNIT[0xC0 | (cp >> 6)], 0);
      } else if (cp < 0x10000) {
        r.pushUnit(BYTE_UNIT[0xE0 | (cp >> 12)], 0);
        r.pushUnit(BYTE_UNIT[0x80 | ((cp >> 6) & 63)], 1);
      } else {
        r.pushUnit(BYTE_UNIT[0xF0 | (cp >> 18)], 0);
        r.pushUnit(BYTE_UNIT[0x80 | ((cp >> 12) & 63)], 1);
        r.pushUnit(BYTE_UNIT[0x80 | ((cp >> 6) & 63)], 1);
      }
      r.pushUnit(BYTE_UNIT[0x80 | (cp & 63)], 1);
    }
  });
}

const BYTE_LEVEL_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

function byteLevel(json, path) {
  const addPrefixSpace = boolField(json, 'add_prefix_space', path, true);
  const useRegex = boolField(json, 'use_regex', path, true);
  const pattern = regexPattern(compileRegex(BYTE_LEVEL_REGEX, `${path} (GPT-2 split)`));
  return {
    preTokenize(ns, emit) {
      if (addPrefixSpace && !ns.get().startsWith(' ')) ns.prepend(' ');
      const bytes = (piece) => { toByteAlphabet(piece); emit(piece); };
      if (useRegex) ns.split(pattern, 'Isolated', bytes); else bytes(ns);
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
    preTokenize(ns, emit) {
      ns.replace(spaces, replacement);
      const prepend = scheme === 'always' || (scheme === 'first' && ns.offsetsOriginal()[0] === 0);
      if (prepend && !ns.get().startsWith(replacement)) ns.prepend(replacement);
      if (split) ns.split(marks, 'MergedWithNext', emit); else if (!ns.isEmpty()) emit(ns);
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
  preTokenize(ns, emit) { ns.split(pattern, behavior, emit); },
});

// Rust's regex crate \w (Alphabetic, M, Nd, Pc, Join_Control) and \s.
const RUST_WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}';
const WHITESPACE_WORDS = regExpMatcher(new RegExp(`[${RUST_WORD}]+|[^${RUST_WORD}\\p{White_Space}]+`, 'gu'));

function splitPreTokenizer(json, path) {
  const p = field(json, 'pattern', path, 'object');
  let matcher;
  if (typeof own(p, 'String') === 'string') matcher = literalMatcher(p.String);
  else if (typeof own(p, 'Regex') === 'string') matcher = compileRegex(p.Regex, `${path}.pattern.Regex`);
  else throw unsupported(`${path}.pattern`, show(p));
  const pattern = regexPattern(matcher);
  const invert = boolField(json, 'invert', path, false);
  return splitter(invert ? invertPattern(pattern) : pattern, behaviorField(json, path));
}

const BUILDERS = {
  BertPreTokenizer: () => {
    const spaces = charPattern(isWhitespace), punctuation = charPattern(isPunctuation);
    return {
      preTokenize(ns, emit) {
        ns.split(spaces, 'Removed', (word) => word.split(punctuation, 'Isolated', emit));
      },
    };
  },
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
    const run = (k, ns, emit) => {
      if (k === list.length) emit(ns); else list[k].preTokenize(ns, (piece) => run(k + 1, piece, emit));
    };
    return { preTokenize: (ns, emit) => run(0, ns, emit) };
  },
};

/** Builds a pre-tokenizer from its tokenizer.json object (null at the top → none); `depth` counts enclosing Sequences. */
export function buildPreTokenizer(json, path = 'pre_tokenizer', depth = 0) {
  if (json == null && depth === 0) return null;
  return builderOf(BUILDERS, json, path, depth)(json, path, depth);
}
