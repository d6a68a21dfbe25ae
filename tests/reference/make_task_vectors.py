#!/usr/bin/env python3
"""Writes tests/tasks/vectors.json: post-processing problems and their expected outputs.

    /usr/bin/python3 tests/reference/make_task_vectors.py

Each problem is a task's inputs (logits, config, options, and for the tokenizer tasks a
tokenizer and a text) with random and crafted logits: ties, very large and small values,
one label, regression, multi-label, B-/I- label sequences that reach every grouping rule,
one and several masks, targets in and out of the vocabulary, entailment at 0 and
elsewhere. The expected outputs come from pipeline_rules.py (the upstream rules in
Python), the tokenizations from Hugging Face's Rust tokenizers. Logits are multiples of
1/64 (exact in float32, short in JSON) unless crafted; a problem's random numbers come
from the crc32 of its id, so the output is deterministic.

A fill-mask problem over a large vocabulary gives its logits sparsely:
{"fill": x, "set": [[row, id, value], ...], "shape": [rows, vocab]}.
"""
import json
import os
import zlib

import numpy as np

import pipeline_rules

REPO = pipeline_rules.REPO
OUT = os.path.join(REPO, 'tests', 'tasks', 'vectors.json')

BERT = {'real': 'bert-base-uncased'}
BERT_CONFIG = {'unk_token': '[UNK]', 'mask_token': '[MASK]', 'pad_token': '[PAD]', 'cls_token': '[CLS]', 'sep_token': '[SEP]', 'clean_up_tokenization_spaces': True}
ROBERTA = {'real': 'roberta'}
ROBERTA_CONFIG = {'unk_token': '<unk>', 'mask_token': '<mask>', 'pad_token': '<pad>', 'bos_token': '<s>', 'eos_token': '</s>', 'clean_up_tokenization_spaces': True}
MINILM = {'file': 'tests/pretrained/bert-minilm/tokenizer.json'}
ROBERTA_SMALL = {'file': 'tests/pretrained/roberta-bpe/tokenizer.json'}
XLMR_SMALL = {'file': 'tests/pretrained/xlm-roberta-unigram/tokenizer.json'}
MODERNBERT = {'file': 'tests/pretrained/modernbert-embed/tokenizer.json'}
T5 = {'file': 'tests/pretrained/sentence-t5/tokenizer.json'}
HAND_WORDPIECE = {'file': 'tests/tokenizers/hand/wordpiece_bert_processing.json'}
SPM_XLMR = {'file': 'tests/tokenizers/spm/xlmr_nmt_nfkc_cf.tokenizer.json'}
# WordPiece after NFKC: a token and its text of one code point each but not of one UTF-16 unit
# each (U+1D400 -> "A"), a ligature that grows (U+FB01 -> "fi"), an astral sub-word piece
NFKC = {'file': 'tests/tasks/wordpiece_nfkc.json'}
NFKC_CONFIG = {'unk_token': '[UNK]', 'mask_token': '[MASK]', 'pad_token': '[PAD]', 'clean_up_tokenization_spaces': True}


def rng(pid):
    return np.random.RandomState(zlib.crc32(pid.encode()))


def grid(r, shape, lo=-6, hi=6):
    """Random multiples of 1/64 in [lo, hi]."""
    return (r.randint(lo * 64, hi * 64 + 1, size=shape) / 64.0).tolist()


def id2label(labels):
    return {str(i): l for i, l in enumerate(labels)}


def label_config(labels, **extra):
    return {'id2label': id2label(labels), 'label2id': {l: i for i, l in enumerate(labels)}, **extra}


problems = []


def add(kind, pid, **fields):
    problems.append({'id': pid, 'kind': kind, **fields})


# ---------------------------------------------------------------- text classification

