// SwapformerError: the class of every error swapformer throws, shared by the
// bindings (index.js), the tokenizers and the pretrained-model loader.

/** Every error swapformer throws. `code` is stable; `message` names the field. */
export class SwapformerError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'SwapformerError';
    this.code = code;
  }
}

/** Throws a SwapformerError. */
export const fail = (code, message) => { throw new SwapformerError(code, message); };
