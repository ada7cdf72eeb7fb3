// stats.mjs — the bench's summary of repeated timings.

// The middle value (the mean of the two middle values for an even count).
export const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
