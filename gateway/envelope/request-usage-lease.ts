import type { CustomObjectsApi } from '@kubernetes/client-node';
import { formatRequestCounts, requestUsageAnnotation, type RequestCounts } from '../../api/request-usage.js';
import { GATEWAY_FIELD_MANAGER } from '../field-manager.js';
import {
  applyLease,
  buildActivityLeaseMetadata,
  type ActivityLeaseMetadata,
  type ActivityRenewal,
} from '../proxy/activity-lease.js';

/** What one process writes for one instance: its counts of each UTC day it still reports. */
export interface RequestUsageReport {
  instance: ActivityRenewal['instance'];
  writerId: string;
  /** By UTC day (today, and yesterday's final counts for a while after midnight). */
  days: ReadonlyMap<string, RequestCounts>;
}

export interface RequestUsageLeaseJson {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: ActivityLeaseMetadata & { annotations: Record<string, string> };
}

/** The apply body: the Lease's identity and this writer's annotations, nothing else (no spec). */
export function buildRequestUsageLease(report: RequestUsageReport): RequestUsageLeaseJson {
  const annotations: Record<string, string> = {};
  for (const [day, counts] of report.days)
    annotations[requestUsageAnnotation(day, report.writerId)] = formatRequestCounts(counts);
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { ...buildActivityLeaseMetadata(report.instance), annotations },
  };
}

/**
 * Each process applies under a field manager of its own, so its annotations are its alone: an
 * apply replaces what this writer said before (a day it no longer reports is removed by the API
 * server) and never touches another process's, nor the renewal's fields (GATEWAY_FIELD_MANAGER).
 */
export function requestUsageFieldManager(writerId: string): string {
  return `${GATEWAY_FIELD_MANAGER}-usage-${writerId}`.slice(0, 128);
}

export type RequestUsageWriter = (report: RequestUsageReport) => Promise<void>;

export function requestUsageLeaseWriter(customObjects: CustomObjectsApi): RequestUsageWriter {
  return (report) =>
    applyLease(customObjects, buildRequestUsageLease(report), requestUsageFieldManager(report.writerId));
}
