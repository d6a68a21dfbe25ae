// Normalizers of tokenizer.json: each is { normalize(normalizedString) } and
// changes the string in place while keeping the alignments (Rust:
// tokenizers/src/normalizers/*.rs).

import {
  isWhitespace, isOther, isChineseChar, isNonspacingMark, isCombiningMark,
  eachGrapheme, utf8, utf8Length,
} from './unicode.js';
import { regexPattern } from './normalized-string.js';
import { compileRegex, literalMatcher } from './regex.js';
import { unsupported, field, boolField, own, show, builderOf, sequence } from './json.js';

// ------------------------------------------------------------------ BertNormalizer

/** Whitespace for BERT: \t \n \r and White_Space. */
const isBertWhitespace = (c) => c === '\t' || c === '\n' || c === '\r' || isWhitespace(c);
/** Control for BERT: Cc/Cf/Co of Unicode 8 except \t \n \r. */
const isBertControl = (c) => c !== '\t' && c !== '\n' && c !== '\r' && isOther(c);

/** Rust's order: clean_text, handle_chinese_chars, strip_accents (null follows lowercase), lowercase. */
function bertNormalizer(json, path) {
  const cleanText = boolField(json, 'clean_text', path, true);
  const chinese = boolField(json, 'handle_chinese_chars', path, true);
  const lowercase = boolField(json, 'lowercase', path, true);
  const stripAccents = own(json, 'strip_accents') == null ? lowercase : boolField(json, 'strip_accents', path);
  return {
    normalize(ns) {
      if (cleanText) {
        ns.filter((c) => !(c === '\0' || c === '\uFFFD' || isBertControl(c)));
        ns.map((c) => (isBertWhitespace(c) ? ' ' : c));
      }
      if (chinese) {
        ns.flatMap((c) => (isChineseChar(c) ? ` ${c} ` : c));
      }
      if (stripAccents) {
        ns.unicodeNormalize('NFD');
        ns.filter((c) => !isNonspacingMark(c));
      }
      if (lowercase) ns.lowercase();
    },
  };
}

// ------------------------------------------------------------------ Precompiled (SentencePiece charsmap)

/**
 * SentencePiece's precompiled_charsmap: a little-endian u32 trie size, a Darts
 * double-array trie over UTF-8 bytes, then NUL-terminated replacement strings the
 * trie values point into.
 */
function parseCharsmap(base64, path) {
  let bytes;
  try {
    const bin = atob(base64);
    bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  } catch {
    throw unsupported(`${path}.precompiled_charsmap`, '(not base64)');
  }
  if (bytes.length < 4) throw unsupported(`${path}.precompiled_charsmap`, '(too short)');
  const view = new DataView(bytes.buffer);
  const trieSize = view.getUint32(0, true);
  if (trieSize % 4 !== 0 || 4 + trieSize > bytes.length) throw unsupported(`${path}.precompiled_charsmap`, '(bad trie size)');
  const trie = new Uint32Array(trieSize / 4);
  for (let k = 0; k < trie.length; k++) trie[k] = view.getUint32(4 + 4 * k, true);
  return { trie, strings: bytes.subarray(4 + trieSize) };
}

/** Darts unit fields, as SentencePiece stores them. */
const hasLeaf = (unit) => ((unit >>> 8) & 1) === 1;
const unitValue = (unit) => unit & 0x7FFFFFFF;
const unitLabel = (unit) => unit & 0x800000FF;
const unitOffset = (unit) => (unit >>> 10) << ((unit & (1 << 9)) >>> 6);

function precompiled(json, path) {
  const { trie, strings } = parseCharsmap(field(json, 'precompiled_charsmap', path, 'string'), path);
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const cache = new Map();

  /**
   * The replacement for `chunk`, or null. Like Rust's spm_precompiled, this takes the
   * *first* (shortest) prefix of the chunk found in the trie, even when it does not
   * cover the whole chunk.
   */
  const lookup = (chunk) => {
    const key = utf8(chunk);
    let node = unitOffset(trie[0]);
    for (const byte of key) {
      if (byte === 0) break;
      node ^= byte;
      const unit = trie[node];
      if (unit === undefined || unitLabel(unit) !== byte) return null;
      node ^= unitOffset(unit);
      if (hasLeaf(unit)) {
        const start = unitValue(trie[node]);
        let end = start;
        while (end < strings.length && strings[end] !== 0) end++;
        return decoder.decode(strings.subarray(start, end));
      }
    }
    return null;
  };
  const transform = (chunk) => {
    let r = cache.get(chunk);
    if (r === undefined) {
      r = lookup(chunk);
      if (cache.size < 65536) cache.set(chunk, r);
    }
    return r;
  };

  return {
    normalize(ns) {
      const changes = new LazyChanges(ns);
      /** The changes for `replacement` in place of `part`, as Rust's precompiled.rs computes them. */
      const replace = (part, replacement) => {
        const diff = Array.from(replacement).length - Array.from(part).length;
        let k = 0;
        const kept = Array.from(replacement).length - Math.max(diff, 0);
        for (const c of replacement) changes.push(c, k++ < kept ? 0 : 1);
        if (diff < 0) changes.adjustLast(diff);
      };
      eachGrapheme(ns.get(), (g) => {
        if (utf8Length(g) < 6) {
          const r = transform(g);
          if (r !== null) { replace(g, r); return; }
        }
        for (const c of g) {
          const r = transform(c);
          if (r !== null) replace(c, r); else changes.plain(c);
        }
      });
      changes.finish();
    },
  };
}

