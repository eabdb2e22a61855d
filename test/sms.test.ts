/**
 * Texts: the kernel's SMS provider client (packages/platform/src/sms.ts) against the local SMS sink
 * (scripts/local/sms-sink.ts) over real HTTP, phone numbers in E.164, quiet hours across DST
 * changes, and the sink's page as a person sees it in headless Chromium.
 *
 * The adapter tests start a sink of their own (its provider faults would otherwise reach other
 * files' texts); the page test reads the run's sink, the one the services are configured with.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createSmsProvider, quietHoursEnd, SmsProviderError, smsMetrics, toE164 } from '@rp/platform';
import { freePorts } from '../scripts/local/components.js';
import { startSmsSink, type SmsSink } from '../scripts/local/sms-sink.js';
import { CHROMIUM, openPage } from './support/chromium.js';
import { waitForSms } from './support/stack.js';

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'sink-token-0123456789abcdef';
const FROM = '+4930901820';

async function failureOf(p: Promise<unknown>): Promise<SmsProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SmsProviderError);
  return err as SmsProviderError;
}

describe('SMS provider client ↔ local SMS sink', () => {
  let sink: SmsSink;
  beforeAll(async () => {
    sink = await startSmsSink({ accountSid: SID, authToken: TOKEN });
  });
  afterAll(async () => {
    await sink?.stop();
  });

  it('sends a text: the sink stores it and answers like Twilio (SM sid, queued, segments)', async () => {
    const provider = createSmsProvider({ url: sink.url, accountSid: SID, authToken: TOKEN });
    const body = `Invoice INV-1 is 14 days overdue. ${'x'.repeat(140)}`;
    const sent = await provider.send({ from: FROM, to: '+14155552671', body });
    expect(sent.sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(sent.status).toBe('queued');
    expect(sent.segments).toBe(2);
    const [stored] = ((await (await fetch(`${sink.url}/messages?to=%2B14155552671`)).json()) as { messages: unknown[] }).messages;
    expect(stored).toMatchObject({ sid: sent.sid, to: '+14155552671', from: FROM, body, num_segments: 2, encoding: 'GSM-7' });
  });

  it('counts segments with the SMS templates\' rules: one character outside GSM-7 makes it UCS-2', async () => {
    const provider = createSmsProvider({ url: sink.url, accountSid: SID, authToken: TOKEN });
    const body = `Zahlung überfällig ✓ ${'y'.repeat(60)}`;
    const sent = await provider.send({ from: FROM, to: '+4917612345678', body });
    expect(smsMetrics(body)).toMatchObject({ encoding: 'UCS-2', estimated_segment_count: 2 });
    expect(sent.segments).toBe(2);
  });

  it('a repeated idempotency key answers the first message and stores nothing new', async () => {
    const provider = createSmsProvider({ url: sink.url, accountSid: SID, authToken: TOKEN });
    const to = '+4915112345678';
    const first = await provider.send({ from: FROM, to, body: 'Reminder', idempotencyKey: 'msg-1' });
    const again = await provider.send({ from: FROM, to, body: 'Reminder', idempotencyKey: 'msg-1' });
    expect(again.sid).toBe(first.sid);
    const other = await provider.send({ from: FROM, to, body: 'Reminder', idempotencyKey: 'msg-2' });
    expect(other.sid).not.toBe(first.sid);
    expect(sink.messages().filter((m) => m.to === to)).toHaveLength(2);
  });

  it('wrong credentials are a permanent failure with the provider\'s code; the token is not in the error', async () => {
    const wrong = 'a-wrong-token-0123456789';
    const err = await failureOf(createSmsProvider({ url: sink.url, accountSid: SID, authToken: wrong }).send({ from: FROM, to: '+14155552671', body: 'hi' }));
    expect(err).toMatchObject({ retryable: false, httpStatus: 401, providerCode: 20003 });
    expect(`${err.message} ${String(err.stack)}`).not.toContain(wrong);
    const otherAccount = await failureOf(createSmsProvider({ url: sink.url, accountSid: 'AC-other', authToken: TOKEN }).send({ from: FROM, to: '+14155552671', body: 'hi' }));
    expect(otherAccount).toMatchObject({ retryable: false, httpStatus: 401 });
  });

  it('a number the provider refuses is a permanent failure naming its code', async () => {
    const provider = createSmsProvider({ url: sink.url, accountSid: SID, authToken: TOKEN });
    expect(await failureOf(provider.send({ from: FROM, to: '030 1234', body: 'hi' }))).toMatchObject({ retryable: false, httpStatus: 400, providerCode: 21211 });
    expect(await failureOf(provider.send({ from: FROM, to: '+14155552671', body: '' }))).toMatchObject({ retryable: false, providerCode: 21602 });
    expect(await failureOf(provider.send({ from: FROM, to: '+14155552671', body: 'z'.repeat(1601) }))).toMatchObject({ retryable: false, providerCode: 21617 });
  });

  it('a provider answering 500 or 429 is a retryable failure (with its Retry-After); the next send goes through', async () => {
    const provider = createSmsProvider({ url: sink.url, accountSid: SID, authToken: TOKEN });
    const to = '+4916012345678';
    const fault = (spec: object) =>
      fetch(`${sink.url}/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ to, ...spec }) });
    expect((await fault({ status: 500 })).status).toBe(204);
    expect(await failureOf(provider.send({ from: FROM, to, body: 'one' }))).toMatchObject({ retryable: true, httpStatus: 500 });
    expect((await fault({ status: 429, retry_after_seconds: 7 })).status).toBe(204);
    expect(await failureOf(provider.send({ from: FROM, to, body: 'two' }))).toMatchObject({ retryable: true, httpStatus: 429, retryAfterMs: 7000 });
    expect(sink.messages().filter((m) => m.to === to)).toHaveLength(0);
    await provider.send({ from: FROM, to, body: 'three' });
    expect(sink.messages().filter((m) => m.to === to).map((m) => m.body)).toEqual(['three']);
  });

  it('a provider that cannot be reached is a retryable failure', async () => {
    const [port] = await freePorts(1);
    const err = await failureOf(createSmsProvider({ url: `http://127.0.0.1:${port}`, accountSid: SID, authToken: TOKEN }).send({ from: FROM, to: '+14155552671', body: 'hi' }));
    expect(err).toMatchObject({ retryable: true, httpStatus: null });
  });

  it('DELETE /messages clears the sink', async () => {
    const provider = createSmsProvider({ url: sink.url, accountSid: SID, authToken: TOKEN });
    await provider.send({ from: FROM, to: '+14155552671', body: 'before clearing' });
    expect((await fetch(`${sink.url}/messages`, { method: 'DELETE' })).status).toBe(204);
    expect(((await (await fetch(`${sink.url}/messages`)).json()) as { messages: unknown[] }).messages).toEqual([]);
  });
});

describe('toE164', () => {
  it('normalises international and national forms', () => {
    expect(toE164('+49 30 901820')).toBe('+4930901820');
    expect(toE164('030 901820', 'DE')).toBe('+4930901820');
    expect(toE164('0049 (30) 901-820', 'de')).toBe('+4930901820');
    expect(toE164('(415) 555-2671', 'US')).toBe('+14155552671');
  });

  it('is null for what is not a valid number', () => {
    expect(toE164('030 901820')).toBeNull(); // national form without a country
    expect(toE164('12345', 'DE')).toBeNull();
    expect(toE164('not a phone', 'DE')).toBeNull();
    expect(toE164('')).toBeNull();
    expect(toE164('+49 30 901820', 'XX')).toBe('+4930901820'); // an unusable country is ignored
  });
});

describe('quietHoursEnd (20:00–08:00 local)', () => {
  const at = (iso: string) => quietHoursEnd(new Date(iso), 'Europe/Berlin')?.toISOString() ?? null;

  it('is null from 08:00 to 19:59:59 local', () => {
    expect(at('2026-06-15T06:00:00Z')).toBeNull(); // 08:00 CEST
    expect(at('2026-06-15T17:59:59Z')).toBeNull(); // 19:59:59 CEST
  });

  it('is the next 08:00 local from 20:00 on, and the same morning\'s 08:00 after midnight', () => {
    expect(at('2026-06-15T18:00:00Z')).toBe('2026-06-16T06:00:00.000Z'); // 20:00 CEST
    expect(at('2026-06-15T22:30:00Z')).toBe('2026-06-16T06:00:00.000Z'); // 00:30 CEST
    expect(at('2026-06-16T05:59:59Z')).toBe('2026-06-16T06:00:00.000Z'); // 07:59:59 CEST
    expect(at('2026-01-15T19:00:00Z')).toBe('2026-01-16T07:00:00.000Z'); // 20:00 CET
  });

  it('is the real 08:00 local across a DST change', () => {
    // Europe/Berlin springs forward on 2026-03-29 (02:00 CET → 03:00 CEST): the night is an hour shorter.
    expect(at('2026-03-28T19:30:00Z')).toBe('2026-03-29T06:00:00.000Z'); // 20:30 CET → 08:00 CEST
    expect(at('2026-03-29T01:30:00Z')).toBe('2026-03-29T06:00:00.000Z'); // 03:30 CEST
    // and falls back on 2026-10-25 (03:00 CEST → 02:00 CET): an hour longer.
    expect(at('2026-10-24T18:00:00Z')).toBe('2026-10-25T07:00:00.000Z'); // 20:00 CEST → 08:00 CET
    // America/New_York falls back on 2026-11-01.
    expect(quietHoursEnd(new Date('2026-11-01T02:00:00Z'), 'America/New_York')?.toISOString()).toBe('2026-11-01T13:00:00.000Z'); // 22:00 EDT
    // Pacific/Apia skipped 2011-12-30 altogether: 20:00 on the 29th waits for 08:00 on the 31st.
    expect(quietHoursEnd(new Date('2011-12-30T06:00:00Z'), 'Pacific/Apia')?.toISOString()).toBe('2011-12-30T18:00:00.000Z');
  });
});

describe('the SMS sink\'s page', () => {
  it.runIf(CHROMIUM)('lists a text the platform sent, newest first, escaped', async () => {
    const url = inject('smsSinkUrl');
    const provider = createSmsProvider({ url, accountSid: inject('smsAccountSid'), authToken: inject('smsAuthToken') });
    const to = `+4917${String(Date.now()).slice(-8)}`;
    await provider.send({ from: FROM, to, body: 'First reminder' });
    await provider.send({ from: FROM, to, body: 'Pay <b>now</b> & "thanks"<script>document.title="pwned"</script>' });
    expect(await waitForSms(to, { count: 2 })).toHaveLength(2);
    const page = await openPage({ width: 1200, height: 800 });
    try {
      await page.navigate(url);
      const rows = await page.waitFor<{ to: string; body: string }[]>(
        `(() => { const r = [...document.querySelectorAll('tr.message')].filter((tr) => tr.querySelector('.to').textContent === ${JSON.stringify(to)})
            .map((tr) => ({ to: tr.querySelector('.to').textContent, body: tr.querySelector('.body').textContent })); return r.length === 2 ? r : null; })()`,
        'both texts listed',
      );
      expect(rows.map((r) => r.body)).toEqual(['Pay <b>now</b> & "thanks"<script>document.title="pwned"</script>', 'First reminder']);
      expect(await page.evaluate('document.querySelectorAll("td.body b, td.body script").length')).toBe(0);
      expect(await page.evaluate('document.title')).toMatch(/^SMS sink/);
    } finally {
      await page.close();
    }
  });
});
