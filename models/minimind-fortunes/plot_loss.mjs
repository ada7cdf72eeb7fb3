// plot_loss.mjs — the loss curve of a training run (its loss.csv) drawn with the page's Chart.js
// in headless Chromium, as a PNG: the training loss per step (and its moving mean over 50 steps)
// and the held-out loss at each checkpoint, with a horizontal line for a baseline if given.
//   node models/minimind-fortunes/plot_loss.mjs LOSS.csv OUT.png [--baseline LOSS --baseline-label TEXT]
import { readFileSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../../tests/lib/browser.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [csvPath, outPath, ...rest] = process.argv.slice(2);
if (!csvPath || !outPath) {
  console.error('usage: node plot_loss.mjs LOSS.csv OUT.png [--baseline LOSS --baseline-label TEXT]');
  process.exit(2);
}
const opt = (name) => { const i = rest.indexOf(name); return i >= 0 ? rest[i + 1] : undefined; };
const rows = readFileSync(csvPath, 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
const train = rows.map((r) => ({ x: Number(r[0]), y: Number(r[1]) }));
const held = rows.filter((r) => r[5] !== '' && r[5] !== undefined).map((r) => ({ x: Number(r[0]), y: Number(r[5]) }));
// the moving mean is drawing, not a result: a smoother line through the noisy per-step losses
const mean = train.map((p, i) => {
  const w = train.slice(Math.max(0, i - 49), i + 1);
  return { x: p.x, y: w.reduce((a, q) => a + q.y, 0) / w.length };
});
const baseline = opt('--baseline') === undefined ? null : Number(opt('--baseline'));
const chartJs = readFileSync(join(ROOT, 'web', 'vendor', 'chart.umd.js'), 'utf8');

const browser = await launch();
try {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 900, height: 480 });
  await page.setContent('<canvas id="c" width="900" height="480"></canvas>');
  await page.addScriptTag({ content: chartJs });
  const png = await page.evaluate(async ({ train, mean, held, baseline, label }) => {
    const datasets = [
      { label: 'training loss (per step)', data: train, borderColor: 'rgba(0,114,178,0.25)', pointRadius: 0, borderWidth: 1 },
      { label: 'training loss (mean of 50 steps)', data: mean, borderColor: '#0072B2', pointRadius: 0, borderWidth: 2 },
      { label: 'held-out loss', data: held, borderColor: '#D55E00', backgroundColor: '#D55E00', pointRadius: 3, borderWidth: 2 },
    ];
    if (baseline !== null) {
      const xs = train.map((p) => p.x);
      datasets.push({ label, data: [{ x: xs[0], y: baseline }, { x: xs[xs.length - 1], y: baseline }], borderColor: '#009E73', borderDash: [6, 4], pointRadius: 0, borderWidth: 2 });
    }
    const chart = new window.Chart(document.getElementById('c'), {
      type: 'line', data: { datasets },
      options: { animation: false, responsive: false, parsing: true, plugins: { legend: { position: 'top' } },
        scales: { x: { type: 'linear', title: { display: true, text: 'optimizer step' } }, y: { title: { display: true, text: 'cross-entropy (nats)' } } } },
    });
    chart.draw();
    return chart.toBase64Image();
  }, { train, mean, held, baseline, label: opt('--baseline-label') || 'baseline' });
  writeFileSync(outPath, Buffer.from(png.split(',')[1], 'base64'));
  console.log(`wrote ${outPath}`);
} finally {
  await browser.close();
}
