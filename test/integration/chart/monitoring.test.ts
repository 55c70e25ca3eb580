import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import type { RunningOperator } from '../../../operator/operator.js';
import {
  evaluateThresholdCondition,
  parseThresholdCondition,
} from '../../helpers/monitoring/alert-condition.js';
import { exportedMetricNames, metricNamesIn } from '../../helpers/monitoring/exported-metrics.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  createInstance,
  hasPhase,
  startTestOperator,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';
import { findObject, renderChart, type RenderOptions } from '../../helpers/chart/chart-harness.js';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: Rule[];
}

const SWITCHED_ON: RenderOptions = {
  release: 'prod',
  namespace: 'settee-system',
  set: { 'prometheusRule.enabled': 'true', 'grafanaDashboard.enabled': 'true' },
};

function groupsOf(objects: readonly KubernetesObject[]): RuleGroup[] {
  return (findObject(objects, 'PrometheusRule') as KubernetesObject & { spec: { groups: RuleGroup[] } }).spec
    .groups;
}

function dashboardExprs(objects: readonly KubernetesObject[]): string[] {
  const map = findObject<V1ConfigMap>(objects, 'ConfigMap', 'prod-settee-dashboard');
  const dashboard = JSON.parse(map.data?.['settee.json'] ?? '{}') as {
    panels: { targets?: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
}

describe('the chart ships alerts and a dashboard behind values switches', () => {
  let objects: KubernetesObject[];
  beforeAll(async () => {
    objects = await renderChart(SWITCHED_ON);
  });

  it('when rendered with the default values, then there is neither a PrometheusRule nor a dashboard', async () => {
    const defaults = await renderChart({ release: 'prod', namespace: 'settee-system' });
    expect(defaults.filter((o) => o.kind === 'PrometheusRule')).toEqual([]);
    expect(defaults.filter((o) => o.metadata?.name === 'prod-settee-dashboard')).toEqual([]);
  });

  it('when both are switched on, then the alerts cover stuck and degraded instances, wakes, the envelope, the queue, backups and reconciles', () => {
    const alerts = groupsOf(objects).flatMap((group) => group.rules);
    expect(alerts.map((rule) => rule.alert).sort()).toEqual([
      'SetteeBackupFailed',
      'SetteeBackupTooOld',
      'SetteeEnvelopeRejections',
      'SetteeInstanceDegraded',
      'SetteeInstanceStuckStarting',
      'SetteeOperatorNoLeader',
      'SetteeQueueDeadLettersGrowing',
      'SetteeQueueDeliveriesFailing',
      'SetteeReconcileErrors',
      'SetteeWakeSlow',
    ]);
    for (const rule of alerts) {
      expect(rule.labels?.severity).toMatch(/^(info|warning|critical)$/);
      expect(rule.annotations?.summary).toBeTruthy();
    }
    expect(alerts.find((rule) => rule.alert === 'SetteeWakeSlow')?.expr).toContain(') > 1\n');
  });

  it('when both are switched on, then every metric the alerts and the dashboard read is one the code registers', async () => {
    const exported = await exportedMetricNames();
    const exprs = [
      ...groupsOf(objects).flatMap((g) => g.rules.map((r) => r.expr)),
      ...dashboardExprs(objects),
    ];
    const read = new Set(exprs.flatMap(metricNamesIn));
    expect(exprs.length).toBeGreaterThan(20);
    expect([...read].filter((name) => !exported.has(name))).toEqual([]);
    // The check itself reads what it should: the queue's and the backups' metrics are among them.
    expect([...read]).toEqual(
      expect.arrayContaining(['settee_queue_deliveries_total', 'settee_backup_last_success_age_seconds']),
    );
  });
});

/**
 * Two alerts' conditions made true on a real operator, and checked on its /metrics the way
 * Prometheus evaluates the rule at an instant (the expression's metric, label matchers, `max by`
 * grouping and comparison, read from the rendered rule): a spec outside the operator's envelope
 * (Degraded), and an instance whose pod never runs, since no kubelet serves this namespace. The
 * rules' `for` is time and is not waited out; promtool, which could replay it, takes longer to
 * build here than the suite may (docs/monitoring.md).
 */
describe("the chart's alerts on a real operator's /metrics", () => {
  const ns = useTestNamespace('monitoring');
  const STUCK_SECONDS = 3;
  let operator: RunningOperator;
  let groups: RuleGroup[];
  const scrape = async (): Promise<string> =>
    (await fetch(`http://127.0.0.1:${operator.healthPort}/metrics`)).text();
  const conditionOf = (alert: string) => {
    const found = groups.flatMap((g) => g.rules).find((r) => r.alert === alert);
    if (!found) throw new Error(`no alert ${alert}`);
    return parseThresholdCondition(found.expr);
  };

  beforeAll(async () => {
    groups = groupsOf(
      await renderChart({
        ...SWITCHED_ON,
        set: { ...SWITCHED_ON.set, 'prometheusRule.thresholds.instanceStuckSeconds': String(STUCK_SECONDS) },
      }),
    );
    operator = await startTestOperator({ namespace: ns.name, env: { SETTEE_FREE_STORAGE: '512Mi' } });
  });
  afterAll(() => operator?.stop());

  it("when an instance's spec is outside the envelope, then SetteeInstanceDegraded's condition holds for it, and before it did not", async () => {
    const condition = conditionOf('SetteeInstanceDegraded');
    expect(condition).toEqual({
      by: ['namespace', 'instance', 'reason'],
      metric: 'settee_couch_instance_degraded',
      matchers: [],
      op: '==',
      threshold: 1,
    });
    expect(evaluateThresholdCondition(condition, await scrape())).toEqual([]);
    await createInstance(ns.name, 'too-big', { storage: { size: '1Gi' } });
    await waitForInstance(ns.name, 'too-big', 'phase Failed', hasPhase('Failed'));
    expect(evaluateThresholdCondition(condition, await scrape())).toEqual([
      { labels: { namespace: ns.name, instance: 'too-big', reason: 'InvalidSpec' }, value: 1 },
    ]);
  });

  it("when an instance's pod never runs, then SetteeInstanceStuckStarting's condition holds once it has been Starting longer than the threshold", async () => {
    const condition = conditionOf('SetteeInstanceStuckStarting');
    expect(condition).toMatchObject({
      metric: 'settee_couch_instance_phase_seconds',
      matchers: [{ label: 'phase', regex: true, value: 'Starting|Waking|Restoring' }],
      op: '>',
      threshold: STUCK_SECONDS,
    });
    const firing = async () =>
      evaluateThresholdCondition(condition, await scrape()).filter((s) => s.labels.instance === 'stuck');
    expect(await firing()).toEqual([]);
    const created = Date.now();
    await createInstance(ns.name, 'stuck', {});
    let seen = await firing();
    const deadline = Date.now() + 60_000;
    while (seen.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      seen = await firing();
    }
    expect(seen).toEqual([
      { labels: { namespace: ns.name, instance: 'stuck', phase: 'Starting' }, value: expect.any(Number) },
    ]);
    // The operator counts from when it first saw the phase: never longer than the instance has existed.
    expect(seen[0]!.value).toBeGreaterThan(STUCK_SECONDS);
    expect(seen[0]!.value).toBeLessThanOrEqual((Date.now() - created) / 1000);
  });
});
