import fs from 'node:fs/promises';
import path from 'node:path';
import { collectDefaultMetrics, Registry } from 'prom-client';

/** The folders whose code registers the metrics the operator and the gateway serve. */
const SOURCE_ROOTS = ['gateway', 'operator', 'observability', 'kube'];

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(full);
      return Promise.resolve(entry.name.endsWith('.ts') ? [full] : []);
    }),
  );
  return nested.flat();
}

/**
 * Every metric name the code can export, read from its prom-client registrations: each `settee_`
 * name in a file that imports prom-client (histograms with their _bucket, _sum and _count series),
 * and prom-client's default metrics under each prefix the code passes to collectDefaultMetrics.
 */
export async function exportedMetricNames(): Promise<Set<string>> {
  const names = new Set<string>();
  const files = (await Promise.all(SOURCE_ROOTS.map((root) => sourceFiles(path.resolve(root))))).flat();
  for (const file of files) {
    const text = await fs.readFile(file, 'utf8');
    if (!/from 'prom-client'/.test(text)) continue;
    const histograms = new Set(
      [...text.matchAll(/new Histogram\(\{\s*name: '([a-z0-9_]+)'/g)].map((match) => match[1]),
    );
    for (const [, name] of text.matchAll(/'(settee_[a-z0-9_]*[a-z0-9])'/g)) {
      if (!name) continue;
      names.add(name);
      if (histograms.has(name)) for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    }
    for (const [, prefix] of text.matchAll(/collectDefaultMetrics\([^)]*prefix: '([a-z0-9_]+)'/g)) {
      if (!prefix) continue;
      names.delete(prefix.replace(/_$/, ''));
      const registry = new Registry();
      collectDefaultMetrics({ register: registry, prefix });
      for (const metric of await registry.getMetricsAsJSON()) {
        names.add(metric.name);
        if (String(metric.type) === 'histogram')
          for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
      }
    }
  }
  return names;
}

const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'topk',
  'bottomk',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'rate',
  'irate',
  'increase',
  'delta',
  'histogram_quantile',
  'absent',
  'clamp_min',
  'clamp_max',
  'time',
  'vector',
  'offset',
  'bool',
]);

/** The metric names a PromQL expression reads (label matchers, strings, ranges and functions left out). */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)]
    .map((match) => match[0])
    .filter((word) => !PROMQL_WORDS.has(word));
}
