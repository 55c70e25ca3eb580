import type {
  KubernetesObject,
  V1ClusterRole,
  V1Container,
  V1Deployment,
  V1Ingress,
  V1PolicyRule,
  V1Role,
  V1Secret,
} from '@kubernetes/client-node';
import {
  CHART_DIR,
  FULL_VALUES,
  findObject,
  helm,
  renderChart,
  templateArgs,
  type RenderOptions,
} from '../../helpers/chart/chart-harness.js';

const NAMESPACE = 'settee-system';
const DEFAULTS: RenderOptions = { release: 'prod', namespace: NAMESPACE };
const FULL: RenderOptions = { release: 'prod', namespace: NAMESPACE, valuesFiles: [FULL_VALUES] };

function containerOf(deployment: V1Deployment): V1Container {
  const container = deployment.spec?.template.spec?.containers[0];
  if (!container) throw new Error(`${deployment.metadata?.name} has no container`);
  return container;
}

function envOf(container: V1Container): Record<string, string | undefined> {
  return Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
}

function rulesOf(objects: readonly KubernetesObject[]): V1PolicyRule[] {
  return objects
    .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
    .flatMap((o) => (o as V1Role | V1ClusterRole).rules ?? []);
}

describe('helm lint', () => {
  it('when the chart is linted strictly with the default values, then it passes', async () => {
    const result = await helm(['lint', '--strict', CHART_DIR]);
    expect({ code: result.code, out: result.stdout + result.stderr }).toEqual({
      code: 0,
      out: expect.stringContaining('0 chart(s) failed'),
    });
  });

  it('when the chart is linted strictly with every value set, then it passes', async () => {
    const result = await helm(['lint', '--strict', CHART_DIR, '--values', FULL_VALUES]);
    expect({ code: result.code, out: result.stdout + result.stderr }).toEqual({
      code: 0,
      out: expect.stringContaining('0 chart(s) failed'),
    });
  });
});

describe('helm template with the default values', () => {
  let objects: KubernetesObject[];
  beforeAll(async () => {
    objects = await renderChart(DEFAULTS);
  });

  it('when rendered, then it holds the platform and none of the optional parts', () => {
    const kinds = objects.map((o) => `${o.kind}/${o.metadata?.name}`).sort();
    expect(kinds).toEqual(
      [
        'ClusterRole/prod-settee-console',
        'ClusterRole/prod-settee-gateway',
        'ClusterRole/prod-settee-operator',
        'ClusterRoleBinding/prod-settee-console',
        'ClusterRoleBinding/prod-settee-gateway',
        'ClusterRoleBinding/prod-settee-operator',
        'ConfigMap/prod-settee-free-envelope',
        'Deployment/prod-settee-console',
        'Deployment/prod-settee-gateway',
        'Deployment/prod-settee-operator',
        'NetworkPolicy/prod-settee-console',
        'NetworkPolicy/prod-settee-gateway',
        'NetworkPolicy/prod-settee-operator',
        'PodDisruptionBudget/prod-settee-gateway',
        'PodDisruptionBudget/prod-settee-operator',
        'Role/prod-settee-operator-leader-election',
        'RoleBinding/prod-settee-operator-leader-election',
        'Secret/prod-settee-console-session',
        'Secret/prod-settee-queue-master',
        'Service/prod-settee-console',
        'Service/prod-settee-gateway',
        'Service/prod-settee-operator-metrics',
        'ServiceAccount/prod-settee-console',
        'ServiceAccount/prod-settee-gateway',
        'ServiceAccount/prod-settee-operator',
        'ValidatingAdmissionPolicy/prod-settee-free-plan-change',
        'ValidatingAdmissionPolicyBinding/prod-settee-free-plan-change',
      ].sort(),
    );
  });

  it('when rendered, then the operator runs two replicas that elect a leader through a Lease in the release namespace', () => {
    const operator = findObject<V1Deployment>(objects, 'Deployment', 'prod-settee-operator');
    expect(operator.spec?.replicas).toBe(2);
    expect(envOf(containerOf(operator))).toMatchObject({
      SETTEE_LEADER_ELECTION: 'true',
      SETTEE_LEADER_ELECTION_NAMESPACE: NAMESPACE,
      SETTEE_LEADER_ELECTION_LEASE: 'prod-settee-operator',
      SETTEE_METRICS_HOST: '0.0.0.0',
      SETTEE_METRICS_PORT: '8080',
      SETTEE_ENDPOINT_TEMPLATE: `http://prod-settee-gateway.${NAMESPACE}.svc:80/db/{namespace}/{name}`,
    });
    expect(envOf(containerOf(operator))).not.toHaveProperty('SETTEE_WATCH_NAMESPACE');
  });

  it('when rendered, then every Deployment probes /healthz and /readyz, sets resources, and runs non-root on a read-only root filesystem', () => {
    for (const name of ['prod-settee-operator', 'prod-settee-gateway', 'prod-settee-console']) {
      const deployment = findObject<V1Deployment>(objects, 'Deployment', name);
      const pod = deployment.spec?.template.spec;
      const container = containerOf(deployment);
      expect({
        name,
        liveness: container.livenessProbe?.httpGet?.path,
        readiness: container.readinessProbe?.httpGet?.path,
      }).toEqual({
        name,
        liveness: '/healthz',
        readiness: '/readyz',
      });
      expect(container.resources?.requests).toEqual(
        expect.objectContaining({ cpu: expect.any(String), memory: expect.any(String) }),
      );
      expect(container.resources?.limits).toEqual(expect.objectContaining({ memory: expect.any(String) }));
      expect(pod?.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod?.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      });
    }
  });

  it('when rendered, then each grace period outlasts the shutdown timeout the process is given', () => {
    for (const name of ['prod-settee-operator', 'prod-settee-gateway', 'prod-settee-console']) {
      const deployment = findObject<V1Deployment>(objects, 'Deployment', name);
      const container = containerOf(deployment);
      const timeoutSeconds = Number(envOf(container).SETTEE_SHUTDOWN_TIMEOUT?.replace(/s$/, ''));
      const preStopSeconds = container.lifecycle?.preStop?.sleep?.seconds ?? 0;
      expect(timeoutSeconds).toBeGreaterThan(0);
      expect(deployment.spec?.template.spec?.terminationGracePeriodSeconds).toBeGreaterThan(
        timeoutSeconds + preStopSeconds,
      );
    }
  });

  it('when rendered, then no RBAC rule holds a wildcard', () => {
    const rules = rulesOf(objects);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      for (const list of [rule.apiGroups ?? [], rule.resources ?? [], rule.verbs, rule.resourceNames ?? []]) {
        expect(list).not.toContain('*');
      }
    }
  });

  it('when rendered, then the queue master secret is 64 random characters kept on uninstall', () => {
    const secret = findObject<V1Secret>(objects, 'Secret', 'prod-settee-queue-master');
    expect(secret.metadata?.annotations?.['helm.sh/resource-policy']).toBe('keep');
    const value = Buffer.from(secret.data?.['master-secret'] ?? '', 'base64').toString();
    expect(value).toMatch(/^[A-Za-z0-9]{64}$/);
  });
});

