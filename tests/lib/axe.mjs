// axe.mjs — the axe-core accessibility audit of a page open in Playwright. axe.min.js is run
// through the DevTools protocol (page.evaluate), which the page's Content-Security-Policy does
// not govern, so the page is audited as it ships, with its CSP in force (a <script> tag would
// be refused by script-src).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './run.mjs';

let source = null;

// axe.run(document) with axe's default rules (WCAG A/AA and best practices); the violations as
// [{id, impact, help, count, targets}], targets the CSS selectors of the first three elements.
export async function axeViolations(page) {
  source ??= readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(source);
  return page.evaluate(async () => {
    const result = await window.axe.run(document);
    return result.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
      targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
    }));
  });
}

// One line per violation, for an assertion message.
export function describeViolations(violations) {
  return violations.map((v) => `${v.id} (${v.impact}, ${v.count} element${v.count === 1 ? '' : 's'}): ${v.help}; ` +
    `first: ${v.targets.join(', ')}`).join('\n');
}