/**
 * [char, change] pairs for Rust's transform over a whole NormalizedString, fed one
 * behind (the last pair can still be adjusted, as precompiled.rs does), and
 * written only from the first pair that changes something: unchanged characters
 * before it cost nothing, and a text the charsmap leaves alone is not rewritten.
 */
class LazyChanges {
  constructor(ns) {
    this.ns = ns;
    this.rewrite = null;
    this.started = false;
    this.plainUnits = 0;   // unchanged characters [c, 0] not written yet (before the first change)
    this.last = null;      // the pending [c, change]
  }

  /** A [c, 0] pair. */
  plain(c) {
    if (this.rewrite === null) this.plainUnits += c.length; else this.push(c, 0);
  }

  push(c, change) {
    this.start();
    if (this.last !== null) this.rewrite?.push(this.last[0], this.last[1]);
    this.last = [c, change];
  }

  /** Adds delta to the change of the last pair, if there is one. */
  adjustLast(delta) {
    this.start();
    if (this.last !== null) this.last[1] += delta;
  }

  start() {
    if (this.started) return;
    this.started = true;
    this.rewrite = this.ns.rewrite();
    const src = this.ns.get();
    if (this.plainUnits === 0) return;
    // The unchanged prefix, its last character pending.
    let lastStart = this.plainUnits - 1;
    if (lastStart > 0 && (src.charCodeAt(lastStart) & 0xFC00) === 0xDC00 && (src.charCodeAt(lastStart - 1) & 0xFC00) === 0xD800) lastStart--;
    if (this.rewrite !== null) {
      if (this.rewrite.offset === 0) this.rewrite.keepUnits(lastStart);
      else for (const c of src.slice(0, lastStart)) this.rewrite.push(c, 0);
    }
    this.last = [src.slice(lastStart, this.plainUnits), 0];
  }

  finish() {
    if (this.rewrite === null) return;
    if (this.last !== null) this.rewrite.push(this.last[0], this.last[1]);
    this.rewrite.finish();
  }
}

// ------------------------------------------------------------------ the others

/** Replace: a literal ({String}) or an Oniguruma regex ({Regex}) by `content`. */
export function replacePattern(json, path) {
  const p = field(json, 'pattern', path, 'object');
  if (typeof own(p, 'String') === 'string') return regexPattern(literalMatcher(p.String));
  if (typeof own(p, 'Regex') === 'string') return regexPattern(compileRegex(p.Regex, `${path}.pattern.Regex`));
  throw unsupported(`${path}.pattern`, show(p));
}

function stripNormalizer(json, path) {
  const left = boolField(json, 'strip_left', path);
  const right = boolField(json, 'strip_right', path);
  return { normalize: (ns) => { ns.strip(left, right); } };
}

/** Rust's Nmt normalizer: drops some controls, maps some spaces to ' '. */
const NMT_REMOVED = (cp) => (cp >= 0x1 && cp <= 0x8) || cp === 0xB || (cp >= 0xE && cp <= 0x1F)
  || cp === 0x7F || cp === 0x8F || cp === 0x9F;
const NMT_SPACES = new Set([0x9, 0xA, 0xC, 0xD, 0x1680, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F,
  0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD]);

const unicodeForm = (form) => ({ normalize: (ns) => { ns.unicodeNormalize(form); } });

const BUILDERS = {
  BertNormalizer: bertNormalizer,
  Precompiled: precompiled,
  NFC: () => unicodeForm('NFC'),
  NFD: () => unicodeForm('NFD'),
  NFKC: () => unicodeForm('NFKC'),
  NFKD: () => unicodeForm('NFKD'),
  Lowercase: () => ({ normalize: (ns) => { ns.lowercase(); } }),
  Strip: stripNormalizer,
  StripAccents: () => ({ normalize: (ns) => { ns.filter((c) => !isCombiningMark(c)); } }),
  Nmt: () => ({
    normalize(ns) {
      ns.filter((c) => !NMT_REMOVED(c.codePointAt(0)));
      ns.map((c) => (NMT_SPACES.has(c.codePointAt(0)) ? ' ' : c));
    },
  }),
  Replace(json, path) {
    const pattern = replacePattern(json, path);
    const content = field(json, 'content', path, 'string');
    return { normalize: (ns) => { ns.replace(pattern, content); } };
  },
  Prepend(json, path) {
    const prefix = field(json, 'prepend', path, 'string');
    return { normalize: (ns) => { if (!ns.isEmpty()) ns.prepend(prefix); } };
  },
  Sequence(json, path, depth) {
    const list = sequence(json, 'normalizers', path, depth, buildNormalizer);
    return { normalize: (ns) => { for (const n of list) n.normalize(ns); } };
  },
};

/** Builds a normalizer from its tokenizer.json object (null at the top → none); `depth` counts enclosing Sequences. */
export function buildNormalizer(json, path = 'normalizer', depth = 0) {
  if (json == null && depth === 0) return null;
  return builderOf(BUILDERS, json, path, depth)(json, path, depth);
}
