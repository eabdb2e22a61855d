// The report date and period of a run, from its scheduled time in the organization's timezone
// (domain/report-configs.ts reportPeriod), including days whose UTC offset changes.
import { describe, expect, it } from 'vitest';
import { localMidnight, reportPeriod } from '../src/domain/report-configs.js';
import { escapeHtml, renderReportEmail } from '../src/domain/report-email.js';

describe('reportPeriod', () => {
  it('daily: the previous local day, also when it is the 23-hour day of the spring change', () => {
    // 07:30 CEST on 2027-03-29 = 05:30Z; the period is 2027-03-28, the 23-hour day of the change
    expect(reportPeriod(new Date('2027-03-29T05:30:00Z'), 'Europe/Berlin', 'daily')).toEqual({
      asOfDate: '2027-03-29',
      periodStart: '2027-03-27T23:00:00.000Z',
      periodEnd: '2027-03-28T22:00:00.000Z',
    });
  });

  it('daily: the report date is the local date, not the UTC one', () => {
    // 00:30 in Tokyo on 2026-11-23 is still 2026-11-22 in UTC
    expect(reportPeriod(new Date('2026-11-22T15:30:00Z'), 'Asia/Tokyo', 'daily')).toEqual({
      asOfDate: '2026-11-23',
      periodStart: '2026-11-21T15:00:00.000Z',
      periodEnd: '2026-11-22T15:00:00.000Z',
    });
  });

  it('weekly: the 7 local days before the report date, across the autumn change (a 25-hour day inside)', () => {
    expect(reportPeriod(new Date('2027-11-01T06:30:00Z'), 'Europe/Berlin', 'weekly')).toEqual({
      asOfDate: '2027-11-01',
      periodStart: '2027-10-24T22:00:00.000Z',
      periodEnd: '2027-10-31T23:00:00.000Z',
    });
  });

  it('monthly: the previous calendar month, also over a year end', () => {
    expect(reportPeriod(new Date('2027-01-01T06:30:00Z'), 'Europe/Berlin', 'monthly')).toEqual({
      asOfDate: '2027-01-01',
      periodStart: '2026-11-30T23:00:00.000Z',
      periodEnd: '2026-12-31T23:00:00.000Z',
    });
    expect(reportPeriod(new Date('2026-12-01T12:00:00Z'), 'America/New_York', 'monthly')).toEqual({
      asOfDate: '2026-12-01',
      periodStart: '2026-11-01T04:00:00.000Z',
      periodEnd: '2026-12-01T05:00:00.000Z',
    });
  });

  it('localMidnight of UTC is the date itself', () => {
    expect(localMidnight('2026-02-28', 'UTC').toISOString()).toBe('2026-02-28T00:00:00.000Z');
  });
});

describe('report email', () => {
  it('escapes every value of the summary table and the title', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const { html, text } = renderReportEmail({
      organizationName: 'Org',
      report: {
        title: 'T <i>',
        summaryColumns: ['<b>c</b>', 'v'],
        summaryRows: [{ label: '"l"', values: ['<img src=x onerror=alert(1)>'] }],
        rowCount: 1,
        counts: {},
        artifacts: [],
      },
      attached: ['a<b>.csv'],
      links: [{ filename: 'big.csv', size: 11 * 1024 * 1024, url: 'https://s3.example/x?a=1&b=2', expiresAt: new Date('2026-12-01T00:00:00Z') }],
    });
    expect(html).not.toMatch(/<(b|i|img)[ >]/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('href="https://s3.example/x?a=1&amp;b=2"');
    expect(html).toContain('the link expires 2026-12-01T00:00:00.000Z');
    expect(text).toContain('big.csv (11.0 MB, too large to attach): https://s3.example/x?a=1&b=2 (expires 2026-12-01T00:00:00.000Z)');
  });
});
