// Type-level tests of embeddings as sentence-transformers computes them (embed's options and
// results by precision and chunking, embedStream, chunk, similarity) and of the search functions,
// compiled by tests/types.test.js. Each `@ts-expect-error` marks a mistake the types must refuse.
import {
  loadPretrained,
  cosSim,
  dotScore,
  semanticSearch,
  quantizeEmbeddings,
  maxSim,
  maxSimSearch,
  sparseSimilarity,
  sparseSearch,
  type Embeddings,
  type ChunkedEmbeddings,
  type SearchHit,
  type Tensor,
  type ScoreFunction,
  type EmbedProgress,
  type SparseEmbedding,
  type TokenEmbeddings,
  type RetrievalOutputs,
  type RetrievalOutputsOf,
  type QuestionAnswer,
  type M3Scores,
  type Output,
  type RetrievalSettings,
} from 'swapformer';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T>(_value: T) => ({ is: <U>(_check: Equal<T, U>) => {} });

export async function embeddings(): Promise<void> {
  const p = await loadPretrained('intfloat/e5-small-v2', { token: 'hf_x', offline: false, cacheDir: '/tmp/hub', cache: true });
  // @ts-expect-error offline is a boolean
  await loadPretrained('intfloat/e5-small-v2', { offline: 'yes' });

  // ---------------------------------------------------------------- embed: options, precision, chunking
  const events: EmbedProgress[] = [];
  const f = p.embed(['a', 'b'], { prompt: 'query: ', batchSize: 8, truncate: false, onProgress: (e) => events.push(e) });
  expectType(f).is<Tensor<[batch: number, dimensions: number]>>(true);
  const q8 = p.embed(['a'], { precision: 'int8', promptName: 'query' });
  expectType(q8.data).is<Int8Array>(true);
  const bits = p.embed('a', { precision: 'ubinary', chunking: { maxTokens: 64, overlap: 8 } });
  expectType(bits.data).is<Uint8Array>(true);
  const chunked = p.embed(['a long text'], { chunking: { pool: 'none' } });
  expectType(chunked).is<ChunkedEmbeddings[]>(true);
  const start: number = chunked[0].chunks[0].start;
  const hidden = await p.embedAsync('a', { pooling: 'none' });
  const T: number = hidden.shape[1];
  const f32 = await p.embedAsync(['a'], { precision: 'float32' });
  expectType(f32.data).is<Float32Array>(true);
  const any = p.embed(['a'], {} as Parameters<typeof p.embed>[1]);
  void any;
  void start;
  void T;
  // @ts-expect-error not a precision
  p.embed('a', { precision: 'fp16' });
  // @ts-expect-error batchSize is a number
  p.embed('a', { batchSize: '8' });
  // @ts-expect-error chunking's pools are mean, max and none
  p.embed('a', { chunking: { pool: 'cls' } });

  // ---------------------------------------------------------------- embedStream, chunk, similarity, prompts
  async function* corpus(): AsyncGenerator<string> {
    yield 'a';
    yield 'b';
  }
  for await (const { index, embeddings } of p.embedStream(corpus(), { batchSize: 16 })) {
    const i: number = index;
    expectType(embeddings).is<Tensor<[batch: number, dimensions: number]>>(true);
    void i;
  }
  for await (const { embeddings } of p.embedStream(['a', 'b'], { precision: 'binary' })) expectType(embeddings.data).is<Int8Array>(true);
  // @ts-expect-error int8 needs ranges over the whole corpus: quantizeEmbeddings
  p.embedStream(['a'], { precision: 'int8' });
  // @ts-expect-error texts are an iterable of strings
  p.embedStream('a');
  const windows = p.chunk('some text', { maxTokens: 32, overlap: 4 });
  const tokens: number = windows[0].tokens;
  const s = p.similarity(f, [[1, 2, 3]]);
  expectType(s).is<Tensor<[rows: number, columns: number]>>(true);
  const fn: ScoreFunction = p.similarityFnName;
  const prompts: Record<string, string> | null = p.prompts;
  const recipeFn: ScoreFunction | null = p.recipe.similarityFnName;
  void tokens;
  void fn;
  void prompts;
  void recipeFn;

  // ---------------------------------------------------------------- the search functions
  const cos = await cosSim(f, f);
  const dot = await dotScore(
    [
      [1, 0],
      [0, 1],
    ],
    new Float32Array([1, 1]),
  );
  expectType(cos.shape).is<[rows: number, columns: number]>(true);
  const hits = await semanticSearch(f, { data: new Float32Array(6), shape: [2, 3] }, { topK: 5, scoreFunction: 'dot' });
  expectType(hits).is<SearchHit[][]>(true);
  const u = await quantizeEmbeddings(f, 'ubinary');
  expectType(u).is<Embeddings<'ubinary'>>(true);
  expectType(u.data).is<Uint8Array>(true);
  await semanticSearch(u, u, { scoreFunction: 'hamming', queryChunkSize: 100, corpusChunkSize: 50000 });
  const i8 = await quantizeEmbeddings(f, 'int8', { calibrationEmbeddings: f });
  expectType(i8.data).is<Int8Array>(true);
  await quantizeEmbeddings(f, 'uint8', {
    ranges: [
      [0, 0, 0],
      [1, 1, 1],
    ],
  });
  void dot;
  // @ts-expect-error not a score function
  await semanticSearch(f, f, { scoreFunction: 'jaccard' });
  // @ts-expect-error not a precision
  await quantizeEmbeddings(f, 'int4');
  // @ts-expect-error strings are no embeddings
  await cosSim(['a'], ['b']);

  // ---------------------------------------------------------------- sparse, ColBERT, bge-m3, question answering
  const outputs: Output[] = p.outputs;
  const kind: RetrievalSettings['kind'] | undefined = p.retrieval?.kind;
  const sparse = p.embed(['a'], { output: 'sparse', maxActiveDims: 64 });
  expectType(sparse).is<SparseEmbedding[]>(true);
  const idx: Int32Array = sparse[0].indices;
  const cb = await p.embedAsync(['a'], { output: 'colbert', isQuery: false });
  expectType(cb).is<TokenEmbeddings[]>(true);
  const all = p.embed(['a'], { output: ['dense', 'sparse', 'colbert'] });
  expectType(all).is<RetrievalOutputsOf<'dense' | 'sparse' | 'colbert'>>(true);
  const cols: TokenEmbeddings[] = all.colbert; // asked for: not optional
  const two = p.embed(['a'], { output: ['dense'] });
  // @ts-expect-error sparse was not asked for: it may be absent
  const notAsked: SparseEmbedding[] = two.sparse;
  const asked: RetrievalOutputs = two;
  const scores: Float32Array = await maxSim(cb[0], cb);
  const mhits = await maxSimSearch([cb[0]], cb, { topK: 3 });
  expectType(mhits).is<SearchHit[][]>(true);
  const sims = await sparseSimilarity(sparse, [{ indices: [1, 2], values: [0.5, 1] }]);
  expectType(sims.shape).is<[rows: number, columns: number]>(true);
  await sparseSearch(sparse, sparse, { topK: 2 });
  const decoded: [token: string, weight: number][] = p.decodeSparse(sparse[0], { topK: 5 });
  const best = p.answerQuestion('who?', 'Ada wrote it.');
  expectType(best).is<QuestionAnswer | null>(true);
  const some = await p.answerQuestionAsync('who?', 'Ada wrote it.', { topK: 3, docStride: 64, maxSeqLen: 256, handleImpossibleAnswer: true });
  const m3: M3Scores = p.computeScore([['q', 'p']], { weights: [0.4, 0.2, 0.4] });
  const dense: Float32Array = m3.colbertSparseDense;
  p.rank('q', ['a', 'b'], { weights: [1, 1, 1], topK: 1 });
  void outputs;
  void kind;
  void idx;
  void scores;
  void decoded;
  void some;
  void dense;
  // @ts-expect-error not an output
  p.embed(['a'], { output: 'multi-vector' });
  // @ts-expect-error three weights
  p.computeScore([['q', 'p']], { weights: [1, 1] });
  // @ts-expect-error docStride is a number
  p.answerQuestion('q', 'c', { docStride: '64' });
  p.dispose();
}
