/**
 * The typed client (@rp/client): its committed types are what `npm run client:generate` makes of the
 * current route declarations (a stale file fails here: regenerate and commit), the in-process
 * document they are generated from is exactly what the running gateway serves at /openapi.json,
 * and calls through it reach the gateway with the token, answers and errors typed.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient } from '@rp/client';
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
