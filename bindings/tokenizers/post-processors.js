// Post-processors of tokenizer.json: add the special tokens and set the type ids
// (Rust: tokenizers/src/processors/*.rs). An encoding here is
// { ids, typeIds, tokens, offsets, seqs }: offsets in code points of the sequence
// seqs[i] (0 or 1; -1 for an added special token).

import { SwapformerError } from '../utils/errors.js';
import { isWhitespace } from './unicode.js';
import { BYTE_TO_CHAR } from './pre-tokenizers.js';
import { unsupported, field, boolField } from './json.js';

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
  if (v.length !== 2 || typeof v[0] !== 'string' || !Number.isInteger(v[1])) throw unsupported(`${path}.${name}`, v);
  return v;
}

function bertProcessing(json, path) {
  const [cls, clsId] = tokenIdPair(json, 'cls', path);
  const [sep, sepId] = tokenIdPair(json, 'sep', path);
  return {
    cls: clsId, sep: sepId,
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
    addedTokens: () => 0,
    processEncodings(encs) {
      if (trim) for (const e of encs) trimOffsets(e, addPrefixSpace);
      return encs;
    },
  };
}

/** One template piece: { Sequence: { id: 'A'|'B', type_id } } or { SpecialToken: { id, type_id } }. */
function templatePiece(piece, path, specialTokens) {
  const seq = piece?.Sequence;
  const tok = piece?.SpecialToken;
  if (seq && (seq.id === 'A' || seq.id === 'B') && Number.isInteger(seq.type_id)) return { sequence: seq.id === 'A' ? 0 : 1, typeId: seq.type_id };
  if (tok && typeof tok.id === 'string' && Number.isInteger(tok.type_id)) {
    if (!specialTokens.has(tok.id)) throw unsupported(`${path}.SpecialToken.id`, tok.id);
    return { special: specialTokens.get(tok.id), typeId: tok.type_id };
  }
  throw unsupported(path, piece);
}

function templateProcessing(json, path) {
  const specialTokens = new Map();
  for (const [key, t] of Object.entries(field(json, 'special_tokens', path, 'object'))) {
    const ok = t && Array.isArray(t.ids) && Array.isArray(t.tokens) && t.ids.length === t.tokens.length
      && t.ids.every(Number.isInteger) && t.tokens.every((x) => typeof x === 'string');
    if (!ok) throw unsupported(`${path}.special_tokens[${JSON.stringify(key)}]`, t);
    specialTokens.set(key, t); // templates refer to the map key
  }
  const template = (name) => field(json, name, path, 'array').map((p, i) => templatePiece(p, `${path}.${name}[${i}]`, specialTokens));
  const single = template('single');
  const pair = template('pair');
  const added = (pieces) => pieces.reduce((n, p) => n + (p.special ? p.special.ids.length : 0), 0);
  return {
    specialTokens,
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
  Sequence(json, path) {
    const list = field(json, 'processors', path, 'array').map((p, i) => buildPostProcessor(p, `${path}.processors[${i}]`));
    return {
      list,
      addedTokens: (isPair) => list.reduce((n, p) => n + p.addedTokens(isPair), 0),
      processEncodings(encs, addSpecial) {
        for (const p of list) encs = p.processEncodings(encs, addSpecial);
        return encs;
      },
    };
  },
};

/** Builds a post-processor from its tokenizer.json object (null → none). */
export function buildPostProcessor(json, path = 'post_processor') {
  if (json == null) return null;
  const build = BUILDERS[json.type];
  if (!build) throw unsupported(`${path}.type`, json.type ?? '(missing)');
  return build(json, path);
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
