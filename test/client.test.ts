/**
 * The typed client (@rp/client): its committed types are what `npm run client:generate` makes of the
 * current route declarations (a stale file fails here: regenerate and commit), the in-process
 * document they are generated from is exactly what the running gateway serves at /openapi.json,
 * and calls through it reach the gateway with the token, answers and errors typed. Its
 * verifyWebhook accepts what the `standardwebhooks` package signs (also with a rotation's two
 * signatures) and refuses a tampered body, a wrong secret, a stale timestamp and missing headers.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createPlatformClient, verifyWebhook, WebhookVerificationError, type AnyWebhookEvent, type WebhookEvent } from '@rp/client';
import { CLIENT_TYPES_PATH, platformOpenApi, renderClientTypes } from '../scripts/client-types.js';
import { startStack, type TestStack } from './support/stack.js';

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

describe('generated client types', () => {
  it('are up to date with the route declarations (else run `npm run client:generate`)', async () => {
    const fresh = await renderClientTypes(platformOpenApi());
    const committed = readFileSync(CLIENT_TYPES_PATH, 'utf8');
    // Compared as text: a difference means the committed file is stale; the message shows the first differing line.
    const a = committed.split('\n');
    const b = fresh.split('\n');
    let i = 0;
    while (i < Math.max(a.length, b.length) && a[i] === b[i]) i++;
    const where = i === Math.max(a.length, b.length) ? '' : `line ${i + 1}: committed ${JSON.stringify(a[i] ?? null)}, generated ${JSON.stringify(b[i] ?? null)}`;
    expect(where, 'packages/client/src/generated/openapi.ts is stale: run `npm run client:generate` and commit it').toBe('');
    for (const op of ['listBankStatementTransactions', 'getBankStatement', 'listLedgerAccounts']) expect(fresh).toContain(`${op}: {`);
  });

  it('come from the same document the running gateway serves', async () => {
    const live = await stack.request('GET', '/openapi.json');
    expect(live.status).toBe(200);
    expect(live.body.info.description).not.toMatch(/Not listed/);
    expect(JSON.parse(JSON.stringify(platformOpenApi()))).toEqual(live.body);
  });
});

describe('typed client', () => {
  it('calls the gateway with the token; answers and errors come back typed', async () => {
    const org = await stack.onboard('Client user');
    const rp = createPlatformClient({ baseUrl: stack.gatewayUrl, token: org.token });

    const units = await rp.GET('/v2/business-units', {});
    expect(units.response.status).toBe(200);
    expect(units.error).toBeUndefined();
    expect(units.data!.total_records).toBe(units.data!.data.length);

    const created = await rp.POST('/v2/business-units', { body: { name: 'Typed unit', description: 'made by @rp/client' } });
    expect(created.error).toBeUndefined();
    expect(created.data).toMatchObject({ object: 'business_unit', name: 'Typed unit' });

    const missing = await rp.GET('/v2/adjustments/{adjustment_id}', { params: { path: { adjustment_id: '01900000-0000-7000-8000-000000000000' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.data).toBeUndefined();
    expect(missing.error).toMatchObject({ type: 'entity-not-found', status: 404 });

    const anonymous = createPlatformClient({ baseUrl: stack.gatewayUrl });
    const refused = await anonymous.GET('/v2/business-units', {});
    expect(refused.response.status).toBe(401);
    expect(refused.error).toMatchObject({ type: 'unauthorized' });
  });
});

describe('verifyWebhook', () => {
  const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
  const id = '019ac0de-4f6a-7c11-9a2b-5d3e8f1a2b3c';
  const body = JSON.stringify({
    id,
    object: 'event',
    type: 'payment.posted',
    created_at: '2026-11-26T19:25:00.000Z',
    data: { object: { object: 'payment', id: '019ac0d0-0000-7000-8000-000000000001', amount: 1250.5, currency: 'EUR' } },
  });
  /** Headers of a delivery signed by the standardwebhooks package with each secret in turn (a rotation sends two). */
  function signed(secrets: string[], payload = body, at = new Date()): Record<string, string> {
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, payload)).join(' '),
    };
  }
  function refusal(fn: () => unknown): WebhookVerificationError {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(WebhookVerificationError);
      return err as WebhookVerificationError;
    }
    throw new Error('verifyWebhook accepted the delivery');
  }

  it('returns the event of a body signed by the standardwebhooks package, typed by its type', () => {
    const key = secret();
    const event = verifyWebhook(key, signed([key]), body);
    expect(event).toEqual(JSON.parse(body));
    expectTypeOf(event).toEqualTypeOf<AnyWebhookEvent>();
    if (event.type === 'payment.posted') expectTypeOf(event).toEqualTypeOf<WebhookEvent<'payment.posted'>>();
    // Node's req.headers (any case, Buffer body) and the Fetch API's Headers are read alike
    const upper = Object.fromEntries(Object.entries(signed([key])).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(key, upper, Buffer.from(body))).toEqual(JSON.parse(body));
    expect(verifyWebhook(key, new Headers(signed([key])), new TextEncoder().encode(body))).toEqual(JSON.parse(body));
  });

  it('accepts a rotation header with two signatures when only the second is of its secret', () => {
    const [old, current] = [secret(), secret()];
    const headers = signed([old, current]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook(current, headers, body)).toMatchObject({ id, type: 'payment.posted' });
    expect(refusal(() => verifyWebhook(secret(), headers, body)).reason).toBe('bad_signature');
  });

  it('refuses a tampered body, a wrong secret, a stale or future timestamp, missing headers and a body that is not the event', () => {
    const key = secret();
    const tampered = body.replace('1250.5', '9250.5');
    expect(refusal(() => verifyWebhook(key, signed([key]), tampered)).reason).toBe('bad_signature');
    expect(refusal(() => verifyWebhook(secret(), signed([key]), body)).reason).toBe('bad_signature');
    const stale = refusal(() => verifyWebhook(key, signed([key], body, new Date(Date.now() - 10 * 60_000)), body));
    expect(stale.reason).toBe('stale_timestamp');
    expect(stale.message).toMatch(/more than 5 minutes old/);
    expect(refusal(() => verifyWebhook(key, signed([key], body, new Date(Date.now() + 10 * 60_000)), body)).reason).toBe('future_timestamp');
    const { 'webhook-signature': _drop, ...unsigned } = signed([key]);
    void _drop;
    expect(refusal(() => verifyWebhook(key, unsigned, body)).reason).toBe('missing_headers');
    const other = JSON.stringify({ ...JSON.parse(body), id: '019ac0de-0000-7000-8000-000000000000' });
    expect(refusal(() => verifyWebhook(key, signed([key], other), other)).reason).toBe('invalid_body');
    expect(refusal(() => verifyWebhook(key, signed([key], 'not json'), 'not json')).reason).toBe('invalid_body');
    expect(() => verifyWebhook('not a secret!', signed([key]), body)).toThrow(TypeError);
    expect(() => verifyWebhook(key, signed([key]), JSON.parse(body) as never)).toThrow(/raw/);
  });
});
