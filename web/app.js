// The demo's state and wiring. The page is a list of sections; each is
// mounted once with mount(root, app) and then gets update(state) after every
// run (a `deferred` one a little later, once typing pauses). A new section is
// one more entry in SECTIONS; "Trained models" (trained.js) is one that keeps
// its own encoders and only uses the app's queue. app.adopt(encoder, {seed,
// provenance}) makes an encoder the current model (the swap section uses it);
// it needs a config the form can describe and ids from the page's tokenizers.
//
// All wasm work goes through one queue (app.enqueue), so runs never
// interleave and app.whenIdle() tells when the page has caught up.
import * as api from '../bindings/index.js';
import { createTokenizer, displayToken } from './tokenizer.js';
import { h, fill, setOptions, errorText } from './dom.js';
import { mountPictures } from './pictures.js';
import { mountSwap } from './swap.js';
import { mountExperiments } from './experiments-panel.js';
import { mountTrained } from './trained.js';
import { mountPretrained } from './pretrained.js';
import { mountPositionsReal } from './positions-real.js';

/** Keeps the page responsive: beyond these the demo refuses (the library does not). */
export const LIMITS = { layers: 48, dModel: 512, heads: 64, ffDim: 2048, maxLen: 4096, tokens: 512 };
const DEBOUNCE_MS = 120;
const DEFERRED_MS = 250;

const SECTIONS = [
  { id: 'pictures', mount: mountPictures },
  { id: 'swap', mount: mountSwap },
  { id: 'experiments', mount: mountExperiments, deferred: true },
  { id: 'trained', mount: mountTrained, deferred: true },
  { id: 'pretrained', mount: mountPretrained, deferred: true },
  { id: 'positions-real', mount: mountPositionsReal, deferred: true },
];

const $ = (id) => document.getElementById(id);

/** An error shown in the page like a SwapformerError (code + message). */
class DemoError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

class App {
  constructor(plugins) {
    this.api = api;
    this.plugins = plugins;
    this.queue = Promise.resolve();
    this.timers = new Map(); // name -> timeout id
    this.timerWaiters = [];
    this.encoder = null;
    this.modelKey = null;
    this.buildError = null; // set while the controls describe a model that cannot be built
    this.provenance = null;
    this.runCount = 0;
    this.state = null;
    this.experimentResults = {};
    this.sections = [];
    this.pretrainedModel = null; // {p, label}: the checkpoint "Your model" shows (setPretrained)
    this.ffnCounts = new Map(); // dModel -> the FFN parameter counts of the builder's note
  }

  /** "Your model" shows a checkpoint ({p, label}) or none (null); sections that use it follow. */
  setPretrained(model) {
    this.pretrainedModel = model;
    for (const s of this.sections) s.pretrainedChanged?.(model);
  }

  // ------------------------------------------------------------ scheduling

  /** Runs fn after all queued work; errors are shown, never thrown to the console. */
  enqueue(fn) {
    const p = this.queue.then(fn).catch((e) => this.showError(e instanceof Error && !e.code ? new DemoError('INTERNAL', e.message) : e))
      .finally(() => { if (p === this.queue && !this.timers.size) document.body.dataset.busy = 'false'; });
    this.queue = p;
    return p;
  }

  /** Runs fn (queued) after `delay` ms; a second call with the same name restarts the wait. */
  later(name, delay, fn) {
    clearTimeout(this.timers.get(name));
    document.body.dataset.busy = 'true';
    this.timers.set(name, setTimeout(() => {
      this.timers.delete(name);
      this.enqueue(fn);
      this.timerWaiters.splice(0).forEach((r) => r());
    }, delay));
  }

  /** Re-runs the page after a short pause (coalesces keystrokes). */
  schedule(delay = DEBOUNCE_MS) {
    this.later('run', delay, () => this.run());
  }

  /** Resolves when no run is pending or in progress. */
  async whenIdle() {
    for (;;) {
      if (this.timers.size) {
        await new Promise((r) => this.timerWaiters.push(r));
        continue;
      }
      const q = this.queue;
      await q;
      if (q === this.queue && !this.timers.size) return;
    }
  }

