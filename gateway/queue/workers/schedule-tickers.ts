import type { Logger } from 'winston';
import type { BindingRegistry, QueueTarget } from '../core/binding-registry.js';
import type { QueueConfig } from '../core/config.js';
import { connectionFingerprint, type DatabaseConnections } from '../stores/database-connections.js';
import { queueKeys } from '../core/keys.js';
import { BindingStores } from '../stores/binding-stores.js';
import { quotasOf } from '../core/quotas.js';
import { ScheduleTicker } from './schedule-ticker.js';

export interface ScheduleTickers {
  stop(): Promise<void>;
}

/**
 * Runs one ScheduleTicker per binding in the registry on this replica, following its changes as
 * the delivery workers do: a new database restarts the ticker, a removed binding stops it.
 */
export function startScheduleTickers(options: {
  registry: BindingRegistry;
  connections: DatabaseConnections;
  config: QueueConfig;
  logger: Logger;
}): ScheduleTickers {
  const { registry, connections, config } = options;
  const logger = options.logger.child({ component: 'queue-schedules' });
  const keys = queueKeys(config.keyPrefix);
  const tickers = new Map<string, { fingerprint: string; ticker: ScheduleTicker }>();
  const stopping = new Set<Promise<void>>();
  const current = new Map<string, QueueTarget>();

  const stopTicker = (key: string): void => {
    const running = tickers.get(key);
    if (!running) return;
    tickers.delete(key);
    const done = running.ticker.stop().finally(() => stopping.delete(done));
    stopping.add(done);
  };

  const upsert = (target: QueueTarget): void => {
    // A change of limits alone keeps the ticker; it reads the binding's quota as it is now.
    current.set(target.key, target);
    const fingerprint = connectionFingerprint(target);
    if (tickers.get(target.key)?.fingerprint === fingerprint) return;
    stopTicker(target.key);
    const stores = new BindingStores({ redis: connections.get(target), keys, config, target });
    const ticker = new ScheduleTicker({
      redis: stores.redis,
      keys,
      wakeups: stores.wakeups,
      pollIntervalMs: config.pollIntervalMs,
      claimLeaseMs: config.scheduleClaimLeaseMs,
      eventCap: stores.eventCap,
      maxQueues: () => quotasOf(current.get(target.key) ?? target).maxQueues,
      logger: logger.child({ binding: target.key }),
    });
    tickers.set(target.key, { fingerprint, ticker });
    ticker.start();
  };

  const unsubscribe = registry.subscribe((event) => {
    if (event.type === 'upsert') upsert(event.target);
    else {
      current.delete(event.key);
      stopTicker(event.key);
    }
  });
  for (const target of registry.list()) upsert(target);

  return {
    async stop() {
      unsubscribe();
      for (const key of [...tickers.keys()]) stopTicker(key);
      await Promise.all([...stopping]);
    },
  };
}
