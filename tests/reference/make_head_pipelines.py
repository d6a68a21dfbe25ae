#!/usr/bin/env python3
"""Writes tests/heads/expected-pipelines.json: what the public task methods must return on the
texts of the task-head fixtures (tests/heads/), from their float64 reference logits.

    /usr/bin/python3 tests/reference/make_head_pipelines.py

For every case of tests/heads/expected/ it builds pipeline problems from the case's inputs and
its float64 logits (written by make_heads.py from the Hugging Face modelling code) and solves
them with pipeline_rules.py (the upstream post-processing rules re-implemented in Python, the
tokenizer questions asked of Hugging Face's Rust tokenizers):

  sequence cases  classify (text-classification) on every input, topK 1 / 2 / null and each
                  functionToApply; predict (CrossEncoder.predict, each activation) on the pair
                  inputs; rank (CrossEncoder.rank) on the cross-encoders' inputs that share a query;
                  zero-shot on the NLI cases (the three labels single- and multi-label, one label,
                  two labels reordered, labels as a comma string)
  token cases     classifyTokens on every input, every aggregation strategy, ignoreLabels default and []
  mlm cases       fillMask on every input, topK 5 / 1 / 10, targets (a list and a single string)

`truncations` are the Rust encodings of (premise, hypothesis) and (query, passage) pairs cut to a
small maxLength, LongestFirst (what classify / predict ask for) and OnlyFirst (the zero-shot
pipeline's: the hypothesis stays whole), or the error Rust gives when the second text leaves the
first no token: the test runs the methods on a model loaded with that maxLength.

Each entry of `calls` is one public method call: {id, case, method, args, options, expected},
`args` the method's arguments before the options (tests/heads.test.js calls
model[method](...args, options) and compares with `expected`).

Near-ties are left out. A float32 forward carries an error of about 1e-6 on the logits; where two
of the values that decide an order (an argmax, a sort, the top-k boundary) are within MARGIN = 1e-4
of each other, the order would depend on that rounding, so the input (or the variant) is skipped and
listed in `skipped` with the reason. Compared in logits where the scores are monotone in them
(text classification, rank, fill-mask, zero-shot), in softmax probabilities for token
classification, conservatively: every non-special token's top two labels (none / simple / first),
every pair of non-special tokens' best scores ('max' compares those within a word), every run of up
to four non-special tokens' mean scores ('average' averages a word's).

pipeline_rules rounds the logits to float32 before it computes (as the upstream pipelines see
float32 model outputs): a relative change of 6e-8, far below the tests' 1e-4 on scores.
Deterministic: no randomness; the output depends on the fixtures and the Rust tokenizers only.
"""
import itertools
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pipeline_rules  # noqa: E402

REPO = pipeline_rules.REPO
HEADS = os.path.join(REPO, 'tests', 'heads')
FOLDER = 'tests/heads'  # HEADS from the repository's root (make_deberta.py points both at tests/deberta)
OUT = os.path.join(HEADS, 'expected-pipelines.json')
MARGIN = 1e-4
RUN = 4  # longest run of tokens whose mean is checked for 'average'
MANY_MASKS = 8  # past this many masks in one input, fill-mask is called with topK 1 only

CLASSIFY_VARIANTS = [{}, {'topK': None}, {'topK': 2}, {'functionToApply': 'softmax', 'topK': None},
                     {'functionToApply': 'sigmoid', 'topK': None}, {'functionToApply': 'none', 'topK': None}]
PREDICT_VARIANTS = [{}, {'activation': 'sigmoid'}, {'activation': 'none'}, {'activation': 'tanh'}, {'activation': 'softmax'}]
RANK_VARIANTS = [{}, {'topK': 1}, {'returnDocuments': True}, {'activation': 'none'},
                 {'activation': 'tanh', 'topK': 1, 'returnDocuments': True}]
STRATEGIES = ['none', 'simple', 'first', 'average', 'max']
TOKEN_VARIANTS = [{'aggregationStrategy': s} for s in STRATEGIES] + [{'aggregationStrategy': s, 'ignoreLabels': []} for s in ('none', 'simple', 'max')]


