import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * Bundles gateway/main.ts and operator/main.ts at once in a process of its own (jest's process.env
 * is not the one its children get), after marking its environment, and prints the bundles and the
 * processes that still carry the marker once they are gone or 15 s have passed.
 */
const SCRIPT = `
import fs from 'node:fs';
const { bundleEntry } = await import(${JSON.stringify(path.join(ROOT, 'local', 'bundle.ts'))});
const { processesWithEnv } = await import(${JSON.stringify(path.join(ROOT, 'local', 'process.ts'))});
// Marked only now: what was started before (tsx's own esbuild) does not carry it.
process.env.SETTEE_BUNDLE_TEST = String(process.pid);
const bundles = await Promise.all([bundleEntry('gateway/main.ts'), bundleEntry('operator/main.ts')]);
const again = await bundleEntry('gateway/main.ts');
let marked = processesWithEnv('SETTEE_BUNDLE_TEST=' + process.pid);
for (const deadline = Date.now() + 15000; marked.length > 0 && Date.now() < deadline; ) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  marked = processesWithEnv('SETTEE_BUNDLE_TEST=' + process.pid);
}
console.log(JSON.stringify({ bundles, again, marked }));
`;

describe('bundleEntry', () => {
  it('when two entry points are bundled at once, then each is one file named by its entry and content, the same content gives the same file, and no esbuild process of the builds outlives them', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', SCRIPT],
      { cwd: ROOT, timeout: 120_000 },
    );
    const { bundles, again, marked } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      bundles: [string, string];
      again: string;
      marked: number[];
    };
    expect(path.basename(bundles[0])).toMatch(/^gateway-main\.[0-9a-f]{16}\.mjs$/);
    expect(path.basename(bundles[1])).toMatch(/^operator-main\.[0-9a-f]{16}\.mjs$/);
    expect(again).toBe(bundles[0]);
    // esbuild's service is stopped once no build is left: a make run or a chaos soak keeps no child of it.
    expect(marked).toEqual([]);
  }, 150_000);
});
