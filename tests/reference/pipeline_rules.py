#!/usr/bin/env python3
"""Hugging Face's pipeline post-processing rules, re-implemented in Python.

An independent reference for bindings/tasks/*.js (it shares no code with them):
the rules as written in
  huggingface/transformers src/transformers/pipelines/
    text_classification.py   TextClassificationPipeline.postprocess
    token_classification.py  TokenClassificationPipeline.postprocess, gather_pre_entities,
                             aggregate, aggregate_word(s), group_sub_entities, get_tag, group_entities
    fill_mask.py             FillMaskPipeline.postprocess, get_target_ids
    zero_shot_classification.py  ZeroShotClassificationArgumentHandler, entailment_id, postprocess
    question_answering.py    QuestionAnsweringArgumentHandler.normalize, _sanitize_parameters, preprocess,
                             postprocess, select_starts_ends, decode_spans, get_indices, get_answer
                             (huggingface/transformers at the last 4.x / 5.2 code, read in the cyyever/transformers
                             fork @b7cba825; the pipeline is removed from 5.3)
  huggingface/transformers src/transformers/configuration_utils.py (id2label, label2id, num_labels)
  huggingface/transformers src/transformers/tokenization_utils_tokenizers.py (TokenizersBackend
    convert_tokens_to_string, _decode and its clean-up), tokenization_utils_base.py clean_up_tokenization
  UKPLab/sentence-transformers sentence_transformers/cross_encoder/CrossEncoder.py
    (get_default_activation_fn, predict, rank)
with numpy in float64 and the tokenizer questions asked of Hugging Face's Rust `tokenizers`
(tests/reference/rust_tokenizer_server.cjs), the backend transformers itself asks.

Where we choose (upstream leaves it to torch.topk / numpy's quicksort, or fails), the choice
is the one bindings/tasks makes and is marked CHOICE below:
  - equal scores keep the lower index first (Python's stable sort, which text-classification
    and CrossEncoder.rank use; fill-mask's torch.topk and zero-shot's reversed argsort leave
    the order of ties unspecified);
  - fill-mask targets are deduplicated in ascending id order (upstream: list(set(...)));
  - zero-shot's softmax is shifted by the max (upstream's unshifted exp overflows to NaN past
    about 88 in float32; equal otherwise);
  - zero-shot without label2id builds it from id2label (upstream's config has label2id None
    then and fails);
  - question answering: equal span scores keep the lower flat index (start * T + end) first
    (upstream's argpartition leaves their order open); the windows are those of tokenizers
    <= 0.22 (Encoding::truncate on the whole context: 0.23 stops tokenizing it early and drops
    the rest); offsets in UTF-16 units on output (Python's are code points); topK 1 gives the
    best answer or None, topK > 1 a list (upstream: a dict whenever exactly one answer remains).

CLI: pipeline_rules.py in.json out.json
  in.json:  {"problems": [{"id", "kind", "options" | "variants": [options, ...], ...}]}   (kinds: see RULES)
  out.json: {"results": [{"id", "output": ...} | {"id", "error": "ValueError: ..."} | {"id", "variants": [...]}]}
"""
import json
import os
import subprocess
import sys

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


class PipelineError(Exception):
    """What upstream raises as ValueError / PipelineException / KeyError for a bad input."""


# ---------------------------------------------------------------- tokenizers

class RustTokenizers:
    """The Rust tokenizers behind a node child process (rust_tokenizer_server.cjs)."""

    def __init__(self):
        self.proc = subprocess.Popen(
            ['node', os.path.join(REPO, 'tests', 'reference', 'rust_tokenizer_server.cjs')],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding='utf-8')

    def ask(self, spec, op, **kw):
        self.proc.stdin.write(json.dumps({'tokenizer': spec, 'op': op, **kw}) + '\n')
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if 'error' in answer:
            raise RuntimeError(f'rust tokenizers: {answer["error"]}')
        return answer['ok']

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def _token_content(v):
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and isinstance(v.get('content'), str):
        return v['content']
    return None


