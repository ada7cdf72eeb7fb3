// cut-tokenizer.mjs — MiniMind's tokenizer.json cut to its first `vocab` ids, for the fixture
// models whose vocabulary is smaller (300, 512) and that have no tokenizer of their own: its 36
// added tokens and 256 byte tokens are ids 0..291, and the merges kept are those whose parts and
// result stay below `vocab`. Returns the file's text.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './run.mjs';

export const MM_TOKENIZER = join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json');

export function cutTokenizer(vocab) {
  const t = JSON.parse(readFileSync(MM_TOKENIZER, 'utf8'));
  const kept = Object.fromEntries(Object.entries(t.model.vocab).filter(([, id]) => id < vocab));
  if (Object.keys(kept).length !== vocab) throw new Error(`MiniMind's tokenizer has no ids 0..${vocab - 1}`);
  const merges = t.model.merges.filter((m) => {
    const [a, b] = Array.isArray(m) ? m : m.split(' ');
    return a in kept && b in kept && a + b in kept;
  });
  return JSON.stringify({ ...t, added_tokens: t.added_tokens.filter((a) => a.id < vocab), model: { ...t.model, vocab: kept, merges } });
}