def text_classification():
    configs = {
        'one': label_config(['SCORE']),
        'one-regression': label_config(['SCORE'], problem_type='regression'),
        'two': label_config(['NEGATIVE', 'POSITIVE']),
        'three-multi': label_config(['toxic', 'obscene', 'threat'], problem_type='multi_label_classification'),
        'five-single': label_config(['1 star', '2 stars', '3 stars', '4 stars', '5 stars'], problem_type='single_label_classification'),
        'three-regression': label_config(['a', 'b', 'c'], problem_type='regression'),
        'three-nolabels': {'num_labels': 3},
        'four-multi-nolabels': {'num_labels': 4, 'problem_type': 'multi_label_classification'},
    }
    option_sets = [{}, {'topK': None}, {'topK': 2}, {'topK': 0}, {'topK': 10}, {'functionToApply': 'none', 'topK': None},
                   {'functionToApply': 'sigmoid', 'topK': None}, {'functionToApply': 'softmax', 'topK': 3}]
    for name, config in configs.items():
        n = len(config['id2label']) if 'id2label' in config else config['num_labels']
        for k, options in enumerate(option_sets):
            pid = f'tc/{name}/{k}'
            r = rng(pid)
            rows = grid(r, (3, n))
            # crafted rows: all equal (ties), far out (no overflow), one large winner
            rows.append([0.5] * n)
            rows.append([1e4 if i % 2 == 0 else -1e4 for i in range(n)])
            rows.append([-88.75 + i for i in range(n)])
            rows.append([2.0, 2.0] + [-1.0] * (n - 2) if n >= 2 else [30.0])
            add('text-classification', pid, config=config, logits=rows, options=options)


# ---------------------------------------------------------------- cross-encoder

def cross_encoder():
    one = lambda extra=None: {**label_config(['LABEL_0']), **(extra or {})}
    three = lambda extra=None: {**label_config(['contradiction', 'entailment', 'neutral']), **(extra or {})}
    st = lambda path: {'sentence_transformers': {'activation_fn': path, 'version': '4.0.1'}}
    configs = {
        'one-default': one(),
        'one-sigmoid': one(st('torch.nn.modules.activation.Sigmoid')),
        'one-identity': one(st('torch.nn.modules.linear.Identity')),
        'one-identity-short': one(st('torch.nn.Identity')),
        'one-tanh': one(st('torch.nn.modules.activation.Tanh')),
        'one-legacy-identity': one({'sbert_ce_default_activation_function': 'torch.nn.modules.linear.Identity'}),
        'one-not-torch': one(st('my_package.MyActivation')),
        'one-st-null': one({'sentence_transformers': {'activation_fn': None}}),
        'three-default': three(),
        'three-softmax': three(st('torch.nn.modules.activation.Softmax')),
        'three-sigmoid': three(st('torch.nn.Sigmoid')),
    }
    for name, config in configs.items():
        n = len(config['id2label'])
        for k, options in enumerate([{}, {'activation': 'sigmoid'}, {'activation': 'softmax'}, {'activation': 'none'}, {'activation': 'tanh'}]):
            pid = f'ce/{name}/{k}'
            r = rng(pid)
            rows = grid(r, (4, n), -12, 12) + [[1e4] * n, [-1e4] * n, [0.0] * n]
            add('cross-encoder-predict', pid, config=config, logits=rows, options=options)
    documents = ['Berlin is the capital of Germany.', 'Paris is in France.', 'Germany borders France.',
                 'The capital of Germany is Berlin.', 'Cats sleep a lot.', 'Berlin, Germany.']
    rank_options = [{}, {'topK': 3}, {'topK': 0}, {'topK': 10, 'returnDocuments': True}, {'returnDocuments': True},
                    {'activation': 'none', 'topK': 4}]
    for name in ['one-default', 'one-identity', 'one-tanh']:
        for k, options in enumerate(rank_options):
            pid = f'rank/{name}/{k}'
            r = rng(pid)
            logits = grid(r, (len(documents), 1), -3, 3)
            logits[1] = logits[4] = [1.25]  # a tie: corpus order
            add('cross-encoder-rank', pid, config=configs[name], logits=logits, documents=documents, options=options)
    add('cross-encoder-rank', 'rank/three-labels', config=configs['three-default'], logits=grid(rng('r3'), (2, 3)),
        documents=documents[:2], options={})


