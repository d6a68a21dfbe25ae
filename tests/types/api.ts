// Type-level tests of swapformer's public API, compiled by tests/types.test.js
// with `tsc --strict` in a browser project (lib ES2022 + DOM) and a Node
// project (lib ES2022 + @types/node). Each `@ts-expect-error` marks a mistake
// the types must refuse (tsc fails if the line compiles).
import {
  createEncoder,
  loadModel,
  listPlugins,
  runtimeInfo,
  configure,
  features,
  ERROR_CODES,
  SwapformerError,
  Encoder,
  loadPretrained,
  Tokenizer,
  Pretrained,
  type Encoding,
  type PretrainedFamily,
  type EntityGroup,
  type TokenEntity,
  type TokenClassificationOptions,
  type FillMaskResult,
  cosSim,
  dotScore,
  semanticSearch,
  quantizeEmbeddings,
  type Embeddings,
  type SearchHit,
  type Chunk,
  type Config,
  type Dtype,
  type ErrorCode,
  type Tensor,
  type Ids,
  type Sequence,
  type Batch,
  type ForwardResult,
  type ResolvedConfig,
  type WasmSource,
} from 'swapformer';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T>(_value: T) => ({ is: <U>(_check: Equal<T, U>) => {} });

const base = { vocabSize: 100, dModel: 32, heads: 4, layers: 2, ffDim: 64, norm: 'rmsnorm', normPlacement: 'pre', activation: 'swiglu' } as const;

