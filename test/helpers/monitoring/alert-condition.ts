/** One sample of a /metrics page. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of one metric on a /metrics page (Prometheus text format), labels parsed. */
function samplesOf(page: string, metric: string): Sample[] {
  return page
    .split('\n')
    .filter((line) => line.startsWith(`${metric}{`) || line.startsWith(`${metric} `))
    .map((line) => {
      const labelText = /\{(.*)\}/.exec(line)?.[1] ?? '';
      const labels = Object.fromEntries(
        [...labelText.matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
      );
      return { labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) };
    });
}

/** The parts of an alert of the shape `max by (labels) (metric{matchers}) <op> <threshold>`. */
export interface ThresholdCondition {
  by: string[];
  metric: string;
  matchers: { label: string; regex: boolean; value: string }[];
  op: '>' | '<' | '==';
  threshold: number;
}

const SHAPE = /^max by \(([^)]*)\) \(([a-z_:][a-z0-9_:]*)(?:\{([^}]*)\})?\) (>|<|==) ([0-9.]+)$/;

/** Reads an alert expression of that shape; throws on any other, so a rule that changed is seen. */
export function parseThresholdCondition(expr: string): ThresholdCondition {
  const match = SHAPE.exec(expr.trim());
  if (!match) throw new Error(`not a "max by (...) (metric{...}) <op> <number>" expression: ${expr}`);
  const [, by = '', metric = '', matcherText = '', op = '>', threshold = ''] = match;
  const matchers = [...matcherText.matchAll(/([a-zA-Z_]+)(=~|=)"((?:[^"\\]|\\.)*)"/g)].map((m) => ({
    label: m[1] ?? '',
    regex: m[2] === '=~',
    value: m[3] ?? '',
  }));
  return {
    by: by.split(',').map((label) => label.trim()),
    metric,
    matchers,
    op: op as ThresholdCondition['op'],
    threshold: Number(threshold),
  };
}

/**
 * The series for which the condition holds on one scrape, as Prometheus would evaluate it at an
 * instant: the samples its matchers select (regexes anchored, as PromQL's are), the largest per
 * `by` group, compared with the threshold. What it cannot check is the rule's `for`, which is time.
 */
export function evaluateThresholdCondition(condition: ThresholdCondition, page: string): Sample[] {
  const selected = samplesOf(page, condition.metric).filter((sample) =>
    condition.matchers.every((m) =>
      m.regex
        ? new RegExp(`^(?:${m.value})$`).test(sample.labels[m.label] ?? '')
        : (sample.labels[m.label] ?? '') === m.value,
    ),
  );
  const groups = new Map<string, Sample>();
  for (const sample of selected) {
    const labels = Object.fromEntries(condition.by.map((label) => [label, sample.labels[label] ?? '']));
    const key = JSON.stringify(labels);
    const group = groups.get(key);
    if (!group || sample.value > group.value) groups.set(key, { labels, value: sample.value });
  }
  const holds = (value: number): boolean =>
    condition.op === '>'
      ? value > condition.threshold
      : condition.op === '<'
        ? value < condition.threshold
        : value === condition.threshold;
  return [...groups.values()].filter((group) => holds(group.value));
}
