import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHART_DIR } from './chart-harness.js';

const SOURCE_DIR = path.resolve('crds');
const CHART_CRD_DIR = path.join(CHART_DIR, 'crds');
const SYNC_SCRIPT = path.resolve('local/tools/sync-chart-crds.sh');

function yamlFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort();
}

function runSync(
  args: string[],
  dirs: { source: string; target: string },
): { status: number | null; stderr: string } {
  const result = spawnSync('bash', [SYNC_SCRIPT, ...args], {
    env: { PATH: process.env.PATH, SETTEE_CRD_SOURCE_DIR: dirs.source, SETTEE_CHART_CRD_DIR: dirs.target },
    encoding: 'utf8',
  });
  return { status: result.status, stderr: result.stderr };
}

describe("the chart's CRDs", () => {
  it('when compared with crds/, then the chart holds a byte-for-byte copy of each and nothing else', () => {
    const sources = yamlFiles(SOURCE_DIR);
    expect(sources.length).toBeGreaterThan(0);
    expect(yamlFiles(CHART_CRD_DIR)).toEqual(sources);
    for (const name of sources) {
      const copy = fs.readFileSync(path.join(CHART_CRD_DIR, name), 'utf8');
      // On failure: run local/tools/sync-chart-crds.sh (make chart-crds).
      expect({ name, content: copy }).toEqual({
        name,
        content: fs.readFileSync(path.join(SOURCE_DIR, name), 'utf8'),
      });
    }
  });

  describe('the sync script', () => {
    let source: string;
    let target: string;
    beforeEach(() => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'settee-crd-sync-'));
      source = path.join(root, 'crds');
      target = path.join(root, 'chart-crds');
      fs.mkdirSync(source);
      fs.mkdirSync(target);
      fs.writeFileSync(path.join(source, 'a.yaml'), 'kind: CustomResourceDefinition # a\n');
      fs.writeFileSync(path.join(source, 'b.yaml'), 'kind: CustomResourceDefinition # b\n');
    });
    afterEach(() => fs.rmSync(path.dirname(source), { recursive: true, force: true }));

    it('when a copy differs, is missing or has no source, then --check exits 1 naming each and changes nothing', () => {
      fs.writeFileSync(path.join(target, 'a.yaml'), 'kind: CustomResourceDefinition # edited by hand\n');
      fs.writeFileSync(path.join(target, 'gone.yaml'), 'kind: CustomResourceDefinition\n');
      const result = runSync(['--check'], { source, target });
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/a\.yaml differs from/);
      expect(result.stderr).toMatch(/b\.yaml differs from/);
      expect(result.stderr).toMatch(/gone\.yaml has no source in crds/);
      expect(fs.readFileSync(path.join(target, 'a.yaml'), 'utf8')).toContain('edited by hand');
    });

    it('when run, then the copies equal the sources, stale copies are gone and --check passes', () => {
      fs.writeFileSync(path.join(target, 'a.yaml'), 'stale\n');
      fs.writeFileSync(path.join(target, 'gone.yaml'), 'stale\n');
      expect(runSync([], { source, target }).status).toBe(0);
      expect(yamlFiles(target)).toEqual(['a.yaml', 'b.yaml']);
      expect(fs.readFileSync(path.join(target, 'a.yaml'), 'utf8')).toBe(
        fs.readFileSync(path.join(source, 'a.yaml'), 'utf8'),
      );
      expect(runSync(['--check'], { source, target }).status).toBe(0);
    });
  });
});