# ---------------------------------------------------------------- token classification

SCHEMES = {
    'bio': ['O', 'B-PER', 'I-PER', 'B-ORG', 'I-ORG', 'B-LOC', 'I-LOC', 'B-MISC', 'I-MISC'],
    # get_tag's corners: other prefixes, a bare tag, "B-" alone, a second "-", lowercase
    'odd': ['O', 'B-PER', 'I-PER', 'S-PER', 'E-PER', 'PER', 'B-', 'I-X-Y', 'b-per', 'I-LOC'],
    'pos': ['NOUN', 'VERB', 'ADJ', 'PUNCT', 'O'],
    'single': ['B-ONLY'],
}

TOKEN_TEXTS = {
    'bert': (BERT, BERT_CONFIG, [
        'Hugging Face Inc. is a company based in New York City. Its headquarters are in DUMBO, therefore very close to the Manhattan Bridge.',
        'My name is Wolfgang and I live in Berlin',
        'unaffable jumbling antidisestablishmentarianism',
        'Crème brûlée at the café, naïve résumé!',
        'he\u0301llo wo\u0308rld cafe\u0301 au lait',
        'Snowman \u2603 and emoji \U0001F600 are unknown? \u4e2d\u6587 too',
        'state-of-the-art (really!) -- 3.14, 1,000,000',
        '[MASK] and [SEP] typed in [CLS] text',
        '  leading and   trailing spaces  ',
        '',
        'a',
    ]),
    'roberta': (ROBERTA, ROBERTA_CONFIG, [
        'Hugging Face Inc. is a company based in New York City.',
        'My name is Wolfgang and I live in Berlin',
        'naïve café \U0001F600 résumé',
        "don't stop-me now:it's 3.14!",
        '  double  spaces here ',
        '<mask> typed <s> in',
    ]),
    'minilm': (MINILM, None, ['hello world, the quick brown fox!', 'unaffable swapformer transformers', 'Ünïcödé ☃ x']),
    'roberta-small': (ROBERTA_SMALL, None, ['Hello world, swapformer', ' spaces  here.']),
    'xlmr-small': (XLMR_SMALL, None, ['Hello world, the quick fox', ' , naïve café ☃', 'résumé 中文 text']),
    'modernbert': (MODERNBERT, None, ['Hello world from New York', 'naïve  spaces']),
    'hand-wordpiece': (HAND_WORDPIECE, {'unk_token': '[UNK]'}, ['hello world unknown']),
    'nfkc': (NFKC, NFKC_CONFIG, ['\U0001D400b \U0001D400 a\U0001F600 \uFB01 x\U0001D41A', 'ab\U0001F600b, \uFF21 zz']),
    # no post-processor (nothing special), no decoder (" ".join), BPE with an end-of-word suffix and added tokens
    'hand-unigram': ({'file': 'tests/tokenizers/hand/unigram_metaspace_nosplit.json'}, {'unk_token': '<unk>'}, ['a b ab c', 'ab ba  cab x']),
    'hand-wordlevel': ({'file': 'tests/tokenizers/hand/whitespace_wordlevel.json'}, {'unk_token': '[UNK]'}, ['Hello the - world', 'the  Hello-the']),
    'hand-bpe': ({'file': 'tests/tokenizers/hand/bpe_added_tokens.json'}, {'unk_token': '[UNK]', 'mask_token': '<mask>'},
                 ['hello [SPECIAL] \u03a9hm New abab <|x|> 12 ab', 'New  hello<mask>ab']),
    # a BPE with a continuing_subword_prefix: sub-words told by length, as WordPiece
    'bpe-prefix': ({'file': 'tests/tasks/bpe_prefix.json'}, {'unk_token': '[UNK]'}, ['abc cab xab. ab', 'xbc a.b z', 'x.ab c,a']),
    'spm-xlmr': (SPM_XLMR, {'unk_token': '<unk>', 'pad_token': '<pad>'}, ['The quick brown fox jumps', 'Lorem ipsum ☃ dolor']),
}

