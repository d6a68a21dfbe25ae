// SwapformerError: the class of every error swapformer throws, shared by the
// runtime (runtime/encoder.js), the tokenizers and the pretrained-model loader,
// and the list of the codes it carries.

/** Every error swapformer throws. `code` is stable; `message` names the field. */
export class SwapformerError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'SwapformerError';
    this.code = code;
  }
}

/** Throws a SwapformerError. */
export const fail = (code, message) => {
  throw new SwapformerError(code, message);
};

/** The C core's codes by return value (core/error.h's enum, in order; 0 is success). */
export const CODES = [
  'OK',
  'BAD_CONFIG',
  'BAD_FILE',
  'BAD_WEIGHTS',
  'BAD_TOKEN',
  'SEQUENCE_TOO_LONG',
  'OUT_OF_MEMORY',
  'BAD_ARGUMENT',
  'PLUGIN_EXISTS',
  'NOT_FOUND',
  'BAD_PLUGIN',
  'NON_FINITE',
  'UNSUPPORTED_MODEL',
];

/** Every SwapformerError code: the C core's (CODES, core/error.h) and the JS layers'. */
export const ERROR_CODES = Object.freeze([...CODES.slice(1), 'DISPOSED', 'UNSUPPORTED', 'WASM_LOAD', 'INTERNAL', 'NETWORK', 'BUSY', 'BACKEND_UNAVAILABLE']);