  // ------------------------------------------------------------ the model panel

  /** The config, seed, tokenizer and text the controls describe. */
  readForm() {
    const num = (id) => {
      const raw = $(id).value.trim();
      return raw === '' ? NaN : Number(raw);
    };
    const position = $('position').value;
    const positionOptions = {};
    if (position === 'sinusoidal' || position === 'rope') positionOptions.base = num('pos-base');
    if (position === 'rope') positionOptions.style = $('rope-style').value;
    const mode = document.querySelector('input[name=tokenizer]:checked').value;
    const config = {
      vocabSize: createTokenizer(mode).vocabSize,
      dModel: num('d-model'), heads: num('heads'), layers: num('layers'), ffDim: num('ff-dim'),
      maxLen: num('max-len'),
      position, positionOptions,
      norm: $('norm').value, normPlacement: $('placement').value, finalNorm: $('final-norm').checked,
      activation: $('activation').value,
    };
    return { config, seed: num('seed'), mode, text: $('text').value };
  }

  /** Sets the controls from a config (without running). */
  writeForm(config, { seed, text, mode } = {}) {
    const set = (id, v) => { if (v !== undefined && v !== null) $(id).value = String(v); };
    set('position', config.position);
    set('pos-base', config.positionOptions?.base);
    set('rope-style', config.positionOptions?.style);
    set('max-len', config.maxLen);
    set('norm', config.norm);
    set('placement', config.normPlacement);
    if (config.finalNorm !== undefined) $('final-norm').checked = !!config.finalNorm;
    else if (config.normPlacement) $('final-norm').checked = config.normPlacement === 'pre';
    set('layers', config.layers);
    set('d-model', config.dModel);
    set('heads', config.heads);
    set('ff-dim', config.ffDim);
    set('activation', config.activation);
    set('seed', seed);
    if (mode) document.querySelector(`input[name=tokenizer][value=${mode}]`).checked = true;
    if (text !== undefined) $('text').value = text;
    this.showPositionFields();
  }

  showPositionFields() {
    const p = $('position').value;
    for (const el of document.querySelectorAll('[data-for-position]')) el.hidden = !el.dataset.forPosition.split(' ').includes(p);
  }

  wire() {
    setOptions($('position'), this.plugins.position);
    setOptions($('norm'), this.plugins.norm);
    $('position').value = this.plugins.position.includes('sinusoidal') ? 'sinusoidal' : this.plugins.position[0];
    $('norm').value = this.plugins.norm.includes('layernorm') ? 'layernorm' : this.plugins.norm[0];
    this.showPositionFields();
    $('model-form').addEventListener('submit', (e) => e.preventDefault());
    $('model-form').after(h('p', { class: 'hint ffn-params', id: 'ffn-params' }));
    $('model-form').addEventListener('input', (e) => {
      if (e.target.id === 'placement') $('final-norm').checked = e.target.value === 'pre';
      if (e.target.id === 'position') this.showPositionFields();
      this.schedule();
    });
    $('text').addEventListener('input', () => this.schedule());
    for (const r of document.querySelectorAll('input[name=tokenizer]')) r.addEventListener('change', () => this.schedule());
  }

  // ------------------------------------------------------------ a run

  checkLimits({ config, seed }) {
    for (const k of ['layers', 'dModel', 'heads', 'ffDim', 'maxLen']) {
      if (Number.isFinite(config[k]) && config[k] > LIMITS[k]) return new DemoError('DEMO_LIMIT', `${k} = ${config[k]} is more than this demo allows (${LIMITS[k]}); the library itself has no such limit`);
    }
    if (!Number.isSafeInteger(seed) || seed < 0) return new DemoError('BAD_ARGUMENT', `seed must be a non-negative integer, got '${$('seed').value}'`);
    return null;
  }

