"""Writes the SentencePiece fixtures of tests/tokenizer.test.js.

    /usr/bin/python3 tests/reference/make_tokenizer_fixtures.py

Trains small SentencePiece Unigram models on tests/tokenizers/spm/train.txt with
the normalization rules nmt_nfkc, nmt_nfkc_cf and identity (and one with
byte_fallback), converts each into a tokenizer.json (spm_to_tokenizer_json.py),
and records SentencePiece's own ids for every string of
tests/tokenizers/corpus.json in tests/tokenizers/spm/sentencepiece_ids.json, so
that the test needs no Python. Needs Debian's python3-sentencepiece and
python3-protobuf. Training is deterministic (one thread, whole input), so a
second run writes the same files.
"""

import json
import os
import sys

import sentencepiece as spm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spm_to_tokenizer_json import convert, spm_to_hf_id  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tokenizers")
SPM = os.path.join(ROOT, "spm")

# name: (layout, converter options, trainer options)
MODELS = {
    "t5_nmt_nfkc": ("t5", {}, dict(
        normalization_rule_name="nmt_nfkc", vocab_size=500,
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1)),
    "xlmr_nmt_nfkc_cf": ("xlmr", {}, dict(
        normalization_rule_name="nmt_nfkc_cf", vocab_size=500)),
    "t5_identity_nosplit": ("t5", {"split": False}, dict(
        normalization_rule_name="identity", vocab_size=500,
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1)),
    "llama_unigram_byte_fallback": ("llama_unigram", {}, dict(
        normalization_rule_name="nmt_nfkc", vocab_size=700, byte_fallback=True)),
}


def train(name, options):
    # Relative paths: the .model records them, so that a run in any checkout
    # writes the same bytes.
    cwd = os.getcwd()
    os.chdir(SPM)
    try:
        spm.SentencePieceTrainer.train(
            input="train.txt", model_prefix=name,
            model_type="unigram", character_coverage=0.98, num_threads=1,
            input_sentence_size=0, shuffle_input_sentence=False, hard_vocab_limit=False,
            minloglevel=2, **options)
        os.remove(name + ".vocab")
    finally:
        os.chdir(cwd)


def main():
    with open(os.path.join(ROOT, "corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)
    ids = {}
    for name, (layout, converter_options, trainer_options) in MODELS.items():
        train(name, trainer_options)
        model = os.path.join(SPM, name + ".model")
        with open(os.path.join(SPM, name + ".tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(convert(model, layout, **converter_options), f, ensure_ascii=False)
        sp = spm.SentencePieceProcessor(model_file=model)
        ids[name] = [[spm_to_hf_id(layout, i) for i in sp.encode(text)] for text in corpus]
    with open(os.path.join(SPM, "sentencepiece_ids.json"), "w", encoding="utf-8") as f:
        f.write("{\n" + ",\n".join(f'  "{name}": {json.dumps(v, separators=(",", ":"))}' for name, v in ids.items()) + "\n}\n")


if __name__ == "__main__":
    main()
