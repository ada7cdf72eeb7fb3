// stats.mjs — the bench's summary of repeated timings.

// The middle value (the mean of the two middle values for an even count).
export const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };

// Rounds of a comparison: the two sides run one after the other, A B A B …, so that a change in
// the machine's load or clock during the bench falls on both; at least this many, --quick too.
export const ROUNDS = 5;

// { median, min, max } of the values.
export const spread = (v) => ({ median: median(v), min: Math.min(...v), max: Math.max(...v) });

// A ratio as the bench prints it: the median, and the range over the rounds.
export const showRatio = (s, fmt) => (s && Number.isFinite(s.median) ? `${fmt(s.median)}× (${fmt(s.min)}–${fmt(s.max)})` : '—');

// Targets as the bench lists them ([name, value, ok(value), show(value)]; value undefined: not
// measured) as the rows of a markdown table: target, measured, met.
export const targetTable = (targets) => ['| target | measured | met |', '|---|---:|:---:|',
  ...targets.map(([name, value, ok, show]) => `| ${name} | ${value === undefined ? '—' : show(value)} | ${value === undefined ? '—' : ok(value) ? 'yes' : '**no**'} |`)];
