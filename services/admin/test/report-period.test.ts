// The report date and period of a run, from its scheduled time in the organization's timezone
// (domain/report-configs.ts reportPeriod), including days whose UTC offset changes; and what makes a
// Schedule's run of a daylight-saving day exactly one per local period (scheduledRunKey, skippedRunTimes).
import { describe, expect, it } from 'vitest';
import { localMidnight, reportPeriod, scheduledRunKey } from '../src/domain/report-configs.js';
import { reportCalendars, skippedRunTimes } from '../src/domain/report-schedules.js';
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

describe('daylight-saving days of 2026: one run per local period', () => {
  const CONFIG = '01a21836-b332-721f-9e80-472277f6ffac';

  it('the two instants of a time in the repeated hour share the run key (autumn change)', () => {
    // America/New_York, 1 November 2026: 01:30 EDT = 05:30Z, 01:30 EST = 06:30Z
    const ny = [new Date('2026-11-01T05:30:00Z'), new Date('2026-11-01T06:30:00Z')].map((t) => scheduledRunKey(CONFIG, 'daily', t, 'America/New_York'));
    expect(ny[0]).toBe(ny[1]);
    expect(ny[0]).toBe(`schedule:${CONFIG}:daily:2026-11-01`);
    // Europe/Berlin, 25 October 2026: 02:30 CEST = 00:30Z, 02:30 CET = 01:30Z
    const berlin = [new Date('2026-10-25T00:30:00Z'), new Date('2026-10-25T01:30:00Z')].map((t) => scheduledRunKey(CONFIG, 'daily', t, 'Europe/Berlin'));
    expect(berlin[0]).toBe(berlin[1]);
    // the next local day is another period
    expect(scheduledRunKey(CONFIG, 'daily', new Date('2026-10-26T01:30:00Z'), 'Europe/Berlin')).not.toBe(berlin[0]);
  });

  it('a time in the hour clocks skip runs at the first valid minute after it (spring change), in the same period', () => {
    expect(skippedRunTimes('02:30', 'Europe/Berlin', 2026, 2026)).toEqual([{ date: '2026-03-29', runDate: '2026-03-29', runAt: '03:00' }]);
    expect(skippedRunTimes('02:00', 'America/New_York', 2026, 2026)).toEqual([{ date: '2026-03-08', runDate: '2026-03-08', runAt: '03:00' }]);
    expect(skippedRunTimes('02:30', 'America/New_York', 2026, 2027)).toEqual([
      { date: '2026-03-08', runDate: '2026-03-08', runAt: '03:00' },
      { date: '2027-03-14', runDate: '2027-03-14', runAt: '03:00' },
    ]);
    // times that exist every day, and zones without daylight saving, add nothing
    expect(skippedRunTimes('03:00', 'Europe/Berlin', 2026, 2026)).toEqual([]);
    expect(skippedRunTimes('01:30', 'America/New_York', 2026, 2026)).toEqual([]);
    expect(skippedRunTimes('02:30', 'Asia/Tokyo', 2026, 2026)).toEqual([]);
    // the fallback instant (03:00 EDT = 07:00Z) is in the local period the skipped time would have had
    expect(scheduledRunKey(CONFIG, 'daily', new Date('2026-03-08T07:00:00Z'), 'America/New_York')).toBe(`schedule:${CONFIG}:daily:2026-03-08`);
  });

  it('the Schedule carries a dated entry for each skipped day on which the config runs', () => {
    const daily = reportCalendars({ frequency: 'daily', time: '02:30', weekday: null }, 'Europe/Berlin', [2026, 2026]);
    expect(daily).toHaveLength(2);
    expect(daily[1]).toMatchObject({ year: 2026, month: 'MARCH', dayOfMonth: 29, hour: 3, minute: 0 });
    // 29 March 2026 is a Sunday (weekday 6); a Monday report is not due that day
    expect(reportCalendars({ frequency: 'weekly', time: '02:30', weekday: 6 }, 'Europe/Berlin', [2026, 2026])).toHaveLength(2);
    expect(reportCalendars({ frequency: 'weekly', time: '02:30', weekday: 0 }, 'Europe/Berlin', [2026, 2026])).toHaveLength(1);
    expect(reportCalendars({ frequency: 'monthly', time: '02:30', weekday: null }, 'America/New_York', [2026, 2026])).toHaveLength(1);
    expect(reportCalendars({ frequency: 'daily', time: '07:30', weekday: null }, 'America/New_York', [2026, 2026])).toEqual([
      { hour: 7, minute: 30, second: 0, comment: 'daily at 07:30' },
    ]);
  });
});
