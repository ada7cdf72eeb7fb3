// train-corpus.mjs — corpora for the tokenizer trainer's tests (tests/train-tokenizer.test.mjs)
// and for its reference fixture (tests/fixtures/gen_bpe_train.mjs).
//   - syntheticCorpus(): text from a fixed-seed generator, the same on every run and machine:
//     English and Chinese words drawn with skewed frequencies (so counts tie and differ as in real
//     text), numbers, punctuation, emoji, made-up words, lines of 1 to 14 words. Its lines never
//     start or end with white space, no more than one line is ever empty in a row, and the text
//     ends without a newline: then the `tokenizers` library, which trains on a file line by line,
//     splits it into exactly the words attnlab's trainer (which takes the file as one text) does.
//   - repoCorpus(): a few hundred KB of the repository's own English and Chinese text (README.md,
//     the tutorial's scripts, the page's Chinese strings), for tests that need real text but no
//     fixed result.
//   - megabyteCorpus(): at least 1 MB of the two mixed, which `attnlab train-tokenizer` trains
//     to 6400 tokens in its test and in the bench.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { generator } from './tok-texts.mjs';

const ENGLISH = ('the of and to in is that for it as with was on be by this are at from or an have not which but ' +
  'attention token model layer head query key value softmax vector matrix cache position rotary embedding ' +
  'train training merge pair count word byte vocabulary learning small language minimind python tensor ' +
  'forward backward gradient loss weight bias norm scale hidden state sequence batch').split(' ');
const CHINESE = ('的 是 在 我们 一个 模型 注意力 机制 训练 词表 分词器 合并 字节 向量 矩阵 位置 编码 旋转 语言 ' +
  '人工智能 计算机 科学 数据 参数 推理 生成 学习 中文 文本 句子 春眠不觉晓 处处闻啼鸟').split(' ');
const MARKS = ['.', ',', '!', '?', ':', ';', '(', ')', '"', "'s", "'ll", '，', '。', '！', '？', '、', '“', '”',
  '（', '）', '—', '...', '->', '==', '+', '*', '#', '%', '😀', '🎉', '👍', '🤖'];

// Zipf-like: the first words of a list far more often than the last.
const skewed = (rand, list) => list[Math.floor(list.length * rand() ** 2.5)];

export function syntheticCorpus(seed = 20240611, bytes = 80000) {
  const rand = generator(seed);
  const word = () => {
    const r = rand();
    if (r < 0.45) return skewed(rand, ENGLISH) + (rand() < 0.1 ? 's' : '');
    if (r < 0.75) return skewed(rand, CHINESE);
    if (r < 0.85) return skewed(rand, MARKS);
    if (r < 0.92) return String(Math.floor(rand() ** 3 * 3000));
    // a made-up word: letters that seldom repeat, for pairs seen once or twice
    return Array.from({ length: 2 + Math.floor(rand() * 6) }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join('');
  };
  const lines = [];
  let size = 0;
  while (size < bytes) {
    if (lines.length && lines[lines.length - 1] !== '' && rand() < 0.08) {
      lines.push('');
      continue;
    }
    const n = 1 + Math.floor(rand() * 14);
    let line = '';
    for (let k = 0; k < n; k++) {
      const w = word();
      // Chinese runs on without spaces; a run of spaces now and then, never at the ends.
      line += k === 0 || /^[\u4e00-\u9fff]/u.test(w) ? w : (rand() < 0.05 ? '   ' : ' ') + w;
    }
    lines.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  while (lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

// The quoted strings of a JavaScript source that hold Chinese characters, one per line.
const chineseStrings = (source) =>
  [...source.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`([^`]*)`/g)]
    .map((m) => m[1] ?? m[2] ?? m[3]).filter((s) => /[\u4e00-\u9fff]/u.test(s));

export function repoCorpus(root) {
  const parts = [readFileSync(join(root, 'README.md'), 'utf8')];
  const reference = join(root, 'tests', 'reference');
  for (const f of readdirSync(reference).filter((f) => f.endsWith('.py')).sort()) parts.push(readFileSync(join(reference, f), 'utf8'));
  for (const f of ['web/ui/i18n.js', 'web/ui/strings-model.js']) {
    try {
      parts.push(chineseStrings(readFileSync(join(root, f), 'utf8')).join('\n'));
    } catch {
      // a page file that moved: the rest is corpus enough
    }
  }
  return parts.join('\n');
}

export function megabyteCorpus(root) {
  let text = '';
  for (let seed = 1; Buffer.byteLength(text) < 1 << 20; seed++) text += `${syntheticCorpus(seed, 100000)}\n${repoCorpus(root).slice(0, 20000)}\n`;
  return text;
}
