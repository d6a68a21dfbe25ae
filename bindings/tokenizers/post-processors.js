// Post-processors of tokenizer.json: add the special tokens and set the type ids
// (Rust: tokenizers/src/processors/*.rs). An encoding here is
// { ids, typeIds, tokens, offsets, seqs }: offsets in code points of the sequence
// seqs[i] (0 or 1; -1 for an added special token).

import { SwapformerError } from '../utils/errors.js';
import { isWhitespace } from './unicode.js';
import { BYTE_TO_CHAR } from './pre-tokenizers.js';
import { unsupported, field, boolField, own, isId, builderOf, sequence } from './json.js';

const SPACE_CHAR = BYTE_TO_CHAR[0x20]; // 'Ġ'

/**
 * Moves offsets past the leading/trailing spaces of byte-level tokens (Rust's
 * process_offsets). The space that add_prefix_space inserted before the first
 * token is kept, as in Rust.
 */
function trimOffsets(enc, addPrefixSpace) {
  enc.tokens.forEach((token, i) => {
    const chars = Array.from(token);
    const isSpace = (c) => c === SPACE_CHAR || isWhitespace(c);
    let lead = 0;
    while (lead < chars.length && isSpace(chars[lead])) lead++;
    let trail = 0;
    while (trail < chars.length && isSpace(chars[chars.length - 1 - trail])) trail++;
    const o = enc.offsets[i];
    if (lead > 0) {
      if ((i === 0 || o[0] === 0) && addPrefixSpace && lead === 1) lead = 0;
      o[0] = Math.min(o[0] + lead, o[1]);
    }
    if (trail > 0 && o[1] >= trail) o[1] = Math.max(o[1] - trail, o[0]);
  });
}

/** An encoding of special tokens only. */
const specials = (ids, tokens, typeId) => ({
  ids: [...ids], tokens: [...tokens], typeIds: ids.map(() => typeId), offsets: ids.map(() => [0, 0]), seqs: ids.map(() => -1),
});

/** Concatenates encodings. */
export function concat(encodings) {
  const out = { ids: [], typeIds: [], tokens: [], offsets: [], seqs: [] };
  for (const e of encodings) for (const k of Object.keys(out)) for (const v of e[k]) out[k].push(v);
  return out;
}

const withTypeId = (enc, typeId) => ({ ...enc, typeIds: enc.ids.map(() => typeId) });

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
    cls: clsId, sep: sepId,
    checkIds(limit) { checkId(clsId, limit, `${path}.cls[1]`); checkId(sepId, limit, `${path}.sep[1]`); },
    addedTokens: (isPair) => (isPair ? 3 : 2),
    processEncodings(encs, addSpecial) {
      if (!addSpecial) return encs;
      return encs.map((e, i) => (i === 0
        ? concat([specials([clsId], [cls], 0), e, specials([sepId], [sep], 0)])
        : concat([e, specials([sepId], [sep], 1)])));
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
    cls: clsId, sep: sepId,
    checkIds(limit) { checkId(clsId, limit, `${path}.cls[1]`); checkId(sepId, limit, `${path}.sep[1]`); },
    addedTokens: (isPair) => (isPair ? 4 : 2),
    processEncodings(encs, addSpecial) {
      if (trim) for (const e of encs) trimOffsets(e, addPrefixSpace);
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
    processEncodings(encs) {
      if (trim) for (const e of encs) trimOffsets(e, addPrefixSpace);
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
    const ids = own(t, 'ids'), tokens = own(t, 'tokens');
    const ok = Array.isArray(ids) && Array.isArray(tokens) && ids.length === tokens.length
      && ids.every(isId) && tokens.every((x) => typeof x === 'string');
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
        if (p.special) { if (addSpecial) out.push(specials(p.special.ids, p.special.tokens, p.typeId)); } else {
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
      checkIds(limit) { for (const p of list) p.checkIds(limit); },
      addedTokens: (isPair) => list.reduce((n, p) => n + p.addedTokens(isPair), 0),
      processEncodings(encs, addSpecial) {
        for (const p of list) encs = p.processEncodings(encs, addSpecial);
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

/**
 * Post-processing as Rust's PostProcessor::process: sequence i gets type id i, the
 * processor adds its tokens, the parts are concatenated. Without a processor the
 * encodings are concatenated as they are.
 */
export function postProcess(processor, encodings, addSpecial) {
  if (processor === null) return concat(encodings);
  const typed = encodings.map((e, i) => withTypeId(e, i));
  return concat(processor.processEncodings(typed, addSpecial));
}
