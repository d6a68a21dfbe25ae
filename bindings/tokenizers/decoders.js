// Decoders of tokenizer.json: a decoder is { decodeChain(tokens) → tokens } and
// the final string is the concatenation (Rust: tokenizers/src/decoders/*.rs).

import { BYTE_TO_CHAR, prependScheme, replacementChar } from './pre-tokenizers.js';
import { replacePattern } from './normalizers.js';
import { utf8 } from './unicode.js';
import { field, boolField, unsupported, builderOf, sequence } from './json.js';

const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

// ignoreBOM: a leading U+FEFF is text here, not a byte-order mark to drop.
const lossyDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
const strictDecoder = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });
/** UTF-8 bytes to a string, each maximal invalid subsequence becoming U+FFFD (Rust's from_utf8_lossy). */
const lossy = (bytes) => lossyDecoder.decode(bytes);
/** UTF-8 bytes to a string, or null when they are not valid UTF-8. */
function strict(bytes) {
  try { return strictDecoder.decode(bytes); } catch { return null; }
}

/** GPT-2 byte-level: the alphabet characters back to bytes (a token with other characters keeps its UTF-8). */
function byteLevel() {
  return {
    decodeChain(tokens) {
      const bytes = [];
      for (const t of tokens) {
        const mapped = Array.from(t, (c) => CHAR_TO_BYTE.get(c));
        for (const b of mapped.every((b) => b !== undefined) ? mapped : utf8(t)) bytes.push(b);
      }
      return [lossy(Uint8Array.from(bytes))];
    },
  };
}

/** The detokenizing cleanup of BERT (spaces before punctuation and contractions). */
function wordPieceCleanup(s) {
  return s.replaceAll(' .', '.').replaceAll(' ?', '?').replaceAll(' !', '!').replaceAll(' ,', ',')
    .replaceAll(" ' ", "'").replaceAll(" n't", "n't").replaceAll(" 'm", "'m").replaceAll(' do not', " don't")
    .replaceAll(" 's", "'s").replaceAll(" 've", "'ve").replaceAll(" 're", "'re");
}

function wordPiece(json, path) {
  const prefix = field(json, 'prefix', path, 'string', '##');
  const cleanup = boolField(json, 'cleanup', path, true);
  return {
    decodeChain: (tokens) => tokens.map((t, i) => {
      let s = t;
      if (i !== 0) s = t.startsWith(prefix) ? t.slice(prefix.length) : ` ${t}`;
      return cleanup ? wordPieceCleanup(s) : s;
    }),
  };
}

/** Metaspace: the replacement character becomes a space, except in the first token unless prepend_scheme is never. */
function metaspace(json, path) {
  const replacement = replacementChar(json, path);
  const scheme = prependScheme(json, path);
  return {
    decodeChain: (tokens) => tokens.map((t, i) => Array.from(t, (c) => {
      if (c !== replacement) return c;
      return i === 0 && scheme !== 'never' ? '' : ' ';
    }).join('')),
  };
}

/** <0xHH> tokens back to bytes; a run that is not valid UTF-8 gives one U+FFFD per byte. */
function byteFallback() {
  return {
    decodeChain(tokens) {
      const out = [];
      let bytes = [];
      const flush = () => {
        if (bytes.length === 0) return;
        const s = strict(Uint8Array.from(bytes));
        if (s !== null) out.push(s); else for (let k = 0; k < bytes.length; k++) out.push('\uFFFD');
        bytes = [];
      };
      for (const t of tokens) {
        const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(t);
        if (m) bytes.push(parseInt(m[1], 16)); else { flush(); out.push(t); }
      }
      flush();
      return out;
    },
  };
}

function strip(json, path) {
  const content = field(json, 'content', path, 'string');
  if (Array.from(content).length !== 1) throw unsupported(`${path}.content`, content);
  const start = field(json, 'start', path, 'integer');
  const stop = field(json, 'stop', path, 'integer');
  return {
    decodeChain: (tokens) => tokens.map((t) => {
      const chars = Array.from(t);
      let from = 0;
      while (from < Math.min(start, chars.length) && chars[from] === content) from++;
      let to = chars.length;
      for (let k = 0; k < stop && to > 0 && chars[to - 1] === content; k++) to--;
      return chars.slice(from, Math.max(from, to)).join('');
    }),
  };
}

function replace(json, path) {
  const pattern = replacePattern(json, path);
  const content = field(json, 'content', path, 'string');
  return {
    decodeChain: (tokens) => tokens.map((t) => {
      const parts = [];
      pattern.segments(t, (a, b, isMatch) => parts.push(isMatch ? content : t.slice(a, b)));
      return parts.join('');
    }),
  };
}

const BUILDERS = {
  ByteLevel: byteLevel,
  WordPiece: wordPiece,
  Metaspace: metaspace,
  BPEDecoder: (json, path) => {
    const suffix = field(json, 'suffix', path, 'string', '</w>');
    return { decodeChain: (tokens) => tokens.map((t, i) => t.replaceAll(suffix, i === tokens.length - 1 ? '' : ' ')) };
  },
  ByteFallback: byteFallback,
  Fuse: () => ({ decodeChain: (tokens) => [tokens.join('')] }),
  Strip: strip,
  Replace: replace,
  Sequence(json, path, depth) {
    const list = sequence(json, 'decoders', path, depth, buildDecoder);
    return {
      decodeChain(tokens) {
        for (const d of list) tokens = d.decodeChain(tokens);
        return tokens;
      },
    };
  },
};

/** Builds a decoder from its tokenizer.json object (null at the top → none); `depth` counts enclosing Sequences. */
export function buildDecoder(json, path = 'decoder', depth = 0) {
  if (json == null && depth === 0) return null;
  return builderOf(BUILDERS, json, path, depth)(json, path, depth);
}
