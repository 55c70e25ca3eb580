/**
 * What the gateway adds on the data path, against anchors measured in the same run:
 * - proxy overhead: a minimal fast upstream (so the proxies are the bottleneck), loaded directly,
 *   through the gateway, through the floor a Node.js proxy on the gateway's stack reaches
 *   (bench/gateway/bare-proxy.ts), through Debian's nginx (one worker, upstream keep-alive)
 *   when /usr/sbin/nginx exists, and through the raw-socket splice experiment
 *   (bench/gateway/splice-proxy-experiment.ts, docs/data-path.md), and through the gateway with
 *   its fast path on ("hybrid", SETTEE_GATEWAY_FAST_PATH=true: the splice in the product, with its
 *   settee_gateway_spliced_requests_total printed to show the load was spliced); 50 connections
 *   for throughput, one for added latency;
 * - the same load direct to the default CouchDB engine, through the gateway, the hybrid and the
 *   experiment;
 * - the free envelope's checks (gateway/envelope/) on against off, for a free instance under its
 *   limits (rates raised above what the load offers) against a second gateway with
 *   SETTEE_GATEWAY_ENVELOPE=false, in BENCH_ENVELOPE_PAIRS (9) back-to-back pairs.
 * The gateway runs as the production image runs it: compiled by tsc, started with the gateway
 * stage's CMD and ENV from docker/Dockerfile (bench/lib/compiled-platform.ts), not under tsx.
 * Runs alternate between targets and each figure is the median of the rounds.
 *
 *   npx tsx bench/gateway-proxy.ts      (BENCH_ROUNDS=5, BENCH_SECONDS=3, BENCH_CONNECTIONS=50,
 *                                        BENCH_IDLE_SECONDS=0)
 *
 * BENCH_IDLE_SECONDS leaves the proxies idle that long before the first round, as a gateway is
 * between bursts: V8's memory reducer runs a full GC a few seconds into an idle period, which is
 * what gateway/http/tick-object-shape.ts guards against (20 s shows it).
 */
import fs from 'node:fs';
import os from 'node:os';
import { getFreePort } from '../local/ports.js';
import { basicAuth } from '../test/helpers/gateway/http-request.js';
import { startDataPathSetup } from './gateway/data-path-setup.js';
import { comparePaired, measure, ROUNDS_OF, roundRatios, type Target } from './gateway/load-rounds.js';
import { NGINX_BIN, startNginx } from './gateway/nginx.js';
import { seedBenchDocument } from './lib/bench-cluster.js';
import { compilePlatform } from './lib/compiled-platform.js';
import { startTsProcess, waitForHttp } from './lib/processes.js';
import { medianSpread, round } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 0);
const ENVELOPE_PAIRS = Number(process.env.BENCH_ENVELOPE_PAIRS ?? 9);
const NAMESPACE = 'bench';

/** Rates no load here reaches: the free instance stays under its limits, so every check runs and passes. */
const RATES_ABOVE_THE_LOAD = {
  SETTEE_GATEWAY_FREE_READS_PER_SECOND: '1000000',
  SETTEE_GATEWAY_FREE_WRITES_PER_SECOND: '1000000',
  SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND: '1000000',
};

