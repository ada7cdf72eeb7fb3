// layer/inputs.js — the layer lab's inputs and the state: shown from the state (syncControls)
// and read back through the same validation as the URL hash (readControls, state.js).
import { page } from '../ui/page.js';
import * as State from '../ui/state.js';
import { kvChoices } from './facts.js';
  const $ = page.$;

  // Input id -> state key, for the inputs that hold a number.
  const NUMERIC = { seed: 'seed', prompt: 'prompt', steps: 'steps', hidden: 'hidden', heads: 'heads', hd: 'hd', base: 'base', pair: 'pair' };

  function syncControls() {
    const { state } = page;
    for (const [id, key] of Object.entries(NUMERIC)) $(id).value = String(state[key]);
    const kv = $('kv'), head = $('head');
    if (kv.dataset.heads !== String(state.heads)) { // the options depend on the head count only
      kv.replaceChildren(...kvChoices(state.heads).map((n) => new Option(String(n), String(n))));
      head.replaceChildren(...Array.from({ length: state.heads }, (_, h) => new Option(`h${h}`, String(h))));
      kv.dataset.heads = String(state.heads);
    }
    kv.value = String(state.kv);
    head.value = String(state.head);
    $('pair').max = String(state.hd / 2 - 1);
    $('qk').checked = !!state.qk;
    $('wrap').checked = !!state.wrap;
  }

  // Reads the controls into a hash-like string so the same validation applies to both.
  function readControls() {
    const parts = [];
    for (const [id, key] of Object.entries(NUMERIC)) parts.push(`${key}=${encodeURIComponent($(id).value.trim())}`);
    parts.push(`kv=${$('kv').value}`, `head=${$('head').value}`, `qk=${$('qk').checked ? 1 : 0}`,
      `wrap=${$('wrap').checked ? 1 : 0}`, `lang=${page.state.lang}`, `walk=${page.state.walk}`);
    // the model view's part of the state, as it is
    for (const k of ['tab', 'model', 'text', 'gen', 'temp', 'topk', 'topp', 'rep', 'gseed', 'layer', 'mhead', 'log']) {
      parts.push(`${k}=${encodeURIComponent(page.state[k])}`);
    }
    return State.parseHash(parts.join('&'));
  }

export { NUMERIC, syncControls, readControls };
