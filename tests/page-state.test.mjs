// page-state.test.mjs — the page's state from a URL hash (web/ui/state.js) and the words for its
// corrections (web/ui/i18n.js): a value clamped to a field's range records which limit it met,
// and the message says "lower" for the minimum and "upper" for the maximum, in both languages;
// the rules the core decides (coreRelations) through the WebAssembly core.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOT } from './lib/run.mjs';
import { loadCore } from './lib/wasm.mjs';

const S = await import('../web/ui/state.js');
const { STRINGS, describeProblems } = await import('../web/ui/i18n.js');

test('a value below a field\'s minimum is clamped and recorded against the lower limit', () => {
  const { state, problems } = S.parseHash('#seed=-5&hd=0');
  assert.equal(state.seed, 0);
  assert.equal(state.hd, 2);
  assert.deepEqual(problems, [
    { key: 'seed', value: '-5', used: 0, limit: 0, bound: 'lower' },
    { key: 'hd', value: '0', used: 2, limit: 2, bound: 'lower' },
  ]);
});

test('a value above a field\'s maximum is recorded against the upper limit', () => {
  const { problems } = S.parseHash('#prompt=9999');
  assert.deepEqual(problems, [{ key: 'prompt', value: '9999', used: 512, limit: 512, bound: 'upper' }]);
  // The tokens of prompt and steps together (a rule across fields, checked on its own).
  const tokens = [];
  S.clampRelations({ ...S.defaults(), prompt: 700, steps: 400 }, tokens);
  assert.deepEqual(tokens, [{ key: 'steps', value: 400, used: S.MAX_TOKENS - 700, limit: S.MAX_TOKENS, bound: 'upper' }]);
});

test('the message says lower limit for the minimum and upper limit for the maximum, in both languages', () => {
  const { problems } = S.parseHash('#seed=-5&prompt=9999&hidden=abc');
  const zh = describeProblems(STRINGS.zh, problems).split(' · ');
  assert.equal(zh[0], '链接中的随机种子“-5”低于本页的下限 0，已改用 0');
  assert.match(zh[1], /^链接中的提示长度“9999”超出本页的上限 512/);
  assert.equal(zh[2], '链接中的隐藏维度“abc”无效，已改用 16');
  const en = describeProblems(STRINGS.en, problems).split(' · ');
  assert.equal(en[0], 'The link\'s seed "-5" is below this page\'s lower limit of 0; using 0');
  assert.match(en[1], /^The link's prompt length "9999" is beyond this page's upper limit of 512/);
  assert.equal(en[2], 'The link\'s hidden size "abc" is invalid; using 16');
});

// A setting is named as the page names it, never by its key in the link (topk, tlr).
test('every setting a link can carry has a plain name in both languages', () => {
  for (const lang of ['en', 'zh']) {
    assert.deepEqual(Object.keys(STRINGS[lang].fields).sort(), Object.keys(S.FIELDS).sort(), lang);
    const { problems } = S.parseHash('#topk=-5&tlr=9');
    const said = describeProblems(STRINGS[lang], problems);
    assert.doesNotMatch(said, /topk|tlr|Parameter|参数/, said);
  }
  assert.match(describeProblems(STRINGS.en, S.parseHash('#topk=-5').problems), /^The link's top-k "-5" is below this page's lower limit of 0; using 0$/);
});

test('values in range, and junk, carry no limit', () => {
  assert.deepEqual(S.parseHash('#seed=5&prompt=7').problems, []);
  for (const p of S.parseHash('#seed=x&hd=3&lang=fr').problems) assert.equal(p.limit, undefined, JSON.stringify(p));
});

