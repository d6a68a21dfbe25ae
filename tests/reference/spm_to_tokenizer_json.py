"""Converts a SentencePiece Unigram model into a Hugging Face tokenizer.json.

Written for the tokenizer tests (no transformers here). It builds the same JSON
that transformers' convert_slow_tokenizer.py builds for the layouts we test:

* ``t5``: T5Converter with the newer SpmConverter normalizer
  (Precompiled, Strip(right), Replace(" {2,}" -> "▁")), Metaspace with
  prepend_scheme "always", post-processor ``$A </s>`` / ``$A </s> $B </s>``,
  the extra ids appended to the vocabulary.
* ``xlmr``: XLMRobertaConverter as older tokenizer.json files have it
  (Precompiled, Replace(" {2,}" -> " "), legacy Metaspace ``add_prefix_space``),
  the fairseq vocabulary (<s> <pad> </s> <unk>, the pieces from id 3 on shifted
  by one, <mask> last), ``<s> $A </s>`` / ``<s> $A </s> </s> $B </s>``, and
  <mask> with lstrip.
* ``llama_unigram``: a byte-fallback Unigram model with the Llama-style decoder
  (Replace("▁", " "), ByteFallback, Fuse, Strip(" ", 1, 0)), Metaspace with
  prepend_scheme "first", ``<s> $A`` / ``<s> $A <s>:1 $B:1``.

Options: ``split`` (Metaspace split, default true).

Run with Debian's /usr/bin/python3 (python3-sentencepiece, python3-protobuf).
"""

import base64

from sentencepiece import sentencepiece_model_pb2 as model_pb2

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def load_proto(path):
    proto = model_pb2.ModelProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    if proto.trainer_spec.model_type != 1:
        raise ValueError(f"{path}: not a Unigram model")
    return proto


def added_token(content, token_id, special=True, lstrip=False):
    return {"id": token_id, "content": content, "single_word": False, "lstrip": lstrip,
            "rstrip": False, "normalized": False, "special": special}


def precompiled(proto):
    charsmap = proto.normalizer_spec.precompiled_charsmap
    if not charsmap:
        return []
    return [{"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")}]


def new_normalizer(proto):
    return {"type": "Sequence", "normalizers": precompiled(proto) + [
        {"type": "Strip", "strip_left": False, "strip_right": True},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"},
    ]}


def legacy_normalizer(proto):
    return {"type": "Sequence", "normalizers": precompiled(proto) + [
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
    ]}


def metaspace(prepend_scheme, split):
    return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": prepend_scheme, "split": split}


def template(single, pair, specials):
    def piece(item):
        name, type_id = item.rsplit(":", 1) if ":" in item else (item, "0")
        if name in ("$A", "$B"):
            return {"Sequence": {"id": name[1], "type_id": int(type_id)}}
        return {"SpecialToken": {"id": name, "type_id": int(type_id)}}

    return {
        "type": "TemplateProcessing",
        "single": [piece(p) for p in single.split()],
        "pair": [piece(p) for p in pair.split()],
        "special_tokens": {name: {"id": name, "ids": [i], "tokens": [name]} for name, i in specials},
    }


def tokenizer_json(normalizer, pre_tokenizer, post_processor, decoder, model, added):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": post_processor,
            "decoder": decoder, "model": model}


def t5(proto, split=True, extra_ids=3):
    vocab = [[p.piece, p.score] for p in proto.pieces]
    vocab += [[f"<extra_id_{i}>", 0.0] for i in range(extra_ids - 1, -1, -1)]
    added = [added_token(p.piece, i) for i, p in enumerate(proto.pieces) if p.type in (UNKNOWN, CONTROL)]
    added += [added_token(vocab[i][0], i) for i in range(len(proto.pieces), len(vocab))]
    eos = next(i for i, p in enumerate(proto.pieces) if p.piece == "</s>")
    return tokenizer_json(
        new_normalizer(proto), metaspace("always", split),
        template("$A </s>", "$A </s> $B </s>", [("</s>", eos)]),
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": split},
        {"type": "Unigram", "unk_id": proto.trainer_spec.unk_id, "vocab": vocab, "byte_fallback": False},
        added)


def xlmr(proto):
    # SentencePiece's <unk> <s> </s> (ids 0-2) become fairseq's <s> <pad> </s> <unk>.
    vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]]
    vocab += [[p.piece, p.score] for p in proto.pieces[3:]]
    vocab += [["<mask>", 0.0]]
    added = [added_token(t, i) for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>"])]
    added.append(added_token("<mask>", len(vocab) - 1, lstrip=True))
    legacy_metaspace = {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}
    return tokenizer_json(
        legacy_normalizer(proto), legacy_metaspace,
        template("<s> $A </s>", "<s> $A </s> </s> $B </s>", [("<s>", 0), ("</s>", 2)]),
        legacy_metaspace,
        {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": False},
        added)


def llama_unigram(proto, split=True):
    vocab = [[p.piece, p.score] for p in proto.pieces]
    added = [added_token(p.piece, i) for i, p in enumerate(proto.pieces) if p.type in (UNKNOWN, CONTROL)]
    bos = next(i for i, p in enumerate(proto.pieces) if p.piece == "<s>")
    decoder = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    ]}
    return tokenizer_json(
        new_normalizer(proto), metaspace("first", split),
        template("<s> $A", "<s> $A <s>:1 $B:1", [("<s>", bos)]),
        decoder,
        {"type": "Unigram", "unk_id": proto.trainer_spec.unk_id, "vocab": vocab,
         "byte_fallback": proto.trainer_spec.byte_fallback},
        added)


LAYOUTS = {"t5": t5, "xlmr": xlmr, "llama_unigram": llama_unigram}


def convert(model_path, layout, **options):
    """The tokenizer.json object for the SentencePiece model at model_path."""
    return LAYOUTS[layout](load_proto(model_path), **options)


def spm_to_hf_id(layout, sp_id):
    """SentencePiece's id of a piece → the id in the converted vocabulary."""
    if layout != "xlmr":
        return sp_id
    return {0: 3, 1: 0, 2: 2}.get(sp_id, sp_id + 1)
