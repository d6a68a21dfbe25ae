// Models of tokenizer.json: WordPiece, BPE, Unigram, WordLevel (Rust:
// tokenizers/src/models/*). A model turns one pre-tokenized piece into tokens
// { id, value, start, end } (offsets in UTF-16 units of the piece) and maps
// tokens and ids both ways.

import { SwapformerError } from '../utils/errors.js';
import { utf8 } from './unicode.js';
import { unsupported, field, boolField, optionalField, isId, builderOf, ID_LIMIT } from './json.js';

/** Token → id map from a tokenizer.json vocab object (own entries; ids in [0, 2^31)). */
function vocabMap(vocab, path) {
  const map = new Map();
  for (const [token, id] of Object.entries(vocab)) {
    if (!isId(id)) throw unsupported(`${path}.vocab[${JSON.stringify(token.slice(0, 80))}]`, id, 'an id must be an integer in [0, 2^31)');
    map.set(token, id);
  }
  return map;
}

/** Id → token map (the inverse of a vocab map). */
function reverse(map) {
  const r = new Map();
  for (const [token, id] of map) r.set(id, token);
  return r;
}

/** One past the largest id of a vocab map (ids may have holes). */
function idLimitOf(map) {
  let limit = 0;
  for (const id of map.values()) if (id >= limit) limit = id + 1;
  return limit;
}

const missingUnk = (path, what) => new SwapformerError('UNSUPPORTED_MODEL',
  `tokenizer.json: ${path} = ${JSON.stringify(what)} is not in the vocabulary but an unknown token needs it`);

/** The [start, end) of each code point of s. */
function charSpans(s) {
  const spans = [];
  for (let i = 0; i < s.length;) {
    const n = s.codePointAt(i) > 0xFFFF ? 2 : 1;
    spans.push([i, i + n]);
    i += n;
  }
  return spans;
}

// ------------------------------------------------------------------ WordPiece

function wordPiece(json, path) {
  const vocab = vocabMap(field(json, 'vocab', path, 'object'), path);
  const unk = field(json, 'unk_token', path, 'string', '[UNK]');
  const prefix = field(json, 'continuing_subword_prefix', path, 'string', '##');
  const maxChars = field(json, 'max_input_chars_per_word', path, 'integer', 100);
  const byId = reverse(vocab);
  // No piece longer than the longest vocabulary entry can match: start there.
  let longest = 0;
  for (const t of vocab.keys()) longest = Math.max(longest, Array.from(t).length);
  const unkToken = (s) => {
    if (!vocab.has(unk)) throw missingUnk(`${path}.unk_token`, unk);
    return [{ id: vocab.get(unk), value: unk, start: 0, end: s.length }];
  };
  return {
    vocab, byId, idLimit: idLimitOf(vocab),
    /** Greedy longest match first; a word with an unmatched piece becomes one unknown token. */
    tokenize(s) {
      const spans = charSpans(s);
      if (spans.length > maxChars) return unkToken(s);
      const out = [];
      let c0 = 0; // index of the first character of the next piece
      while (c0 < spans.length) {
        let c1 = Math.min(spans.length, c0 + longest);
        let found = null;
        while (c1 > c0) {
          const piece = (c0 > 0 ? prefix : '') + s.slice(spans[c0][0], spans[c1 - 1][1]);
          const id = vocab.get(piece);
          if (id !== undefined) { found = { id, value: piece, start: spans[c0][0], end: spans[c1 - 1][1] }; break; }
          c1--;
        }
        if (found === null) return unkToken(s);
        out.push(found);
        c0 = c1;
      }
      return out;
    },
  };
}

// ------------------------------------------------------------------ BPE

