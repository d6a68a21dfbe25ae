// Post-processors of tokenizer.json: add the special tokens and set the type ids
// (Rust: tokenizers/src/processors/*.rs). An encoding here is
// { ids: Int32Array, tokens: string[], offsets: Int32Array (start, end of each
// token), typeIds, seqs, words }: offsets in UTF-16 units of the sequence seqs[i]
// (0 or 1; -1 for an added special token); words the word (pre-tokenizer piece)
// of each token within its sequence, -1 for a special token; typeIds, seqs and
// words are an Int32Array / Int8Array, or one number for every token (a
// sequence's encoding before concat, or a special token's).

import { SwapformerError } from '../utils/errors.js';
import { isWhitespace } from './unicode.js';
import { BYTE_TO_CHAR } from './pre-tokenizers.js';
import { unitsAt } from './normalized-string.js';
import { unsupported, field, boolField, own, isId, builderOf, sequence } from './json.js';

const SPACE_CHAR = BYTE_TO_CHAR[0x20]; // 'Ġ'

const isSpace = (c) => c === SPACE_CHAR || isWhitespace(c);

/** Units of the character that ends at s[end] (2 for a surrogate pair). */
const unitsBefore = (s, end) => (end > 1 && (s.charCodeAt(end - 1) & 0xfc00) === 0xdc00 && (s.charCodeAt(end - 2) & 0xfc00) === 0xd800 ? 2 : 1);

/** p moved k characters forward in `text`, not past `limit` (plain numbers for a special token: text null). */
function forward(text, p, k, limit) {
  for (; k > 0 && p < limit; k--) p += text === null ? 1 : unitsAt(text, p);
  return Math.min(p, limit);
}

/** p moved k characters back in `text` (plain numbers when text is null), or -1 when fewer than k precede it. */
function back(text, p, k) {
  for (; k > 0; k--) {
    if (p <= 0) return -1;
    p -= text === null ? 1 : unitsBefore(text, p);
  }
  return p;
}

/**
 * Moves offsets past the leading/trailing spaces of byte-level tokens (Rust's
 * process_offsets, which counts characters: the offsets move by characters of
 * texts[seq]). The space that add_prefix_space inserted before the first token
 * is kept, as in Rust.
 */
function trimOffsets(enc, addPrefixSpace, texts) {
  const { tokens, offsets, seqs } = enc;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    let lead = 0,
      trail = 0;
    for (let at = 0; at < token.length && isSpace(token.slice(at, at + unitsAt(token, at))); at += unitsAt(token, at)) lead++;
    for (let end = token.length; end > 0 && isSpace(token.slice(end - unitsBefore(token, end), end)); end -= unitsBefore(token, end)) trail++;
    if (lead === 0 && trail === 0) continue;
    const seq = typeof seqs === 'number' ? seqs : seqs[i];
    const text = seq < 0 ? null : texts[seq];
    if (lead > 0) {
      if ((i === 0 || offsets[2 * i] === 0) && addPrefixSpace && lead === 1) lead = 0;
      offsets[2 * i] = forward(text, offsets[2 * i], lead, offsets[2 * i + 1]);
    }
    const end = trail > 0 ? back(text, offsets[2 * i + 1], trail) : -1;
    if (end >= 0) offsets[2 * i + 1] = Math.max(end, offsets[2 * i]);
  }
}

/** An encoding of special tokens only. */
const specials = (ids, tokens, typeId) => ({
  ids: Int32Array.from(ids),
  tokens: [...tokens],
  typeIds: typeId,
  offsets: new Int32Array(2 * ids.length),
  seqs: -1,
  words: -1,
});

/** Sets a[k, k + n) from `values`, an array or one number. */
function put(a, k, n, values) {
  if (typeof values === 'number') a.fill(values, k, k + n);
  else a.set(values, k);
}

/** Concatenates encodings. */
export function concat(encodings) {
  let n = 0;
  for (const e of encodings) n += e.ids.length;
  const out = {
    ids: new Int32Array(n),
    typeIds: new Int32Array(n),
    tokens: new Array(n),
    offsets: new Int32Array(2 * n),
    seqs: new Int8Array(n),
    words: new Int32Array(n),
  };
  let k = 0;
  for (const e of encodings) {
    const m = e.ids.length;
    out.ids.set(e.ids, k);
    out.offsets.set(e.offsets, 2 * k);
    put(out.typeIds, k, m, e.typeIds);
    put(out.seqs, k, m, e.seqs);
    put(out.words, k, m, e.words ?? -1);
    for (let i = 0; i < m; i++) out.tokens[k + i] = e.tokens[i];
    k += m;
  }
  return out;
}

