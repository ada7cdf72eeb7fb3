// fake-canvas.mjs — a canvas whose 2-D context records what is drawn, for the model view's
// canvas drawings under Node (tests/model-charts.test.mjs), and the head lines' largest case,
// which that test checks and the bench times.

// A canvas whose 2-D context records what is drawn.
export function fakeCanvas(width, height) {
  const calls = [];
  const ctx = new Proxy({
    calls,
    measureText: (s) => ({ width: String(s).length * 6 }),
  }, {
    get(target, name) {
      if (name in target) return target[name];
      return (...args) => { calls.push([name, ...args]); };
    },
    set(target, name, value) { calls.push([`${String(name)}=`, value]); return true; },
  });
  return { clientWidth: width, clientHeight: height, width: 0, height: 0, attrs: {}, setAttribute(k, v) { this.attrs[k] = v; }, getContext: () => ctx, calls };
}

// The head lines over 512 tokens (the model view's longest context), every query on the first
// token, the query 100 chosen, in Chinese: a fresh canvas and the drawing's data.
export function manyTokenLines(n = 512) {
  const weights = new Float32Array(n * n);
  for (let q = 0; q < n; q++) weights[q * n] = 1;
  return { n, canvas: fakeCanvas(600, 600), data: { tokens: Array.from({ length: n }, (_, i) => `t${i}`), weights, query: 100, lang: 'zh' } };
}