  /** Builds the model if its config changed, runs it on the text, updates every section. */
  async run() {
    const input = this.readForm();
    const tokenizer = createTokenizer(input.mode);
    const tokens = tokenizer.encode(input.text);
    this.showTokens(tokens);

    const limit = this.checkLimits(input);
    if (limit) {
      this.buildError = limit;
      this.showError(limit);
      if (this.state) this.showStatus(this.state, { stale: true });
      return;
    }

    this.buildError = null;
    const key = JSON.stringify([input.config, input.seed]);
    let modelChanged = false;
    if (key !== this.modelKey) {
      let enc;
      try {
        enc = await api.createEncoder(input.config, { seed: input.seed });
      } catch (e) {
        this.buildError = e;
        this.showError(e);
        if (this.state) this.showStatus(this.state, { stale: true });
        return;
      }
      this.encoder?.dispose();
      this.encoder = enc;
      this.modelKey = key;
      this.provenance = { kind: 'seed', seed: input.seed };
      modelChanged = true;
    }
    if (modelChanged) await this.showFfnParams(this.encoder.config);
    const enc = this.encoder;
    const ids = tokens.map((t) => t.id);
    const state = {
      api, app: this, plugins: this.plugins, encoder: enc, config: enc.config, seed: input.seed,
      tokenizer, tokens, ids, text: input.text, provenance: this.provenance, modelChanged,
      base: this.experimentBase(enc.config, input.seed), result: null, error: null,
    };
    this.state = state;
    this.showProvenance();

    if (ids.length === 0) state.error = new DemoError('NO_TOKENS', 'type some text: the encoder needs at least one token');
    else if (ids.length > LIMITS.tokens) state.error = new DemoError('DEMO_LIMIT', `${ids.length} tokens is more than this demo runs (${LIMITS.tokens})`);
    else {
      try {
        state.result = enc.forward(ids, { outputAttentions: true, outputHiddenStates: true });
        state.timing = this.time(enc, ids);
      } catch (e) {
        if (!(e instanceof api.SwapformerError)) throw e;
        state.error = e;
      }
    }
    if (state.error) this.showError(state.error); else this.clearError();
    this.showStatus(state);
    for (const s of this.sections) if (!s.deferred) await s.update(state);
    // the slower sections (experiments) follow once the typing pauses
    this.later('deferred', this.runCount ? DEFERRED_MS : 0, () => this.runDeferred(state));
  }

  async runDeferred(state) {
    if (state !== this.state) return;
    for (const s of this.sections) if (s.deferred) await s.update(state);
    // time again now that the browser has had time to optimise the wasm
    if (state === this.state && state.encoder === this.encoder && state.timing && !this.buildError) {
      state.timing = this.time(state.encoder, state.ids);
      this.showStatus(state);
    }
    this.runCount++;
    document.body.dataset.runs = String(this.runCount);
    if (!document.body.dataset.ready) document.body.dataset.ready = 'true';
  }

  /** Time of a plain forward: the median of runs repeated for ~20 ms, after a
   * short warm-up (the browser first runs wasm with a baseline compiler). */
  time(enc, ids) {
    return this.timeRuns(() => enc.forward(ids), ids.length);
  }

  /** The median time of run() over ~budgetMs of repeats after `warmup` runs, and
   * the tokens per second that makes for `tokens` tokens per run. */
  timeRuns(run, tokens, { warmup = 3, budgetMs = 20, maxRuns = 500 } = {}) {
    for (let i = 0; i < warmup; i++) run();
    const times = [];
    const t0 = performance.now();
    let t1 = t0;
    do {
      run();
      const t = performance.now();
      times.push(t - t1);
      t1 = t;
    } while (t1 - t0 < budgetMs && times.length < maxRuns);
    times.sort((a, b) => a - b);
    const ms = times[times.length >> 1];
    return { ms, runs: times.length, tokensPerSecond: ms > 0 ? (tokens * 1000) / ms : Infinity };
  }

  /** What the experiments take from the current model: its size, norm, activation and seed. */
  experimentBase(config, seed) {
    const { position, positionOptions, ...rest } = config;
    return { config: rest, position, positionOptions: { [position]: positionOptions }, seed };
  }