const withTypeId = (enc, typeId) => ({ ...enc, typeIds: typeId });

/** [token, id] of BertProcessing / RobertaProcessing. */
function tokenIdPair(json, name, path) {
  const v = field(json, name, path, 'array');
  if (v.length !== 2 || typeof v[0] !== 'string' || !isId(v[1])) throw unsupported(`${path}.${name}`, v, 'a [token, id] pair, the id an integer in [0, 2^31)');
  return v;
}

/** Refuses an id of the processor that no token of the tokenizer has (ids are below `limit`). */
function checkId(id, limit, path) {
  if (id >= limit) throw unsupported(path, id, `the vocabulary's ids are below ${limit}`);
}

function bertProcessing(json, path) {
  const [cls, clsId] = tokenIdPair(json, 'cls', path);
  const [sep, sepId] = tokenIdPair(json, 'sep', path);
  return {
    cls: clsId,
    sep: sepId,
    checkIds(limit) {
      checkId(clsId, limit, `${path}.cls[1]`);
      checkId(sepId, limit, `${path}.sep[1]`);
    },
    addedTokens: (isPair) => (isPair ? 3 : 2),
    processEncodings(encs, addSpecial) {
      if (!addSpecial) return encs;
      return encs.map((e, i) => (i === 0 ? concat([specials([clsId], [cls], 0), e, specials([sepId], [sep], 0)]) : concat([e, specials([sepId], [sep], 1)])));
    },
  };
}

/** RoBERTa: <s> A </s> and </s> B </s>, every type id 0 (as Rust, unlike BERT). */
function robertaProcessing(json, path) {
  const [cls, clsId] = tokenIdPair(json, 'cls', path);
  const [sep, sepId] = tokenIdPair(json, 'sep', path);
  const trim = boolField(json, 'trim_offsets', path, true);
  const addPrefixSpace = boolField(json, 'add_prefix_space', path, true);
  return {
    cls: clsId,
    sep: sepId,
    checkIds(limit) {
      checkId(clsId, limit, `${path}.cls[1]`);
      checkId(sepId, limit, `${path}.sep[1]`);
    },
    addedTokens: (isPair) => (isPair ? 4 : 2),
    processEncodings(encs, addSpecial, texts) {
      if (trim) for (const e of encs) trimOffsets(e, addPrefixSpace, texts);
      const zeroed = encs.map((e) => withTypeId(e, 0));
      if (!addSpecial) return zeroed;
      return zeroed.map((e, i) => concat([specials([i === 0 ? clsId : sepId], [i === 0 ? cls : sep], 0), e, specials([sepId], [sep], 0)]));
    },
  };
}

function byteLevelProcessing(json, path) {
  const trim = boolField(json, 'trim_offsets', path, true);
  const addPrefixSpace = boolField(json, 'add_prefix_space', path, true);
  return {
    checkIds() {},
    addedTokens: () => 0,
    processEncodings(encs, addSpecial, texts) {
      if (trim) for (const e of encs) trimOffsets(e, addPrefixSpace, texts);
      return encs;
    },
  };
}

/** One template piece: { Sequence: { id: 'A'|'B', type_id } } or { SpecialToken: { id, type_id } }. */
function templatePiece(piece, path, specialTokens) {
  const seq = own(piece, 'Sequence');
  const tok = own(piece, 'SpecialToken');
  const id = own(seq ?? tok, 'id');
  const typeId = own(seq ?? tok, 'type_id');
  if (seq && (id === 'A' || id === 'B') && isId(typeId)) return { sequence: id === 'A' ? 0 : 1, typeId };
  if (tok && typeof id === 'string' && isId(typeId)) {
    if (!specialTokens.has(id)) throw unsupported(`${path}.SpecialToken.id`, id);
    return { special: specialTokens.get(id), typeId };
  }
  throw unsupported(path, piece);
}