test('ignored parts, a bad language and invisible characters are worded as what happened', () => {
  const { problems } = S.parseHash(`#zzz=1&lang=xx&seed=a\u202Eb\u200B&prompt=%E0%A4%A&${'x'.repeat(10)}=\u0007`);
  const en = describeProblems(STRINGS.en, problems).split(' · ');
  assert.equal(en[0], 'Unknown parameter zzz="1" ignored');
  assert.equal(en[1], 'Language lang="xx" is invalid (zh or en); the page is in English');
  assert.equal(en[2], 'The link\'s seed "a\\u{202E}b\\u{200B}" is invalid; using 42');
  assert.equal(en[3], 'The link\'s "prompt=%E0%A4%A" cannot be decoded; ignored');
  assert.equal(en[4], 'Unknown parameter xxxxxxxxxx="\\u{0007}" ignored');
  const zh = describeProblems(STRINGS.zh, problems).split(' · ');
  assert.equal(zh[0], '未知参数 zzz=“1”，已忽略');
  assert.equal(zh[1], '语言 lang=“xx” 无效（可选 zh 或 en），页面使用中文');
  for (const line of [...en, ...zh]) assert.doesNotMatch(line, /using ignored|已改用 ignored|[\u202a-\u202e\u200b\u0007]/);
  const long = describeProblems(STRINGS.en, S.parseHash(`#${'a=1&'.repeat(S.MAX_HASH / 2)}`).problems);
  assert.match(long, /^The link's settings are too long \(a=1&a=1&.*\); using the defaults$/);
});

// Both lists of heads a link holds, the model view's (off) and the Train tab's (toff), are read
// by one rule, each within its own bound: the model view's layer and head fields (0..255; the
// model's own range is the core's to check), the Train tab's largest shape (8 layers, 16 heads).
test('a list of heads keeps each pair within its bound, named once and in order; the rest is dropped and reported', () => {
  for (const [key, inside, outside, shape] of [['off', '255.255', '256.0', ''], ['toff', '7.15', '8.0', 'tlayers=8&theads=16&']]) {
    const clean = S.parseHash(`#${shape}${key}=1.0,0.3,${inside}`);
    assert.equal(clean.state[key], `0.3,1.0,${inside}`, key);
    assert.deepEqual(clean.problems, [], key);
    const messy = S.parseHash(`#${shape}${key}=1.0,0.3,1.0,x,${outside},0.0`);
    assert.equal(messy.state[key], '0.0,0.3,1.0', key);
    assert.deepEqual(messy.problems, [{ key, value: `1.0,0.3,1.0,x,${outside},0.0`.slice(0, 24), used: '0.0,0.3,1.0' }], key);
    assert.equal(S.parseHash(`#${key}=`).state[key], '', key);
    assert.ok(!S.toHash(S.defaults()).includes(`${key}=`), key);
  }
  // the Train tab's list is held to the shape the link sets, within that bound
  const narrowed = S.parseHash('#tlayers=2&theads=4&toff=1.3,2.0,0.4');
  assert.equal(narrowed.state.toff, '1.3');
  assert.deepEqual(narrowed.problems, [{ key: 'toff', value: '0.4,1.3,2.0', used: '1.3' }]);
});

// A hash parsed, then held to the rules the core decides, as the layer view builds its session.
async function parseWithCore(hash) {
  const core = await loadCore();
  const parsed = S.parseHash(hash);
  S.coreRelations(parsed.state, parsed.problems, core);
  return parsed;
}

test('two fields bounded together: heads × head_dim at most MAX_HEAD_WIDTH', async () => {
  const { state, problems } = await parseWithCore('#heads=16&hd=128');
  assert.equal(state.hd, S.MAX_HEAD_WIDTH / 16);
  assert.deepEqual(problems, [{ key: 'hd', value: 128, used: 64, limit: 64, bound: 'upper' }]);
  assert.deepEqual((await parseWithCore('#heads=8&hd=128')).problems, []);
});

test('the core\'s rules: the pair left in a narrowed head exists, KV heads snap to the nearest GQA allows', async () => {
  const narrowed = await parseWithCore('#heads=16&hd=128&pair=40');
  assert.equal(narrowed.state.pair, 0);
  assert.deepEqual(narrowed.problems.map((p) => p.key), ['hd', 'pair']);
  const snapped = await parseWithCore('#heads=6&kv=4');
  assert.equal(snapped.state.kv, 3);
  assert.deepEqual(snapped.problems, [{ key: 'kv', value: 4, used: 3 }]);
});
