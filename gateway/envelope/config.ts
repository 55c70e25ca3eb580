import { DEFAULT_FREE_ENVELOPE, DEFAULT_FREE_LIMITS } from '../../api/free-envelope.js';
import { isQuantity, parseQuantity } from '../../api/quantity.js';
import type { EnvReader } from '../../observability/env-reader.js';
import type { ClassRates } from './rate-limiter.js';

/** The free envelope as the gateway enforces it on free instances (docs/free-envelope.md). */
export interface EnvelopeConfig {
  /** SETTEE_GATEWAY_ENVELOPE (true): false turns every check below off (benchmarks compare both). */
  readonly enabled: boolean;
  /**
   * SETTEE_GATEWAY_FREE_READS_PER_SECOND (20), SETTEE_GATEWAY_FREE_WRITES_PER_SECOND (10),
   * SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND (5): requests per second per free instance across the
   * whole gateway; more get 429 with Retry-After.
   */
  readonly ratesPerSecond: ClassRates;
  /**
   * SETTEE_GATEWAY_REPLICAS (1): how many gateway replicas share those rates; each admits
   * rate / replicas. The chart sets it to gateway.replicaCount (or autoscaling.minReplicas).
   */
  readonly replicas: number;
  /**
   * SETTEE_GATEWAY_FREE_STORAGE (1Gi, the free envelope's storage): above this much data
   * (status.usage.storageBytes, measured by the operator) writes that add data get 402.
   */
  readonly storage: { readonly text: string; readonly bytes: number };
  /** SETTEE_GATEWAY_FREE_DATABASES (20): databases a free instance may hold; the next create gets 403. */
  readonly databases: number;
}

const RATE_RANGE = { min: 1, max: 1_000_000 };

export function readEnvelopeConfig(read: EnvReader): EnvelopeConfig {
  const storageText = read.string('SETTEE_GATEWAY_FREE_STORAGE', DEFAULT_FREE_ENVELOPE.storage);
  let storageBytes = parseQuantity(DEFAULT_FREE_ENVELOPE.storage);
  if (isQuantity(storageText) && parseQuantity(storageText) >= 1) storageBytes = parseQuantity(storageText);
  else read.problem(`SETTEE_GATEWAY_FREE_STORAGE=${storageText}: expected a size such as 512Mi or 1Gi`);
  return {
    enabled: read.boolean('SETTEE_GATEWAY_ENVELOPE', true),
    ratesPerSecond: {
      read: read.integer(
        'SETTEE_GATEWAY_FREE_READS_PER_SECOND',
        DEFAULT_FREE_LIMITS.readsPerSecond,
        RATE_RANGE,
      ),
      write: read.integer(
        'SETTEE_GATEWAY_FREE_WRITES_PER_SECOND',
        DEFAULT_FREE_LIMITS.writesPerSecond,
        RATE_RANGE,
      ),
      query: read.integer(
        'SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND',
        DEFAULT_FREE_LIMITS.queriesPerSecond,
        RATE_RANGE,
      ),
    },
    replicas: read.integer('SETTEE_GATEWAY_REPLICAS', 1, { min: 1, max: 1_000 }),
    storage: { text: storageText, bytes: storageBytes },
    databases: read.integer('SETTEE_GATEWAY_FREE_DATABASES', DEFAULT_FREE_LIMITS.databases, {
      min: 1,
      max: 1_000_000,
    }),
  };
}
