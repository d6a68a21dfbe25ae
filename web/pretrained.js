// Section 6, "Your model": a real encoder from Hugging Face, loaded with the
// package's loadPretrained. One module per card, this one joins them:
//   pretrained-load.js        a dropped or picked folder, or the Hub by id with progress
//   pretrained-info.js        config.json mapped to swapformer's config, the embedding recipe
//   pretrained-sentences.js   the sentences embedded, the forward time, the tokens
//   pretrained-search.js      the nearest sentences to a query
//   pretrained-similarity.js  the cosine-similarity map, the positions swapped on the same weights
//   pretrained-shared.js      what they share (and section 7 takes): folder readers, formats
//
// Nothing leaves the page but the Hub downloads the user asks for (Load).
// A download runs outside the app's queue, so the rest of the page stays live
// while it arrives (the bindings copy every result out of wasm memory, so a
// load in between two steps of another section changes nothing for it); all
// embedding and swapping runs in the queue (app.enqueue / app.later).
// For tests and the console: app.pretrained (window.swapformerDemo.pretrained).
import { h, fill } from './dom.js';
import { loadCard } from './pretrained-load.js';
import { infoCard } from './pretrained-info.js';
import { sentencesCard } from './pretrained-sentences.js';
import { searchCard } from './pretrained-search.js';
import { similarityCard } from './pretrained-similarity.js';

export function mountPretrained(root, app) {
  const body = root.querySelector('#pretrained-body');
  const { api } = app;

  // ---------------------------------------------------------------- state
  const state = {
    model: null, // {p, label, loadMs, bytes, fileCount, download}
    swapped: null, // {p, key, label, changes}
    view: null, // the last embedding: {key, list, orig, swap, ranking, change}
  };
  const out = { progressLog: [] };
  app.pretrained = out;
  const setState = (s) => {
    root.dataset.state = s;
  };
  setState('empty');

  const ctx = { app, root, state, out, setState, onLoad: adopt, onClear: clearModel, refresh };
  const loader = loadCard(ctx);
  const info = infoCard();
  const sentences = sentencesCard(ctx);
  const search = searchCard(ctx);
  const similarity = similarityCard(ctx);
  const cards = [sentences, search, similarity];

  fill(body, h('div', { class: 'pt-grid' }, loader.el, info.el), h('div', { class: 'pt-grid' }, sentences.el, search.el), similarity.el);

  /** Makes p the panel's model (in the queue): disposes the previous one, shows it, embeds. */
  async function adopt(p, about) {
    state.swapped?.p.dispose();
    state.swapped = null;
    state.model?.p.dispose();
    state.model = { p, ...about };
    app.setPretrained?.({ p, label: about.label }); // the page's other sections (the layer-removal card) follow
    state.view = null;
    out.lastError = null;
    loader.loaded(about);
    info.show(state.model);
    similarity.setup();
    for (const card of cards) card.ready(true);
    await refresh();
    setState('ready');
  }

  function clearModel() {
    loader.cancel();
    app.enqueue(() => {
      state.swapped?.p.dispose();
      state.swapped = null;
      state.model?.p.dispose();
      state.model = null;
      app.setPretrained?.(null);
      state.view = null;
      loader.cleared();
      info.clear();
      for (const card of cards) card.ready(false);
      setState('empty');
    });
  }

  /** Embeds the sentences with the checkpoint (and the swapped model) unless already done; redraws every card. */
  async function refresh() {
    const { model, view } = state;
    if (!model) return;
    const parsed = sentences.read();
    if (parsed.error) {
      sentences.message(`${parsed.error}${view ? ' The results below are for the last sentences.' : ''}`);
      return;
    }
    sentences.message(null);
    const list = parsed.list;
    const key = list.join('\n');
    const p = model.p,
      swapped = state.swapped;
    let orig = view?.key === key && view.orig.p === p ? view.orig : null;
    let swap = swapped && view?.key === key && view.swap?.p === swapped.p ? view.swap : null;
    try {
      orig ??= await sentences.embed(p, list, true);
      if (swapped) swap ??= await sentences.embed(swapped.p, list, false);
    } catch (e) {
      if (!(e instanceof api.SwapformerError)) throw e;
      sentences.message(`${e.code}: ${e.message}`);
      return;
    }
    if (state.model?.p !== p || state.swapped?.p !== swapped?.p) return; // replaced while the passes ran: its own refresh follows
    state.view = { key, list, orig, swap: swapped ? swap : null };
    sentences.show(state.view);
    similarity.draw();
    search.rank();
  }

  // ---------------------------------------------------------------- for tests and the console
  Object.assign(out, {
    /** Loads a Hub id, URL, Map of files, list of Files or bytes (the page's controls do the same). */
    load: (source, label = String(source)) => loader.load(source, label, { download: typeof source === 'string' }),
    /** Resolves once no load, embedding or swap is pending. */
    async whenIdle() {
      for (;;) {
        await Promise.all(loader.pending());
        await app.whenIdle();
        if (!loader.busy()) return;
      }
    },
    /** The panel's data: what it loaded and what it shows. */
    info: () => {
      const { model, swapped, view } = state;
      return JSON.parse(
        JSON.stringify({
          state: root.dataset.state,
          model: model && {
            label: model.label,
            family: model.p.family,
            config: model.p.encoder.config,
            recipe: { ...model.p.recipe, dense: model.p.recipe.dense.map((d) => ({ inFeatures: d.inFeatures, outFeatures: d.outFeatures })) },
            maxLength: model.p.maxLength,
          },
          swapped: swapped && { label: swapped.label, config: swapped.p.encoder.config },
          sentences: view?.list ?? null,
          sims: view ? Array.from(view.orig.sims) : null,
          swappedSims: view?.swap ? Array.from(view.swap.sims) : null,
          ranking: view?.ranking ?? null,
          change: view?.change ?? null,
          timing: view?.orig.timing ?? null,
          error: out.lastError ?? null,
        }),
      );
    },
  });

  return {
    async update() {}, // self-contained: it takes nothing from the page's current model
  };
}