/** A binary min-heap of merges ordered by rank, then position (Rust's Merge ordering). */
class MergeQueue {
  constructor() { this.items = []; }
  get size() { return this.items.length; }
  static less(a, b) { return a.rank !== b.rank ? a.rank < b.rank : a.pos < b.pos; }
  push(item) {
    const h = this.items;
    h.push(item);
    for (let i = h.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!MergeQueue.less(h[i], h[parent])) break;
      [h[i], h[parent]] = [h[parent], h[i]];
      i = parent;
    }
  }
  pop() {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0) {
      h[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < h.length && MergeQueue.less(h[l], h[m])) m = l;
        if (r < h.length && MergeQueue.less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

/** Merges as [left, right] pairs, from "a b" strings or [a, b] arrays. */
function mergePairs(merges, path) {
  return merges.map((m, i) => {
    const pair = typeof m === 'string' ? m.split(' ') : m;
    if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((p) => typeof p === 'string')) {
      throw unsupported(`${path}.merges[${i}]`, m);
    }
    return pair;
  });
}

/**
 * The merges: (left id, right id) → (rank, merged id), in an open-addressing hash
 * table of typed arrays (a Map keyed by pairs is several times slower to build
 * and to query, and BPE queries it for every adjacent pair).
 */
class MergeTable {
  constructor(count) {
    let size = 16;
    while (size < 2 * count) size *= 2;
    this.mask = size - 1;
    this.keys = new Int32Array(2 * size).fill(-1);
    this.values = new Int32Array(2 * size);
  }
  slot(a, b) {
    let i = (Math.imul(a, 0x9E3779B1) ^ Math.imul(b, 0x85EBCA77)) & this.mask;
    while (this.keys[2 * i] !== -1 && (this.keys[2 * i] !== a || this.keys[2 * i + 1] !== b)) i = (i + 1) & this.mask;
    return i;
  }
  /** Sets (a, b) → (rank, id); a later duplicate overrides an earlier one, as in Rust. */
  set(a, b, rank, id) {
    const i = this.slot(a, b);
    this.keys[2 * i] = a; this.keys[2 * i + 1] = b;
    this.values[2 * i] = rank; this.values[2 * i + 1] = id;
  }
  /** The slot of (a, b), or -1. */
  find(a, b) {
    const i = this.slot(a, b);
    return this.keys[2 * i] === -1 ? -1 : i;
  }
  rank(slot) { return this.values[2 * slot]; }
  id(slot) { return this.values[2 * slot + 1]; }
}

const CACHE_LIMIT = 10000;

function bpe(json, path) {
  const vocab = vocabMap(field(json, 'vocab', path, 'object'), path);
  const byId = reverse(vocab);
  const dropout = optionalField(json, 'dropout', path, 'number');
  if (dropout !== null && dropout !== 0) throw unsupported(`${path}.dropout`, dropout);
  const unk = optionalField(json, 'unk_token', path, 'string');
  const prefix = optionalField(json, 'continuing_subword_prefix', path, 'string');
  const suffix = optionalField(json, 'end_of_word_suffix', path, 'string');
  const fuseUnk = boolField(json, 'fuse_unk', path, false);
  const byteFallback = boolField(json, 'byte_fallback', path, false);
  const ignoreMerges = boolField(json, 'ignore_merges', path, false);

  const pairs = mergePairs(field(json, 'merges', path, 'array', []), path);
  const merges = new MergeTable(pairs.length);
  pairs.forEach(([a, b], rank) => {
    const ids = [a, b, a + b.slice(prefix ? prefix.length : 0)].map((t) => vocab.get(t));
    if (ids.includes(undefined)) throw unsupported(`${path}.merges[${rank}]`, `${a} ${b}`);
    merges.set(ids[0], ids[1], rank, ids[2]);
  });

  /** The initial symbols of a word: one per character (with prefix/suffix), byte fallback or unknown. */
  function symbolsOf(w) {
    const spans = charSpans(w);
    const symbols = [];
    let pendingUnk = null;
    const add = (id, start, end) => symbols.push({ id, start, end, prev: symbols.length - 1, next: -1, alive: true });
    spans.forEach(([start, end], k) => {
      let s = w.slice(start, end);
      if (k > 0 && prefix !== null) s = prefix + s;
      if (k === spans.length - 1 && suffix !== null) s += suffix;
      const id = vocab.get(s);
      if (id !== undefined) {
        if (pendingUnk) { add(pendingUnk.id, pendingUnk.start, pendingUnk.end); pendingUnk = null; }
        add(id, start, end);
        return;
      }
      if (byteFallback) {
        const ids = Array.from(utf8(s), (b) => vocab.get(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`));
        // Like Rust, byte tokens go in before a pending unknown token is flushed.
        if (ids.every((x) => x !== undefined)) { for (const x of ids) add(x, start, end); return; }
      }
      if (unk === null) return;
      if (!vocab.has(unk)) throw missingUnk(`${path}.unk_token`, unk);
      if (pendingUnk && fuseUnk) { pendingUnk.end = end; return; }
      if (pendingUnk) add(pendingUnk.id, pendingUnk.start, pendingUnk.end);
      pendingUnk = { id: vocab.get(unk), start, end };
    });
    if (pendingUnk) add(pendingUnk.id, pendingUnk.start, pendingUnk.end);
    symbols.forEach((sym, i) => { sym.next = i + 1 < symbols.length ? i + 1 : -1; });
    return symbols;
  }

  /** Applies the merges lowest rank first (Rust's Word::merge_all without dropout). */
  function mergeAll(symbols) {
    const queue = new MergeQueue();
    /** Queues the merge of the symbols at positions a and b, if there is one. */
    const offer = (a, b) => {
      const slot = merges.find(symbols[a].id, symbols[b].id);
      if (slot !== -1) queue.push({ pos: a, rank: merges.rank(slot), id: merges.id(slot) });
    };
    for (let i = 0; i + 1 < symbols.length; i++) offer(i, i + 1);
    while (queue.size > 0) {
      const top = queue.pop();
      const cur = symbols[top.pos];
      if (!cur.alive || cur.next === -1) continue;
      const right = symbols[cur.next];
      const slot = merges.find(cur.id, right.id);
      if (slot === -1 || merges.id(slot) !== top.id) continue; // an expired entry
      cur.id = top.id;
      cur.end = right.end;
      cur.next = right.next;
      right.alive = false;
      if (right.next !== -1) symbols[right.next].prev = top.pos;
      if (cur.prev >= 0) offer(cur.prev, top.pos);
      if (cur.next !== -1) offer(top.pos, cur.next);
    }
    return symbols.filter((s) => s.alive);
  }

  const cache = new Map();
  return {
    vocab, byId, idLimit: idLimitOf(vocab),
    tokenize(w) {
      if (w.length === 0) return [];
      if (ignoreMerges && vocab.has(w)) return [{ id: vocab.get(w), value: w, start: 0, end: w.length }];
      let tokens = cache.get(w);
      if (tokens === undefined) {
        tokens = mergeAll(symbolsOf(w)).map((s) => ({ id: s.id, value: byId.get(s.id), start: s.start, end: s.end }));
        if (cache.size < CACHE_LIMIT) cache.set(w, tokens);
      }
      return tokens;
    },
  };
}

// ------------------------------------------------------------------ Unigram

const UNK_PENALTY = 10;

/** A trie over UTF-16 code units; `ends` marks the nodes where a vocabulary piece ends. */
function buildTrie(pieces) {
  const root = new Map();
  for (const piece of pieces) {
    let node = root;
    for (let i = 0; i < piece.length; i++) {
      const u = piece.charCodeAt(i);
      let next = node.get(u);
      if (next === undefined) { next = new Map(); node.set(u, next); }
      node = next;
    }
    node.end = true;
  }
  return root;
}

function unigram(json, path) {
  const entries = field(json, 'vocab', path, 'array');
  const vocab = new Map();
  const byId = new Map();
  const scores = [];
  let minScore = Infinity;
  entries.forEach((e, id) => {
    if (!Array.isArray(e) || typeof e[0] !== 'string' || typeof e[1] !== 'number') throw unsupported(`${path}.vocab[${id}]`, e);
    vocab.set(e[0], id);
    byId.set(id, e[0]);
    scores.push(e[1]);
    minScore = Math.min(minScore, e[1]);
  });
  const unkId = optionalField(json, 'unk_id', path, 'integer');
  if (unkId !== null && unkId >= entries.length) throw unsupported(`${path}.unk_id`, unkId, `the vocabulary has ${entries.length} entries`);
  if (entries.length > ID_LIMIT) throw unsupported(`${path}.vocab`, '(more than 2^31 entries)');
  const byteFallback = boolField(json, 'byte_fallback', path, false);
  const trie = buildTrie(entries.map((e) => e[0]));
  const unkScore = minScore - UNK_PENALTY;
  const needUnk = () => {
    if (unkId === null) throw new SwapformerError('UNSUPPORTED_MODEL', `tokenizer.json: ${path}.unk_id = null but the text has a character outside the vocabulary`);
    return unkId;
  };

  /** The best segmentation (Viterbi; ties keep the first candidate), unknown pieces fused. */
  function viterbi(s) {
    const n = s.length;
    const best = Array.from({ length: n + 1 }, () => ({ score: 0, from: -1, id: 0 }));
    for (let start = 0; start < n;) {
      const here = best[start].score;
      const charLen = s.codePointAt(start) > 0xFFFF ? 2 : 1;
      let single = false;
      let node = trie;
      for (let i = start; i < n; i++) {
        node = node.get(s.charCodeAt(i));
        if (node === undefined) break;
        if (!node.end) continue;
        const end = i + 1;
        const id = vocab.get(s.slice(start, end));
        const score = scores[id] + here;
        const target = best[end];
        if (target.from === -1 || score > target.score) { target.score = score; target.from = start; target.id = id; }
        if (end - start === charLen) single = true;
      }
      if (!single) {
        const target = best[start + charLen];
        const score = unkScore + here;
        if (target.from === -1 || score > target.score) { target.score = score; target.from = start; target.id = needUnk(); }
      }
      start += charLen;
    }
    const pieces = [];
    let unkEnd = -1;
    for (let end = n; end > 0;) {
      const { from, id } = best[end];
      if (id === unkId) { if (unkEnd === -1) unkEnd = end; } else {
        if (unkEnd !== -1) { pieces.push([end, unkEnd]); unkEnd = -1; }
        pieces.push([from, end]);
      }
      end = from;
    }
    if (unkEnd !== -1) pieces.push([0, unkEnd]);
    return pieces.reverse();
  }

  return {
    vocab, byId, idLimit: entries.length,
    tokenize(s) {
      if (s.length === 0) return [];
      const out = [];
      for (const [start, end] of viterbi(s)) {
        const piece = s.slice(start, end);
        const id = vocab.get(piece);
        if (id !== undefined) { out.push({ id, value: piece, start, end }); continue; }
        if (byteFallback) {
          const bytes = Array.from(utf8(piece), (b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
          if (bytes.every((b) => vocab.has(b))) {
            for (const b of bytes) out.push({ id: vocab.get(b), value: b, start, end });
            continue;
          }
        }
        out.push({ id: needUnk(), value: piece, start, end });
      }
      return out;
    },
  };
}

// ------------------------------------------------------------------ WordLevel

function wordLevel(json, path) {
  const vocab = vocabMap(field(json, 'vocab', path, 'object'), path);
  const unk = field(json, 'unk_token', path, 'string', '<unk>');
  return {
    vocab, byId: reverse(vocab), idLimit: idLimitOf(vocab),
    tokenize(s) {
      const id = vocab.get(s) ?? vocab.get(unk);
      if (id === undefined) throw missingUnk(`${path}.unk_token`, unk);
      return [{ id, value: vocab.has(s) ? s : unk, start: 0, end: s.length }];
    },
  };
}

const BUILDERS = { WordPiece: wordPiece, BPE: bpe, Unigram: unigram, WordLevel: wordLevel };

/** Builds the model from its tokenizer.json object. */
export function buildModel(json, path = 'model') {
  if (json == null || typeof json !== 'object') throw unsupported(path, json ?? null);
  return builderOf(BUILDERS, json, path, 0)(json, path);
}
