#!/usr/bin/env node
// Helper for tools/train_mlm.py: the masked-LM model's WordPiece vocabulary and
// its tokenization, both by Hugging Face's Rust `tokenizers` (the npm dev
// dependency), so that tokenizer.json is what the Rust crate writes and the
// training ids are what any Hugging Face tokenizer gives for that file.
//
//   node tools/wordpiece.cjs build <train.txt> <vocabSize> <tokenizer.json>
//   node tools/wordpiece.cjs encode <tokenizer.json> <texts.json> <ids.bin>
//
// build: trains a WordPiece model on the text (one segment a line) with the
// BERT uncased pipeline (BertNormalizer lowercase, BertPreTokenizer) and writes
// tokenizer.json as BertWordPieceTokenizer(lowercase=True) saves it: [PAD]
// [UNK] [CLS] [SEP] [MASK] as ids 0..4 (special added tokens, not normalized),
// the learned vocabulary after them, TemplateProcessing "[CLS] $A [SEP]" (pairs
// "[CLS] $A [SEP] $B:1 [SEP]:1"), the WordPiece decoder.
// The Node binding trains with the model's default WordPieceTrainer (no
// options: vocab_size 30000, min_frequency 0); the trainer adds the alphabet
// first and then one merge at a time, best count first, and stops when the
// vocabulary is full, so its first n entries are what vocab_size = n gives: the
// vocabulary kept is the first vocabSize - 5 learned entries, in id order.
//
// encode: the ids of every text (a JSON array of strings) with [CLS] / [SEP],
// written as little-endian uint32 count n, n uint32 lengths, then the uint16 ids.
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require(path.join(__dirname, '..', 'node_modules', 'tokenizers'));

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

function bertPipeline(tokenizer) {
  // strip_accents left unset (null in tokenizer.json): BertNormalizer then strips them because lowercase is on
  tokenizer.setNormalizer(tk.bertNormalizer({ cleanText: true, handleChineseChars: true, lowercase: true }));
  tokenizer.setPreTokenizer(tk.bertPreTokenizer());
}

function build(trainFile, vocabSize, out) {
  const trainer = new tk.Tokenizer(tk.WordPiece.init({}, { unkToken: '[UNK]' }));
  bertPipeline(trainer);
  trainer.train([trainFile]);
  const learned = Object.entries(trainer.getVocab(false)).sort((a, b) => a[1] - b[1]).map(([t]) => t);
  if (learned.length < vocabSize - SPECIAL.length) throw new Error(`the trainer learned only ${learned.length} tokens`);
  const vocab = {};
  for (const t of [...SPECIAL, ...learned.slice(0, vocabSize - SPECIAL.length)]) if (!(t in vocab)) vocab[t] = Object.keys(vocab).length;
  const tokenizer = new tk.Tokenizer(tk.WordPiece.init(vocab, { unkToken: '[UNK]', continuingSubwordPrefix: '##', maxInputCharsPerWord: 100 }));
  bertPipeline(tokenizer);
  tokenizer.setPostProcessor(tk.templateProcessing('[CLS] $A [SEP]', '[CLS] $A [SEP] $B:1 [SEP]:1', [['[CLS]', 2], ['[SEP]', 3]]));
  tokenizer.setDecoder(tk.wordPieceDecoder('##', true));
  tokenizer.addSpecialTokens(SPECIAL);
  tokenizer.save(out, true);
  const saved = tk.Tokenizer.fromFile(out);
  if (saved.getVocabSize(true) !== vocabSize) throw new Error(`saved vocabulary has ${saved.getVocabSize(true)} tokens, not ${vocabSize}`);
  SPECIAL.forEach((t, i) => { if (saved.tokenToId(t) !== i) throw new Error(`${t} is not id ${i}`); });
  console.log(JSON.stringify({ learned: learned.length, kept: vocabSize, tokenizersVersion: require(path.join(__dirname, '..', 'node_modules', 'tokenizers', 'package.json')).version }));
}

async function encode(tokenizerFile, textsFile, out) {
  const tokenizer = tk.Tokenizer.fromFile(tokenizerFile);
  const texts = JSON.parse(fs.readFileSync(textsFile, 'utf8'));
  const lengths = new Uint32Array(texts.length), chunks = [];
  let total = 0;
  for (let s = 0; s < texts.length; s += 4096) {
    const batch = await tokenizer.encodeBatch(texts.slice(s, s + 4096));
    batch.forEach((e, i) => {
      const ids = e.getIds();
      lengths[s + i] = ids.length;
      chunks.push(Uint16Array.from(ids));
      total += ids.length;
    });
  }
  const ids = new Uint16Array(total);
  let at = 0;
  for (const c of chunks) { ids.set(c, at); at += c.length; }
  const head = new Uint32Array([texts.length]);
  fs.writeFileSync(out, Buffer.concat([Buffer.from(head.buffer), Buffer.from(lengths.buffer), Buffer.from(ids.buffer)]));
  console.log(JSON.stringify({ texts: texts.length, tokens: total, unk: ids.filter((i) => i === 1).length }));
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'build') build(args[0], Number(args[1]), args[2]);
else if (cmd === 'encode') encode(...args).catch((e) => { console.error(e); process.exit(1); });
else { console.error('usage: wordpiece.cjs build <train.txt> <vocabSize> <tokenizer.json> | encode <tokenizer.json> <texts.json> <ids.bin>'); process.exit(2); }
