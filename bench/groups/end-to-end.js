// Group "end-to-end": texts/s of embedding a corpus of real sentences of mixed
// length, tokenization and pooling included, swapformer against transformers.js as
// its users call it, on the same weights, one thread, f32 and q8, in Node (a fresh
// process: bench/e2e.js) and in headless Chromium (bench/e2e-page.js).
//
// The model: all-MiniLM-L6-v2's shape (BERT, 6 layers, 384 hidden, 12 heads, 1536
// FFN, vocab 30522, type vocab 2, embeddings LayerNorm) with random weights
// (createEncoder with a seed, non-trivial biases and gains), written as a Hugging
// Face sentence-transformers folder (config.json, model.safetensors with BertModel's
// names, bert-base-uncased's tokenizer.json built by tests/tokenizers/real.js,
// tokenizer_config.json, special_tokens_map.json, modules.json, 1_Pooling,
// 2_Normalize, sentence_bert_config.json) plus transformers.js's onnx/model.onnx and
// onnx/model_quantized.onnx (bench/export_hf.py), in bench/.cache/e2e/.
//
// The corpus: the prose of the Node.js API documentation that the nodejs package
// installs (/usr/share/doc/nodejs/api/*.md): paragraphs outside code blocks, markdown
// syntax removed, split into sentences, those of 5 to 100 tokens kept (swapformer's
// bert-base-uncased tokenizer, [CLS] and [SEP] included), duplicates dropped, in a
// seeded random order; the first 2000 (--e2e-texts; --quick: 128).
//
// transformers.js comes from bench/package.json (bench/deps.sh installs it); without
// it the group runs swapformer alone and says so.
import { readFileSync, writeFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import * as H from '../harness.js';
import { random } from '../../models/tasks.js';
import { bertBaseUncased } from '../../tests/tokenizers/real.js';
import { batches } from '../e2e-harness.js';
import { BENCH, CACHE, PYTHON, SNAP, child, rel, sha, log } from '../context.js';
import { buildNamed } from '../setup.js';
import { NODE_FLAGS } from '../../tools/node-flags.js';

export const E2E_NAME = 'all-minilm-l6-v2';
const FOLDER = join(CACHE, 'e2e', E2E_NAME);
const CORPUS = join(CACHE, 'e2e', 'corpus.json');
const DOCS = '/usr/share/doc/nodejs/api';
const TJS = join(BENCH, 'node_modules', '@huggingface', 'transformers', 'package.json');
const SEED = 5;

/** all-MiniLM-L6-v2's shape as swapformer's config (what loadPretrained makes of its config.json). */
export const E2E_CONFIG = {
  vocabSize: 30522,
  dModel: 384,
  heads: 12,
  layers: 6,
  ffDim: 1536,
  maxLen: 512,
  typeVocabSize: 2,
  embedNorm: true,
  position: 'learned',
  norm: 'layernorm',
  normPlacement: 'post',
  activation: 'gelu',
  eps: 1e-12,
};

/** The config.json of sentence-transformers/all-MiniLM-L6-v2 (its values; random weights here). */
const HF_CONFIG = {
  _name_or_path: 'bench: all-MiniLM-L6-v2 shape, random weights',
  architectures: ['BertModel'],
  attention_probs_dropout_prob: 0.1,
  gradient_checkpointing: false,
  hidden_act: 'gelu',
  hidden_dropout_prob: 0.1,
  hidden_size: 384,
  initializer_range: 0.02,
  intermediate_size: 1536,
  layer_norm_eps: 1e-12,
  max_position_embeddings: 512,
  model_type: 'bert',
  num_attention_heads: 12,
  num_hidden_layers: 6,
  pad_token_id: 0,
  position_embedding_type: 'absolute',
  torch_dtype: 'float32',
  transformers_version: '4.8.2',
  type_vocab_size: 2,
  use_cache: true,
  vocab_size: 30522,
};
const SPECIAL = { unk_token: '[UNK]', sep_token: '[SEP]', pad_token: '[PAD]', cls_token: '[CLS]', mask_token: '[MASK]' };
const ST_FILES = {
  'tokenizer_config.json': {
    do_lower_case: true,
    tokenize_chinese_chars: true,
    strip_accents: null,
    model_max_length: 512,
    tokenizer_class: 'BertTokenizer',
    ...SPECIAL,
  },
  'special_tokens_map.json': SPECIAL,
  'modules.json': [
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
  ],
  '1_Pooling/config.json': {
    word_embedding_dimension: 384,
    pooling_mode_cls_token: false,
    pooling_mode_mean_tokens: true,
    pooling_mode_max_tokens: false,
    pooling_mode_mean_sqrt_len_tokens: false,
  },
  'sentence_bert_config.json': { max_seq_length: 256, do_lower_case: false },
};

/** swapformer's canonical tensor names -> BertModel's. */
const EMBED_NAMES = {
  'embed.tokens': 'embeddings.word_embeddings.weight',
  'embed.positions': 'embeddings.position_embeddings.weight',
  'embed.types': 'embeddings.token_type_embeddings.weight',
  'embed.norm.weight': 'embeddings.LayerNorm.weight',
  'embed.norm.bias': 'embeddings.LayerNorm.bias',
};
const LAYER_NAMES = {
  'attn.q': 'attention.self.query',
  'attn.k': 'attention.self.key',
  'attn.v': 'attention.self.value',
  'attn.o': 'attention.output.dense',
  norm1: 'attention.output.LayerNorm',
  'ffn.up': 'intermediate.dense',
  'ffn.down': 'output.dense',
  norm2: 'output.LayerNorm',
};
const hfName = (n) => EMBED_NAMES[n] ?? n.replace(/^layers\.(\d+)\.(.*)\.(weight|bias)$/, (_, i, m, p) => `encoder.layer.${i}.${LAYER_NAMES[m]}.${p}`);

/** A plain safetensors file (as transformers saves one: no metadata) of F32 tensors [{name, shape, data}]. */
function safetensors(tensors) {
  let offset = 0;
  const header = {};
  for (const t of tensors) {
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - ((8 + text.length) % 8)) % 8);
  const h = Buffer.from(text),
    out = Buffer.alloc(8 + h.length + offset);
  out.writeBigUInt64LE(BigInt(h.length), 0);
  h.copy(out, 8);
  let at = 8 + h.length;
  for (const t of tensors) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    at += t.data.byteLength;
  }
  return out;
}