STRATEGIES = ['none', 'simple', 'first', 'average', 'max']


def token_logits(r, n_tokens, labels):
    """A target label per token (a bump of 4 on noise), some rows tied or flat."""
    n = len(labels)
    logits = np.array(grid(r, (n_tokens, n), -2, 2))
    targets = r.randint(0, n, size=n_tokens)
    for t in range(n_tokens):
        logits[t, targets[t]] += 4
        if n > 1 and r.rand() < 0.12:  # a tie at the top: argmax takes the first
            other = (targets[t] + 1 + r.randint(0, n - 1)) % n
            logits[t, other] = logits[t, targets[t]]
        if r.rand() < 0.05:
            logits[t, :] = 0.5
    return logits.tolist()


def token_classification(encodings):
    k = 0
    for name, (spec, tconfig, texts) in TOKEN_TEXTS.items():
        for i, text in enumerate(texts):
            scheme = list(SCHEMES)[(k := k + 1) % 3] if name != 'minilm' or i != 2 else 'single'
            labels = SCHEMES[scheme]
            base = {'tokenizer': spec, **({'tokenizerConfig': tconfig} if tconfig else {}), 'text': text}
            n_tokens = len(encodings(base)['ids'])
            # every strategy; ignore_labels: none ignored, a group name, a B- label (grouped names never match it)
            variants = [{'aggregationStrategy': s} for s in STRATEGIES]
            variants += [{'aggregationStrategy': s, 'ignoreLabels': ignore}
                         for ignore in [[], ['PER', 'O'], ['B-PER', 'NOUN']] for s in ['none', 'simple', 'first']]
            for seed in range(2):
                pid = f'tok/{name}/{i}/{scheme}/{seed}'
                add('token-classification', pid, **base, config=label_config(labels),
                    logits=token_logits(rng(pid), n_tokens, labels), variants=variants)
    # the default strategy (simple) and labels without id2label (LABEL_i)
    base = {'tokenizer': BERT, 'tokenizerConfig': BERT_CONFIG, 'text': 'My name is Wolfgang and I live in Berlin'}
    n_tokens = len(encodings(base)['ids'])
    add('token-classification', 'tok/default-options', **base, config=label_config(SCHEMES['bio']),
        logits=token_logits(rng('tok/default'), n_tokens, SCHEMES['bio']), options={})
    add('token-classification', 'tok/no-id2label', **base, config={'num_labels': 3},
        logits=token_logits(rng('tok/nolabels'), n_tokens, ['a', 'b', 'c']), options={'aggregationStrategy': 'average'})
    # every token certain (scores exactly 1 and 0) of another label: equal maxima (max takes the
    # word's first token, Python's max keeps the first of equals), ties in the average
    base = {'tokenizer': BERT, 'tokenizerConfig': BERT_CONFIG, 'text': 'unaffable jumbling antidisestablishmentarianism x'}
    n_tokens = len(encodings(base)['ids'])
    row = np.array([0.0, -1000.0, -1000.0, -1000.0, -1000.0])
    add('token-classification', 'tok/equal-maxima', **base, config=label_config(SCHEMES['pos']),
        logits=[np.roll(row, t).tolist() for t in range(n_tokens)], variants=[{'aggregationStrategy': s} for s in STRATEGIES])
    # Hugging Face's documented example: B-PER / I-PER / B-LOC on "Wolfgang" / "Berlin"
    enc = encodings(base)
    labels = SCHEMES['bio']
    wanted = {'wolfgang': 'B-PER', 'berlin': 'B-LOC'}
    logits = []
    for tok in enc['tokens']:
        row = [0.0] * len(labels)
        row[labels.index(wanted.get(tok, 'O'))] = 6.0
        logits.append(row)
    add('token-classification', 'tok/hf-example', **base, config=label_config(labels), logits=logits, options={'aggregationStrategy': 'simple'})


# ---------------------------------------------------------------- fill-mask

