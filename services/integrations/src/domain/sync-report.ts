/**
 * The integration sync report's rows and summary, pure: shaped from the store's
 * SyncReportRow. Text that reaches the recipient (errors, health messages) is user-facing: any
 * network address in it (URLs, IPv4/IPv6 addresses with or without a port, host:port) is replaced
 * by `[address]`, so a report never discloses internal hosts.
 */
import { isoTime, type ReportCell, type ReportColumn } from '@rp/platform';
import type { SyncReportRow } from '../store/sync-report.js';

const ADDRESS_PATTERNS: RegExp[] = [
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)]+/gi, // URLs of any scheme
  /\[[0-9a-f:.]*:[0-9a-f:.]*\](?::\d{1,5})?/gi, // [IPv6]:port
  /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, // IPv4[:port]
  /\b(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:internal|local|localdomain|lan|svc|cluster\.local))(?::\d{1,5})?\b/gi, // internal host names
  /\b[a-z0-9-]+(?:\.[a-z0-9-]+)+:\d{1,5}\b/gi, // host:port
];

/** Bare IPv6 candidates: hex groups and colons; an address when it has `::` or all eight groups (not a time like 12:30:45). */
const IPV6 = /(?<![\w:])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?![\w:])/gi;

/** `text` without network addresses (each replaced by `[address]`). */
export function withoutAddresses(text: string): string {
  const t = ADDRESS_PATTERNS.reduce((acc, re) => acc.replace(re, '[address]'), text);
  return t.replace(IPV6, (m) => (/[0-9a-f]/i.test(m) && (m.includes('::') || m.split(':').length === 8) ? '[address]' : m));
}

export const SYNC_REPORT_COLUMNS: readonly ReportColumn[] = [
  { header: 'Connection', kind: 'text', width: 30 },
  { header: 'Provider', kind: 'text', width: 22 },
  { header: 'Health', kind: 'text', width: 24 },
  { header: 'Health message', kind: 'text', width: 50 },
  { header: 'Sync disabled', kind: 'text', width: 12 },
  { header: 'Model', kind: 'text', width: 20 },
  { header: 'Last successful sync (UTC)', kind: 'text', width: 24 },
  { header: 'Completed runs', kind: 'integer' },
  { header: 'Failed runs', kind: 'integer' },
  { header: 'Cancelled runs', kind: 'integer' },
  { header: 'Runs in progress', kind: 'integer' },
  { header: 'Records synced', kind: 'integer' },
  { header: 'Errors', kind: 'text', width: 80 },
];

export function healthLabel(r: Pick<SyncReportRow, 'health' | 'is_authentication_pending'>): string {
  if (r.health) return r.health.status_code;
  return r.is_authentication_pending ? 'authentication_required' : 'unknown';
}

const iso = (d: Date | null) => isoTime(d) ?? '';

export function errorsText(errors: SyncReportRow['errors']): string {
  return errors.map((e) => `${withoutAddresses(e.error)}${e.occurrences > 1 ? ` (${e.occurrences}×)` : ''}`).join(' | ');
}

export function syncReportCells(r: SyncReportRow): ReportCell[] {
  return [
    r.connection_name,
    r.provider_name,
    healthLabel(r),
    withoutAddresses(r.health?.message ?? ''),
    r.is_sync_disabled ? 'yes' : 'no',
    r.model_name ?? '',
    iso(r.last_successful_sync),
    r.completed,
    r.failed,
    r.cancelled,
    r.in_progress,
    r.records_synced,
    errorsText(r.errors),
  ];
}

export interface ConnectionSummary {
  connectionId: string;
  name: string;
  provider: string;
  health: string;
  completed: number;
  failed: number;
  cancelled: number;
  records: number;
  lastSuccess: Date | null;
}

/** Per connection: its models' counts added up, the latest successful sync of any model. */
export function summarizeConnections(rows: readonly SyncReportRow[]): ConnectionSummary[] {
  const out = new Map<string, ConnectionSummary>();
  for (const r of rows) {
    let s = out.get(r.connection_id);
    if (!s) {
      s = { connectionId: r.connection_id, name: r.connection_name, provider: r.provider_name, health: healthLabel(r), completed: 0, failed: 0, cancelled: 0, records: 0, lastSuccess: null };
      out.set(r.connection_id, s);
    }
    s.completed += r.completed;
    s.failed += r.failed;
    s.cancelled += r.cancelled;
    s.records += r.records_synced;
    if (r.last_successful_sync && (!s.lastSuccess || r.last_successful_sync > s.lastSuccess)) s.lastSuccess = r.last_successful_sync;
  }
  return [...out.values()];
}

export const SYNC_SUMMARY_COLUMNS = ['Connection', 'Provider', 'Health', 'Completed runs', 'Failed runs', 'Cancelled runs', 'Records synced', 'Last successful sync (UTC)'];

export function summaryValues(s: Omit<ConnectionSummary, 'connectionId' | 'name'>): string[] {
  return [s.provider, s.health, String(s.completed), String(s.failed), String(s.cancelled), String(s.records), iso(s.lastSuccess)];
}
