// kv.js — chart 4: KV-cache bytes after each step for this configuration, with the MHA and
// MQA costs beside it; and attention FLOPs per step with the cache against recomputing.
(function (root) {
  'use strict';

  // d: {lengths: number[], bytes: number[], mha: number[], mqa: number[], t}
  function kvBytesConfig(d) {
    return {
      type: 'line',
      data: {
        labels: d.lengths,
        datasets: [
          { label: d.t.thisConfig, data: d.bytes, borderColor: '#21908c', backgroundColor: '#21908c', stepped: false },
          { label: d.t.mha, data: d.mha, borderColor: '#440154', backgroundColor: '#440154', borderDash: [6, 3] },
          { label: d.t.mqa, data: d.mqa, borderColor: '#e6b400', backgroundColor: '#e6b400', borderDash: [2, 2] },
        ],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { title: { display: true, text: d.t.kvTitle } },
        scales: { x: { title: { display: true, text: d.t.cacheLen } }, y: { beginAtZero: true, title: { display: true, text: d.t.bytes } } },
      },
    };
  }

  // d: {lengths: number[], cached: number[], uncached: number[], t}
  function kvFlopsConfig(d) {
    return {
      type: 'bar',
      data: {
        labels: d.lengths,
        datasets: [
          { label: d.t.withCache, data: d.cached, backgroundColor: '#21908c' },
          { label: d.t.withoutCache, data: d.uncached, backgroundColor: '#440154' },
        ],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { title: { display: true, text: d.t.flopsTitle } },
        scales: { x: { title: { display: true, text: d.t.cacheLen } }, y: { type: 'logarithmic', title: { display: true, text: 'FLOPs' } } },
      },
    };
  }

  const api = { kvBytesConfig, kvFlopsConfig };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.AttnLabKvChart = api;
})(typeof globalThis !== 'undefined' ? globalThis : this);
