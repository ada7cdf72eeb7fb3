// kv.js — chart 4: KV-cache bytes after each step for this configuration, with the MHA and
// MQA costs beside it; and attention FLOPs per step with the cache against recomputing, the
// full rectangle of scores counted (al_attn_flops_full: what PyTorch's eager layer multiplies,
// the masked scores too). The rows are the core's (al_kv_growth through core.kvGrowth), one per
// cache length.

  // d: {rows: [{len, bytes, bytes_mha, bytes_mqa}] (al_kv_growth_row), t}
  function kvBytesConfig(d) {
    return {
      type: 'line',
      data: {
        labels: d.rows.map((r) => r.len),
        datasets: [
          { label: d.t.thisConfig, data: d.rows.map((r) => r.bytes), borderColor: '#21908c', backgroundColor: '#21908c', stepped: false },
          { label: d.t.mha, data: d.rows.map((r) => r.bytes_mha), borderColor: '#440154', backgroundColor: '#440154', borderDash: [6, 3] },
          { label: d.t.mqa, data: d.rows.map((r) => r.bytes_mqa), borderColor: '#e6b400', backgroundColor: '#e6b400', borderDash: [2, 2] },
        ],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        // Markers only while there are few enough steps to tell apart (and to draw quickly).
        elements: { point: { radius: d.rows.length > 64 ? 0 : 3 } },
        plugins: { title: { display: true, text: d.t.kvTitle } },
        scales: { x: { title: { display: true, text: d.t.cacheLen } }, y: { beginAtZero: true, title: { display: true, text: d.t.bytes } } },
      },
    };
  }

  // d: {rows: [{len, flops_cached, flops_uncached}] (al_kv_growth_row), t}
  function kvFlopsConfig(d) {
    return {
      type: 'bar',
      data: {
        labels: d.rows.map((r) => r.len),
        datasets: [
          { label: d.t.withCache, data: d.rows.map((r) => r.flops_cached), backgroundColor: '#21908c' },
          { label: d.t.withoutCache, data: d.rows.map((r) => r.flops_uncached), backgroundColor: '#440154' },
        ],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { title: { display: true, text: d.t.flopsTitle }, subtitle: { display: true, text: d.t.flopsCount } },
        scales: { x: { title: { display: true, text: d.t.cacheLen } }, y: { type: 'logarithmic', title: { display: true, text: 'FLOPs' } } },
      },
    };
  }

export { kvBytesConfig, kvFlopsConfig };
