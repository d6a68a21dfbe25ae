// The server's errors: one HttpError, rendered in the shape of the route that
// failed. TEI's routes answer {"error": message, "error_type": Type} (its
// ErrorResponse; serde writes the unit variants of ErrorType by name:
// "Validation", "Overloaded"...); the OpenAI route answers
// {"error": {message, type, param, code}}, which the openai SDK reads
// (APIError.generate takes body.error).
//
// TEI's statuses (router/src/http/server.rs, From<&ErrorType> for StatusCode):
// Validation and Tokenizer 422, Empty 400, Overloaded 429, Backend 424,
// Unhealthy 503. The HTTP layer's own: 400 malformed JSON, 413 body too large,
// 415 not JSON, 401 no or wrong key, 404, 405, 408 body too slow.
import { SwapformerError } from '../../bindings/index.js';

export class HttpError extends Error {
  /**
   * status: the HTTP status; type: TEI's ErrorType name (or the HTTP layer's:
   * 'Unauthorized', 'NotFound'...); param: the request field at fault, if one;
   * code: a short stable word for the OpenAI shape.
   */
  constructor(status, type, message, { param = null, code = null, headers = null } = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.param = param;
    this.code = code;
    this.headers = headers;
  }
}

export const validation = (message, param = null, code = 'validation') => new HttpError(422, 'Validation', message, { param, code });
export const empty = (message, param) => new HttpError(400, 'Empty', message, { param, code: 'empty' });
export const overloaded = () => new HttpError(429, 'Overloaded', 'Model is overloaded', { code: 'overloaded' });
export const backend = (message) => new HttpError(424, 'Backend', message, { code: 'backend' });
export const unhealthy = (message = 'unhealthy') => new HttpError(503, 'Unhealthy', message, { code: 'unhealthy' });

/** TEI's batch size error (422 Validation; its docs say 413, its code answers 422). */
export const batchSize = (n, max, param) => validation(`batch size ${n} > maximum allowed batch size ${max}`, param, 'batch_size');

/** TEI's wrong-model-type error: 424 Backend, its messages ("Model is not an embedding model"). */
export const modelType = (message) => new HttpError(424, 'Backend', message, { code: 'model_type' });

/**
 * A library error as the HTTP answer TEI gives for its kind: the input's fault
 * (BAD_ARGUMENT, SEQUENCE_TOO_LONG, BAD_TOKEN) 422, a disposed model 503, the
 * rest of the library's 424 (inference failed); anything else is a bug of
 * ours: 500 with a fixed text (the exception goes to the log, never the client).
 */
export function fromError(e) {
  if (e instanceof HttpError) return e;
  if (e instanceof SwapformerError) {
    if (['BAD_ARGUMENT', 'SEQUENCE_TOO_LONG', 'BAD_TOKEN'].includes(e.code)) return validation(e.message, null, e.code);
    if (e.code === 'DISPOSED') return unhealthy('the model has been disposed');
    return new HttpError(424, 'Backend', `Inference failed: ${e.message}`, { code: e.code });
  }
  return new HttpError(500, 'Internal', 'Internal Server Error', { code: 'internal' });
}

const OPENAI_TYPES = { 401: 'authentication_error', 404: 'not_found_error', 429: 'rate_limit_error' };

/** The body of an error in a route's style: 'tei' or 'openai'. */
export function errorBody(err, style) {
  if (style === 'openai') {
    const type = OPENAI_TYPES[err.status] ?? (err.status < 424 ? 'invalid_request_error' : 'server_error');
    return { error: { message: err.message, type, param: err.param, code: err.code } };
  }
  return { error: err.message, error_type: err.type };
}