def read_json(*parts):
    with open(os.path.join(*parts), encoding='utf-8') as f:
        return json.load(f)


def separated(values):
    """The smallest distance between two of the values (inf for fewer than two)."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    return float(np.min(np.diff(v))) if len(v) > 1 else float('inf')


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def top2_gap(p):
    s = np.sort(p)
    return float(s[-1] - s[-2]) if len(s) > 1 else float('inf')


class Builder:
    def __init__(self):
        self.calls, self.skipped = [], []

    def skip(self, cid, reason):
        self.skipped.append({'id': cid, 'reason': reason})

    def add(self, cid, case, method, args, options, problem):
        self.calls.append({'id': cid, 'case': case, 'method': method, 'args': args, 'options': options, 'problem': problem})


def item(inp):
    return {'text': inp['text'], 'textPair': inp['textPair']} if 'textPair' in inp else inp['text']


def sequence_calls(b, case, exp, config):
    logits = np.asarray(exp['logits'], dtype=np.float64)
    inputs = exp['inputs']
    keep = []
    for i, row in enumerate(logits):
        gap = separated(row)
        if gap <= MARGIN:
            b.skip(f'{case}/classify/input{i}', f'labels {gap:.2e} apart in logits')
        else:
            keep.append(i)
    for v, options in enumerate(CLASSIFY_VARIANTS):
        b.add(f'{case}/classify/{v}', case, 'classify', [[item(inputs[i]) for i in keep]], options,
              {'kind': 'text-classification', 'config': config, 'logits': logits[keep].tolist(), 'options': options})
    pairs = [i for i, inp in enumerate(inputs) if 'textPair' in inp]
    if pairs:
        for v, options in enumerate(PREDICT_VARIANTS):
            b.add(f'{case}/predict/{v}', case, 'predict', [[[inputs[i]['text'], inputs[i]['textPair']] for i in pairs]], options,
                  {'kind': 'cross-encoder-predict', 'config': config, 'logits': logits[pairs].tolist(), 'options': options})
    if logits.shape[1] == 1 and len(pairs) > 1:
        query = inputs[pairs[0]]['text']
        docs = [i for i in pairs if inputs[i]['text'] == query]
        gap = separated(logits[docs, 0])
        if len(docs) < 2:
            pass
        elif gap <= MARGIN:
            b.skip(f'{case}/rank', f'documents {gap:.2e} apart in logits')
        else:
            documents = [inputs[i]['textPair'] for i in docs]
            for v, options in enumerate(RANK_VARIANTS):
                b.add(f'{case}/rank/{v}', case, 'rank', [query, documents], options,
                      {'kind': 'cross-encoder-rank', 'config': config, 'logits': logits[docs].tolist(), 'documents': documents, 'options': options})
    if 'zeroShot' in exp:
        zero_shot_calls(b, case, exp, config, logits)


def zero_shot_calls(b, case, exp, config, logits):
    zs = exp['zeroShot']
    labels = zs['candidateLabels']
    n = len(labels)
    entail = zs['entailmentId']
    contra = -1 if entail == 0 else 0
    for p, premise in enumerate(zs['premises']):
        rows = logits[p * n:(p + 1) * n]
        for i, label in enumerate(labels):  # the fixture's pairs are premise-major
            assert exp['inputs'][p * n + i]['text'] == premise and exp['inputs'][p * n + i]['textPair'] == zs['hypothesisTemplate'].format(label)
        choices = [(labels, list(range(n)), {}), (labels, list(range(n)), {'multiLabel': True}),
                   ([labels[1]], [1], {}), ([labels[2], labels[0]], [2, 0], {}),
                   (f'{labels[2]}, {labels[0]}', [2, 0], {'multiLabel': True})]
        for v, (candidates, idx, options) in enumerate(choices):
            sel = rows[idx]
            multi = options.get('multiLabel', False) or len(idx) == 1
            gap = separated(sel[:, entail] - sel[:, contra]) if multi else separated(sel[:, entail])
            cid = f'{case}/zeroShot/{p}/{v}'
            if gap <= MARGIN:
                b.skip(cid, f'labels {gap:.2e} apart in logits')
                continue
            b.add(cid, case, 'zeroShot', [premise, candidates], options,
                  {'kind': 'zero-shot', 'config': config, 'text': premise, 'candidateLabels': candidates, 'logits': sel.tolist(), 'options': options})


def token_calls(b, case, exp, config):
    spec = {'file': f'{FOLDER}/{case}/tokenizer.json'}
    for i, inp in enumerate(exp['inputs']):
        logits = np.asarray(exp['logits'][i], dtype=np.float64)
        probs = softmax(logits)
        real = [t for t, s in enumerate(inp['specialTokensMask']) if not s]
        token_gap = min(top2_gap(probs[t]) for t in real)
        max_gap = separated([probs[t].max() for t in real])
        runs = [real[s:s + k] for k in range(2, RUN + 1) for s in range(len(real) - k + 1)]
        average_gap = min([token_gap] + [top2_gap(probs[r].mean(axis=0)) for r in runs])
        for v, options in enumerate(TOKEN_VARIANTS):
            cid = f'{case}/classifyTokens/{i}/{v}'
            strategy = options['aggregationStrategy']
            gap = {'max': min(token_gap, max_gap), 'average': average_gap}.get(strategy, token_gap)
            if gap <= MARGIN:
                b.skip(cid, f"{strategy}: scores {gap:.2e} apart")
                continue
            b.add(cid, case, 'classifyTokens', [inp['text']], options,
                  {'kind': 'token-classification', 'tokenizer': spec, 'config': config, 'text': inp['text'], 'logits': logits.tolist(), 'options': options})


def fill_mask_calls(b, case, exp, rust):
    spec = {'file': f'{FOLDER}/{case}/tokenizer.json'}
    tok = pipeline_rules.FastTokenizer(rust, spec)
    first = exp['inputs'][0]
    words = [t for t, s, m in zip(first['tokens'], first['specialTokensMask'], first['ids']) if not s and m != tok.mask_token_id]
    targets = words[1:4] + ['lazy']  # token strings of the vocabulary, and a word the tokenizer splits or maps
    target_ids = pipeline_rules.get_target_ids(tok, targets)
    variants = [{}, {'topK': 1}, {'topK': 10}, {'targets': targets, 'topK': 3}, {'targets': words[0]}]
    for i, inp in enumerate(exp['inputs']):
        logits = np.asarray(exp['logits'][i], dtype=np.float64)  # [masks, vocab]
        for v, options in enumerate(variants):
            if len(logits) > MANY_MASKS and options != {'topK': 1}:
                continue  # an input with many masks: the best token of each (the others would add megabytes)
            cid = f'{case}/fillMask/{i}/{v}'
            k = options.get('topK', 5)
            ids = pipeline_rules.get_target_ids(tok, options['targets']) if 'targets' in options else None
            cols = logits[:, ids] if ids is not None else logits
            k = min(k, cols.shape[1])
            gap = min(separated(np.sort(row)[::-1][:k + 1]) for row in cols)
            if gap <= MARGIN:
                b.skip(cid, f'top {k + 1} tokens {gap:.2e} apart in logits')
                continue
            b.add(cid, case, 'fillMask', [inp['text']], options,
                  {'kind': 'fill-mask', 'tokenizer': spec, 'text': inp['text'], 'logits': logits.tolist(), 'options': options})
    assert len(target_ids) >= 3, f'{case}: the targets give {len(target_ids)} tokens'


LONG = 'The quick brown fox jumps over the lazy dog and the quick brown fox jumps over the lazy dog again.'
TRUNCATIONS = [  # case, maxLength: where LongestFirst and OnlyFirst differ, and where OnlyFirst cannot fit
    ('nli-roberta', 30), ('nli-roberta', 16), ('nli-bert-entail0', 20), ('nli-bert-entail0', 8), ('cross-encoder-msmarco', 12),
]


def truncation_entries(rust):
    out = []
    for case, max_length in TRUNCATIONS:
        exp = read_json(HEADS, 'expected', f'{case}.json')
        spec = {'file': f'{FOLDER}/{case}/tokenizer.json'}
        pairs = [(LONG, inp['textPair']) for inp in exp['inputs'] if inp['text'] == exp['inputs'][0]['text']]
        differ = False
        for text, pair in pairs:
            entry = {'case': case, 'text': text, 'textPair': pair, 'maxLength': max_length}
            for strategy, key in (('LongestFirst', 'longestFirst'), ('OnlyFirst', 'onlyFirst')):
                try:
                    enc = rust.ask(spec, 'encode', text=text, pair=pair, truncation={'maxLength': max_length, 'strategy': strategy})
                    entry[key] = {'ids': enc['ids'], 'typeIds': enc['typeIds']}
                except RuntimeError as e:
                    entry[key] = {'error': str(e)}
            differ |= entry['longestFirst'] != entry['onlyFirst']
            out.append(entry)
        assert differ or case.startswith('cross'), f'{case} at {max_length}: the two strategies agree'
    return out


def check_encodings(rust, case, exp):
    """The Rust encodings of the texts are the fixture's ids (pipeline_rules re-encodes them)."""
    spec = {'file': f'{FOLDER}/{case}/tokenizer.json'}
    for inp in exp['inputs']:
        if 'textPair' in inp:
            continue
        enc = rust.ask(spec, 'encode', text=inp['text'], addSpecialTokens=True)
        assert enc['ids'] == inp['ids'], f'{case}: {inp["text"]!r} encodes as the fixture says'