def fill_mask(encodings, vocab_size):
    cases = [
        (MINILM, None, ['the quick brown [MASK] jumps over the lazy dog.', '[MASK] is a [MASK].', 'hello [MASK]!', '[MASK]',
                        'what is the [MASK] [MASK] [MASK] of it?']),
        (ROBERTA_SMALL, None, ['Hello <mask> world.', '<mask> and <mask>']),
        (XLMR_SMALL, None, ['Hello <mask>.', 'The <mask> fox <mask> over']),
        (MODERNBERT, None, ['Hello [MASK] world.']),
        (NFKC, NFKC_CONFIG, ['\U0001D400 [MASK] , b.', '[MASK]\U0001F600 [MASK]']),
    ]
    option_sets = [
        {}, {'topK': 1}, {'topK': 12}, {'topK': 0},
        {'targets': ['world', 'dog', 'fox']}, {'targets': 'hello'},
        {'targets': ['unaffable', 'zzz', 'dog', 'dog'], 'topK': 10},
        {'targets': ['world'], 'topK': 3},
        {'targets': ['[SEP]', '[PAD]', '<pad>', '</s>', ' world', 'Ġworld', '▁world']},
        {'targets': ['', '   ']},
    ]
    for spec, tconfig, texts in cases:
        v = vocab_size(spec)
        tok = pipeline_rules.FastTokenizer(TOKENIZERS, spec, tconfig)
        specials = [i for i in [tok.pad_token_id, tok.special_token_id('sep'), tok.special_token_id('cls'), tok.mask_token_id,
                                tok.special_token_id('eos'), tok.special_token_id('bos')] if i is not None]
        crafted_tokens = [t for t in ['##ing', '.', ',', "'", '!', 'Ġworld', '▁world', 'world'] if tok.token_to_id(t) is not None]
        crafted = specials + [tok.token_to_id(t) for t in crafted_tokens]
        for i, text in enumerate(texts):
            base = {'tokenizer': spec, **({'tokenizerConfig': tconfig} if tconfig else {}), 'text': text}
            masks = sum(1 for x in encodings(base)['ids'] if x == tok.mask_token_id)
            for k in range(3):
                pid = f'fm/{spec["file"].split("/")[-2]}/{i}/{k}'
                r = rng(pid)
                logits = np.array(grid(r, (masks, v), -4, 4))  # many ties in a small vocabulary
                for row in range(masks):  # the specials, the pad and sub-words among the best
                    for j, tid in enumerate(crafted):
                        if r.rand() < 0.5:
                            logits[row, tid] = 4.5 + (j % 3) / 64
                if k == 2:  # far out: one certain token, the rest 0
                    logits[0, :] = -1e4
                    logits[0, crafted[r.randint(len(crafted))]] = 1e4
                add('fill-mask', pid, **base, logits=logits.tolist(), variants=option_sets)
    add('fill-mask', 'fm/no-mask', tokenizer=MINILM, text='no mask here', logits=[], options={})
    # a real vocabulary, sparse logits
    base = {'tokenizer': BERT, 'tokenizerConfig': BERT_CONFIG}
    tok = pipeline_rules.FastTokenizer(TOKENIZERS, BERT, BERT_CONFIG)
    ids = lambda ts: [tok.token_to_id(t) for t in ts]
    picks = ids(['happiness', '##ing', '.', '[SEP]', '[PAD]', '!', '[MASK]', 'love', "'", 's'])
    for i, text in enumerate(['The goal of life is [MASK].', "It [MASK] a [MASK] day, isn't it?", 'Paris is the [MASK] of France.']):
        masks = sum(1 for x in encodings({**base, 'text': text})['ids'] if x == tok.mask_token_id)
        r = rng(f'fm/bert/{i}')
        sets = [[row, tid, float(r.randint(64, 6 * 64) / 64)] for row in range(masks) for tid in picks]
        sets += [[row, 1000 + j, 2.5] for row in range(masks) for j in range(3)]  # a tie
        add('fill-mask', f'fm/bert/{i}', **base, text=text, logits={'shape': [masks, 30522], 'fill': -1.0, 'set': sets},
            variants=[{}, {'topK': 8}, {'targets': ['love', 'hate', 'happiness', 'joyful'], 'topK': 3}])


