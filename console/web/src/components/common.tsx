import { useEffect, useState, type ReactNode } from 'react';
import type { InstanceRow, Permission } from '../lib/api-types.js';

export function PhaseBadge({ phase }: { phase: InstanceRow['phase'] }) {
  return <span className={`badge phase-${phase.toLowerCase()}`}>{phase}</span>;
}

export function Banner({ kind, children }: { kind: 'error' | 'warning' | 'info'; children: ReactNode }) {
  return (
    <div className={`banner banner-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** A control the user may not use, with RBAC's or the plan's reason beside it. */
export function Reason({ id, permission }: { id: string; permission: Permission | undefined }) {
  if (!permission || permission.allowed) return null;
  return (
    <p className="reason" id={id}>
      {permission.reason}
    </p>
  );
}

export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(timer);
  }, [copied]);
  const copy = (): void => {
    navigator.clipboard.writeText(value).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  };
  return (
    <button type="button" className="button small" onClick={copy}>
      {copied ? 'Copied' : 'Copy'}
      <span className="visually-hidden"> {label}</span>
    </button>
  );
}

/** A secret shown as dots until revealed; copy works either way. */
export function SecretField({ label, value, id }: { label: string; value: string; id: string }) {
  const [shown, setShown] = useState(false);
  return (
    <div className="field-row">
      <dt id={`${id}-label`}>{label}</dt>
      <dd>
        <code className="secret" aria-labelledby={`${id}-label`} data-testid={id}>
          {shown ? value : '••••••••••••'}
        </code>
        <button
          type="button"
          className="button small"
          onClick={() => setShown(!shown)}
          aria-pressed={shown}
          aria-label={`${shown ? 'Hide' : 'Show'} ${label}`}
        >
          {shown ? 'Hide' : 'Show'}
        </button>
        <CopyButton value={value} label={label} />
      </dd>
    </div>
  );
}

export function PlainField({
  label,
  value,
  id,
  copy,
}: {
  label: string;
  value: ReactNode;
  id: string;
  copy?: string;
}) {
  return (
    <div className="field-row">
      <dt>{label}</dt>
      <dd>
        <code data-testid={id}>{value}</code>
        {copy !== undefined && <CopyButton value={copy} label={label} />}
      </dd>
    </div>
  );
}

export function formatTime(value: string | null): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

/** An epoch-ms time as formatTime shows it; none is '—'. */
export const formatEpochMs = (ms: number | undefined): string =>
  formatTime(ms === undefined ? null : new Date(ms).toISOString());

export function EventsTable({
  events,
}: {
  events: { type: string; reason: string; message: string; count: number; lastSeen: string | null }[] | null;
}) {
  if (events === null) return <p className="muted">Your role may not read Events in this namespace.</p>;
  if (events.length === 0) return <p className="muted">No recent events.</p>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Recent events</caption>
        <thead>
          <tr>
            <th scope="col">Last seen</th>
            <th scope="col">Type</th>
            <th scope="col">Reason</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event, i) => (
            <tr key={i}>
              <td>{formatTime(event.lastSeen)}</td>
              <td>{event.type}</td>
              <td>{event.reason}</td>
              <td className="wrap">
                {event.message}
                {event.count > 1 ? ` (×${event.count})` : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
