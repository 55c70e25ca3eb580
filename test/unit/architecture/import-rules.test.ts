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
// the same 90 s as its execFile rather than the unit project's 10 s (one took 31 s at load 24).
jest.setTimeout(90_000);

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
        { cwd: root, timeout: 90_000 },
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
  it('when files import each other in a circle, then the lint fails and names the circle', async () => {
    const result = await lintTree({
      'gateway/http/errors.ts':
        "import type { Ref } from '../proxy/target.js';\nexport const refOf = (r: Ref) => r;\n",
      'gateway/proxy/target.ts':
        "import { refOf } from '../http/errors.js';\nexport interface Ref { n: string }\nexport const used = refOf;\n",
    });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('no-circular');
    expect(result.output).toContain('gateway/http/errors.ts');
  });

  it('when a lower layer of the queue imports a higher one, then the lint fails and names both files', async () => {
    const result = await lintTree({
      'gateway/queue/http/json-response.ts': EXPORT,
      'gateway/queue/core/errors.ts':
        "import { value } from '../http/json-response.js';\nexport const used = value;\n",
    });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('queue-layer-imports-a-higher-layer');
    expect(result.output).toContain('gateway/queue/core/errors.ts → gateway/queue/http/json-response.ts');
  });

  it('when a queue layer imports the composition root, then the lint fails', async () => {
    const result = await lintTree({
      'gateway/queue/queue-service.ts': EXPORT,
      'gateway/queue/workers/delivery-worker.ts':
        "import { value } from '../queue-service.js';\nexport const used = value;\n",
    });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('queue-layer-imports-a-higher-layer');
  });

  it('when the proxy imports the queue, or the queue the proxy, then the lint fails', async () => {
    const result = await lintTree({
      'gateway/queue/http/read-body.ts': EXPORT,
      'gateway/proxy/waker.ts': EXPORT,
      'gateway/proxy/instance-handler.ts':
        "import { value } from '../queue/http/read-body.js';\nexport const used = value;\n",
      'gateway/queue/workers/signer.ts':
        "import { value } from '../../proxy/waker.js';\nexport const used = value;\n",
    });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('gateway/proxy/instance-handler.ts → gateway/queue/http/read-body.ts');
    expect(result.output).toContain('gateway/queue/workers/signer.ts → gateway/proxy/waker.ts');
  });

  it('when the queue imports downward only, its root composes every layer and both share gateway modules, then the lint passes', async () => {
    const result = await lintTree({
      'gateway/http/limited-body.ts': EXPORT,
      'gateway/queue/core/keys.ts': EXPORT,
      'gateway/queue/scripts/enqueue.ts':
        "import { value } from '../core/keys.js';\nexport const used = value;\n",
      'gateway/queue/stores/store.ts':
        "import { used } from '../scripts/enqueue.js';\nimport { value } from '../core/keys.js';\nexport const store = used + value;\n",
      'gateway/queue/workers/worker.ts':
        "import { store } from '../stores/store.js';\nexport const worker = store;\n",
      'gateway/queue/http/routes.ts':
        "import { store } from '../stores/store.js';\nimport { value } from '../../http/limited-body.js';\nexport const routes = store + value;\n",
      'gateway/queue/queue-service.ts':
        "import { worker } from './workers/worker.js';\nimport { routes } from './http/routes.js';\nexport const service = worker + routes;\n",
      'gateway/proxy/instance-handler.ts':
        "import { value } from '../http/limited-body.js';\nexport const used = value;\n",
    });
    expect(result).toEqual({ code: 0, output: expect.stringContaining('no dependency violations') });
  });
});