# ---------------------------------------------------------------- zero-shot

def zero_shot():
    configs = {
        'mnli': label_config(['contradiction', 'neutral', 'entailment']),
        'entail-first': label_config(['ENTAILMENT', 'NEUTRAL', 'CONTRADICTION']),
        'two': label_config(['entailment', 'not_entailment']),
        'no-entail': label_config(['LABEL_0', 'LABEL_1', 'LABEL_2']),
        'no-label2id': {'id2label': {'0': 'contradiction', '1': 'entailment'}},
        'entails': {'id2label': {'0': 'no', '1': 'Entails'}, 'label2id': {'no': 0, 'Entails': 1}},
    }
    label_sets = [['urgent', 'not urgent', 'phone', 'tablet', 'computer'], 'sports, politics,, science ', ['single'], ['a', 'b', 'c']]
    templates = ['This example is {}.', '{}', 'Topic: {0}! ({0})', '{{}} {}']
    for name, config in configs.items():
        n = len(config['id2label'])
        for li, labels in enumerate(label_sets):
            count = len(labels) if isinstance(labels, list) else 3
            for multi in [False, True]:
                pid = f'zs/{name}/{li}/{int(multi)}'
                r = rng(pid)
                logits = grid(r, (count, n), -5, 5)
                if li == 3:
                    logits[1] = list(logits[0])  # a tie
                    logits[2] = [100.0] * n  # large: the shifted softmax stays finite
                add('zero-shot', pid, config=config, text='I have a problem with my iphone that needs to be resolved asap!!',
                    candidateLabels=labels, logits=logits,
                    options={'multiLabel': multi, 'hypothesisTemplate': templates[(li + len(name)) % len(templates)]})
    for k, template in enumerate(['no braces', '{{}}', '{x}', '{} and {}', '{0} {}', '{', '}', 'a {} b }']):
        add('zero-shot', f'zs/template/{k}', config=configs['mnli'], text='t', candidateLabels=['x', 'y'],
            logits=grid(rng(f'zst{k}'), (2, 3)), options={'hypothesisTemplate': template})
    add('zero-shot', 'zs/no-labels', config=configs['mnli'], text='t', candidateLabels=' , ,', logits=[], options={})


# ---------------------------------------------------------------- question answering

QA_CONTEXTS = [
    'My name is Wolfgang and I live in Berlin.',
    'The Eiffel Tower, completed in 1889, stands 330 metres tall on the Champ de Mars in Paris; '
    'it was the tallest man-made structure in the world until the Chrysler Building in New York was finished in 1930. '
    'Gustave Eiffel\'s company designed and built the tower for the 1889 World\'s Fair.',
    'Unaffable jumbling antidisestablishmentarianism: 𝐀𝐁𝐂 ﬁne (𝓍) café naïve, 12,345.67 items — done.',
]
QA_QUESTIONS = ['Where do I live?', 'How tall is the tower and who built it?', 'What is 𝐀𝐁𝐂?']


def qa_logits(r, window, spike=None):
    """Noise, and a peak on one span of the context (start, end), some rows tied. Not on the 1/64 grid:
    span scores are products, and sums of grid logits tie by accident, which float rounding then
    orders either way (ties on purpose are equal logits: equal in every implementation)."""
    T = len(window['ids'])
    logits = np.round(r.uniform(-2, 2, size=(T, 2)) * 4096) / 4096
    ctx = [t for t, s in enumerate(window['sequenceIds']) if s == 1] or list(range(T))
    if spike is None:
        i = ctx[r.randint(0, len(ctx))]
        j = min(ctx[-1], i + r.randint(0, 4))
    else:
        i, j = spike
    logits[i, 0] += 6
    logits[j, 1] += 6
    if r.rand() < 0.5:  # a tie: another start as likely
        k = ctx[r.randint(0, len(ctx))]
        logits[k, 0] = logits[i, 0]
    return logits.tolist()