  /** Makes `encoder` the current model (e.g. after a swap), keeping its weights. */
  adopt(encoder, { seed, provenance }) {
    if (this.encoder && this.encoder !== encoder) this.encoder.dispose();
    this.encoder = encoder;
    const c = encoder.config;
    this.writeForm({ ...c, positionOptions: { base: c.positionOptions.base ?? 10000, style: c.positionOptions.style ?? $('rope-style').value } }, { seed });
    this.modelKey = JSON.stringify([this.readForm().config, this.readForm().seed]);
    this.provenance = provenance;
    this.schedule(0);
  }

  // ------------------------------------------------------------ display

  /** The FFN's parameters per layer, counted from the weights of one-layer encoders of this
   * dModel: GELU at ffDim 4d against SwiGLU at ffDim ≈ 8d/3 (three matrices instead of two,
   * so "about 8d/3 keeps parameters near 8d²"), and this model's own. */
  async showFfnParams(config) {
    const d = config.dModel;
    const ffn = (shapes) => Object.entries(shapes).filter(([n]) => n.startsWith('layers.0.ffn.')).reduce((s, [, sh]) => s + sh.reduce((a, b) => a * b, 1), 0);
    if (!this.ffnCounts.has(d)) {
      const count = async (activation, ffDim) => {
        const enc = await api.createEncoder({ vocabSize: 1, dModel: d, heads: 1, layers: 1, ffDim, position: 'none', norm: 'rmsnorm', normPlacement: 'pre', activation });
        try { return ffn(enc.weightShapes()); } finally { enc.dispose(); }
      };
      const f3 = Math.round((8 * d) / 3);
      this.ffnCounts.set(d, { gelu: await count('gelu', 4 * d), swiglu: await count('swiglu', f3), f3 });
    }
    const c = this.ffnCounts.get(d), own = ffn(this.encoder.weightShapes());
    const n = (x) => x.toLocaleString('en-US');
    const el = $('ffn-params');
    el.dataset.gelu = String(c.gelu);
    el.dataset.swiglu = String(c.swiglu);
    el.dataset.eightDSquared = String(8 * d * d);
    fill(el, h('strong', {}, 'FFN parameters per layer: '),
      `GELU at ffDim 4d = ${4 * d}: ${n(c.gelu)}; SwiGLU at ffDim ≈ 8d/3 = ${c.f3}: ${n(c.swiglu)}; 8d² = ${n(8 * d * d)} `,
      h('span', { class: 'muted' }, `(weights and biases of one layer; SwiGLU's third matrix is paid for by the smaller ffDim). This model, ${config.activation} at ffDim ${config.ffDim}: ${n(own)}.`));
  }

  showTokens(tokens) {
    const shown = tokens.slice(0, 300);
    fill($('tokens'), shown.map((t) => h('span', {
      class: `tok${t.known ? '' : ' unknown'}`,
      title: t.known ? `id ${t.id}` : `id ${t.id}: not in the built-in vocabulary (hashed)`,
    }, displayToken(t), h('span', { class: 'id' }, t.id))), tokens.length > shown.length ? h('span', { class: 'muted' }, `… ${tokens.length - shown.length} more`) : null);
    $('token-count').textContent = `${tokens.length} token${tokens.length === 1 ? '' : 's'}:`;
  }

  showProvenance() {
    const p = this.provenance;
    if (!p) return;
    if (p.kind === 'seed') $('provenance').textContent = `Weights: initialised from seed ${p.seed}. Every change re-runs the encoder; changing a control rebuilds the model from the seed.`;
    else if (p.kind === 'swap') $('provenance').textContent = `Weights: carried over from the previous model by a swap (${p.from} → ${p.to}): kept ${p.kept.length} tensors, dropped ${p.dropped.length}, added ${p.added.length} from seed ${p.seed}.`;
    else $('provenance').textContent = p.text ?? '';
  }

