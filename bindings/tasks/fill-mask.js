// Fill-mask: the logits of a masked-LM head at the mask positions -> the best
// tokens for each mask, as Hugging Face's FillMaskPipeline (transformers
// src/transformers/pipelines/fill_mask.py: postprocess, get_target_ids,
// _sanitize_parameters, ensure_exactly_one_mask_token).
//
//   const { targets } = fillMaskOptions(options);          // checks them before the forward pass
//   if (targets) resolveTargets(targets, view);            // as upstream, a target list that gives nothing fails first
//   const encoding = view.encode(text);
//   const positions = maskPositions(encoding.ids, view);    // forward(ids, {headPositions: positions})
//   fillMaskResults(encoding.ids, positions, logits, [positions.length, V], view, options);
import { fail } from '../utils/errors.js';
import { softmax, topIndices, readOptions, topKOption, checkLogits } from './scores.js';

/** fillMask's options: {topK = 5, targets?: string | string[]}. */
export function fillMaskOptions(options) {
  const o = readOptions(options, ['topK', 'targets'], 'fillMask');
  let targets;
  if (o.targets !== undefined) {
    targets = typeof o.targets === 'string' ? [o.targets] : o.targets;
    if (!Array.isArray(targets) || targets.some((t) => typeof t !== 'string')) fail('BAD_ARGUMENT', 'options.targets must be a string or an array of strings');
  }
  return { topK: o.topK === undefined ? 5 : topKOption(o.topK, 'options.topK'), targets };
}

/**
 * get_target_ids: each target's vocabulary id (added tokens included), else
 * the first id of tokenizing it without special tokens (upstream warns); a
 * target that tokenizes to nothing is dropped. Duplicates go (upstream makes a
 * set; we keep the ids ascending, which only orders equal scores). None left
 * is an error.
 */
export function resolveTargets(targets, view) {
  const ids = new Set();
  for (const t of targets) {
    const id = view.tokenToId(t) ?? view.encode(t, { addSpecialTokens: false }).ids[0];
    if (id !== undefined) ids.add(id);
  }
  if (ids.size === 0) fail('BAD_ARGUMENT', `options.targets: none of ${JSON.stringify(targets)} gives a token (at least one target must be provided)`);
  return Int32Array.from([...ids].sort((a, b) => a - b));
}

/** The positions of the mask token in `ids`; none is an error (fill-mask needs at least one). */
export function maskPositions(ids, view) {
  const mask = view.maskTokenId;
  if (mask === null || mask === undefined) fail('UNSUPPORTED_MODEL', 'fillMask: the tokenizer defines no mask token');
  const positions = [];
  for (let i = 0; i < ids.length; i++) if (ids[i] === mask) positions.push(i);
  if (positions.length === 0) fail('BAD_ARGUMENT', `text: no mask token (${view.idToToken(mask)}) in the input`);
  return positions;
}

/**
 * postprocess: for each mask, softmax over the whole vocabulary, the scores of
 * the targets (when given; not renormalised) or of every id, the topK best
 * (capped at the number of targets) as {score, token, tokenStr, sequence}:
 * tokenStr = decode([token]); sequence = decode of the ids with this mask
 * filled and the pad ids removed, skipping special tokens only when there is
 * one mask (with several, [CLS] / [SEP] and the other masks stay). One mask
 * gives one array, several one array per mask.
 */
export function fillMaskResults(ids, positions, logits, shape, view, options) {
  const { topK: k, targets } = fillMaskOptions(options);
  if (!(Array.isArray(ids) || ArrayBuffer.isView(ids)) || Array.prototype.some.call(ids, (id) => !Number.isSafeInteger(id)))
    fail('BAD_ARGUMENT', 'ids must be the token ids of the text');
  if (!Array.isArray(positions) || positions.length === 0 || positions.some((p) => !Number.isSafeInteger(p) || p < 0 || p >= ids.length)) {
    fail('BAD_ARGUMENT', 'positions must be the mask positions in ids (at least one)');
  }
  if (!Array.isArray(shape) || shape.length !== 2 || shape[0] !== positions.length || shape[1] < 1) {
    fail('BAD_ARGUMENT', `logits: the shape must be [${positions.length}, vocabulary], one row per mask, got ${JSON.stringify(shape)}`);
  }
  checkLogits(logits, shape);
  const vocab = shape[1];
  const targetIds = targets === undefined ? undefined : resolveTargets(targets, view);
  if (targetIds !== undefined && targetIds.some((id) => id >= vocab)) {
    fail('BAD_ARGUMENT', `options.targets: a target's id (${targetIds.find((id) => id >= vocab)}) is past the head's vocabulary (${vocab})`);
  }
  if (targetIds === undefined && k > vocab) fail('BAD_ARGUMENT', `options.topK = ${k} is more than the vocabulary size ${vocab}`);
  const topK = targetIds === undefined ? k : Math.min(k, targetIds.length);
  const pad = view.padTokenId;
  const single = positions.length === 1;
  const rows = positions.map((pos, r) => {
    const probs = softmax(logits, r * vocab, vocab);
    const scores = targetIds === undefined ? probs : Float64Array.from(targetIds, (id) => probs[id]);
    return topIndices(scores, topK).map((i) => {
      const token = targetIds === undefined ? i : targetIds[i];
      const filled = Array.from(ids);
      filled[pos] = token;
      return {
        score: scores[i],
        token,
        tokenStr: view.decode([token]),
        sequence: view.decode(
          filled.filter((id) => id !== pad),
          { skipSpecialTokens: single },
        ),
      };
    });
  });
  return single ? rows[0] : rows;
}
