// tok-texts.mjs — the texts the tokenizer tests encode with attnlab and with the reference
// (@huggingface/tokenizers): a hand-written list (Chinese, English, mixed, emoji, white space runs,
// digits, punctuation, the chat markers, other scripts, controls, the empty text) and random texts
// from a fixed-seed generator mixing pools of those. `added` is the tokenizer's added tokens
// (their contents), which both lists include. And storyText100KB(): a story's line, Chinese and
// an emoji repeated past 100 KB, which `attnlab tokenize` reads from standard input in its test
// and in the bench.

export const handTexts = (added) => [
  '', 'a', 'Hello world', 'Hello, world!', 'The quick brown fox jumps over the lazy dog.',
  "I'm sure they'll say we've done what you'd call 'it's fine'. DON'T SHOUT'S",
  '你好', '你好，世界！', '人工智能是计算机科学的一个分支。', '春眠不觉晓，处处闻啼鸟。', '龘靐齉爩 生僻字 嫑 𠀀𠀁 𪚥',
  'MiniMind 是一个小模型，只有 26M 参数。', 'Python代码：print("你好")', '中文English混合mixed文本text',
  '😀', '😀🎉👍🏽', '👨‍👩‍👧‍👦 family', '🇨🇳🇺🇸 flags', '❤️ ✨ ⭐ 🤖', 'emoji😀in中文😀text',
  ' ', '  ', '   ', '\t', '\t\t', '\n', '\n\n', '\n\n\n\n', '\r\n', ' \n ', 'a  b', 'a   b', 'a\t\tb',
  'a\n\nb', 'trailing   ', '   leading', ' \t\n mixed \t\n ', 'x \n', 'line1\nline2\r\nline3',
  '0', '42', '2024年6月7日', '3.14159', '1,000,000', '１２３４５', '٣٤٥', '²³', 'Ⅻ', '½ ¾',
  '.', '...', '!?', '，。！？；：', '“引号”‘单引号’', '（括号）【方括号】《书名号》', '—— …… ·',
  '<>', '<|', '|>', '#!/bin/bash', 'a@b.com', '$100 & 50%', 'C++ / C# \\ path', '{"json": [1, 2]}',
  '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<think>', '</think>',
  '<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
  '<|im_start|>system\nYou are helpful.<|im_end|>\n', '<|im_start|><|im_end|><|im_start|>',
  '<|im_start', 'im_end|>', '<think', '< think>', '<|IM_START|>', 'x<|im_start|>y', '<tool_call>{}</tool_call>',
  ...added,
  'café naïve résumé', 'e\u0301 combining', 'ß İ ﬁ', 'こんにちは、カタカナ', '한국어 텍스트', 'Привет, мир',
  'Ελληνικά', 'مرحبا بالعالم', 'नमस्ते दुनिया', 'ภาษาไทย', '𝐀𝐁𝐂 𝒜 math', '\u00a0nbsp\u00a0', 'ideo\u3000space',
  '\ufeffBOM', 'nel\u0085x', 'ls\u2028ps\u2029', 'zw\u200bj\u200d', '\u0000nul', '\u0001\u001b[31m', 'del\u007f',
  'a'.repeat(300), '中'.repeat(200), ' '.repeat(50), '\n'.repeat(40), '😀'.repeat(30), 'ab '.repeat(100),
];

const poolsOf = (added) => [
  ['hello', 'world', 'The', 'quick', 'fox', 'GPT', 'token', 'a', 'Z', 'MiniMind', 'x', 'OK', 'naïve', 'über'],
  ['你好', '世界', '中文', '分词器', '的', '是', '我们', '人工智能', '模型', '春眠不觉晓', '𠀀', '龘', '嫑', '。'],
  ['こんにちは', 'カタカナ', '한국어', 'Привет', 'Ελληνικά', 'مرحبا', 'नमस्ते', 'ภาษา', 'é', 'e\u0301', 'ß', 'İ', '𝐀', 'ǅ'],
  ['😀', '🎉', '👍🏽', '👨‍👩‍👧', '🇨🇳', '❤️', '🤖', '⭐', '✨', '🙏'],
  [' ', '  ', '   ', '\t', '\t\t', '\n', '\n\n', '\n\n\n', '\r\n', ' \n', '\u00a0', '\u3000', '\u2028', '\u0085', '\ufeff', '\u200b', '\v', '\f'],
  ['0', '7', '42', '2024', '3.14', '1,000', '１２３', '٣', '²', 'Ⅻ', '½', '0x1F', '99%'],
  ['.', ',', '!', '?', '...', '，', '。', '！', '？', '“', '”', '、', '（', '）', '-', '—', "'", "'s", "'ll", "'re",
    "'ve", "'m", "'d", "'t", "'S", '"', '()', '[]', '{', '}', '<', '>', '|', '#', '@', '$', '&', '*', '\\', '/', '~', '`', '_', '=', '+', ';', ':'],
  [...added, '<|im_start', 'im_end|>', '<think', '</think', '<|', '|>', '<|endoftext|', '<tool'],
  ['\u0000', '\u0001', '\u001b', '\u007f', '\u0080', '\u00ad', '\ufffd', '\ue000'],
];

// xorshift32: the same texts on every run.
export function generator(seed) {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

// count texts of 1 to 12 pieces (every tenth up to 60), each drawn from a random pool, a space
// before a quarter of them.
export function randomTexts(count, seed, added) {
  const POOLS = poolsOf(added);
  const rand = generator(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const texts = [];
  for (let i = 0; i < count; i++) {
    const pieces = 1 + Math.floor(rand() * (i % 10 === 0 ? 60 : 12));
    let t = '';
    for (let k = 0; k < pieces; k++) t += (rand() < 0.25 ? ' ' : '') + pick(pick(POOLS));
    texts.push(t);
  }
  return texts;
}

export const storyText100KB = () => 'Once upon a time, 中文 😀 there was a little girl named Lily. '.repeat(1600);