  showStatus(state, { stale = false } = {}) {
    const c = state.config;
    const params = Object.values(state.encoder.weightShapes()).reduce((s, shape) => s + shape.reduce((a, b) => a * b, 1), 0);
    const model = `${c.layers} layer${c.layers === 1 ? '' : 's'} · dModel ${c.dModel} · ${c.heads} heads · ffDim ${c.ffDim} · ${params.toLocaleString('en-US')} parameters`;
    $('status').classList.toggle('stale', stale);
    const prefix = stale ? h('em', {}, 'Not updated (see the error): the pictures show the last model that ran. ') : null;
    if (!state.timing) {
      fill($('status'), prefix, model);
      return;
    }
    const t = state.timing;
    fill($('status'), prefix, 'Forward ', h('strong', { id: 'forward-ms' }, `${t.ms < 0.1 ? t.ms.toFixed(3) : t.ms.toFixed(2)} ms`),
      ' · ', h('strong', { id: 'tokens-per-second' }, `${Math.round(t.tokensPerSecond).toLocaleString('en-US')} tokens/s`),
      h('span', { class: 'muted' }, ` (${state.ids.length} tokens, median of ${t.runs} runs) · ${model}`));
  }

  showError(e) {
    const el = $('error');
    fill(el, h('span', { class: 'code' }, e?.code ?? 'ERROR'), e?.message ?? String(e));
    el.hidden = false;
    el.dataset.code = e?.code ?? 'ERROR';
    for (const id of ['pictures', 'swap']) $(id).classList.add('stale');
    document.body.dataset.ready ||= 'true';
  }

  clearError() {
    $('error').hidden = true;
    delete $('error').dataset.code;
    for (const id of ['pictures', 'swap']) $(id).classList.remove('stale');
  }

  // ------------------------------------------------------------ for tests and the console

  /** Plain data of the current model and result. */
  snapshot() {
    const s = this.state;
    if (!s) return null;
    const tensor = (t) => (t ? { data: Array.from(t.data), shape: t.shape } : null);
    return {
      config: s.config, seed: s.seed, text: s.text, tokenizer: s.tokenizer.mode,
      tokens: s.tokens.map((t) => t.text), ids: s.ids,
      // a config that could not be built leaves the last model's results below
      error: this.buildError || s.error ? { code: (this.buildError ?? s.error).code, message: (this.buildError ?? s.error).message } : null,
      stale: !!this.buildError,
      shownError: $('error').hidden ? null : $('error').textContent,
      output: tensor(s.result), hiddenStates: s.result?.hiddenStates?.map(tensor) ?? null,
      timing: s.timing ?? null, provenance: this.provenance,
    };
  }

  exposeForTests() {
    const app = this;
    window.swapformerDemo = {
      app,
      whenIdle: () => app.whenIdle(),
      current: () => app.snapshot(),
      experiments: app.experimentResults,
      /** The "Trained models" panel: select(task, position, opts), lastPrediction, info(). */
      trained: app.trained,
      /** The "Your model" panel: whenIdle() (loads included), info(), progressLog. */
      pretrained: app.pretrained,
      /** The "Positions on a real model" panel: whenIdle() (loads included), info(), load(source). */
      positionsReal: app.positionsReal,
      /** Sets the controls to `config` (request form) and the text, runs, returns the snapshot. */
      async runConfig(config, text, { seed, tokenizer } = {}) {
        app.writeForm(config, { seed: seed ?? config.seed, text, mode: tokenizer });
        app.schedule(0);
        await app.whenIdle();
        return app.snapshot();
      },
    };
  }
}

export async function start() {
  const plugins = await api.listPlugins();
  const app = new App(plugins);
  app.wire();
  for (const s of SECTIONS) app.sections.push({ ...s.mount($(s.id), app), deferred: !!s.deferred });
  app.exposeForTests();
  $('app').hidden = false;
  const build = api.features?.relaxedSimd ? 'relaxed-SIMD' : 'SIMD128';
  $('build-info').textContent = `${build} wasm build · position plugins: ${plugins.position.join(', ')} · norm plugins: ${plugins.norm.join(', ')}`;
  app.schedule(0);
  return app;
}

export { DemoError, errorText };