function templateProcessing(json, path) {
  const specialTokens = new Map();
  for (const [key, t] of Object.entries(field(json, 'special_tokens', path, 'object'))) {
    const ids = own(t, 'ids'),
      tokens = own(t, 'tokens');
    const ok = Array.isArray(ids) && Array.isArray(tokens) && ids.length === tokens.length && ids.every(isId) && tokens.every((x) => typeof x === 'string');
    if (!ok) throw unsupported(`${path}.special_tokens[${JSON.stringify(key)}]`, t, 'ids (integers in [0, 2^31)) and tokens of one length');
    specialTokens.set(key, { ids, tokens }); // templates refer to the map key
  }
  const template = (name) => field(json, name, path, 'array').map((p, i) => templatePiece(p, `${path}.${name}[${i}]`, specialTokens));
  const single = template('single');
  const pair = template('pair');
  const added = (pieces) => pieces.reduce((n, p) => n + (p.special ? p.special.ids.length : 0), 0);
  return {
    specialTokens,
    checkIds(limit) {
      for (const [key, t] of specialTokens) t.ids.forEach((id, i) => checkId(id, limit, `${path}.special_tokens[${JSON.stringify(key)}].ids[${i}]`));
    },
    addedTokens: (isPair) => added(isPair ? pair : single),
    processEncodings(encs, addSpecial) {
      const pieces = encs.length === 2 ? pair : single;
      const out = [];
      for (const p of pieces) {
        if (p.special) {
          if (addSpecial) out.push(specials(p.special.ids, p.special.tokens, p.typeId));
        } else {
          if (p.sequence >= encs.length) throw new SwapformerError('BAD_ARGUMENT', `${path}: the template uses sequence B but no pair was given`);
          out.push(withTypeId(encs[p.sequence], p.typeId));
        }
      }
      return out;
    },
  };
}

const BUILDERS = {
  BertProcessing: bertProcessing,
  RobertaProcessing: robertaProcessing,
  ByteLevel: byteLevelProcessing,
  TemplateProcessing: templateProcessing,
  Sequence(json, path, depth) {
    const list = sequence(json, 'processors', path, depth, buildPostProcessor);
    return {
      list,
      checkIds(limit) {
        for (const p of list) p.checkIds(limit);
      },
      addedTokens: (isPair) => list.reduce((n, p) => n + p.addedTokens(isPair), 0),
      processEncodings(encs, addSpecial, texts) {
        for (const p of list) encs = p.processEncodings(encs, addSpecial, texts);
        return encs;
      },
    };
  },
};

/** Builds a post-processor from its tokenizer.json object (null at the top → none); `depth` counts enclosing Sequences. */
export function buildPostProcessor(json, path = 'post_processor', depth = 0) {
  if (json == null && depth === 0) return null;
  return builderOf(BUILDERS, json, path, depth)(json, path, depth);
}

/** A typed array that owns exactly its buffer (a copy of a view into a larger one). */
const exact = (a) => (a.byteOffset === 0 && a.buffer.byteLength === a.byteLength ? a : a.slice());

/** The final { ids, typeIds, tokens, offsets }: one encoding is taken as it is, more are concatenated. */
function result(encodings) {
  if (encodings.length !== 1) return concat(encodings);
  const [e] = encodings;
  const n = e.ids.length;
  return {
    ids: exact(e.ids),
    tokens: e.tokens,
    offsets: exact(e.offsets),
    typeIds: typeof e.typeIds === 'number' ? new Int32Array(n).fill(e.typeIds) : exact(e.typeIds),
    seqs: typeof e.seqs === 'number' ? new Int8Array(n).fill(e.seqs) : e.seqs,
    words: e.words === undefined || typeof e.words === 'number' ? new Int32Array(n).fill(e.words ?? -1) : e.words,
  };
}

/**
 * Post-processing as Rust's PostProcessor::process: sequence i gets type id i, the
 * processor adds its tokens, the parts are concatenated. Without a processor the
 * encodings are concatenated as they are.
 */
export function postProcess(processor, encodings, addSpecial, texts) {
  if (processor === null) return result(encodings);
  const typed = encodings.map((e, i) => withTypeId(e, i));
  return result(processor.processEncodings(typed, addSpecial, texts));
}
