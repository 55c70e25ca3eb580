import { jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/*
 * The import rules of docs/architecture.md, as `make lint` checks them: dependency-cruiser with the
 * repository's .dependency-cruiser.cjs, run on a small tree of files laid out like the repository.
 */

// Each test runs dependency-cruiser in a process of its own (seconds on a loaded machine), bounded by
// the same 30 s as its execFile rather than the unit project's 10 s.
jest.setTimeout(30_000);

const CONFIG = path.resolve('.dependency-cruiser.cjs');
const DEPCRUISE = path.resolve('node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface LintResult {
  code: number;
  output: string;
}

/** Writes `files` (path -> source) into a fresh folder and runs the import lint there as make lint does. */
async function lintTree(files: Record<string, string>): Promise<LintResult> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-import-rules-'));
  try {
    const tsconfig = { compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } };
    await fs.writeFile(path.join(root, 'tsconfig.json'), JSON.stringify(tsconfig));
    for (const [file, source] of Object.entries(files)) {
      await fs.mkdir(path.join(root, path.dirname(file)), { recursive: true });
      await fs.writeFile(path.join(root, file), source);
    }
    return await new Promise((resolve) => {
      execFile(
        process.execPath,
        [DEPCRUISE, '--config', CONFIG, '.'],
        { cwd: root, timeout: 30_000 },
        (err, stdout, stderr) =>
          resolve({ code: typeof err?.code === 'number' ? err.code : err ? -1 : 0, output: stdout + stderr }),
      );
    });
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
}

const EXPORT = 'export const value = 1;\n';

describe('the import rules (make lint)', () => {
  it('when a component imports another component, then the lint fails and names the rule and both files', async () => {
    const result = await lintTree({
      'operator/config.ts': EXPORT,
      'gateway/queue/handler.ts':
        "import { value } from '../../operator/config.js';\nexport const used = value;\n",
    });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('component-imports-another-component');
    expect(result.output).toContain('gateway/queue/handler.ts → operator/config.ts');
  });

  it('when a shared folder imports a component, then the lint fails', async () => {
    const result = await lintTree({
      'gateway/app.ts': EXPORT,
      'kube/clients.ts': "import { value } from '../gateway/app.js';\nexport const used = value;\n",
    });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('shared-folder-imports-a-component');
  });

  it('when components import the shared folders and their own files, and tests import anything, then the lint passes', async () => {
    const result = await lintTree({
      'api/contract.ts': EXPORT,
      'kube/clients.ts': "import { value } from '../api/contract.js';\nexport const used = value;\n",
      'gateway/proxy/forward.ts': EXPORT,
      'gateway/app.ts':
        "import { value } from '../api/contract.js';\nimport { value as v } from './proxy/forward.js';\nexport const used = value + v;\n",
      'local/platform.ts': "import { used } from '../kube/clients.js';\nexport const all = used;\n",
      'test/e2e/all.test.ts':
        "import { used } from '../../gateway/app.js';\nimport { all } from '../../local/platform.js';\nexport const t = used + all;\n",
    });
    expect(result).toEqual({ code: 0, output: expect.stringContaining('no dependency violations') });
  });
});
