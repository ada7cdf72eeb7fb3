// ui/format.js — how the page writes what the core gives it, the same in every view: a token's
// text with its invisible characters shown, byte counts and large counts, and CSV files (RFC
// 4180: a cell with a comma, quote or line break quoted), which every export writes through.

// A token's text with its invisible characters made visible: space ␣, newline ⏎, tab ⇥,
// other control characters as their Unicode control pictures (␀…␟, ␡), no-break space ⍽.
function visibleText(text) {
  return String(text).replace(/[\x00-\x20\x7f\u00a0]/g, (c) => {
    if (c === ' ') return '␣';
    if (c === '\n') return '⏎';
    if (c === '\t') return '⇥';
    if (c === '\x7f') return '␡';
    if (c === '\u00a0') return '⍽';
    return String.fromCharCode(0x2400 + c.charCodeAt(0));
  });
}

// Byte counts: KB = 1024 bytes, MB = 1024 KB, three significant digits.
function formatBytes(v) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let u = 0, x = v;
  while (Math.abs(x) >= 1024 && u < units.length - 1) { x /= 1024; u++; }
  return u === 0 ? `${x} B` : `${Number(x.toPrecision(3))} ${units[u]}`;
}

// A count with SI prefixes (k, M, G, ...), three significant digits.
function formatCount(v) {
  const units = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
  let u = 0, x = v;
  while (Math.abs(x) >= 1000 && u < units.length - 1) { x /= 1000; u++; }
  return `${Number(x.toPrecision(3))}${units[u]}`;
}

// One CSV line (RFC 4180): cells with a comma, quote or line break are quoted.
function csvLine(cells) {
  return cells.map((v) => {
    const s = String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  }).join(',');
}

// A CSV file's text: one line per row, each cell as text.
function csvRows(rows) { return rows.map((r) => csvLine(r.map(String))).join('\n') + '\n'; }

// A matrix [rows, cols] (row-major) as CSV: a corner cell, the column numbers, then each row's
// label (its number unless rowNames are given) and values.
function matrixCsv(values, rows, cols, corner, rowNames = null) {
  const out = [[corner, ...Array.from({ length: cols }, (_, j) => j)]];
  for (let i = 0; i < rows; i++) out.push([rowNames ? rowNames[i] : i, ...Array.from(values.subarray ? values.subarray(i * cols, (i + 1) * cols) : values.slice(i * cols, (i + 1) * cols), String)]);
  return csvRows(out);
}

export { visibleText, formatBytes, formatCount, csvLine, csvRows, matrixCsv };