class FastTokenizer:
    """The few methods of transformers' fast tokenizer the pipelines call."""

    def __init__(self, rust, spec, tokenizer_config=None, special_tokens_map=None):
        self.rust, self.spec = rust, spec
        if 'file' in spec and tokenizer_config is None:
            folder = os.path.dirname(os.path.join(REPO, spec['file']))
            tokenizer_config = _read_json(os.path.join(folder, 'tokenizer_config.json'))
            special_tokens_map = _read_json(os.path.join(folder, 'special_tokens_map.json'))
        self.config = tokenizer_config or {}
        self.special_map = special_tokens_map or {}
        info = rust.ask(spec, 'info')
        self.model_type = info['modelType']
        # getattr(self.tokenizer._tokenizer.model, "continuing_subword_prefix", None), used as a truth value
        self.continuing_subword_prefix = info['continuingSubwordPrefix'] if self.model_type in ('WordPiece', 'BPE') else None
        self.clean_up_tokenization_spaces = bool(self.config.get('clean_up_tokenization_spaces', False))
        self.clean_up_for_bpe = bool(self.config.get('clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output', False))

    def special_token_id(self, name):
        key = f'{name}_token'
        content = _token_content(self.config.get(key))
        if content is None:
            content = _token_content(self.special_map.get(key))
        return None if content is None else self.token_to_id(content)

    @property
    def unk_token_id(self):
        return self.special_token_id('unk')

    @property
    def mask_token_id(self):
        return self.special_token_id('mask')

    @property
    def pad_token_id(self):
        return self.special_token_id('pad')

    def __call__(self, text, add_special_tokens=True):
        return self.rust.ask(self.spec, 'encode', text=text, addSpecialTokens=add_special_tokens)

    def token_to_id(self, token):
        return self.rust.ask(self.spec, 'tokenToId', token=token)

    def convert_ids_to_tokens(self, i):
        return self.rust.ask(self.spec, 'idToToken', id=int(i))

    def convert_tokens_to_string(self, tokens):
        # backend_tokenizer.decoder.decode(tokens), or " ".join(tokens) without a decoder
        return self.rust.ask(self.spec, 'tokensToString', tokens=list(tokens))

    def decode(self, ids, skip_special_tokens=False):
        text = self.rust.ask(self.spec, 'decode', ids=[int(i) for i in ids], skipSpecialTokens=skip_special_tokens)
        if self.clean_up_tokenization_spaces and (self.model_type != 'BPE' or self.clean_up_for_bpe):
            text = clean_up_tokenization(text)
        return text


