#!/usr/bin/env python3
"""Writes tests/families/expected-pipelines.json: what the public task methods must return on the texts of the
task cases of tests/families/ (ELECTRA, RoFormer, GTE, EuroBERT, NeoBERT, ALBERT heads), from their float64
reference logits (make_families.py), solved by pipeline_rules.py (the upstream post-processing rules
re-implemented in Python). The calls are make_head_pipelines.py's: classify with every topK and
functionToApply, predict with every activation and rank on the pairs (one query, several passages),
classifyTokens with every aggregation strategy, fillMask with topK and targets; near-ties left out.

    /usr/bin/python3 tests/reference/make_family_pipelines.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_head_pipelines as mhp  # noqa: E402  (its call builders; the case path relative to tests/heads)
import pipeline_rules  # noqa: E402

FAMILIES = os.path.join(pipeline_rules.REPO, 'tests', 'families')
OUT = os.path.join(FAMILIES, 'expected-pipelines.json')


def main():
    b = mhp.Builder()
    rust = pipeline_rules.RustTokenizers()
    try:
        for name in sorted(os.listdir(os.path.join(FAMILIES, 'expected'))):
            exp = mhp.read_json(FAMILIES, 'expected', name)
            if exp['task'] == 'embedding':
                continue
            case = exp['case']
            path = f'../families/{case}'  # the builders name tests/heads/<case>/tokenizer.json
            config = mhp.read_json(FAMILIES, case, 'config.json')
            problem = {'inputs': exp['inputs'], 'logits': exp['textLogits']}
            n = len(b.calls)
            if exp['task'] == 'sequence':
                mhp.sequence_calls(b, path, problem, config)
            elif exp['task'] == 'token':
                mhp.token_calls(b, path, problem, config)
            else:
                mhp.fill_mask_calls(b, path, problem, rust)
            for c in b.calls[n:]:
                c['case'] = case
                c['id'] = c['id'].replace(path, case)
    finally:
        rust.close()
    results = pipeline_rules.solve([{'id': c['id'], **c['problem']} for c in b.calls])
    calls = []
    for c, r in zip(b.calls, results):
        assert r['id'] == c['id']
        if 'error' in r:
            raise SystemExit(f'{c["id"]}: the pipeline fails: {r["error"]}')
        calls.append({k: c[k] for k in ('id', 'case', 'method', 'args', 'options')} | {'expected': r['output']})
    methods = {m: sum(1 for c in calls if c['method'] == m) for m in sorted({c['method'] for c in calls})}
    doc = {'generator': {'script': 'tests/reference/make_family_pipelines.py', 'rules': 'tests/reference/pipeline_rules.py', 'margin': mhp.MARGIN},
           'counts': {'calls': len(calls), 'skipped': len(b.skipped), **methods}, 'skipped': b.skipped, 'calls': calls}
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write('{\n')
        for k in ('generator', 'counts'):
            f.write(f'  {json.dumps(k)}: {json.dumps(doc[k], ensure_ascii=False)},\n')
        for k in ('skipped', 'calls'):
            rows = ',\n'.join('    ' + json.dumps(x, ensure_ascii=False, separators=(',', ':')) for x in doc[k])
            f.write(f'  {json.dumps(k)}: [\n{rows}\n  ]{"" if k == "calls" else ","}\n')
        f.write('}\n')
    print(f'{len(calls)} calls ({", ".join(f"{m} {n}" for m, n in methods.items())}), {len(b.skipped)} skipped for near-ties')
    for s in b.skipped:
        print(f'  {s["id"]}: {s["reason"]}')


if __name__ == '__main__':
    main()
