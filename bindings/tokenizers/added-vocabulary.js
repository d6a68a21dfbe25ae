// Added tokens (tokenizer.json `added_tokens`): matched in the input before the
// model runs, as Rust's tokenizers/src/tokenizer/added_vocabulary.rs does. Tokens
// with normalized: false are found in the raw text first; the remaining pieces
// are then normalized and searched for the tokens with normalized: true (in
// their normalized form). Matching is leftmost-longest; single_word, lstrip and
// rstrip are applied to each match. Building and matching are linear in the
// total length of the tokens and of the text.

import { NormalizedString } from './normalized-string.js';
import { unsupported, field, own, ID_LIMIT } from './json.js';

const WORD_CHAR = /[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]/u; // Rust regex's \w
const SPACE = /\p{White_Space}/u;

/** A growable Int32Array. */
function grown(a, n) {
  if (n <= a.length) return a;
  const b = new Int32Array(Math.max(n, 2 * a.length));
  b.set(a);
  return b;
}

/**
 * Leftmost-longest, non-overlapping matches of many strings over UTF-16 units
 * (Rust uses the aho-corasick crate's LeftmostLongest). Of two equal strings
 * (tokens equal once normalized) the first in the file wins; Rust's pick
 * follows a hash map's order and changes from run to run. An Aho-Corasick automaton over the *reversed*
 * strings, run backwards over a block of the text, gives the longest string
 * that starts at each position of the block; the matches are then taken left to
 * right. A block of B >= the longest string costs B + that length steps, so
 * the whole text costs at most twice its length: linear, where trying every
 * string at every position cost the text's length times the longest string.
 */
class LongestMatcher {
  constructor() {
    this.count = 1;                  // nodes; 0 is the root
    this.out = new Int32Array(64).fill(-1);   // id of the string ending at the node, or -1
    this.depth = new Int32Array(64);
    this.firstChild = new Int32Array(64).fill(-1);
    this.nextSibling = new Int32Array(64).fill(-1);
    this.label = new Int32Array(64);
    this.maxLength = 0;
    this.mask = 63;                  // the (node, unit) → child hash table
    this.keys = new Float64Array(64).fill(-1);
    this.children = new Int32Array(64);
    this.fail = null;
    this.best = null;                // the deepest node with a string on the failure chain, or -1
    this.rootChild = null;           // the root's children by unit: most steps of a scan start there
    this.scratch = null;
  }

  child(node, unit) {
    const key = node * 65536 + unit;
    for (let i = (Math.imul(node, 0x9E3779B1) ^ Math.imul(unit, 0x85EBCA77)) & this.mask; ; i = (i + 1) & this.mask) {
      const k = this.keys[i];
      if (k === key) return this.children[i];
      if (k === -1) return -1;
    }
  }

  setChild(node, unit, c) {
    if (2 * this.count > this.mask) this.rehash();
    const key = node * 65536 + unit;
    let i = (Math.imul(node, 0x9E3779B1) ^ Math.imul(unit, 0x85EBCA77)) & this.mask;
    while (this.keys[i] !== -1) i = (i + 1) & this.mask;
    this.keys[i] = key;
    this.children[i] = c;
  }

