// Request bodies, bounded: streamed and counted, refused past the payload
// limit (413, before a byte is read when Content-Length says so), given up
// on when they do not arrive in time (408: a client that never ends its body
// holds no memory and no slot for long), parsed as JSON the way TEI's axum
// Json extractor takes it: Content-Type application/json (or */*+json) else
// 415, invalid UTF-8 or JSON 400, a body of the wrong shape 422 (each
// handler's reader, below, names the field). Nothing read from the body is
// trusted: fields are read as own properties only (a "__proto__" key is data).
import { HttpError, validation } from './errors.js';

/** The client went away before its body ended: there is no one to answer. */
export const CLIENT_GONE = Symbol('client gone');

const tooLarge = (limit) => new HttpError(413, 'PayloadTooLarge', `the request body is larger than the payload limit (${limit} bytes)`, { code: 'payload_too_large' });

/** The body's bytes: at most `limit`, within `timeout` ms of the call. */
export function readBody(req, { limit, timeout }) {
  return new Promise((resolve, reject) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      reject(tooLarge(limit));
      return;
    }
    let chunks = [], size = 0, done = false;
    const finish = (err, value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      chunks = null;
      req.off('data', onData);
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk) => {
      size += chunk.length;
      if (size > limit) finish(tooLarge(limit));
      else chunks.push(chunk);
    };
    const timer = setTimeout(() => finish(new HttpError(408, 'Timeout', `the request body did not arrive within ${timeout} ms`, { code: 'timeout' })), timeout);
    req.on('data', onData);
    req.once('end', () => finish(null, chunks && Buffer.concat(chunks, size)));
    req.once('close', () => finish(CLIENT_GONE));
    req.once('error', () => finish(CLIENT_GONE));
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as a JSON object (TEI's requests are all objects). */
export async function readJson(req, options) {
  const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json' && !/^[a-z]+\/[a-z0-9.+-]+\+json$/.test(type)) {
    throw new HttpError(415, 'UnsupportedMediaType', 'Expected request with `Content-Type: application/json`', { code: 'unsupported_media_type' });
  }
  const bytes = await readBody(req, options);
  let value;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (e) {
    throw new HttpError(400, 'Validation', `Failed to parse the request body as JSON: ${e instanceof TypeError ? 'the body is not valid UTF-8' : e.message}`, { code: 'invalid_json' });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw shape('the body', 'must be a JSON object');
  return value;
}

// ------------------------------------------------------------------ field readers

/** A request field of the wrong type: 422, as serde's "Failed to deserialize" (the field named). */
export const shape = (field, what) => validation(`Failed to deserialize the JSON body into the target type: ${field} ${what}`, field);

/** body[key] when body has it as its own property, else undefined. */
export const own = (o, k) => (Object.hasOwn(o, k) ? o[k] : undefined);

const describe = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

/** A boolean field with a default (null refused, as serde's bool). */
export function bool(body, key, fallback) {
  const v = own(body, key);
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw shape(key, `must be true or false, got ${describe(v)}`);
  return v;
}

/** An optional boolean (null: the server's default). */
export const optionalBool = (body, key, fallback) => (own(body, key) === null ? fallback : bool(body, key, fallback));

/** An optional string (null or absent: undefined). */
export function optionalString(body, key) {
  const v = own(body, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw shape(key, `must be a string, got ${describe(v)}`);
  return v;
}

/** A required string. */
export function string(body, key) {
  const v = own(body, key);
  if (typeof v !== 'string') throw shape(key, v === undefined ? 'is missing' : `must be a string, got ${describe(v)}`);
  return v;
}

/** An optional positive integer (usize; null or absent: undefined). */
export function optionalCount(body, key) {
  const v = own(body, key);
  if (v === undefined || v === null) return undefined;
  if (!Number.isSafeInteger(v) || v < 0) throw shape(key, `must be a non-negative integer, got ${typeof v === 'number' ? v : describe(v)}`);
  return v;
}

/** Token ids: an array of u32 (TEI's Vec<u32>). */
export function isIds(v) {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (!Number.isInteger(v[i]) || v[i] < 0 || v[i] > 0xffffffff) return false;
  return true;
}

/** An array read element by element (holes refused: JSON has none, but keep the reader total). */
export function list(v, field) {
  if (!Array.isArray(v)) throw shape(field, `must be an array, got ${describe(v)}`);
  return v;
}

/** TEI's truncation_direction: Right (default) only; swapformer truncates the end. */
export function truncationDirection(body) {
  const v = own(body, 'truncation_direction');
  if (v === undefined || v === 'right' || v === 'Right') return;
  if (v === 'left' || v === 'Left') throw validation('truncation_direction "left" is not supported: swapformer truncates the end of a text', 'truncation_direction');
  throw shape('truncation_direction', `must be "left" or "right", got ${JSON.stringify(v)}`);
}
