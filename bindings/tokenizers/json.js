// Reading tokenizer.json fields: every malformed or unknown value becomes a
// SwapformerError('UNSUPPORTED_MODEL') naming the field, never a silent default.
// The file is untrusted: only its own properties are read (a type or key named
// "constructor" or "__proto__" is a string like any other, and a property added
// to Object.prototype is never seen), ids must fit an Int32Array, nested
// Sequences are bounded, and so is the nesting of anything in the file.

import { SwapformerError } from '../utils/errors.js';
import { nestedTooDeep } from '../utils/json.js';

/** Ids go to Int32Arrays: every id read from the file must be below 2^31. */
export const ID_LIMIT = 2 ** 31;

/** The deepest nesting of Sequences (normalizers, pre-tokenizers, processors, decoders) we build. */
export const MAX_DEPTH = 64;

/**
 * The deepest nesting of objects and arrays read at all, anywhere in the file
 * (64 Sequences are about 130 deep): checked without recursion before anything
 * copies or walks the data, so that no recursive reader can overflow the stack.
 */
export const MAX_NESTING = 256;

/** Refuses data (a parsed tokenizer.json, or a config object) nested more than MAX_NESTING deep, naming where; `what` names the file. */
export function checkNesting(value, what) {
  const at = nestedTooDeep(value, MAX_NESTING);
  if (at !== null) throw new SwapformerError('UNSUPPORTED_MODEL', `${what}: ${at}: objects and arrays nested more than ${MAX_NESTING} deep are not supported`);
}

/** obj[key] when it is an own property of the object obj, else undefined (never an inherited value). */
export const own = (obj, key) => (obj !== null && typeof obj === 'object' && Object.hasOwn(obj, key) ? obj[key] : undefined);

/**
 * A short rendering of a value for a message: JSON for small values, and for
 * large or deep ones their first entries (never the whole of a vocabulary).
 */
export function show(v, depth = 0) {
  if (typeof v === 'string') return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}...` : v);
  if (v === null || typeof v !== 'object') return typeof v === 'number' || typeof v === 'boolean' ? String(v) : `(${typeof v})`;
  if (depth >= 2) return Array.isArray(v) ? '[...]' : '{...}';
  const more = (n) => (n > 4 ? ', ...' : '');
  if (Array.isArray(v))
    return `[${v
      .slice(0, 4)
      .map((x) => show(x, depth + 1))
      .join(', ')}${more(v.length)}]`;
  const keys = Object.keys(v);
  return `{${keys
    .slice(0, 4)
    .map((k) => `${show(k)}: ${show(v[k], depth + 1)}`)
    .join(', ')}${more(keys.length)}}`;
}

/** The error for a field whose value cannot be run (`reason` says why, when it is not obvious). */
export function unsupported(path, value, reason) {
  const shown = typeof value === 'string' && value.startsWith('(') ? value : show(value);
  return new SwapformerError('UNSUPPORTED_MODEL', `tokenizer.json: ${path} = ${shown} is not supported${reason ? ` (${reason})` : ''}`);
}

/** Whether v is an id: an integer in [0, 2^31). */
export const isId = (v) => Number.isInteger(v) && v >= 0 && v < ID_LIMIT;

const TYPES = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isInteger(v) && v >= 0,
  id: isId,
  boolean: (v) => typeof v === 'boolean',
  array: Array.isArray,
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
};

/** json[name] (own property), which must have the given type (or equal `fallback` when missing and a fallback is given). */
export function field(json, name, path, type, fallback) {
  const v = own(json, name);
  if (v === undefined && fallback !== undefined) return fallback;
  if (!TYPES[type](v))
    throw unsupported(`${path}.${name}`, v === undefined ? '(missing)' : v, type === 'id' ? 'an id must be an integer in [0, 2^31)' : undefined);
  return v;
}

/** A boolean field; `fallback` applies when the field is missing or null. */
export function boolField(json, name, path, fallback) {
  const v = own(json, name);
  if (v == null && fallback !== undefined) return fallback;
  return field(json, name, path, 'boolean');
}

/** A field that may be null or missing (→ null), else of the given type. */
export function optionalField(json, name, path, type) {
  return own(json, name) == null ? null : field(json, name, path, type);
}

/**
 * The builder of a stage object, from `builders` (own entries only) by the
 * object's "type". `depth` counts enclosing Sequences; beyond MAX_DEPTH the
 * file is refused before anything recursive runs on it.
 */
export function builderOf(builders, json, path, depth) {
  if (depth > MAX_DEPTH) {
    throw new SwapformerError('UNSUPPORTED_MODEL', `tokenizer.json: ${path.slice(0, 120)}...: Sequences nested more than ${MAX_DEPTH} deep are not supported`);
  }
  const type = own(json, 'type');
  if (typeof type !== 'string' || !Object.hasOwn(builders, type)) throw unsupported(`${path}.type`, type === undefined ? '(missing)' : type);
  return builders[type];
}

/** The list of a Sequence, each element built by `build(element, path, depth + 1)`. */
export function sequence(json, name, path, depth, build) {
  return field(json, name, path, 'array').map((x, i) => build(x, `${path}.${name}[${i}]`, depth + 1));
}
