import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * Bundles gateway/main.ts and operator/main.ts at once as the platform does, in a process of its
 * own (jest's process.env is not the one its children get), after marking its environment, and
 * prints node's arguments for each and the processes that still carry the marker once they are
 * gone or 15 s have passed.
 */
const SCRIPT = `
import fs from 'node:fs';
const { bundleWithCodeCache: bundleEntry } = await import(${JSON.stringify(path.join(ROOT, 'local', 'bundle.ts'))});
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

/**
 * Bundles a small entry of its own (argv: the entry's folder, inside the repository), plants beside
 * its bundle an older bundle of it pinned by a dead process, another pinned by a live one (argv: a
 * make run started from it, restarting its gateway from that path after a crash), a temporary file
 * of a dead writer and of a live one and another entry's bundle, changes the entry's source and
 * bundles it again: prints its pid, the bundles and the build folder's files of both entries.
 */
const PRUNE_SCRIPT = `
import fs from 'node:fs/promises';
import path from 'node:path';
const { bundleEntry } = await import(${JSON.stringify(path.join(ROOT, 'local', 'bundle.ts'))});
const [folder, deadPid, livePid] = process.argv.slice(1);
const entry = path.join(folder, 'entry.ts');
await fs.writeFile(entry, 'export const version: number = 1;\\n');
const first = await bundleEntry(entry);
const build = path.dirname(first);
const name = path.basename(first).replace(/\\.[0-9a-f]{16}\\.mjs$/, '');
const planted = {
  older: name + '.0123456789abcdef.mjs',
  deadPin: name + '.0123456789abcdef.mjs.' + deadPid + '.pin',
  pinnedOlder: name + '.1111111111111111.mjs',
  livePin: name + '.1111111111111111.mjs.' + livePid + '.pin',
  deadTmp: name + '.fedcba9876543210.mjs.' + deadPid + '.tmp',
  liveTmp: name + '.fedcba9876543210.mjs.' + livePid + '.tmp',
  other: name + '-other.0123456789abcdef.mjs',
};
for (const file of Object.values(planted)) await fs.writeFile(path.join(build, file), '');
await fs.writeFile(entry, 'export const version: number = 2;\\n');
const second = await bundleEntry(entry);
const files = (await fs.readdir(build)).filter((file) => file.startsWith(name));
console.log(
  JSON.stringify({ pid: process.pid, first: path.basename(first), second: path.basename(second), planted, files }),
);
`;

/**
 * Bundles a small entry of its own (argv: its folder, inside the repository) that imports an npm
 * package, with its code cache, and prints the bundle's text and node's arguments for it.
 */
const CACHE_SCRIPT = `
import fs from 'node:fs/promises';
import path from 'node:path';
const { bundleWithCodeCache } = await import(${JSON.stringify(path.join(ROOT, 'local', 'bundle.ts'))});
const entry = path.join(process.argv[1], 'entry.ts');
await fs.writeFile(entry, "import ipaddr from 'ipaddr.js';\\nconsole.log(JSON.stringify({ argv: process.argv.slice(1), loopback: ipaddr.parse('127.0.0.1').range() }));\\n");
const args = await bundleWithCodeCache(entry);
console.log(JSON.stringify({ args, text: await fs.readFile(args[1], 'utf8') }));
`;

/**
 * Bundles a new entry of its own (argv: its folder, inside the repository) four times at once in
 * one process, as the platform bundles the runner for the gateway and the operator, and prints
 * the bundles or the error.
 */
const CONCURRENT_SCRIPT = `
import fs from 'node:fs/promises';
import path from 'node:path';
const { bundleEntry } = await import(${JSON.stringify(path.join(ROOT, 'local', 'bundle.ts'))});
const entry = path.join(process.argv[1], 'entry.ts');
await fs.writeFile(entry, 'export const made: string = ' + JSON.stringify(process.argv[1]) + ';\\n');
const settled = await Promise.allSettled([1, 2, 3, 4].map(() => bundleEntry(entry)));
console.log(JSON.stringify(settled.map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason)))));
`;

describe('bundleEntry', () => {
  it('when one process bundles a new entry several times at once, then every call gets the one bundle (their writes shared one temporary file, and every rename but the first failed)', async () => {
    const folder = await fs.mkdtemp(path.join(ROOT, '.settee', 'bundle-test-'));
    let bundles: string[] = [];
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', CONCURRENT_SCRIPT, folder],
        { cwd: ROOT, timeout: 120_000 },
      );
      bundles = JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as string[];
      expect(bundles).toHaveLength(4);
      expect(new Set(bundles).size).toBe(1);
      expect(path.basename(bundles[0] ?? '')).toMatch(/\.[0-9a-f]{16}\.mjs$/);
    } finally {
      const build = path.join(ROOT, '.settee', 'build');
      const name = path.basename(bundles[0] ?? 'none');
      const files = (await fs.readdir(build).catch(() => [])).filter((file) => file.startsWith(name));
      await Promise.all(files.map((file) => fs.rm(path.join(build, file), { force: true })));
      await fs.rm(folder, { recursive: true, force: true });
    }
  }, 150_000);

  it('when two entry points are bundled at once, then each is one file named by its entry and content, the same content gives the same file, and no esbuild process of the builds outlives them', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', SCRIPT],
      { cwd: ROOT, timeout: 120_000 },
    );
    const { bundles, again, marked } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      bundles: [string[], string[]];
      again: string[];
      marked: number[];
    };
    expect(bundles.map((args) => args.map((file) => path.basename(file)))).toEqual([
      [
        expect.stringMatching(/^local-bundle-runner\.[0-9a-f]{16}\.cjs$/),
        expect.stringMatching(/^gateway-main\.[0-9a-f]{16}\.cjs$/),
      ],
      [
        expect.stringMatching(/^local-bundle-runner\.[0-9a-f]{16}\.cjs$/),
        expect.stringMatching(/^operator-main\.[0-9a-f]{16}\.cjs$/),
      ],
    ]);
    expect(again).toEqual(bundles[0]);
    // esbuild's service is stopped once no build is left: a make run or a chaos soak keeps no child of it.
    expect(marked).toEqual([]);
  }, 150_000);

  it("when an entry's source changes, then its new bundle is written and pinned by its caller, and its older bundles, dead processes' pins and dead writers' temporary files are removed, while an older bundle a live process pinned (a running make run restarts from it), a live writer's file and another entry's files stay", async () => {
    const folder = await fs.mkdtemp(path.join(ROOT, '.settee', 'bundle-test-'));
    // A pid that was a writer and is gone: a process that has already exited.
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    let files: string[] = [];
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          PRUNE_SCRIPT,
          folder,
          String(deadPid),
          String(process.pid),
        ],
        { cwd: ROOT, timeout: 120_000 },
      );
      const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
        pid: number;
        first: string;
        second: string;
        planted: Record<
          'older' | 'deadPin' | 'pinnedOlder' | 'livePin' | 'deadTmp' | 'liveTmp' | 'other',
          string
        >;
        files: string[];
      };
      files = result.files;
      expect(result.second).not.toBe(result.first);
      expect([...result.files].sort()).toEqual(
        [
          result.second,
          `${result.second}.${result.pid}.pin`,
          result.planted.pinnedOlder,
          result.planted.livePin,
          result.planted.liveTmp,
          result.planted.other,
        ].sort(),
      );
    } finally {
      const build = path.join(ROOT, '.settee', 'build');
      await Promise.all(files.map((file) => fs.rm(path.join(build, file), { force: true })));
      await fs.rm(folder, { recursive: true, force: true });
    }
  }, 150_000);

  it('when an entry is bundled with its code cache, then its npm packages are in its one file; the runner runs it as node would, writes the cache at its first exit, keeps a cache V8 accepts and replaces one it rejects', async () => {
    const folder = await fs.mkdtemp(path.join(ROOT, '.settee', 'bundle-test-'));
    let bundle = '';
    try {
      const built = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', CACHE_SCRIPT, folder],
        { cwd: ROOT, timeout: 120_000 },
      );
      const { args, text } = JSON.parse(built.stdout.trim().split('\n').at(-1) ?? '{}') as {
        args: [string, string];
        text: string;
      };
      bundle = args[1];
      expect(text).not.toMatch(/require\(["']ipaddr\.js["']\)/);
      const cache = `${bundle}.v8cache`;
      const run = async (): Promise<unknown> =>
        JSON.parse((await promisify(execFile)(process.execPath, [...args, 'extra'], { cwd: ROOT })).stdout);

      expect(await run()).toEqual({ argv: [bundle, 'extra'], loopback: 'loopback' });
      const written = await fs.readFile(cache);
      expect(written.length).toBeGreaterThan(0);
      await run();
      expect((await fs.readFile(cache)).equals(written)).toBe(true);

      await fs.writeFile(cache, 'not a code cache');
      expect(await run()).toEqual({ argv: [bundle, 'extra'], loopback: 'loopback' });
      const replaced = await fs.readFile(cache);
      expect(replaced.toString('latin1')).not.toBe('not a code cache');
      // V8 takes the new one: the next run leaves it as it is.
      await run();
      expect((await fs.readFile(cache)).equals(replaced)).toBe(true);
    } finally {
      const build = path.join(ROOT, '.settee', 'build');
      if (bundle !== '') {
        const name = path.basename(bundle);
        const files = (await fs.readdir(build)).filter((file) => file.startsWith(name));
        await Promise.all(files.map((file) => fs.rm(path.join(build, file), { force: true })));
      }
      await fs.rm(folder, { recursive: true, force: true });
    }
  }, 150_000);
});