def question_answering():
    tokenizers = pipeline_rules.RustTokenizers()
    try:
        specs = [('bert', BERT, BERT_CONFIG), ('roberta', ROBERTA, ROBERTA_CONFIG), ('minilm', MINILM, None),
                 ('xlmr', XLMR_SMALL, None), ('nfkc', NFKC, NFKC_CONFIG), ('modernbert', MODERNBERT, None)]
        variants = [{}, {'topK': 3}, {'topK': 5, 'maxAnswerLen': 3}, {'maxAnswerLen': 1}, {'handleImpossibleAnswer': True},
                    {'topK': 4, 'handleImpossibleAnswer': True, 'alignToWords': False}, {'alignToWords': False},
                    {'topK': 25, 'maxAnswerLen': 2}, {'topK': 0}, {'maxAnswerLen': 0}]
        for name, spec, tconfig in specs:
            tok = pipeline_rules.FastTokenizer(tokenizers, spec, tconfig)
            cls_id = tok.special_token_id('cls')
            for ci, context in enumerate(QA_CONTEXTS):
                question = QA_QUESTIONS[ci]
                for max_seq_len, stride in [(384, 128), (24, 4), (32, 10), (20, 0)]:
                    for qfirst in ([True, False] if (ci, max_seq_len) == (1, 32) else [True]):
                        pid = f'qa/{name}/{ci}/{max_seq_len}-{stride}/{"q" if qfirst else "c"}'
                        base = {'tokenizer': spec, **({'tokenizerConfig': tconfig} if tconfig else {}), 'question': question,
                                'context': context, 'maxSeqLen': max_seq_len, 'docStride': stride, 'questionFirst': qfirst,
                                'clsTokenId': cls_id}
                        try:
                            windows = pipeline_rules.qa_windows(tok, question, context, max_seq_len, stride, qfirst)
                        except pipeline_rules.PipelineError as e:
                            problems.append({'id': pid, 'kind': 'question-answering', **base, 'windowsError': str(e)})
                            continue
                        r = rng(pid)
                        add('question-answering', pid, **base, windows=windows, logits=[qa_logits(r, w) for w in windows],
                            variants=variants)
        # a stride above what a window of one sequence leaves (TruncationParamError), for any context
        tok = pipeline_rules.FastTokenizer(tokenizers, BERT, BERT_CONFIG)
        for pid, q, c, msl, st in [('qa/stride-too-large', 'Where?', 'Berlin.', 16, 15),
                                   ('qa/question-too-long', 'where ' * 40, 'in Berlin ' * 20, 32, 4),
                                   ('qa/stride-not-below-room', 'a b c d e f g h i j', 'in Berlin ' * 20, 24, 12)]:
            base = {'tokenizer': BERT, 'tokenizerConfig': BERT_CONFIG, 'question': q, 'context': c, 'maxSeqLen': msl, 'docStride': st,
                    'questionFirst': True, 'clsTokenId': tok.special_token_id('cls')}
            try:
                pipeline_rules.qa_windows(tok, q, c, msl, st)
                raise AssertionError(pid)
            except pipeline_rules.PipelineError as e:
                problems.append({'id': pid, 'kind': 'question-answering', **base, 'windowsError': str(e)})
        # a pair that fits exactly, with the largest stride Rust takes (more than the context's tokens): one window, no refusal
        q, c = 'Where do I live?', 'in Berlin.'
        msl = len(pipeline_rules.qa_windows(tok, q, c, 384, 0)[0]['ids'])
        st = msl - tok.rust.ask(tok.spec, 'addedTokens', pair=False)
        windows = pipeline_rules.qa_windows(tok, q, c, msl, st)
        assert len(windows) == 1 and st > len(tok(c)['ids']) - 2
        add('question-answering', 'qa/fits-exactly', tokenizer=BERT, tokenizerConfig=BERT_CONFIG, question=q, context=c, maxSeqLen=msl,
            docStride=st, questionFirst=True, clsTokenId=tok.special_token_id('cls'), windows=windows,
            logits=[qa_logits(rng('qa/fits-exactly'), w) for w in windows], variants=variants[:2])
        # crafted: every logit equal (ties everywhere), a spike on [CLS] (the null answer wins), huge logits
        windows = pipeline_rules.qa_windows(tok, 'Where do I live?', QA_CONTEXTS[0], 384, 128)
        T = len(windows[0]['ids'])
        base = {'tokenizer': BERT, 'tokenizerConfig': BERT_CONFIG, 'question': 'Where do I live?', 'context': QA_CONTEXTS[0],
                'maxSeqLen': 384, 'docStride': 128, 'questionFirst': True, 'clsTokenId': tok.special_token_id('cls'), 'windows': windows}
        add('question-answering', 'qa/flat', **base, logits=[[[0.0, 0.0]] * T], variants=variants[:8])
        add('question-answering', 'qa/null-wins', **base, logits=[[[9.0, 9.0]] + [[0.0, 0.0]] * (T - 1)], variants=variants[:8])
        add('question-answering', 'qa/huge', **base, logits=[[[float(1e4 * ((t * 7) % 5)), float(-1e4 * ((t * 3) % 4))] for t in range(T)]],
            variants=variants[:8])
    finally:
        tokenizers.close()