async function main(): Promise<void> {
  const stops: Array<() => Promise<void>> = [];
  try {
    const { plane, upstreamPort, engine, admin, routes } = await startDataPathSetup(stops, {
      namespace: NAMESPACE,
      engine: true,
    });

    console.log('==> gateway (compiled as in the production image)');
    const compiled = await compilePlatform();
    stops.push(() => compiled.remove());
    const gatewayPort = await getFreePort();
    const gateway = compiled.start('gateway', {
      ...process.env,
      KUBECONFIG: plane.kubeconfigPath,
      SETTEE_GATEWAY_PORT: String(gatewayPort),
      SETTEE_WATCH_NAMESPACE: NAMESPACE,
      SETTEE_LOG_LEVEL: 'warn',
      SETTEE_GATEWAY_FAST_PATH: 'false',
      ...RATES_ABOVE_THE_LOAD,
    });
    stops.push(() => gateway.stop());
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    await waitForHttp(`${gatewayUrl}/db/${NAMESPACE}/fast/_up`, 'the gateway', 200, gateway.exited);

    const envelopeOffPort = await getFreePort();
    const envelopeOff = compiled.start('gateway', {
      ...process.env,
      KUBECONFIG: plane.kubeconfigPath,
      SETTEE_GATEWAY_PORT: String(envelopeOffPort),
      SETTEE_WATCH_NAMESPACE: NAMESPACE,
      SETTEE_LOG_LEVEL: 'warn',
      SETTEE_GATEWAY_FAST_PATH: 'false',
      SETTEE_GATEWAY_ENVELOPE: 'false',
    });
    stops.push(() => envelopeOff.stop());
    const envelopeOffUrl = `http://127.0.0.1:${envelopeOffPort}`;
    await waitForHttp(
      `${envelopeOffUrl}/db/${NAMESPACE}/fast/_up`,
      'the gateway without the envelope',
      200,
      envelopeOff.exited,
    );

    const hybridPort = await getFreePort();
    const hybrid = compiled.start('gateway', {
      ...process.env,
      KUBECONFIG: plane.kubeconfigPath,
      SETTEE_GATEWAY_PORT: String(hybridPort),
      SETTEE_WATCH_NAMESPACE: NAMESPACE,
      SETTEE_LOG_LEVEL: 'warn',
      SETTEE_GATEWAY_FAST_PATH: 'true',
      ...RATES_ABOVE_THE_LOAD,
    });
    stops.push(() => hybrid.stop());
    const hybridUrl = `http://127.0.0.1:${hybridPort}`;
    await waitForHttp(`${hybridUrl}/db/${NAMESPACE}/fast/_up`, 'the hybrid gateway', 200, hybrid.exited);
    const splicedBefore = await splicedRequests(hybridUrl);

    const barePort = await getFreePort();
    const bare = startTsProcess('bare-proxy', 'bench/gateway/bare-proxy.ts', [
      String(barePort),
      String(upstreamPort),
    ]);
    stops.push(() => bare.stop());
    await waitForHttp(`http://127.0.0.1:${barePort}/_up`, 'the bare proxy', 200, bare.exited);

    const splicePort = await getFreePort();
    const splice = startTsProcess('splice-proxy-experiment', 'bench/gateway/splice-proxy-experiment.ts', [
      String(splicePort),
      ...routes.map(([name, port]) => `${NAMESPACE}/${name}=${port}`),
    ]);
    stops.push(() => splice.stop());
    const spliceUrl = `http://127.0.0.1:${splicePort}`;
    await waitForHttp(`${spliceUrl}/db/${NAMESPACE}/fast/_up`, 'the splice experiment', 200, splice.exited);

    const targets: Target[] = [
      { name: 'direct', url: `http://127.0.0.1:${upstreamPort}/` },
      { name: 'gateway', url: `${gatewayUrl}/db/${NAMESPACE}/fast/` },
      { name: 'bare', url: `http://127.0.0.1:${barePort}/` },
      { name: 'splice', url: `${spliceUrl}/db/${NAMESPACE}/fast/` },
      { name: 'hybrid', url: `${hybridUrl}/db/${NAMESPACE}/fast/` },
    ];
    if (fs.existsSync(NGINX_BIN)) {
      const nginxPort = await getFreePort();
      const nginx = await startNginx({ port: nginxPort, upstreamPort });
      stops.push(() => nginx.stop());
      await waitForHttp(`http://127.0.0.1:${nginxPort}/_up`, 'nginx', 200, nginx.process.exited);
      targets.push({ name: 'nginx', url: `http://127.0.0.1:${nginxPort}/` });
    } else {
      console.log(
        `(no ${NGINX_BIN}: the nginx anchor is skipped; apt-get install -y nginx-light provides it)`,
      );
    }

    if (IDLE_SECONDS > 0) {
      console.log(`==> idle for ${IDLE_SECONDS}s, as between bursts`);
      await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    }
    console.log(`==> proxy overhead: ${ROUNDS} alternating rounds of ${SECONDS}s per target`);
    const throughput = await measure(targets, { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS });
    const latency = await measure(targets, { rounds: ROUNDS, seconds: SECONDS, connections: 1 });

    console.log(`==> the free envelope's checks on against off: ${ENVELOPE_PAIRS} pairs`);
    const envelope = await comparePaired(
      { name: 'on', url: `${gatewayUrl}/db/${NAMESPACE}/fast/`, pid: gateway.pid },
      { name: 'off', url: `${envelopeOffUrl}/db/${NAMESPACE}/fast/`, pid: envelopeOff.pid },
      { pairs: ENVELOPE_PAIRS, seconds: SECONDS, connections: CONNECTIONS },
    );

    console.log('==> the default engine, direct and through the gateway');
    const auth = basicAuth(admin.username, admin.password);
    await seedBenchDocument(engine.url, auth);
    const engineLoad = await measure(
      [
        { name: 'direct', url: `${engine.url}/bench/doc`, headers: { Authorization: auth } },
        {
          name: 'gateway',
          url: `${gatewayUrl}/db/${NAMESPACE}/engine/bench/doc`,
          headers: { Authorization: auth },
        },
        {
          name: 'splice',
          url: `${spliceUrl}/db/${NAMESPACE}/engine/bench/doc`,
          headers: { Authorization: auth },
        },
        {
          name: 'hybrid',
          url: `${hybridUrl}/db/${NAMESPACE}/engine/bench/doc`,
          headers: { Authorization: auth },
        },
      ],
      { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS },
    );

    // Every response the load generator read through the hybrid: the spliced count should match it.
    const answered = [throughput, latency, engineLoad]
      .flatMap((measured) => measured[ROUNDS_OF].get('hybrid') ?? [])
      .reduce((sum, r) => sum + r.requests, 0);
    const report = {
      hybrid: { spliced: (await splicedRequests(hybridUrl)) - splicedBefore, answered },
      machine: { cpus: os.cpus().length, node: process.version, loadAverage: os.loadavg() },
      rounds: ROUNDS,
      secondsPerRun: SECONDS,
      connections: CONNECTIONS,
      throughput,
      latencyOneConnection: latency,
      ratios: {
        gatewayOverNginxThroughput: throughput.nginx
          ? round(throughput.gateway!.rps / throughput.nginx.rps, 2)
          : null,
        gatewayOverDirectThroughput: round(throughput.gateway!.rps / throughput.direct!.rps, 2),
        gatewayOverBareThroughput: round(throughput.gateway!.rps / throughput.bare!.rps, 2),
        bareOverNginxThroughput: throughput.nginx
          ? round(throughput.bare!.rps / throughput.nginx.rps, 2)
          : null,
        addedLatencyP50Us: round(latency.gateway!.p50Us - latency.direct!.p50Us),
        addedLatencyP99Us: round(latency.gateway!.p99Us - latency.direct!.p99Us),
        nginxAddedLatencyP50Us: latency.nginx ? round(latency.nginx.p50Us - latency.direct!.p50Us) : null,
        bareAddedLatencyP50Us: round(latency.bare!.p50Us - latency.direct!.p50Us),
        spliceOverNginxThroughput: throughput.nginx
          ? round(throughput.splice!.rps / throughput.nginx.rps, 2)
          : null,
        spliceOverBareThroughput: round(throughput.splice!.rps / throughput.bare!.rps, 2),
        spliceAddedLatencyP50Us: round(latency.splice!.p50Us - latency.direct!.p50Us),
        spliceAddedLatencyP99Us: round(latency.splice!.p99Us - latency.direct!.p99Us),
        hybridOverNginxThroughput: throughput.nginx
          ? round(throughput.hybrid!.rps / throughput.nginx.rps, 2)
          : null,
        hybridOverGatewayThroughput: round(throughput.hybrid!.rps / throughput.gateway!.rps, 2),
        hybridAddedLatencyP50Us: round(latency.hybrid!.p50Us - latency.direct!.p50Us),
        hybridAddedLatencyP99Us: round(latency.hybrid!.p99Us - latency.direct!.p99Us),
        engineThroughputGatewayOverDirect: round(engineLoad.gateway!.rps / engineLoad.direct!.rps, 2),
        engineThroughputSpliceOverDirect: round(engineLoad.splice!.rps / engineLoad.direct!.rps, 2),
        engineThroughputHybridOverDirect: round(engineLoad.hybrid!.rps / engineLoad.direct!.rps, 2),
      },
      /** The same ratios taken within each round, then their median and spread. */
      roundRatios: {
        throughput: Object.fromEntries(
          [
            ['gateway/nginx', 'gateway', 'nginx'],
            ['bare/nginx', 'bare', 'nginx'],
            ['splice/nginx', 'splice', 'nginx'],
            ['gateway/bare', 'gateway', 'bare'],
            ['splice/bare', 'splice', 'bare'],
            ['hybrid/nginx', 'hybrid', 'nginx'],
            ['hybrid/gateway', 'hybrid', 'gateway'],
            ['hybrid/splice', 'hybrid', 'splice'],
          ].map(([label, of, to]) => [label, roundRatios(throughput[ROUNDS_OF], of!, to!, (r) => r.rps)]),
        ),
        addedP50Us: Object.fromEntries(
          ['gateway', 'bare', 'splice', 'hybrid', 'nginx'].map((name) => {
            const added = (latency[ROUNDS_OF].get(name) ?? []).map(
              (r, i) => r.latencyUs.p50 - (latency[ROUNDS_OF].get('direct')?.[i]?.latencyUs.p50 ?? NaN),
            );
            return [name, added.length ? medianSpread(added) : null];
          }),
        ),
        addedP99Us: Object.fromEntries(
          ['gateway', 'bare', 'splice', 'hybrid', 'nginx'].map((name) => {
            const added = (latency[ROUNDS_OF].get(name) ?? []).map(
              (r, i) => r.latencyUs.p99 - (latency[ROUNDS_OF].get('direct')?.[i]?.latencyUs.p99 ?? NaN),
            );
            return [name, added.length ? medianSpread(added) : null];
          }),
        ),
        engine: {
          'gateway/direct': roundRatios(engineLoad[ROUNDS_OF], 'gateway', 'direct', (r) => r.rps),
          'splice/direct': roundRatios(engineLoad[ROUNDS_OF], 'splice', 'direct', (r) => r.rps),
          'hybrid/direct': roundRatios(engineLoad[ROUNDS_OF], 'hybrid', 'direct', (r) => r.rps),
        },
      },
      engine: engineLoad,
      envelope,
    };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => console.error(err));
  }
}

/** The hybrid gateway's settee_gateway_spliced_requests_total: proof its load took the fast path. */
async function splicedRequests(gatewayUrl: string): Promise<number> {
  const text = await (await fetch(`${gatewayUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('settee_gateway_spliced_requests_total '));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

await main();