/** The model folder and its ONNX exports, written when missing or made by another version of this file. */
export async function ensureFolder(sf, wasm) {
  const script = join(BENCH, 'export_hf.py');
  const key = JSON.stringify({
    cfg: E2E_CONFIG,
    seed: SEED,
    hf: HF_CONFIG,
    files: ST_FILES,
    exporter: sha(readFileSync(script)),
    quantizer: sha(readFileSync(join(BENCH, 'export_onnx.py'))),
  });
  const keyPath = join(FOLDER, '.key');
  if (existsSync(keyPath) && readFileSync(keyPath, 'utf8') === key) return;
  log(`model folder: ${rel(FOLDER)} (Hugging Face layout, all-MiniLM-L6-v2 shape, random weights)`);
  rmSync(FOLDER, { recursive: true, force: true });
  mkdirSync(join(FOLDER, '1_Pooling'), { recursive: true });
  mkdirSync(join(FOLDER, '2_Normalize'), { recursive: true });
  const init = await sf.createEncoder(E2E_CONFIG, { seed: SEED, wasm });
  const weights = H.perturb(init.getWeights(), SEED),
    shapes = init.weightShapes();
  init.dispose();
  const tensors = Object.keys(weights).map((n) => ({ name: hfName(n), shape: shapes[n], data: weights[n] }));
  writeFileSync(join(FOLDER, 'model.safetensors'), safetensors(tensors));
  writeFileSync(join(FOLDER, 'config.json'), JSON.stringify(HF_CONFIG, null, 2));
  writeFileSync(join(FOLDER, 'tokenizer.json'), JSON.stringify(bertBaseUncased()));
  for (const [f, v] of Object.entries(ST_FILES)) writeFileSync(join(FOLDER, f), JSON.stringify(v, null, 2));
  log(`onnx: ${rel(FOLDER)}/onnx/model.onnx and model_quantized.onnx (${rel(script)} with ${PYTHON})`);
  const r = spawnSync(PYTHON, [script, FOLDER], { stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`export_hf.py failed (${PYTHON} needs PyTorch and python3-onnx):\n${(r.stderr || '').split('\n').slice(-8).join('\n')}`);
  writeFileSync(keyPath, key);
}

/** Markdown prose -> plain sentences (code blocks, headings, tables, HTML comments and notes' markers out). */
export function sentencesOf(md) {
  const paragraphs = [];
  let cur = [],
    fence = false;
  const flush = () => {
    if (cur.length) paragraphs.push(cur.join(' '));
    cur = [];
  };
  for (const raw of md.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('```')) {
      fence = !fence;
      flush();
      continue;
    }
    if (fence) continue;
    if (!line || /^(#|\||<!--|>|\[[^\]]*\]:)/.test(line)) {
      flush();
      continue;
    }
    if (/^([*-]|\d+\.)\s/.test(line)) flush();
    cur.push(line.replace(/^([*-]|\d+\.)\s+/, ''));
  }
  flush();
  const clean = (p) =>
    p
      .replace(/<[^>]+>/g, '')
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
      .replace(/\[([^\]]*)\]/g, '$1')
      .replace(/`/g, '')
      .replace(/\*\*|__/g, '')
      .replace(/(^|\W)_([^_]+)_(?=\W|$)/g, '$1$2')
      .replace(/\s+/g, ' ')
      .trim();
  return paragraphs
    .map(clean)
    .flatMap((p) => p.split(/(?<=[.!?])\s+(?=[A-Z"'(])/))
    .map((s) => s.trim())
    .filter((s) => /^[A-Z"'(]/.test(s) && /[.!?]$/.test(s));
}

/** The corpus (bench/.cache/e2e/corpus.json), made once: {source, texts, tokens}. */
export function ensureCorpus(tokenizer, n) {
  if (existsSync(CORPUS)) {
    const c = JSON.parse(readFileSync(CORPUS, 'utf8'));
    if (c.n === n && c.version === 2) return c;
  }
  if (!existsSync(DOCS)) return null;
  const files = readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .sort();
  const seen = new Set(),
    pool = [];
  for (const f of files) {
    for (const s of sentencesOf(readFileSync(join(DOCS, f), 'utf8'))) {
      if (seen.has(s)) continue;
      seen.add(s);
      const t = tokenizer.encode(s).ids.length;
      if (t >= 5 && t <= 100) pool.push([s, t]);
    }
  }
  const r = random(SEED);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  const pick = pool.slice(0, n);
  let pkg = 'nodejs';
  try {
    pkg = `nodejs ${execFileSync('dpkg-query', ['-W', '-f=${Version}', 'nodejs'], { encoding: 'utf8' }).trim()}`;
  } catch {
    /* not dpkg */
  }
  const c = {
    version: 2,
    n,
    source: `the prose of the Node.js API documentation (${DOCS}/*.md, ${files.length} files, from the ${pkg} package; MIT licence)`,
    candidates: pool.length,
    texts: pick.map(([s]) => s),
    tokens: pick.map(([, t]) => t),
  };
  writeFileSync(CORPUS, JSON.stringify(c));
  return c;
}

/**
 * What transformers.js's calls of 32 compute, each padded to its longest text (in
 * input order or length-sorted, bench/e2e-harness.js batches): {tokens, flops}.
 */
function padding(tokens, sorted, texts) {
  let padded = 0,
    flops = 0;
  for (const b of batches(texts, sorted)) {
    const T = Math.max(...b.map((k) => tokens[k]));
    padded += b.length * T;
    flops += b.length * H.flops(E2E_CONFIG, T);
  }
  return { tokens: padded, flops };
}

/** The relaxed build with its name section, for the CPU profile (setup.buildNamed), or null. */
function nameBuild(ctx) {
  if (!ctx.relaxedOn || !ctx.relaxedBuilt) return null;
  try {
    ctx.named ??= buildNamed();
    return ctx.named;
  } catch (e) {
    log(`  profile build failed: ${e.message.split('\n')[0]}`);
    return null;
  }
}

/** R.endToEnd: {corpus, node, browser, tjs, profiles}. */
export async function run(ctx) {
  const { opts, R, sf, plainModule, relaxedBuilt, section } = ctx;
  if (!opts.endToEnd) return;
  const nodeOn = opts.only !== 'browser',
    browserOn = opts.browser && opts.only !== 'node';
  await section('end-to-end', async () => {
    log('end-to-end (texts/s of a corpus of real sentences, one thread):');
    await ensureFolder(sf, plainModule);
    const p = await sf.loadPretrained(FOLDER, { wasm: plainModule, threads: 1 });
    const corpus = ensureCorpus(p.tokenizer, opts.e2eTexts);
    p.dispose();
    if (!corpus) {
      log(`  skipped: no corpus (${DOCS} is missing: Node's API documentation, in NodeSource's nodejs package or Debian's nodejs-doc)`);
      R.endToEnd = { skipped: `${DOCS} missing` };
      return;
    }
    const tjsOn = existsSync(TJS);
    const E = (R.endToEnd = {
      model: 'all-MiniLM-L6-v2 shape (BERT, 6 x 384, 12 heads, FFN 1536, vocab 30522), random weights',
      folder: rel(FOLDER),
      corpus: {
        source: corpus.source,
        candidates: corpus.candidates,
        texts: corpus.texts.length,
        tokens: corpus.tokens.reduce((a, b) => a + b, 0),
        min: Math.min(...corpus.tokens),
        median: H.median(corpus.tokens),
        max: Math.max(...corpus.tokens),
        flops: corpus.tokens.reduce((a, T) => a + H.flops(E2E_CONFIG, T), 0),
        padded: { input: padding(corpus.tokens, false, corpus.texts), sorted: padding(corpus.tokens, true, corpus.texts) },
      },
      runs: opts.e2eRuns,
      tjs: tjsOn ? JSON.parse(readFileSync(TJS, 'utf8')).version : null,
    });
    log(
      `  corpus: ${E.corpus.texts} sentences, ${E.corpus.tokens} tokens (${E.corpus.min}-${E.corpus.max}, median ${E.corpus.median}); ` +
        `transformers.js computes ${E.corpus.padded.input.tokens} padded tokens in input order, ${E.corpus.padded.sorted.tokens} length-sorted`,
    );
    if (!tjsOn) log('  transformers.js is not installed (bench/node_modules: sh bench/deps.sh): swapformer alone');
    if (nodeOn) {
      // the build this Node picks with no flag: the relaxed one where relaxed SIMD needs none (Node 22+)
      const wasm = relaxedBuilt && !NODE_FLAGS.length ? SNAP.relaxed : SNAP.plain;
      log(`  node ${process.version} (a fresh process; swapformer ${rel(wasm)}, transformers.js ${E.tjs ?? '-'} with onnxruntime-node):`);
      // the profile runs a named copy of the relaxed build: only when that is the build timed here
      const named = wasm === SNAP.relaxed ? nameBuild(ctx) : null;
      E.node = await child('e2e.js', { folder: FOLDER, corpus: CORPUS, wasm, runs: opts.e2eRuns, tjs: tjsOn, profileWasm: named?.file }, 90 * 60e3);
      Object.assign(E.node, { nodeVersion: process.version, build: wasm === SNAP.plain ? 'SIMD' : 'relaxed', date: new Date().toISOString() });
      if (E.node.error) log(`  node: ${E.node.error}`);
      E.profiles = E.node.profiles?.map((p) => ({ ...p, sameCode: named?.sameCode, nodeVersion: process.version }));
    }
    if (browserOn) {
      const { runBrowser } = await import('../browser.js');
      log(`  chromium (swapformer ${relaxedBuilt ? 'dist/swapformer-relaxed.wasm' : 'dist/swapformer.wasm'}, transformers.js's wasm device):`);
      try {
        const b = await runBrowser(
          {
            peaks: false,
            endToEnd: {
              folder: `/${rel(FOLDER)}/`,
              modelRoot: `/${rel(join(CACHE, 'e2e'))}/`,
              name: E2E_NAME,
              texts: corpus.texts,
              runs: opts.e2eRuns,
              tjs: tjsOn,
              wasm: `/${rel(relaxedBuilt ? SNAP.relaxed : SNAP.plain)}`,
            },
          },
          { log },
        );
        E.browser = { ...b.endToEnd, date: new Date().toISOString() };
        R.machine.chromium ??= b.version;
      } catch (e) {
        E.browser = { error: e.message.split('\n')[0] };
        log(`  chromium: ${E.browser.error}`);
      }
    }
    carryOver(R, previousRun());
  });
}

const major = (v) => v?.replace(/^v/, '').split('.')[0];

/** The last end-to-end figures on disk (bench/.cache/results-e2e.json, else results.json's), or null. */
function previousRun() {
  for (const f of ['results-e2e.json', 'results.json']) {
    const path = join(CACHE, f);
    if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8'));
  }
  return null;
}

/**
 * Figures of the last run on the same corpus that this one did not remeasure: its
 * Node runs on other Node majors (E.otherNodes, beside this Node's), and its Chromium
 * run when this one skipped Chromium (--no-browser: Chromium's figures do not depend
 * on the Node that drives it). A quick run's and a full run's are never mixed.
 */
export function carryOver(R, prev) {
  const E = R.endToEnd,
    P = prev?.endToEnd;
  if (!E?.corpus || !P?.corpus || prev.quick !== R.quick || P.corpus.texts !== E.corpus.texts || P.corpus.tokens !== E.corpus.tokens || P.runs !== E.runs)
    return;
  const mine = major(E.node?.nodeVersion),
    seen = new Set([mine]);
  E.otherNodes = [P.node, ...(P.otherNodes ?? [])]
    .filter((x) => {
      const m = major(x?.nodeVersion);
      if (!x?.results?.length || !m || seen.has(m)) return false;
      seen.add(m);
      return true;
    })
    .sort((a, b) => major(a.nodeVersion) - major(b.nodeVersion));
  if (!E.profiles?.length && P.profiles?.length) E.profiles = P.profiles.map((p) => ({ nodeVersion: P.node?.nodeVersion, ...p }));
  if (!E.browser && P.browser?.results?.length) {
    E.browser = P.browser;
    R.machine.chromium ??= prev.machine?.endToEnd?.chromium ?? prev.machine?.chromium;
  }
}

/**
 * --only=end-to-end: this run's end-to-end figures (and its section and machine
 * notes) over the last full run's results (bench/.cache/results.json), or this run alone.
 */
export function mergeInto(R) {
  const path = join(CACHE, 'results.json');
  if (!existsSync(path)) return R;
  const last = JSON.parse(readFileSync(path, 'utf8'));
  if (last.quick !== R.quick) return R; // a quick run's figures and a full run's are not mixed
  last.endToEnd = R.endToEnd;
  last.sections = { ...(last.sections ?? {}), 'end-to-end': R.sections?.['end-to-end'] };
  const { date, git, cpu, node, load, loadEnd, waited, chromium } = R.machine;
  last.machine.endToEnd = { date, git, cpu, node, load, loadEnd, waited, chromium };
  return last;
}
