// probe-loss.mjs — the reference the Train tab's causal test is checked against: the probe's
// mean −log softmax over the targets r_2..r_R of each of its two copies, from a model's logits
// [T, vocab] (the CLI's), in double. The page computes none of it: the train lab does, in C.
export function probeHalves(logits, probe, vocab) {
  const T = probe.length, R = T / 2, out = [];
  for (let c = 0; c < 2; c++) {
    let sum = 0;
    for (let i = c * R; i < c * R + R - 1; i++) {
      const z = logits.subarray(i * vocab, (i + 1) * vocab);
      let mx = -Infinity, e = 0;
      for (const v of z) mx = Math.max(mx, v);
      for (const v of z) e += Math.exp(v - mx);
      sum += -(z[probe[i + 1]] - mx - Math.log(e));
    }
    out.push(sum / (R - 1));
  }
  return out;
}
