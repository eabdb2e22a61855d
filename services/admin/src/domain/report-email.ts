/**
 * The report email: an HTML body with the report's summary table (every value escaped) and the files,
 * attached or — over REPORT_ATTACHMENT_LIMIT_BYTES — linked with a presigned URL and its expiry; plus the
 * same as plain text.
 */
import type { BuiltReport } from '@rp/workflows';

/** Files larger than this (10 MiB) are linked, not attached. */
export const REPORT_ATTACHMENT_LIMIT_BYTES = 10 * 1024 * 1024;

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export interface ReportFileLink {
  filename: string;
  size: number;
  url: string;
  expiresAt: Date;
}

function megabytes(size: number): string {
  return `${(size / (1024 * 1024)).toFixed(1)} MB`;
}

export function renderReportEmail(input: { organizationName: string; report: BuiltReport; attached: string[]; links: ReportFileLink[] }): { subject: string; html: string; text: string } {
  const { report } = input;
  const subject = `${input.organizationName}: ${report.title}`;
  const head = report.summaryColumns.map((c) => `<th style="text-align:left;padding:4px 8px;border-bottom:1px solid #ccc">${escapeHtml(c)}</th>`).join('');
  const rows = report.summaryRows
    .map((r) => `<tr><td style="padding:4px 8px">${escapeHtml(r.label)}</td>${r.values.map((v) => `<td style="padding:4px 8px;text-align:right">${escapeHtml(v)}</td>`).join('')}</tr>`)
    .join('');
  const files: string[] = [];
  if (input.attached.length) files.push(`<p>Attached: ${input.attached.map(escapeHtml).join(', ')}.</p>`);
  for (const l of input.links) {
    files.push(
      `<p><a href="${escapeHtml(l.url)}">Download ${escapeHtml(l.filename)}</a> (${escapeHtml(megabytes(l.size))}, too large to attach); ` +
        `the link expires ${escapeHtml(l.expiresAt.toISOString())}.</p>`,
    );
  }
  const html =
    `<!doctype html><html><body style="font-family:sans-serif">` +
    `<h2>${escapeHtml(report.title)}</h2>` +
    `<table style="border-collapse:collapse"><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>` +
    `<p>${escapeHtml(String(report.rowCount))} rows in the full report.</p>${files.join('')}</body></html>`;
  const text = [
    report.title,
    '',
    report.summaryColumns.join('\t'),
    ...report.summaryRows.map((r) => [r.label, ...r.values].join('\t')),
    '',
    `${report.rowCount} rows in the full report.`,
    ...(input.attached.length ? [`Attached: ${input.attached.join(', ')}.`] : []),
    ...input.links.map((l) => `${l.filename} (${megabytes(l.size)}, too large to attach): ${l.url} (expires ${l.expiresAt.toISOString()})`),
  ].join('\n');
  return { subject, html, text };
}