def clean_up_tokenization(s):
    for a, b in [(' .', '.'), (' ?', '?'), (' !', '!'), (' ,', ','), (" ' ", "'"), (" n't", "n't"),
                 (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
        s = s.replace(a, b)
    return s


def _read_json(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding='utf-8') as f:
        return json.load(f)


# ---------------------------------------------------------------- config

class Config:
    """PretrainedConfig's label fields: id2label keys to int, LABEL_i maps when absent."""

    def __init__(self, d):
        self.d = d
        problem_type = d.get('problem_type')
        if problem_type is not None and problem_type not in ('regression', 'single_label_classification', 'multi_label_classification'):
            raise PipelineError(f'ValueError: problem_type {problem_type!r} not understood')
        self.problem_type = problem_type
        if d.get('id2label') is not None:
            self.id2label = {int(k): v for k, v in d['id2label'].items()}
            self.label2id = d.get('label2id')
        else:
            n = d.get('num_labels', 2)
            self.id2label = {i: f'LABEL_{i}' for i in range(n)}
            self.label2id = d.get('label2id', {v: k for k, v in self.id2label.items()})
        if self.label2id is None:  # CHOICE: upstream fails on None.items()
            self.label2id = {v: k for k, v in self.id2label.items()}

    @property
    def num_labels(self):
        return len(self.id2label)


def _f64(logits):
    return np.asarray(logits, dtype=np.float32).astype(np.float64)


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def sigmoid(x):
    with np.errstate(over='ignore'):
        return 1.0 / (1.0 + np.exp(-x))


def descending(values):
    """Indices by value, largest first, equal values by index (a stable sort)."""
    return sorted(range(len(values)), key=lambda i: values[i], reverse=True)


# ---------------------------------------------------------------- text classification

def text_classification(problem, tokenizers):
    config = Config(problem.get('config', {}))
    options = problem.get('options') or {}
    fn = options.get('functionToApply')
    if fn is None:
        if config.problem_type == 'regression':
            fn = 'none'
        elif config.problem_type == 'multi_label_classification' or config.num_labels == 1:
            fn = 'sigmoid'
        elif config.problem_type == 'single_label_classification' or config.num_labels > 1:
            fn = 'softmax'
        elif config.d.get('function_to_apply') is not None:
            fn = config.d['function_to_apply']
        else:
            fn = 'none'
    top_k = options.get('topK', 1)
    out = []
    for row in _f64(problem['logits']):
        scores = {'sigmoid': sigmoid, 'softmax': softmax, 'none': lambda x: x}[fn](row)
        dict_scores = [{'label': config.id2label[i], 'score': float(s)} for i, s in enumerate(scores)]
        dict_scores.sort(key=lambda x: x['score'], reverse=True)
        out.append(dict_scores if top_k is None else dict_scores[:top_k])
    return out


# ---------------------------------------------------------------- cross-encoder

def _torch_activation(path):
    """import_from_string(path)() for the torch modules a cross-encoder config names."""
    module, _, name = path.rpartition('.')
    where = {'Identity': ('torch.nn', 'torch.nn.modules.linear'),
             'Sigmoid': ('torch.nn', 'torch.nn.modules.activation'),
             'Tanh': ('torch.nn', 'torch.nn.modules.activation'),
             'Softmax': ('torch.nn', 'torch.nn.modules.activation')}
    if name not in where or module not in where[name]:
        raise PipelineError(f'ImportError: {path} is not an activation this reference computes')
    return name


def cross_encoder_activation(config, options):
    named = {'sigmoid': 'Sigmoid', 'softmax': 'Softmax', 'tanh': 'Tanh', 'none': 'Identity'}
    if options.get('activation') is not None:
        return named[options['activation']]
    d = config.d
    path = None
    st = d.get('sentence_transformers')
    if isinstance(st, dict) and 'activation_fn' in st:
        path = st['activation_fn']
    elif d.get('sbert_ce_default_activation_function') is not None:
        path = d['sbert_ce_default_activation_function']
    if path is not None and path.startswith('torch.'):
        return _torch_activation(path)
    return 'Sigmoid' if config.num_labels == 1 else 'Identity'


def _activate(name, logits):
    if name == 'Sigmoid':
        return sigmoid(logits)
    if name == 'Tanh':
        return np.tanh(logits)
    if name == 'Softmax':  # nn.Softmax(dim=None) on 2-D input: dim 1
        return softmax(logits, axis=1)
    return logits


def cross_encoder_predict(problem, tokenizers):
    config = Config(problem.get('config', {}))
    scores = _activate(cross_encoder_activation(config, problem.get('options') or {}), _f64(problem['logits']))
    if config.num_labels == 1:
        scores = scores[:, 0]
    return [float(x) for x in scores.reshape(-1)]


def cross_encoder_rank(problem, tokenizers):
    config = Config(problem.get('config', {}))
    options = problem.get('options') or {}
    if config.num_labels != 1:
        raise PipelineError('ValueError: CrossEncoder.rank() only works for models with num_labels=1')
    scores = cross_encoder_predict({**problem, 'options': {'activation': options.get('activation')}}, tokenizers)
    results = []
    for i, score in enumerate(scores):
        results.append({'corpusId': i, 'score': score})
        if options.get('returnDocuments'):
            results[-1]['text'] = problem['documents'][i]
    results = sorted(results, key=lambda x: x['score'], reverse=True)
    return results[:options.get('topK')]


# ---------------------------------------------------------------- token classification

def _tokenizer(problem, tokenizers):
    return FastTokenizer(tokenizers, problem['tokenizer'], problem.get('tokenizerConfig'), problem.get('specialTokensMap'))


def token_classification(problem, tokenizers):
    tok = _tokenizer(problem, tokenizers)
    config = Config(problem.get('config', {}))
    options = problem.get('options') or {}
    strategy = options.get('aggregationStrategy', 'simple')
    ignore_labels = options.get('ignoreLabels', ['O'])
    sentence = problem['text']
    enc = tok(sentence)
    logits = _f64(problem['logits'])
    assert logits.shape[0] == len(enc['ids']), 'one row of logits per token'
    scores = softmax(logits)

    pre_entities = []
    for idx, token_scores in enumerate(scores):
        if enc['specialTokensMask'][idx]:
            continue
        word = tok.convert_ids_to_tokens(enc['ids'][idx])
        start, end = enc['offsets'][idx]
        word_ref = sentence[start:end]
        if tok.continuing_subword_prefix:
            is_subword = len(word) != len(word_ref)
        else:
            is_subword = start > 0 and ' ' not in sentence[start - 1:start + 1]
        if enc['ids'][idx] == tok.unk_token_id:
            word = word_ref
            is_subword = False
        pre_entities.append({'word': word, 'scores': token_scores, 'start': start, 'end': end, 'index': idx, 'is_subword': is_subword})

    def label(i):
        return config.id2label[int(i)]

    if strategy in ('none', 'simple'):
        entities = []
        for p in pre_entities:
            i = p['scores'].argmax()
            entities.append({'entity': label(i), 'score': float(p['scores'][i]), 'index': p['index'],
                             'word': p['word'], 'start': p['start'], 'end': p['end']})
    else:
        entities = _aggregate_words(pre_entities, strategy, tok, label)
    if strategy != 'none':
        entities = _group_entities(entities, tok)
    return [e for e in entities if e.get('entity') not in ignore_labels and e.get('entityGroup') not in ignore_labels]


def _aggregate_word(entities, strategy, tok, label):
    word = tok.convert_tokens_to_string([e['word'] for e in entities])
    if strategy == 'first':
        scores = entities[0]['scores']
    elif strategy == 'max':
        scores = max(entities, key=lambda e: e['scores'].max())['scores']
    else:  # average
        scores = np.nanmean(np.stack([e['scores'] for e in entities]), axis=0)
    i = scores.argmax()
    return {'entity': label(i), 'score': float(scores[i]), 'word': word, 'start': entities[0]['start'], 'end': entities[-1]['end']}


def _aggregate_words(entities, strategy, tok, label):
    words, group = [], None
    for e in entities:
        if group is None:
            group = [e]
        elif e['is_subword']:
            group.append(e)
        else:
            words.append(_aggregate_word(group, strategy, tok, label))
            group = [e]
    if group is not None:
        words.append(_aggregate_word(group, strategy, tok, label))
    return words


def _get_tag(name):
    if name.startswith('B-'):
        return 'B', name[2:]
    if name.startswith('I-'):
        return 'I', name[2:]
    return 'I', name


def _group_sub_entities(entities, tok):
    return {'entityGroup': entities[0]['entity'].split('-', 1)[-1],
            'score': float(np.mean(np.nanmean([e['score'] for e in entities]))),
            'word': tok.convert_tokens_to_string([e['word'] for e in entities]),
            'start': entities[0]['start'], 'end': entities[-1]['end']}


def _group_entities(entities, tok):
    groups, current = [], []
    for e in entities:
        if not current:
            current.append(e)
            continue
        bi, tag = _get_tag(e['entity'])
        _, last_tag = _get_tag(current[-1]['entity'])
        if tag == last_tag and bi != 'B':
            current.append(e)
        else:
            groups.append(_group_sub_entities(current, tok))
            current = [e]
    if current:
        groups.append(_group_sub_entities(current, tok))
    return groups


# ---------------------------------------------------------------- fill-mask

def get_target_ids(tok, targets):
    if isinstance(targets, str):
        targets = [targets]
    ids = []
    for t in targets:
        i = tok.token_to_id(t)
        if i is None:
            tokenized = tok(t, add_special_tokens=False)['ids'][:1]  # max_length=1, truncation=True
            if len(tokenized) == 0:
                continue
            i = tokenized[0]
        ids.append(i)
    ids = sorted(set(ids))  # CHOICE: the order of list(set(...)) only orders equal scores
    if not ids:
        raise PipelineError('ValueError: At least one target must be provided when passed.')
    return np.array(ids)


def fill_mask(problem, tokenizers):
    tok = _tokenizer(problem, tokenizers)
    options = problem.get('options') or {}
    top_k = options.get('topK', 5)
    target_ids = get_target_ids(tok, options['targets']) if options.get('targets') is not None else None
    input_ids = np.array(tok(problem['text'])['ids'])
    masked_index = np.nonzero(input_ids == tok.mask_token_id)[0]
    if len(masked_index) < 1:
        raise PipelineError('PipelineException: No mask_token found on the input')
    if target_ids is not None and target_ids.shape[0] < top_k:
        top_k = target_ids.shape[0]
    probs = softmax(_f64(problem['logits']))
    assert probs.shape[0] == len(masked_index), 'one row of logits per mask'
    if target_ids is not None:
        probs = probs[..., target_ids]
    single_mask = len(masked_index) == 1
    result = []
    for i, row_probs in enumerate(probs):
        row = []
        for p in descending(row_probs)[:top_k]:
            v = float(row_probs[p])
            if target_ids is not None:
                p = int(target_ids[p])
            tokens = input_ids.copy()
            tokens[masked_index[i]] = p
            if tok.pad_token_id is not None:
                tokens = tokens[np.where(tokens != tok.pad_token_id)]
            row.append({'score': v, 'token': int(p), 'tokenStr': tok.decode([p]),
                        'sequence': tok.decode(tokens, skip_special_tokens=single_mask)})
        result.append(row)
    return result[0] if single_mask else result


# ---------------------------------------------------------------- zero-shot

def zero_shot(problem, tokenizers):
    config = Config(problem.get('config', {}))
    options = problem.get('options') or {}
    template = options.get('hypothesisTemplate', 'This example is {}.')
    labels = problem['candidateLabels']
    if isinstance(labels, str):
        labels = [label.strip() for label in labels.split(',') if label.strip()]
    if len(labels) == 0:
        raise PipelineError('ValueError: You must include at least one label and at least one sequence.')
    try:
        if template.format(labels[0]) == template:
            raise PipelineError(f'ValueError: The provided hypothesis_template "{template}" was not able to be formatted')
        hypotheses = [template.format(label) for label in labels]
    except (ValueError, KeyError, IndexError, AttributeError) as e:
        raise PipelineError(f'{type(e).__name__}: {e}')
    entailment_id = -1
    for label, ind in config.label2id.items():
        if label.lower().startswith('entail'):
            entailment_id = ind
            break
    logits = _f64(problem['logits'])  # [n labels, model labels]
    assert logits.shape[0] == len(labels), 'one row of logits per candidate label'
    if options.get('multiLabel', False) or len(labels) == 1:
        contradiction_id = -1 if entailment_id == 0 else 0
        scores = softmax(logits[:, [contradiction_id, entailment_id]])[:, 1]
    else:
        scores = softmax(logits[:, entailment_id])
    top = descending(scores)
    return {'sequence': problem['text'], 'labels': [labels[i] for i in top], 'scores': [float(scores[i]) for i in top],
            'hypotheses': hypotheses}


# ---------------------------------------------------------------- question answering

def _utf16(text):
    """Code point offset -> UTF-16 offset in text."""
    out, u = [0], 0
    for ch in text:
        u += 2 if ord(ch) > 0xFFFF else 1
        out.append(u)
    return out


def qa_windows(tok, question, context, max_seq_len, doc_stride, question_first=True):
    """The encodings preprocess gets from tokenizer(question, context, truncation="only_second",
    max_length, stride, return_overflowing_tokens=True) (context first and only_first when the
    tokenizer pads on the left), windows as tokenizers <= 0.22 cut them, with the refusals of the
    Rust tokenizer: TruncationParamError (stride above max_length less a single sequence's special
    tokens), SequenceTooShort (no room for the context), Encoding::truncate's stride < room."""
    text, pair = (question, context) if question_first else (context, question)
    truncation = 'only_second' if question_first else 'only_first'
    single = tok.rust.ask(tok.spec, 'addedTokens', pair=False)
    added = tok.rust.ask(tok.spec, 'addedTokens', pair=True)
    if max_seq_len - single < doc_stride:
        raise PipelineError(f'TruncationParamError: tokenizer stride set to {doc_stride}, which is greater than or equal to its '
                            f'effective max length of {max_seq_len - single}')
    n_text = len(tok(text, add_special_tokens=False)['ids'])
    n_pair = len(tok(pair, add_special_tokens=False)['ids'])
    room = None
    if n_text + n_pair + added > max_seq_len:
        other = n_text if question_first else n_pair
        room = max_seq_len - added - other
        if room < 1:
            raise PipelineError('SequenceTooShort: Truncation error: Sequence to truncate too short to respect the provided max_length')
        if doc_stride >= room:
            raise PipelineError(f'PanicException: `stride` must be strictly less than `max_len={room}`')
    windows = tok.rust.ask(tok.spec, 'windows', text=text, pair=pair, truncation=truncation, room=room, stride=doc_stride)
    for w in windows:  # Rust's postProcess leaves sequence ids None on the first sequence: it is 0 there, as encode gives it
        w['sequenceIds'] = [s if s is not None else (None if m else 0) for s, m in zip(w['sequenceIds'], w['specialTokensMask'])]
    return windows


def _word_to_chars(w, word, seq):
    """Encoding.word_to_chars within a window: (offsets of the word's first token)[0], (of its last)[1], or None."""
    first = last = None
    for t, (s, wd) in enumerate(zip(w['sequenceIds'], w['wordIds'])):
        if s != seq:
            continue
        if wd is not None and wd > word:
            break
        if wd == word:
            first = t if first is None else first
            last = t
    return None if first is None else (w['offsets'][first][0], w['offsets'][last][1])


def _decode_spans(start, end, topk, max_answer_len, undesired):
    """decode_spans over one window (1-D start / end probabilities)."""
    T = len(start)
    candidates = np.tril(np.triu(np.outer(start, end)), max_answer_len - 1)
    flat = candidates.flatten()
    order = sorted(range(len(flat)), key=lambda f: -flat[f])  # CHOICE: a stable sort (ties by flat index)
    idx = order[:topk]
    starts, ends = [f // T for f in idx], [f % T for f in idx]
    # np.isin(x, undesired.nonzero()) with undesired of shape [1, T]: the row indices (all 0) count too
    ok = set(np.nonzero(undesired)[0].tolist())
    if ok:
        ok.add(0)
    return [(s, e, float(candidates[s, e])) for s, e in zip(starts, ends) if s in ok and e in ok]


def question_answering(problem, tokenizers):
    """The pipeline from the windows' logits: problem['windows'] (as qa_windows gives them),
    problem['logits'] ([T, 2] per window), context, options."""
    options = problem.get('options') or {}
    top_k = options.get('topK', 1)
    if top_k < 1:
        raise PipelineError(f'ValueError: top_k parameter should be >= 1 (got {top_k})')
    max_answer_len = options.get('maxAnswerLen', 15)
    if max_answer_len < 1:
        raise PipelineError(f'ValueError: max_answer_len parameter should be >= 1 (got {max_answer_len}')
    handle_impossible = options.get('handleImpossibleAnswer', False)
    align = options.get('alignToWords', True)
    question_first = problem.get('questionFirst', True)
    cls_id = problem.get('clsTokenId')
    context = problem['context']
    pre_topk = top_k * 2 + 10 if align else top_k
    min_null = 1000000
    answers = []
    for w, lg in zip(problem['windows'], problem['logits']):
        lg = np.asarray(lg, dtype=np.float32).astype(np.float64)
        p_mask = np.array([(s != 1) if question_first else 0 for s in w['sequenceIds']], dtype=np.int64)
        if cls_id is not None:
            p_mask[np.array(w['ids']) == cls_id] = 0
        undesired = np.abs(p_mask - 1) & 1
        start = np.where(undesired == 0, -10000.0, lg[:, 0])
        end = np.where(undesired == 0, -10000.0, lg[:, 1])
        start = np.exp(start - start.max())
        start = start / start.sum()
        end = np.exp(end - end.max())
        end = end / end.sum()
        if handle_impossible:
            min_null = min(min_null, float(start[0] * end[0]))
        start[0] = end[0] = 0.0
        seq = 1 if question_first else 0
        for s, e, score in _decode_spans(start, end, pre_topk, max_answer_len, undesired):
            span = None
            if align:
                sw, ew = w['wordIds'][s], w['wordIds'][e]
                if sw is not None and ew is not None:  # token_to_word None: word_to_chars raises, offsets then
                    a, b = _word_to_chars(w, sw, seq), _word_to_chars(w, ew, seq)
                    if a is not None and b is not None:
                        span = (a[0], b[1])
            if span is None:
                span = (w['offsets'][s][0], w['offsets'][e][1])
            target = context[span[0]:span[1]]
            same = next((a for a in answers if a['answer'].lower() == target.lower()), None)
            if same:
                same['score'] += score
            else:
                answers.append({'score': score, 'start': span[0], 'end': span[1], 'answer': target})
    if handle_impossible:
        answers.append({'score': min_null, 'start': 0, 'end': 0, 'answer': ''})
    answers = sorted(answers, key=lambda a: a['score'], reverse=True)[:top_k]
    u16 = _utf16(context)
    for a in answers:
        a['start'], a['end'] = u16[a['start']], u16[a['end']]
    if top_k == 1:  # CHOICE: the best answer or None for topK 1, a list otherwise
        return answers[0] if answers else None
    return answers


RULES = {
    'text-classification': text_classification,
    'cross-encoder-predict': cross_encoder_predict,
    'cross-encoder-rank': cross_encoder_rank,
    'token-classification': token_classification,
    'fill-mask': fill_mask,
    'zero-shot': zero_shot,
    'question-answering': question_answering,
}


def _solve_one(p, tokenizers):
    try:
        return {'output': RULES[p['kind']](p, tokenizers)}
    except PipelineError as e:
        return {'error': str(e)}


def solve(problems):
    """The output (or the error) of every problem; a problem with "variants" (a list of
    options) has one per variant."""
    tokenizers = RustTokenizers()
    try:
        results = []
        for p in problems:
            if 'variants' in p:
                results.append({'id': p['id'], 'variants': [_solve_one({**p, 'options': v}, tokenizers) for v in p['variants']]})
            else:
                results.append({'id': p['id'], **_solve_one(p, tokenizers)})
        return results
    finally:
        tokenizers.close()


def encodings(problems):
    """The Rust encodings of the problems' texts (what the JS side must see too)."""
    tokenizers = RustTokenizers()
    try:
        return [_tokenizer(p, tokenizers)(p['text']) if 'tokenizer' in p and 'text' in p else None for p in problems]
    finally:
        tokenizers.close()


def main(argv):
    if len(argv) != 3:
        sys.exit('usage: pipeline_rules.py in.json out.json')
    with open(argv[1], encoding='utf-8') as f:
        problems = json.load(f)['problems']
    with open(argv[2], 'w', encoding='utf-8') as f:
        json.dump({'results': solve(problems)}, f, ensure_ascii=False)


if __name__ == '__main__':
    main(sys.argv)