  rehash() {
    const { keys, children } = this;
    this.mask = 2 * (this.mask + 1) - 1;
    this.keys = new Float64Array(this.mask + 1).fill(-1);
    this.children = new Int32Array(this.mask + 1);
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] !== -1) this.setChild(Math.floor(keys[i] / 65536), keys[i] % 65536, children[i]);
    }
  }

  newNode(parent, unit) {
    const n = this.count++;
    if (n >= this.out.length) {
      for (const name of ['out', 'firstChild', 'nextSibling']) { const a = grown(this[name], n + 1); a.fill(-1, this[name].length); this[name] = a; }
      this.depth = grown(this.depth, n + 1);
      this.label = grown(this.label, n + 1);
    }
    this.depth[n] = this.depth[parent] + 1;
    this.label[n] = unit;
    this.nextSibling[n] = this.firstChild[parent];
    this.firstChild[parent] = n;
    this.setChild(parent, unit, n);
    return n;
  }

  /** Adds a non-empty string (reversed in the automaton); call build() after the last one. */
  add(text, id) {
    let node = 0;
    for (let i = text.length - 1; i >= 0; i--) {
      const u = text.charCodeAt(i);
      const c = this.child(node, u);
      node = c === -1 ? this.newNode(node, u) : c;
    }
    if (this.out[node] === -1) this.out[node] = id;
    this.maxLength = Math.max(this.maxLength, text.length);
  }

  /** The failure links, breadth first (a node's link is shallower than the node). */
  build() {
    const n = this.count;
    this.fail = new Int32Array(n);
    this.best = new Int32Array(n).fill(-1);
    const queue = new Int32Array(n);
    let head = 0, tail = 0;
    for (let c = this.firstChild[0]; c !== -1; c = this.nextSibling[c]) { queue[tail++] = c; this.best[c] = this.out[c] !== -1 ? c : -1; }
    while (head < tail) {
      const v = queue[head++];
      for (let w = this.firstChild[v]; w !== -1; w = this.nextSibling[w]) {
        const u = this.label[w];
        let f = this.fail[v];
        while (f !== 0 && this.child(f, u) === -1) f = this.fail[f];
        const cf = this.child(f, u);
        this.fail[w] = cf === -1 ? 0 : cf;
        this.best[w] = this.out[w] !== -1 ? w : this.best[this.fail[w]];
        queue[tail++] = w;
      }
    }
    if (n > 1) {
      this.rootChild = new Int32Array(65536);
      for (let c = this.firstChild[0]; c !== -1; c = this.nextSibling[c]) this.rootChild[this.label[c]] = c;
    }
    return this;
  }

  /** Calls fn(start, end, id) for each leftmost-longest match in s, left to right. */
  each(s, fn) {
    if (this.count === 1 || s.length === 0) return;
    const block = Math.max(4096, this.maxLength);
    // A callback may run another matcher, never this one: the scratch arrays are reused.
    if (this.scratch === null) this.scratch = { len: new Int32Array(block), id: new Int32Array(block) };
    const { len, id } = this.scratch;
    const n = s.length;
    let blockStart = 0, blockEnd = 0;
    for (let i = 0; i < n;) {
      if (i >= blockEnd) {
        blockStart = i;
        blockEnd = Math.min(n, i + block);
        let state = 0;
        for (let j = Math.min(n, blockEnd + this.maxLength) - 1; j >= blockStart; j--) {
          const u = s.charCodeAt(j);
          let c;
          while (state !== 0 && (c = this.child(state, u)) === -1) state = this.fail[state];
          state = state === 0 ? this.rootChild[u] : c;
          if (j < blockEnd) {
            const b = this.best[state];
            len[j - blockStart] = b === -1 ? 0 : this.depth[b];
            id[j - blockStart] = b === -1 ? -1 : this.out[b];
          }
        }
      }
      const l = len[i - blockStart];
      if (l > 0) { fn(i, i + l, id[i - blockStart]); i += l; } else i++;
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

/** Start of the whitespace run that ends at s[end], but not before `floor` (a walk bounded by the previous match). */
function trailingSpaceStart(s, end, floor) {
  let i = end;
  while (i > floor) {
    const c = charBefore(s, i);
    if (!SPACE.test(c)) break;
    i -= c.length;
  }
  return Math.max(i, floor);
}

/** End of the whitespace run that starts at s[start]. */
function leadingSpaceEnd(s, start) {
  let i = start;
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
    this.idLimit = 0;            // one past the largest id
    this.order = [];             // ids in the order of the file
    list.forEach((t, i) => this.add(t, `added_tokens[${i}]`, model, normalizer));
    this.raw = new LongestMatcher();
    this.normalizedMatcher = new LongestMatcher();
    for (const id of this.order) {
      const t = this.byId.get(id);
      if (t.normalized) this.normalizedMatcher.add(this.normalizedForm.get(id) ?? t.content, id);
      else this.raw.add(t.content, id);
    }
    this.raw.build();
    this.normalizedMatcher.build();
    /** Added tokens outside the model vocabulary (they count in vocabSize). */
    this.extra = 0;
    for (const content of this.byContent.keys()) if (!model.vocab.has(content)) this.extra++;
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
      const max = this.idLimit - 1; // the largest added id so far, kept as we go (a scan of all of them made n tokens cost n^2)
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
    if (!this.byId.has(id)) this.order.push(id);
    this.byId.set(id, token);
    if (id >= this.idLimit) this.idLimit = id + 1;
  }

  /** Calls fn(start, end, id or null) for the pieces of `s`, in order, covering it. */
  findMatches(s, matcher, fn) {
    if (s.length === 0) { fn(0, 0, null); return; }
    let from = 0;
    // The whitespace run after the last rstrip match: the next matches may start inside it.
    let runStart = -1, runEnd = -1;
    matcher.each(s, (mStart, mEnd, id) => {
      const t = this.byId.get(id);
      let start = mStart, end = mEnd;
      if (t.single_word) {
        const spaceBefore = start === 0 || !endsWithWord(s.slice(0, start));
        const spaceAfter = end === s.length || !startsWithWord(s.slice(end));
        if (!spaceBefore || !spaceAfter) return;
      }
      if (t.lstrip) start = trailingSpaceStart(s, start, from);
      if (t.rstrip) {
        if (end < runStart || end > runEnd) { runStart = end; runEnd = leadingSpaceEnd(s, end); }
        end = runEnd;
      }
      if (from < start) fn(from, start, null);
      fn(start, end, id);
      from = end;
    });
    if (from !== s.length) fn(from, s.length, null);
  }

  /** Splits a NormalizedString around the tokens of `matcher`: emit(piece, id) for a token, emit(piece, null) between them (non-empty pieces only). */
  split(ns, matcher, emit) {
    this.findMatches(ns.get(), matcher, (start, end, id) => { if (start < end) emit(ns.slice(start, end), id); });
  }

  /**
   * The pieces of `sequence`, in order: emit(piece, id) for an added token,
   * emit(piece, null) for the normalized text between them. Tokens with
   * normalized: false are found in the raw text first; the remaining pieces are
   * normalized and searched for the others. Once stopped() (truncation), the rest is skipped.
   */
  extractAndNormalize(normalizer, sequence, emit, stopped = () => false) {
    this.split(NormalizedString.from(sequence), this.raw, (piece, id) => {
      if (stopped()) return;
      if (id !== null) { emit(piece, id); return; }
      if (normalizer) normalizer.normalize(piece);
      this.split(piece, this.normalizedMatcher, emit);
    });
  }

  /** The string an id decodes from (the normalized form for normalized tokens). */
  idToToken(id) {
    if (!this.byId.has(id)) return undefined;
    return this.normalizedForm.get(id) ?? this.byId.get(id).content;
  }
}
