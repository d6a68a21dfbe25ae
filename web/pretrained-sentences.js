// Section 6, "Embed sentences": the sentences typed one per line, embedded by
// the checkpoint (embedAsync: where the page has threads the passes run in a
// worker), the forward time, and the tokens of the first sentence.
import { h, fill, plural } from './dom.js';
import { cosineMatrix, fmtMs } from './pretrained-shared.js';

const DEFAULT_SENTENCES = [
  'A man is playing a guitar.',
  'Someone plays an acoustic guitar on stage.',
  'A chef is cooking pasta in the kitchen.',
  'The cook prepares noodles for dinner.',
  'The stock market fell sharply today.',
  'Shares dropped as investors sold off.',
];
const MAX_SENTENCES = 48; // the demo's limit for the matrix (the library has none)
const TYPING_MS = 300;

/** Tokens each text gets in embed() (stripped, lowercased when the folder says so, truncated). */
const encodeText = (p, text) => p.tokenizer.encode(p.recipe.doLowerCase ? text.trim().toLowerCase() : text.trim(), { maxLength: p.maxLength });
const tokenLengths = (p, list) => list.map((t) => encodeText(p, t).ids.length);

/**
 * ctx: {app, state ({model, view}), refresh()}.
 * Returns {el, read(), embed(p, list, timed), message(text | null), show(view), ready(bool)}.
 */
export function sentencesCard(ctx) {
  const { app, state } = ctx;
  const box = h('textarea', { id: 'pretrained-sentences', rows: 7, spellcheck: false }, DEFAULT_SENTENCES.join('\n'));
  const embedButton = h('button', { id: 'pretrained-embed', type: 'button', disabled: true }, 'Embed');
  const timing = h('span', { class: 'pt-timing', id: 'pretrained-timing' });
  const msg = h('p', { class: 'input-msg', id: 'pretrained-sentences-msg', hidden: true });
  const tokenCount = h('span', { class: 'muted', id: 'pretrained-token-count' });
  const tokens = h('div', { class: 'tokens', id: 'pretrained-tokens', 'aria-label': 'Tokens of the first sentence' });
  const wait = h('p', { class: 'note', id: 'pretrained-sentences-wait' }, 'Load a model above (drop a folder or type an id).');
  const body = h(
    'div',
    { class: 'pt-stack', hidden: true },
    h('label', { for: 'pretrained-sentences', class: 'pt-label' }, 'One sentence per line'),
    box,
    h('div', { class: 'pt-actions' }, embedButton, timing),
    msg,
    h('div', { class: 'tokens-line' }, tokenCount, tokens),
  );
  const el = h('article', { class: 'card', id: 'pretrained-sentences-card' }, h('h3', {}, 'Embed sentences'), wait, body);

  function read() {
    const list = box.value
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
    if (!list.length) return { error: 'Type at least one sentence (one per line).' };
    if (list.length > MAX_SENTENCES)
      return { error: `${list.length} sentences is more than this demo compares (${MAX_SENTENCES}); the library has no such limit.` };
    return { list };
  }

  /** Embeds the sentences with p: {p, emb, sims} (+ timing for the checkpoint). */
  async function embed(p, list, timed) {
    const t0 = performance.now();
    const emb = await p.embedAsync(list);
    const first = performance.now() - t0;
    const set = { p, emb, sims: cosineMatrix(emb) };
    if (timed) {
      const tokensIn = tokenLengths(p, list).reduce((a, b) => a + b, 0);
      // repeated when one run is quick; a large model's single run is its time
      set.timing =
        first < 250 // the first run includes the browser's compiling of the wasm
          ? app.timeRuns(() => p.embed(list), tokensIn, { warmup: 1 })
          : { ms: first, runs: 1, tokensPerSecond: (tokensIn * 1000) / first };
      set.tokens = tokensIn;
    }
    return set;
  }

  function message(text) {
    msg.hidden = text === null;
    if (text !== null) msg.textContent = text;
  }

  function showTokens(p, text) {
    const enc = encodeText(p, text);
    const shown = enc.tokens.slice(0, 200);
    tokenCount.textContent = `Sentence 1, ${plural(enc.tokens.length, 'token')}:`;
    fill(
      tokens,
      shown.map((t, i) => h('span', { class: 'tok', title: `id ${enc.ids[i]}` }, t, h('span', { class: 'id' }, enc.ids[i]))),
      enc.tokens.length > shown.length ? h('span', { class: 'muted' }, `… ${enc.tokens.length - shown.length} more`) : null,
    );
  }

  function showTiming(p, view) {
    const { list } = view;
    const { timing: t, tokens: n } = view.orig;
    const cut = tokenLengths(p, list).filter((len) => len >= p.maxLength).length;
    fill(
      timing,
      'Forward ',
      h('strong', { id: 'pretrained-forward-ms' }, `${fmtMs(t.ms)} ms`),
      ' · ',
      h('strong', { id: 'pretrained-tokens-per-second' }, `${Math.round(t.tokensPerSecond).toLocaleString('en-US')} tokens/s`),
      h(
        'span',
        { class: 'muted' },
        ` (${plural(list.length, 'sentence')}, ${plural(n, 'token')}, ${t.runs === 1 ? 'one run' : `median of ${t.runs} runs`}${cut ? `; ${cut} cut at ${p.maxLength} tokens` : ''})`,
      ),
    );
  }

  /** The results of an embedding: the first sentence's tokens, the timing. */
  function show(view) {
    const p = state.model.p;
    showTokens(p, view.list[0]);
    showTiming(p, view);
  }

  function ready(yes) {
    wait.hidden = yes;
    body.hidden = !yes;
    embedButton.disabled = !yes;
  }

  embedButton.addEventListener('click', () =>
    app.enqueue(() => {
      state.view = null;
      return ctx.refresh();
    }),
  );
  box.addEventListener('input', () => app.later('pretrained-embed', TYPING_MS, ctx.refresh));

  return { el, read, embed, message, show, ready };
}