TOKENIZERS = None


def main():
    global TOKENIZERS
    TOKENIZERS = pipeline_rules.RustTokenizers()
    cache = {}

    def encodings(p):
        key = json.dumps([p['tokenizer'], p.get('tokenizerConfig'), p['text']])
        if key not in cache:
            cache[key] = pipeline_rules.FastTokenizer(TOKENIZERS, p['tokenizer'], p.get('tokenizerConfig'))(p['text'])
        return cache[key]

    def vocab_size(spec):
        return TOKENIZERS.ask(spec, 'vocabSize')

    try:
        text_classification()
        cross_encoder()
        token_classification(encodings)
        fill_mask(encodings, vocab_size)
        zero_shot()
        question_answering()
    finally:
        TOKENIZERS.close()
    dense = [dict(p, logits=_expand(p['logits'])) if isinstance(p.get('logits'), dict) else p for p in problems]
    solvable = [p for p in dense if 'windowsError' not in p]
    solved = iter(pipeline_rules.solve(solvable))
    results = [next(solved) if 'windowsError' not in p else {'id': p['id'], 'error': p['windowsError']} for p in dense]
    enc = pipeline_rules.encodings(dense)
    out = []
    for p, res, e in zip(problems, results, enc):
        assert res['id'] == p['id']
        entry = dict(p)
        if e is not None:
            entry['encoding'] = e
        outcome = lambda r: {'expected': r['output']} if 'output' in r else {'error': r['error']}
        if 'variants' in p:
            entry['variants'] = [{'options': o, **outcome(r)} for o, r in zip(p['variants'], res['variants'])]
        else:
            entry.update(outcome(res))
        out.append(entry)
    ids = [p['id'] for p in out]
    assert len(ids) == len(set(ids)), 'problem ids are unique'
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write('{"generator": "tests/reference/make_task_vectors.py", "problems": [\n')
        f.write(',\n'.join(json.dumps(p, ensure_ascii=False, separators=(',', ':')) for p in out))
        f.write('\n]}\n')
    kinds = {}
    for p in out:
        kinds[p['kind']] = kinds.get(p['kind'], 0) + 1
    cases = sum(len(p.get('variants', [p])) for p in out)
    errors = sum(1 for p in out for v in p.get('variants', [p]) if 'error' in v)
    print(f'{OUT}: {len(out)} problems {kinds}, {cases} cases, {errors} errors')


def _expand(sparse):
    rows, vocab = sparse['shape']
    logits = np.full((rows, vocab), sparse['fill'])
    for r, i, v in sparse['set']:
        logits[r, i] = v
    return logits.tolist()


if __name__ == '__main__':
    main()
