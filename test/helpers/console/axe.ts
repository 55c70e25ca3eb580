import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core in the page and returns its serious and critical violations. The script goes in
 * through the DevTools protocol, not a <script> tag, so the console's CSP stays as strict as users get it.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  // A string, not a function: the tests' TypeScript has no DOM types.
  const violations = await page.evaluate<AxeViolation[]>(`axe.run(document).then((result) =>
    result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
    })),
  )`);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
