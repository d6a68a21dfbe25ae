// Section 6, "Nearest-sentence search": the embedded sentences ranked by
// cosine with a query, for the checkpoint and (next to it) the swapped model.
import { h, fill, plural } from './dom.js';
import { cosineMatrix, shortText } from './pretrained-shared.js';

const DEFAULT_QUERY = 'a musician performing a song';
const TYPING_MS = 150;

/**
 * ctx: {app, state ({model, swapped, view})}.
 * Returns {el, rank(), ready(bool)}.
 */
export function searchCard(ctx) {
  const { app, state } = ctx;
  const { api } = app;
  const queryInput = h('input', { id: 'pretrained-query', type: 'text', value: DEFAULT_QUERY, spellcheck: false, autocomplete: 'off' });
  const ranking = h('ol', { class: 'ranking', id: 'pretrained-ranking' });
  const note = h('p', { class: 'caption', id: 'pretrained-ranking-note' });
  const wait = h('p', { class: 'note', id: 'pretrained-search-wait' }, 'Load a model above (drop a folder or type an id).');
  const body = h(
    'div',
    { class: 'pt-stack', hidden: true },
    h('label', { for: 'pretrained-query', class: 'pt-label' }, 'Nearest sentence to'),
    queryInput,
    ranking,
    note,
  );
  const el = h('article', { class: 'card', id: 'pretrained-search' }, h('h3', {}, 'Nearest-sentence search'), wait, body);

  /** Ranks the sentences by cosine with the query (the checkpoint, and the swapped model). */
  function rank() {
    const { view, model, swapped } = state;
    if (!view) return;
    const query = queryInput.value.trim();
    if (!query) {
      fill(ranking);
      note.textContent = 'Type a query to rank the sentences by similarity.';
      view.ranking = null;
      return;
    }
    let q, q2;
    try {
      q = cosineMatrix(model.p.embed(query), view.orig.emb);
      if (view.swap) q2 = cosineMatrix(swapped.p.embed(query), view.swap.emb);
    } catch (e) {
      if (!(e instanceof api.SwapformerError)) throw e;
      note.textContent = `${e.code}: ${e.message}`;
      return;
    }
    const order = (scores) => Array.from(scores, (s, i) => ({ i, s })).sort((a, b) => b.s - a.s || a.i - b.i);
    const ranked = order(q);
    const swapRank = q2 ? new Map(order(q2).map((r, k) => [r.i, k])) : null;
    view.ranking = { query, order: ranked.map((r) => r.i), scores: Array.from(q), swappedScores: q2 ? Array.from(q2) : null };
    fill(
      ranking,
      ranked.map((r, k) =>
        h(
          'li',
          { dataset: { index: String(r.i), score: String(r.s), ...(q2 ? { swappedScore: String(q2[r.i]) } : {}) } },
          h('span', { class: 'score-bar', 'aria-hidden': 'true' }, h('span', { style: `width:${Math.max(0, Math.min(1, r.s)) * 100}%` })),
          h('span', { class: 'rtext' }, view.list[r.i]),
          h('span', { class: 'rscore' }, r.s.toFixed(4)),
          q2
            ? h(
                'span',
                { class: 'rswap', title: `the swapped model (${swapped.label})` },
                `${q2[r.i].toFixed(4)} #${swapRank.get(r.i) + 1}${swapRank.get(r.i) === k ? '' : swapRank.get(r.i) < k ? ' ↑' : ' ↓'}`,
              )
            : null,
        ),
      ),
    );
    const moved = q2 ? ranked.filter((r, k) => swapRank.get(r.i) !== k).length : 0;
    note.textContent = `Cosine with “${shortText(query, 40)}”, highest first${q2 ? `; right: the swapped model's score and rank (${moved ? `${plural(moved, 'sentence')} change${moved === 1 ? 's' : ''} place` : 'the same order'})` : ''}.`;
  }

  function ready(yes) {
    wait.hidden = yes;
    body.hidden = !yes;
  }

  queryInput.addEventListener('input', () => app.later('pretrained-query', TYPING_MS, rank));

  return { el, rank, ready };
}