def main():
    b = Builder()
    rust = pipeline_rules.RustTokenizers()
    try:
        for name in sorted(os.listdir(os.path.join(HEADS, 'expected'))):
            exp = read_json(HEADS, 'expected', name)
            case = exp['case']
            config = read_json(HEADS, case, 'config.json')
            check_encodings(rust, case, exp)
            if exp['task'] == 'sequence':
                sequence_calls(b, case, exp, config)
            elif exp['task'] == 'token':
                token_calls(b, case, exp, config)
            elif exp['task'] == 'mlm':
                fill_mask_calls(b, case, exp, rust)
        truncations = truncation_entries(rust)
    finally:
        rust.close()
    results = pipeline_rules.solve([{'id': c['id'], **c['problem']} for c in b.calls])
    calls = []
    for c, r in zip(b.calls, results):
        assert r['id'] == c['id']
        if 'error' in r:
            raise SystemExit(f'{c["id"]}: the pipeline fails: {r["error"]}')
        out = r['output']
        if c['method'] == 'zeroShot':
            problem = c['problem']
            labels = problem['candidateLabels']
            labels = [x.strip() for x in labels.split(',')] if isinstance(labels, str) else labels
            assert out.pop('hypotheses') == [problem['options'].get('hypothesisTemplate', 'This example is {}.').format(x) for x in labels]
        calls.append({k: c[k] for k in ('id', 'case', 'method', 'args', 'options')} | {'expected': out})
    methods = {m: sum(1 for c in calls if c['method'] == m) for m in sorted({c['method'] for c in calls})}
    doc = {
        'generator': {'script': 'tests/reference/make_head_pipelines.py', 'rules': 'tests/reference/pipeline_rules.py', 'margin': MARGIN},
        'counts': {'calls': len(calls), 'skipped': len(b.skipped), **methods},
        'skipped': b.skipped,
        'truncations': truncations,
        'calls': calls,
    }
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write('{\n')
        for k in ('generator', 'counts'):
            f.write(f'  {json.dumps(k)}: {json.dumps(doc[k], ensure_ascii=False)},\n')
        for k in ('skipped', 'truncations', 'calls'):
            rows = ',\n'.join('    ' + json.dumps(x, ensure_ascii=False, separators=(',', ':')) for x in doc[k])
            f.write(f'  {json.dumps(k)}: [\n{rows}\n  ]{"" if k == "calls" else ","}\n')
        f.write('}\n')
    print(f'{len(calls)} calls ({", ".join(f"{m} {n}" for m, n in methods.items())}), {len(b.skipped)} skipped for near-ties:')
    for s in b.skipped:
        print(f'  {s["id"]}: {s["reason"]}')


if __name__ == '__main__':
    main()
