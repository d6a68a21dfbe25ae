// Reading tokenizer.json fields: every malformed or unknown value becomes a
// SwapformerError('UNSUPPORTED_MODEL') naming the field, never a silent default.

import { SwapformerError } from '../utils/errors.js';

/** The error for a field whose value cannot be run. */
export function unsupported(path, value) {
  const shown = typeof value === 'string' && value.startsWith('(') ? value : JSON.stringify(value);
  return new SwapformerError('UNSUPPORTED_MODEL', `tokenizer.json: ${path} = ${shown} is not supported`);
}

const TYPES = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isInteger(v) && v >= 0,
  boolean: (v) => typeof v === 'boolean',
  array: Array.isArray,
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
};

/** json[name], which must have the given type (or equal `fallback` when missing and a fallback is given). */
export function field(json, name, path, type, fallback) {
  const v = json[name];
  if (v === undefined && fallback !== undefined) return fallback;
  if (!TYPES[type](v)) throw unsupported(`${path}.${name}`, v === undefined ? '(missing)' : v);
  return v;
}

/** A boolean field; `fallback` applies when the field is missing or null. */
export function boolField(json, name, path, fallback) {
  const v = json[name];
  if (v == null && fallback !== undefined) return fallback;
  return field(json, name, path, 'boolean');
}

/** A field that may be null or missing (→ null), else of the given type. */
export function optionalField(json, name, path, type) {
  return json[name] == null ? null : field(json, name, path, type);
}