export async function api(): Promise<void> {
  // ---------------------------------------------------------------- configs: positionOptions by plugin
  const rope = await createEncoder(
    { ...base, position: 'rope', positionOptions: { base: 500, style: 'half', scaling: { type: 'yarn', factor: 4, originalMaxLen: 64 } } },
    { seed: 1 },
  );
  await createEncoder({ ...base, position: 'sinusoidal', positionOptions: { base: 100 } });
  await createEncoder({ ...base, position: 'learned', maxLen: 64, positionOptions: { offset: 2 } });
  await createEncoder({ ...base, position: 't5', positionOptions: { buckets: 32, maxDistance: 128 } });
  await createEncoder({ ...base, position: 'alibi' });
  await createEncoder({ ...base, position: 'alibi', positionOptions: {} });
  await createEncoder({ ...base, position: 'none' });
  // @ts-expect-error ALiBi takes no options (the runtime refuses it with BAD_CONFIG)
  await createEncoder({ ...base, position: 'alibi', positionOptions: { base: 2 } });
  // @ts-expect-error style is RoPE's, not sinusoidal's
  await createEncoder({ ...base, position: 'sinusoidal', positionOptions: { style: 'half' } });
  // @ts-expect-error scaling needs its factor
  await createEncoder({ ...base, position: 'rope', positionOptions: { scaling: { type: 'linear' } } });
  // @ts-expect-error no such plugin
  await createEncoder({ ...base, position: 'xpos' });
  // @ts-expect-error no such activation
  await createEncoder({ ...base, position: 'none', activation: 'tanh' });
  // @ts-expect-error unknown fields are refused
  await createEncoder({ ...base, position: 'none', dropout: 0.1 });

  // the resolved config is discriminated too, and can seed a new config
  const config: ResolvedConfig = rope.config;
  if (config.position === 'rope') expectType(config.positionOptions.style).is<'interleaved' | 'half'>(true);
  if (config.position === 'sinusoidal') expectType(config.positionOptions.base).is<number>(true);
  const swapped = await createEncoder({ ...rope.config, position: 'alibi', positionOptions: {} }, { weights: rope.getWeights() });
  const asConfig: Config = { ...rope.config };
  // @ts-expect-error the config is frozen
  rope.config.dModel = 3;
  void asConfig;

  // ---------------------------------------------------------------- weights: objects or Maps of numbers
  await createEncoder({ ...base, position: 'none' }, { weights: { 'embed.tokens': new Float32Array(3200) } });
  await createEncoder({ ...base, position: 'none' }, { weights: new Map([['embed.tokens', [0, 1, 2]]]) });
  await createEncoder({ ...base, position: 'none' }, { weights: { 'embed.tokens': new Float64Array(3200) } });
  // @ts-expect-error BigInt arrays are refused (BAD_WEIGHTS)
  await createEncoder({ ...base, position: 'none' }, { weights: { 'embed.tokens': new BigInt64Array(4) } });
  // @ts-expect-error an array-like object is refused (BAD_WEIGHTS): arrays and typed arrays only
  await createEncoder({ ...base, position: 'none' }, { weights: { 'embed.tokens': { length: 1, 0: 1 } } });
  // @ts-expect-error the seed is a number
  await createEncoder({ ...base, position: 'none' }, { seed: '1' });

  // ---------------------------------------------------------------- ids and predict
  const out: ForwardResult = rope.forward([1, 2, 3]);
  expectType(out.shape).is<[batch: number, tokens: number, dModel: number]>(true);
  rope.forward(new Int32Array([1, 2]));
  rope.forward([[1, 2, 3], new Uint16Array([4, 5])], { outputAttentions: true, outputHiddenStates: true });
  // the outputs asked for are there, not optional
  const layer0: Float32Array = rope.forward([1, 2], { outputHiddenStates: true }).hiddenStates[0].data;
  const heads0: number = rope.forward([1, 2], { outputAttentions: true, typeIds: [0, 0] }).attentions[0].shape[1];
  const both = await rope.forwardAsync([1, 2], { outputAttentions: true, outputHiddenStates: true });
  const counts: number = both.attentions.length + both.hiddenStates.length;
  const asked = await rope.forwardAsync([1, 2], { outputHiddenStates: true });
  expectType(asked.hiddenStates).is<Tensor<[batch: number, tokens: number, dModel: number]>[]>(true);
  void layer0;
  void heads0;
  void counts;
  // @ts-expect-error not asked for: possibly undefined
  rope.forward([1, 2], { outputHiddenStates: true }).attentions[0];
  const flag = Math.random() > 0.5;
  // @ts-expect-error a flag known only at run time: possibly undefined
  rope.forward([1, 2], { outputHiddenStates: flag }).hiddenStates[0];
  // @ts-expect-error a string is not ids
  rope.forward('hello');
  // @ts-expect-error BigInt ids are refused (BAD_TOKEN)
  rope.forward(new BigInt64Array(2));
  // @ts-expect-error an array-like object is refused (BAD_ARGUMENT)
  rope.forward({ length: 2, 0: 1, 1: 2 });
  // @ts-expect-error an unknown forward option
  rope.forward([1], { outputAttention: true });

  const head = await createEncoder({ ...base, position: 'rope', outputHead: true });
  expectType(head.predict([1, 2, 3])).is<Int32Array>(true);
  expectType(head.predict(new Int32Array(3))).is<Int32Array>(true);
  expectType(head.predict([[1, 2], [3]])).is<Int32Array[]>(true);
  expectType(head.predict([new Int32Array(2), [3]])).is<Int32Array[]>(true);
  const ids: Ids = Math.random() < 0.5 ? [1, 2] : [[1, 2]];
  expectType(head.predict(ids)).is<Int32Array | Int32Array[]>(true);
  const batchFromJson: any[] = JSON.parse('[[1, 2], [3]]');
  expectType(head.predict(batchFromJson)).is<Int32Array | Int32Array[]>(true);
  // @ts-expect-error an any[] may be a batch: the result is not known to be one Int32Array
  const one: Int32Array = head.predict(batchFromJson);
  const seq: Sequence = [1, 2],
    batch: Batch = [seq, new Int32Array(1)];
  expectType(head.predict(seq)).is<Int32Array>(true);
  expectType(head.predict(batch)).is<Int32Array[]>(true);
  void one;

  // ---------------------------------------------------------------- the rest of an encoder
  expectType(rope.positionVectors(4).shape).is<[length: number, dModel: number]>(true);
  rope.positionScores({ length: 4, q: new Float32Array(32), k: [0, 1] });
  // @ts-expect-error the probe needs a length
  rope.positionScores({ q: [1] });
  expectType(rope.getWeights()).is<Record<string, Float32Array>>(true);
  expectType(rope.weightShapes()).is<Record<string, number[]>>(true);
  const file: Uint8Array = rope.save();
  const back: Encoder = await loadModel(file);
  await loadModel(file.buffer as ArrayBuffer, { wasm: '/assets/swapformer.wasm' });
  // @ts-expect-error a model file is bytes
  await loadModel('model.safetensors');
  expectType(rope.maxSequenceLength).is<number>(true);
  expectType(rope.disposed).is<boolean>(true);
  back.dispose();
  swapped.dispose();
  // @ts-expect-error an Encoder comes from createEncoder / loadModel
  new Encoder();

  // ---------------------------------------------------------------- functions, configure, errors
  const info = await runtimeInfo({ threads: 2 });
  expectType(info.build).is<'relaxed-simd' | 'simd128' | 'custom' | 'native'>(true);
  expectType(info.backend).is<'native' | 'wasm'>(true);
  expectType(info.backendFallback).is<string | null>(true);
  expectType(info.isa).is<string>(true);
  expectType(info.q8Amax).is<127 | 255>(true);
  configure({ backend: 'native' });
  configure({ backend: undefined });
  // @ts-expect-error a backend this package does not have
  configure({ backend: 'gpu' });
  expectType(info.threadsFallback).is<string | null>(true);
  const threadsInUse: number = info.threads + info.memoryBytes;
  void threadsInUse;
  // @ts-expect-error threads is a number
  await createEncoder({ ...base, position: 'none' }, { threads: 'all' });
  // the normalisation levers: config fields, the seeded initialisation, layers skipped per call
  const levers = await createEncoder({ ...base, position: 'rope', qkNorm: 'rmsnorm', residualScale: 'deepnorm' }, { init: { outputScale: 'depth' } });
  await createEncoder({ ...base, position: 'rope', qkNorm: 'none', residualScale: 0.5 }, { init: { outputScale: 0.25 } });
  levers.forward([1, 2, 3], { skipLayers: [0] });
  levers.forward([1, 2, 3], { skipLayers: Int32Array.of(1), outputHiddenStates: true });
  // @ts-expect-error qkNorm is a norm plugin's name or 'none'
  await createEncoder({ ...base, position: 'rope', qkNorm: 'l2' });
  // @ts-expect-error residualScale is a number or 'deepnorm'
  await createEncoder({ ...base, position: 'rope', residualScale: 'depth' });
  // @ts-expect-error outputScale is 'depth' or a number
  await createEncoder({ ...base, position: 'rope' }, { init: { outputScale: 'deepnorm' } });
  // @ts-expect-error skipLayers lists layer indices
  levers.forward([1, 2, 3], { skipLayers: 1 });
  // int8: the dtype option, the encoder's dtype, the kernel's name
  const q8 = await createEncoder({ ...base, position: 'none' }, { dtype: 'q8', threads: 2 });
  expectType(q8.dtype).is<Dtype>(true);
  expectType(q8.dtype).is<'f32' | 'q8'>(true);
  await loadModel(q8.save(), { dtype: 'f32' });
  await loadPretrained('Xenova/bge-small-en-v1.5', { dtype: 'q8' });
  expectType(info.q8Kernel).is<string>(true);
  // @ts-expect-error int8 is spelled 'q8'
  await createEncoder({ ...base, position: 'none' }, { dtype: 'int8' });
  // @ts-expect-error 'f16' is a file's storage (widened on load), not an encoder's dtype
  await loadModel(q8.save(), { dtype: 'f16' });
  // @ts-expect-error an encoder's dtype is read-only
  q8.dtype = 'f32';
  const asyncOut: ForwardResult = await rope.forwardAsync([1, 2, 3], { typeIds: [0, 0, 0] });
  void asyncOut;
  configure({ wasmPaths: { simd: '/a/swapformer.wasm', simdThreads: '/a/swapformer-mt.wasm', relaxed: '/a/r.wasm', relaxedThreads: '/a/r-mt.wasm' } });
  expectType(await listPlugins({ wasm: new URL('https://example.com/swapformer.wasm') })).is<{ position: string[]; norm: string[] }>(true);
  expectType(features).is<Readonly<{ simd: boolean; relaxedSimd: boolean }>>(true);
  configure({ wasmPaths: '/assets/' });
  configure({ wasmPaths: new URL('https://cdn.example/swapformer/dist/') });
  configure({ wasmPaths: { simd: '/a/swapformer.wasm', relaxed: new Uint8Array(8) }, build: 'auto' });
  configure({ build: 'simd128' });
  configure({ wasmPaths: undefined });
  // @ts-expect-error an unknown option
  configure({ wasmPath: '/assets/' });
  // @ts-expect-error not a build
  configure({ build: 'fast' });
  // @ts-expect-error not a source
  configure({ wasmPaths: { simd: 42 } });
  const source: WasmSource = new ArrayBuffer(8);
  void source;

  try {
    await createEncoder({ ...base, position: 'none' });
  } catch (e) {
    if (e instanceof SwapformerError) {
      expectType(e.code).is<ErrorCode>(true);
      const handled: ErrorCode[] = ['INTERNAL', 'WASM_LOAD', 'NON_FINITE', 'UNSUPPORTED_MODEL', 'NETWORK', 'NOT_FOUND', 'DISPOSED'];
      // @ts-expect-error not a code
      const wrong: ErrorCode = 'BAD_WASM';
      void handled;
      void wrong;
      switch (e.code) {
        case 'WASM_LOAD':
          console.error(e.message, e.cause);
          break;
        default:
          break;
      }
    }
  }
  expectType(ERROR_CODES).is<readonly ErrorCode[]>(true);

  // ---------------------------------------------------------------- pretrained encoders and tokenizers
  const p = await loadPretrained('sentence-transformers/all-MiniLM-L6-v2', {
    onProgress: ({ file, loaded, total }) => console.log(file, loaded, total),
    revision: 'main',
  });
  expectType(p).is<Pretrained>(true);
  const e1 = p.embed(['a', 'b']);
  const data: Float32Array = e1.data;
  void data;
  const e2 = p.embed('one sentence', { normalize: false, dimensions: 16 });
  const d2: number = e2.shape[1];
  const h3 = p.embed(['x'], { pooling: 'none' });
  const t3: number = h3.shape[2];
  void d2;
  void t3;
  // @ts-expect-error not a pooling mode
  p.embed('x', { pooling: 'avg' });
  // @ts-expect-error texts are strings
  p.embed([1, 2]);
  const fam: PretrainedFamily = p.family;
  const swappedModel = await p.withConfig({ position: 'alibi', positionOptions: {} });
  const enc: Encoding = p.tokenizer.encode('hello', { pair: 'world', maxLength: 16 });
  const first: number = enc.ids[0];
  const text: string = p.tokenizer.decode(enc.ids, { skipSpecialTokens: false });
  // @ts-expect-error pair is a string
  p.tokenizer.encode('hello', { pair: ['world'] });
  p.encoder.forward([enc.ids], { typeIds: [enc.typeIds] });
  const tok = Tokenizer.fromJSON('{}');
  const id: number | null = tok.tokenToId('[CLS]');
  await loadPretrained({ 'config.json': '{}', 'model.safetensors': new Uint8Array(0), '1_Pooling/config.json': '{}' });
  await loadPretrained(new Map([['config.json', new Uint8Array(0)]]));
  // @ts-expect-error a number is no source
  await loadPretrained(42);
  void fam;
  void first;
  void text;
  void id;
  // sentence-transformers' encode options, similarity and search
  const q = p.embed('query', { prompt: 'query: ', batchSize: 8, onProgress: ({ done, total }) => console.log(done / total), truncate: false });
  const packed: Embeddings = p.embed(['a', 'b'], { precision: 'ubinary' });
  const chunked = p.embed(['a long text'], { chunking: { maxTokens: 64, overlap: 8, pool: 'none' } });
  const firstChunk: string = chunked[0].chunks[0].text;
  const windows: Chunk[] = p.chunk('a long text', { maxTokens: 32 });
  const hits: SearchHit[][] = await semanticSearch(q, packed.shape[0] > 0 ? p.embed(['x', 'y']) : q, { topK: 2, scoreFunction: 'dot' });
  const best: number = hits[0][0].corpusId;
  const m: number = (await cosSim(q, [[1, 2, 3]])).shape[0] + (await dotScore([1, 2], [[3, 4]])).shape[1] + p.similarity(q, q).shape[0];
  const i8 = await quantizeEmbeddings(q, 'int8', { calibrationEmbeddings: q });
  for await (const { index, embeddings } of p.embedStream(['a', 'b', 'c'], { batchSize: 2, precision: 'binary' })) console.log(index, embeddings.shape);
  const fn: 'cosine' | 'dot' | 'euclidean' | 'manhattan' = p.similarityFnName;
  void firstChunk;
  void windows;
  void best;
  void m;
  void i8;
  void fn;
  // @ts-expect-error not a precision
  p.embed('x', { precision: 'float16' });
  // @ts-expect-error topK is a number
  await semanticSearch(q, q, { topK: '3' });
  // @ts-expect-error ranges are rows of numbers
  await quantizeEmbeddings(q, 'uint8', { ranges: 'auto' });
  await loadPretrained('owner/private-model', { token: 'hf_xxx', offline: false, cacheDir: '/tmp/hub' });

  // ---------------------------------------------------------------- task results typed by their call
  // classifyTokens groups by default ('simple'); one entry per token only with aggregationStrategy 'none'
  expectType(p.classifyTokens('Ada lives in London')).is<EntityGroup[]>(true);
  expectType(p.classifyTokens('Ada lives in London', { ignoreLabels: [] })).is<EntityGroup[]>(true);
  expectType(p.classifyTokens('Ada lives in London', { aggregationStrategy: 'first' })).is<EntityGroup[]>(true);
  expectType(p.classifyTokens('Ada lives in London', { aggregationStrategy: 'none' })).is<TokenEntity[]>(true);
  expectType(await p.classifyTokensAsync('Ada lives in London')).is<EntityGroup[]>(true);
  expectType(await p.classifyTokensAsync('Ada lives in London', { aggregationStrategy: 'none' })).is<TokenEntity[]>(true);
  const strategy = (Math.random() > 0.5 ? 'none' : 'max') as TokenClassificationOptions['aggregationStrategy'];
  expectType(p.classifyTokens('Ada', { aggregationStrategy: strategy })).is<TokenEntity[] | EntityGroup[]>(true);
  const groups = p.classifyTokens('Ada lives in London').map(({ entityGroup, start, end }) => `${entityGroup} ${start}-${end}`);
  // @ts-expect-error the default call groups: no per-token entity field
  p.classifyTokens('Ada lives in London')[0].entity;
  // @ts-expect-error not a strategy
  p.classifyTokens('Ada', { aggregationStrategy: 'mean' });
  // fillMask: one mask gives its candidates, a literal with two masks one array per mask
  const runtimeText: string = ['The capital of France is [MASK].'][0];
  expectType(p.fillMask(runtimeText)).is<FillMaskResult[]>(true);
  const words: string[] = p.fillMask(runtimeText, { topK: 3 }).map((c) => `${c.tokenStr} ${c.score.toFixed(2)}`);
  expectType(p.fillMask('The capital of France is [MASK].')).is<FillMaskResult[]>(true);
  expectType(p.fillMask('The [MASK] bit the [MASK].')).is<FillMaskResult[][]>(true);
  expectType(p.fillMask('<mask> and <mask>', { targets: ['a'] })).is<FillMaskResult[][]>(true);
  expectType(await p.fillMaskAsync(runtimeText)).is<FillMaskResult[]>(true);
  expectType(await p.fillMaskAsync('[MASK] [MASK]')).is<FillMaskResult[][]>(true);
  // @ts-expect-error two masks: one array per mask, not one list of candidates
  const flat: FillMaskResult[] = p.fillMask('The [MASK] bit the [MASK].');
  // @ts-expect-error the mask token's id may be null (a tokenizer without one)
  p.tokenizer.idToToken(p.tokenizer.maskTokenId);
  void groups;
  void words;
  void flat;
  void strategy;
  swappedModel.dispose();
  p.dispose();
  rope.dispose();
  head.dispose();
}