describe('helm template with every value set', () => {
  let objects: KubernetesObject[];
  beforeAll(async () => {
    objects = await renderChart(FULL);
  });

  it('when rendered, then the Ingress serves the domain, its wildcard and each tenant namespace wildcard over TLS from cert-manager', () => {
    const ingress = findObject<V1Ingress>(objects, 'Ingress', 'prod-couch-gateway');
    const hosts = [
      'couch.example.com',
      '*.couch.example.com',
      '*.team-a.couch.example.com',
      '*.team-b.couch.example.com',
    ];
    expect(ingress.spec?.rules?.map((rule) => rule.host)).toEqual(hosts);
    expect(ingress.spec?.tls).toEqual([{ secretName: 'couch-wildcard-tls', hosts }]);
    expect(ingress.spec?.ingressClassName).toBe('nginx');
    expect(ingress.metadata?.annotations).toMatchObject({
      'cert-manager.io/cluster-issuer': 'letsencrypt-dns',
      'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600',
    });
    for (const rule of ingress.spec?.rules ?? []) {
      expect(rule.http?.paths[0]?.backend.service).toEqual({
        name: 'prod-couch-gateway',
        port: { name: 'http' },
      });
    }
  });

  it('when the Ingress is on, then the console has its own host and certificate Secret, and its cookie secret comes from the generated Secret', () => {
    const ingress = findObject<V1Ingress>(objects, 'Ingress', 'prod-couch-console');
    expect(ingress.spec?.rules?.map((rule) => rule.host)).toEqual(['dashboard.couch.example.com']);
    expect(ingress.spec?.tls).toEqual([
      { secretName: 'prod-couch-console-tls', hosts: ['dashboard.couch.example.com'] },
    ]);
    const container = containerOf(findObject<V1Deployment>(objects, 'Deployment', 'prod-couch-console'));
    expect(container.env?.find((e) => e.name === 'SETTEE_CONSOLE_SESSION_SECRET')?.valueFrom).toEqual({
      secretKeyRef: { name: 'prod-couch-console-session', key: 'cookie-secret' },
    });
    expect(envOf(container)).toMatchObject({
      SETTEE_CONSOLE_PORT: '8081',
      SETTEE_CONSOLE_TRUSTED_PROXIES: '10.244.0.0/16',
    });
  });

  it('when autoscaling is on, then the HPA owns the gateway replicas and the Deployment names none', () => {
    const gateway = findObject<V1Deployment>(objects, 'Deployment', 'prod-couch-gateway');
    expect(gateway.spec?.replicas).toBeUndefined();
    expect(findObject(objects, 'HorizontalPodAutoscaler', 'prod-couch-gateway')).toMatchObject({
      spec: {
        minReplicas: 3,
        maxReplicas: 12,
        scaleTargetRef: { kind: 'Deployment', name: 'prod-couch-gateway' },
      },
    });
  });

  it('when the gateway has its own certificate, then it serves HTTPS from the mounted Secret and is probed over HTTPS', () => {
    const gateway = findObject<V1Deployment>(objects, 'Deployment', 'prod-couch-gateway');
    const container = containerOf(gateway);
    expect(envOf(container)).toMatchObject({
      SETTEE_GATEWAY_TLS_CERT: '/etc/settee/tls/tls.crt',
      SETTEE_GATEWAY_TLS_KEY: '/etc/settee/tls/tls.key',
      SETTEE_GATEWAY_DOMAIN: 'couch.example.com',
    });
    expect(container.readinessProbe?.httpGet?.scheme).toBe('HTTPS');
    expect(gateway.spec?.template.spec?.volumes).toContainEqual(
      expect.objectContaining({
        name: 'tls',
        secret: expect.objectContaining({ secretName: 'gateway-serving-cert' }),
      }),
    );
  });

  it('when a domain is set, then instance endpoints are host based and queues live under https://<domain>', () => {
    const operator = findObject<V1Deployment>(objects, 'Deployment', 'prod-couch-operator');
    const container = containerOf(operator);
    expect(envOf(container)).toMatchObject({
      SETTEE_ENDPOINT_TEMPLATE: 'https://{name}.{namespace}.couch.example.com',
      SETTEE_QUEUE_BASE_URL: 'https://couch.example.com',
    });
    expect(container.image).toBe(
      'registry.example.com/settee/operator:1.2.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    );
  });

  it('when ServiceMonitors are on, then one scrapes each component on its metrics port', () => {
    const monitors = objects.filter((o) => o.kind === 'ServiceMonitor');
    expect(monitors.map((m) => m.metadata?.name).sort()).toEqual([
      'prod-couch-gateway',
      'prod-couch-operator',
    ]);
    expect(findObject(monitors, 'ServiceMonitor', 'prod-couch-operator')).toMatchObject({
      metadata: { labels: { release: 'prometheus' } },
      spec: { endpoints: [{ port: 'metrics', path: '/metrics', interval: '15s', scrapeTimeout: '5s' }] },
    });
  });

  it('when the issuer is namespaced and the full name is overridden, then the Ingress names an Issuer and every object carries that name', async () => {
    const rendered = await renderChart({
      ...FULL,
      set: { 'ingress.certManager.issuerKind': 'Issuer', fullnameOverride: 'couchdb' },
    });
    const ingress = findObject<V1Ingress>(rendered, 'Ingress', 'couchdb-gateway');
    expect(ingress.metadata?.annotations?.['cert-manager.io/issuer']).toBe('letsencrypt-dns');
    expect(ingress.metadata?.annotations).not.toHaveProperty('cert-manager.io/cluster-issuer');
    const names = rendered.map((o) => o.metadata?.name ?? '');
    expect(names.filter((name) => !name.startsWith('couchdb') && !name.startsWith('couch-'))).toEqual([]);
  });

  it('when the master secret comes from an existing Secret, then the chart renders none and the operator reads that one', async () => {
    const rendered = await renderChart({
      ...FULL,
      set: { 'queue.masterSecret.existingSecret': 'my-master' },
    });
    // The console's own session Secret is the only one left.
    expect(rendered.filter((o) => o.kind === 'Secret').map((o) => o.metadata?.name)).toEqual([
      'prod-couch-console-session',
    ]);
    const container = containerOf(findObject<V1Deployment>(rendered, 'Deployment', 'prod-couch-operator'));
    expect(container.env?.find((e) => e.name === 'SETTEE_SIGNING_MASTER_SECRET')?.valueFrom).toEqual({
      secretKeyRef: { name: 'my-master', key: 'master' },
    });
  });
});

describe('helm template refusing inconsistent values', () => {
  it('when the Ingress is on without a domain, then rendering fails saying the domain is needed', async () => {
    const result = await helm([
      'template',
      ...templateArgs({ ...DEFAULTS, set: { 'ingress.enabled': 'true' } }),
    ]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('ingress.enabled needs domain');
  });

  it('when two operator replicas run without leader election, then rendering fails explaining why', async () => {
    const result = await helm([
      'template',
      ...templateArgs({ ...DEFAULTS, set: { 'operator.leaderElection.enabled': 'false' } }),
    ]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('operator.replicaCount > 1 needs operator.leaderElection.enabled');
  });
});
