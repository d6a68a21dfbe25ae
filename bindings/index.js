// swapformer's public API: every name here is re-exported from the layer that
// defines it (README "Layout"); nothing is defined in this file.
//
//   utils/       errors, platform detection       (imports nothing of ours)
//   runtime/     the wasm, threads, Encoder        (imports utils/)
//   tokenizers/  tokenizer.json in JS              (imports utils/)
//   pretrained/  Hugging Face checkpoints          (imports all of the above)

export { SwapformerError, ERROR_CODES } from './utils/errors.js';
export { features, configure } from './runtime/wasm.js';
export { createEncoder, loadModel, runtimeInfo, listPlugins, Encoder } from './runtime/encoder.js';
export { cosSim, dotScore, semanticSearch, quantizeEmbeddings, maxSim, maxSimSearch, sparseSimilarity, sparseSearch } from './runtime/embeddings.js';
export { Tokenizer } from './tokenizers/tokenizer.js';
export { loadPretrained, Pretrained } from './pretrained/pretrained.js';
