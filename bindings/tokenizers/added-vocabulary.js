// Added tokens (tokenizer.json `added_tokens`): matched in the input before the
// model runs, as Rust's tokenizers/src/tokenizer/added_vocabulary.rs does. Tokens
// with normalized: false are found in the raw text first; the remaining pieces
// are then normalized and searched for the tokens with normalized: true (in
// their normalized form). Matching is leftmost-longest; single_word, lstrip and
// rstrip are applied to each match.

import { NormalizedString } from './normalized-string.js';
import { PreTokenizedString } from './pre-tokenizers.js';
import { unsupported, field, own, ID_LIMIT } from './json.js';

const WORD_CHAR = /[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]/u; // Rust regex's \w
const SPACE = /\p{White_Space}/u;

/** A trie over UTF-16 units that finds the leftmost-longest non-overlapping matches. */
class MatchTrie {
  constructor() { this.root = new Map(); }
  add(text, id) {
    let node = this.root;
    for (let i = 0; i < text.length; i++) {
      const u = text.charCodeAt(i);
      if (!node.has(u)) node.set(u, new Map());
      node = node.get(u);
    }
    node.id = id;
  }
  /** [start, end, id] of each leftmost-longest match, left to right. */
  *matches(s) {
    for (let i = 0; i < s.length;) {
      let node = this.root;
      let best = null;
      for (let j = i; j < s.length; j++) {
        node = node.get(s.charCodeAt(j));
        if (node === undefined) break;
        if (node.id !== undefined) best = [i, j + 1, node.id];
      }
      if (best) { yield best; i = best[1]; } else i++;
    }
  }
}

/** The last character of s[0, end) (a whole surrogate pair when there is one). */
function charBefore(s, end) {
  const lo = s.charCodeAt(end - 1);
  const pair = end > 1 && lo >= 0xDC00 && lo <= 0xDFFF && (s.charCodeAt(end - 2) & 0xFC00) === 0xD800;
  return s.slice(end - (pair ? 2 : 1), end);
}

const endsWithWord = (s) => s.length > 0 && WORD_CHAR.test(charBefore(s, s.length));
const startsWithWord = (s) => s.length > 0 && WORD_CHAR.test(String.fromCodePoint(s.codePointAt(0)));

/** Start of the whitespace run that ends `s`. */
function trailingSpaceStart(s) {
  let i = s.length;
  while (i > 0) {
    const c = charBefore(s, i);
    if (!SPACE.test(c)) break;
    i -= c.length;
  }
  return i;
}

/** Length of the whitespace run that starts `s`. */
function leadingSpaceLength(s) {
  let i = 0;
  while (i < s.length) {
    const c = String.fromCodePoint(s.codePointAt(i));
    if (!SPACE.test(c)) break;
    i += c.length;
  }
  return i;
}

export class AddedVocabulary {
  /**
   * @param {object[]} list      tokenizer.json added_tokens
   * @param {object} model       the model (vocab, byId)
   * @param {object|null} normalizer
   */
  constructor(list, model, normalizer) {
    this.byContent = new Map();  // content → id
    this.byId = new Map();       // id → { content, single_word, lstrip, rstrip, normalized, special }
    this.normalizedForm = new Map(); // id → normalized content, when it differs
    this.special = new Set();
    this.raw = new MatchTrie();
    this.normalizedTrie = new MatchTrie();
    list.forEach((t, i) => this.add(t, `added_tokens[${i}]`, model, normalizer));
    this.idLimit = 0;
    for (const id of this.byId.keys()) if (id >= this.idLimit) this.idLimit = id + 1;
    for (const [id, t] of this.byId) {
      if (t.normalized) this.normalizedTrie.add(this.normalizedForm.get(id) ?? t.content, id);
      else this.raw.add(t.content, id);
    }
  }

  /** Ids as Rust assigns them: the model's id for a known token, else the next free id (the JSON `id` is not used). */
  add(json, path, model, normalizer) {
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw unsupported(path, json);
    // Rust assigns the ids itself (below); the file's id must still be a valid one.
    if (own(json, 'id') !== undefined) field(json, 'id', path, 'id');
    const content = field(json, 'content', path, 'string');
    const flag = (name, fallback) => field(json, name, path, 'boolean', fallback);
    const special = flag('special', false);
    const token = {
      content, special,
      single_word: flag('single_word', false), lstrip: flag('lstrip', false), rstrip: flag('rstrip', false),
      normalized: flag('normalized', !special),
    };
    if (content === '') return;
    let id = this.byContent.get(content) ?? model.vocab.get(content);
    if (id === undefined) {
      const vocabSize = model.vocab.size;
      let max = -1;
      for (const k of this.byId.keys()) max = Math.max(max, k);
      id = max < 0 ? vocabSize : (max >= vocabSize || vocabSize === 0 ? max + 1 : vocabSize);
      if (id >= ID_LIMIT) throw unsupported(`${path}.content`, content, 'its id would be 2^31 or more');
    }
    if (token.normalized && normalizer) {
      const ns = NormalizedString.from(content);
      normalizer.normalize(ns);
      if (ns.get() !== content) this.normalizedForm.set(id, ns.get());
    }
    this.byContent.set(content, id);
    if (special) this.special.add(content);
    this.byId.set(id, token);
  }

  /** The pieces of `s`: [start, end, id or null], covering it. */
  findMatches(s, trie) {
    if (s.length === 0) return [[0, 0, null]];
    const out = [];
    let from = 0;
    for (const [mStart, mEnd, id] of trie.matches(s)) {
      const t = this.byId.get(id);
      let start = mStart, end = mEnd;
      if (t.single_word) {
        const spaceBefore = start === 0 || !endsWithWord(s.slice(0, start));
        const spaceAfter = end === s.length || !startsWithWord(s.slice(end));
        if (!spaceBefore || !spaceAfter) continue;
      }
      if (t.lstrip) start = Math.max(trailingSpaceStart(s.slice(0, start)), from);
      if (t.rstrip) end += leadingSpaceLength(s.slice(end));
      if (from < start) out.push([from, start, null]);
      out.push([start, end, id]);
      from = end;
    }
    if (from !== s.length) out.push([from, s.length, null]);
    return out;
  }

  /** Splits a NormalizedString around the matches; matched pieces carry their token. */
  splitWithTokens(ns, trie) {
    return this.findMatches(ns.get(), trie).map(([start, end, id]) => {
      const piece = ns.slice(start, end);
      if (id === null) return piece;
      return { ns: piece, tokens: [{ id, value: piece.get(), start: 0, end: piece.length }] };
    });
  }

  /** The PreTokenizedString of `sequence`: added tokens extracted, the rest normalized. */
  extractAndNormalize(normalizer, sequence) {
    const pts = new PreTokenizedString(sequence);
    pts.split((_, ns) => this.splitWithTokens(ns, this.raw));
    pts.split((_, ns) => {
      if (normalizer) normalizer.normalize(ns);
      return this.splitWithTokens(ns, this.normalizedTrie);
    });
    return pts;
  }

  /** The string an id decodes from (the normalized form for normalized tokens). */
  idToToken(id) {
    if (!this.byId.has(id)) return undefined;
    return this.normalizedForm.get(id) ?? this.byId.get(id).content;
  }
}
