/**
 * Mailbox settings (spec 2.19, row 22) through the gateway: null until configured, the two
 * transports, the write-only domain-send API key (never in a response, a log line or a plaintext
 * column; sealed with the kernel's secrets scheme), derived inbound host, field and cross-field
 * rules, platform-set admin_consented_at, admin-only writes, tenant isolation.
 *
 * SQL is used only to read what was stored (the key's column) and to open the envelope with the
 * kernel's key; every state is produced through the API. The log test runs the admin API as its own
 * process (as `npm start` does) with LOG_LEVEL=trace and reads everything it printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSecret } from '@rp/platform';
import { startGateway, loadGatewayConfig, type Gateway } from '@rp/api-gateway';
import { CONNECTION_SECRETS_KEY, startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
let memberToken: string;

const KEY = 'sk-live-4f1c9e2a7b3d8e6f0a1b2c3d4e5f6a7b';
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const CLIENT = '3ed5e9c2-1f0a-4b8e-9d7c-6a5b4c3d2e1f';

const put = (token: string, body: unknown) => stack.request('PUT', '/v2/mailbox-settings', { token, body });
const get = (token: string) => stack.request('GET', '/v2/mailbox-settings', { token });

function domainSend(extra: Record<string, unknown> = {}) {
  return { transport_provider: 'domain_send', domain_send: { domain_name: 'mail.acme.example', api_key: KEY, ...extra } };
}

/** Any 8 consecutive characters of `secret` in `text` (an excerpt of the key counts as a leak). */
function leaks(text: string, secret: string): string | null {
  for (let i = 0; i + 8 <= secret.length; i++) if (text.includes(secret.slice(i, i + 8))) return secret.slice(i, i + 8);
  return null;
}

async function storedRow(orgId: string) {
  const [row] = await stack.sql(`SELECT *, t::text AS whole FROM admin.mailbox_settings t WHERE organization_id = $1`, [orgId]);
  return row;
}

beforeAll(async () => {
  stack = await startStack();
  orgA = await stack.onboard('Mailbox A');
  orgB = await stack.onboard('Mailbox B');
  const created = await stack.request('POST', '/v2/users', { token: orgA.token, body: { email: 'member@mailbox.example', name: 'Mo Member', role: 'member' } });
  expect(created.status).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  memberToken = ((await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', created.body.id], stack.env)) as { token: string }).token;
});
afterAll(async () => stack?.close());

describe('mailbox settings', () => {
  it('answer JSON null (200) until configured; a member may read but not write (403, nothing stored)', async () => {
    const before = await get(orgA.token);
    expect(before.status).toBe(200);
    expect(before.headers.get('content-type')).toMatch(/application\/json/);
    expect(before.text).toBe('null');
    expect(before.body).toBeNull();

    const denied = await put(memberToken, domainSend());
    expect(denied.status).toBe(403);
    expect(denied.body.type).toBe('forbidden');
    expect(denied.text).not.toContain(KEY);
    expect((await get(memberToken)).body).toBeNull();
    expect(await storedRow(orgA.organizationId)).toBeUndefined();
  });

  it('domain_send: the key is sealed with the kernel scheme, answered only as has_api_key; the inbound host defaults under MAIL_INBOUND_DOMAIN', async () => {
    const res = await put(orgA.token, domainSend());
    expect(res.status, res.text).toBe(200);
    expect(res.text).not.toContain(KEY);
    expect(res.body).toMatchObject({
      object: 'mailbox_settings',
      transport_provider: 'domain_send',
      hybrid_mode_enabled: false,
      microsoft: { enabled: false, admin_consented: false, admin_consented_at: null, application_scopes: [], delegated_scopes: [] },
      google: { enabled: false },
      centralized_inbox: { auto_assign: false, auto_assign_threshold: 80, matching_guidelines: null },
      domain_send: {
        domain_name: 'mail.acme.example',
        inbound_parse_hostname: null,
        effective_inbound_hostname: `${orgA.organizationId}.inbound.receivables.local`,
        has_api_key: true,
      },
    });
    expect(res.body.domain_send).not.toHaveProperty('api_key');

    const again = await get(orgA.token);
    expect(again.body).toEqual(res.body);
    expect(again.text).not.toContain(KEY);
    expect((await get(memberToken)).body.domain_send.has_api_key).toBe(true);

    // No plaintext anywhere in the row; the column holds an envelope the kernel opens for this organization only.
    const row = await storedRow(orgA.organizationId);
    expect(row.whole).not.toContain(KEY);
    expect(row.api_key_envelope).toMatch(/^v1\.[0-9a-f]{8}\./);
    const keys = { CONNECTION_SECRETS_KEY, CONNECTION_SECRETS_PREVIOUS_KEYS: [] };
    expect(openSecret(keys, `mailbox-settings:${orgA.organizationId}:domain-send-api-key`, row.api_key_envelope)).toBe(KEY);
    expect(() => openSecret(keys, `mailbox-settings:${orgB.organizationId}:domain-send-api-key`, row.api_key_envelope)).toThrow();
    // The database itself refuses a plaintext key in that column.
    await expect(stack.sql(`UPDATE admin.mailbox_settings SET api_key_envelope = $2 WHERE organization_id = $1`, [orgA.organizationId, KEY])).rejects.toThrow(
      /mailbox_settings_api_key_sealed/,
    );
  });

  it('PUT keeps the stored key when api_key is omitted, replaces it when given, removes it with null', async () => {
    const first = await storedRow(orgA.organizationId);
    const kept = await put(orgA.token, {
      transport_provider: 'domain_send',
      domain_send: { domain_name: 'Mail.Acme.Example', inbound_parse_hostname: 'Replies.Acme.Example' },
      centralized_inbox: { auto_assign: true, auto_assign_threshold: 0, matching_guidelines: 'Match on invoice numbers first.' },
    });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.domain_send).toEqual({
      domain_name: 'mail.acme.example',
      inbound_parse_hostname: 'replies.acme.example',
      effective_inbound_hostname: 'replies.acme.example',
      has_api_key: true,
    });
    expect(kept.body.centralized_inbox).toEqual({ auto_assign: true, auto_assign_threshold: 0, matching_guidelines: 'Match on invoice numbers first.' });
    expect((await storedRow(orgA.organizationId)).api_key_envelope).toBe(first.api_key_envelope);

    const replaced = await put(orgA.token, domainSend({ api_key: `${KEY}-rotated` }));
    expect(replaced.status).toBe(200);
    expect(replaced.text).not.toContain(KEY);
    const row = await storedRow(orgA.organizationId);
    expect(row.api_key_envelope).not.toBe(first.api_key_envelope);
    expect(openSecret({ CONNECTION_SECRETS_KEY }, `mailbox-settings:${orgA.organizationId}:domain-send-api-key`, row.api_key_envelope)).toBe(`${KEY}-rotated`);

    // domain_send without any key (none given, null given) is refused and changes nothing
    const noKey = await put(orgA.token, domainSend({ api_key: null }));
    expect(noKey.status).toBe(422);
    expect(noKey.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'domain_send', 'api_key'], type: 'missing' })]);
    expect((await storedRow(orgA.organizationId)).api_key_envelope).toBe(row.api_key_envelope);

    const removed = await put(orgA.token, { transport_provider: 'oauth_sync', google: { enabled: true }, domain_send: { api_key: null } });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toMatchObject({ transport_provider: 'oauth_sync', google: { enabled: true }, domain_send: { domain_name: null, has_api_key: false } });
    expect((await storedRow(orgA.organizationId)).api_key_envelope).toBeNull();
  });

  it('refuses bad fields, each with its loc, all at once, and changes nothing', async () => {
    const before = (await get(orgA.token)).body;
    const res = await put(orgA.token, {
      transport_provider: 'smtp_relay',
      microsoft: {
        enabled: true,
        application_scopes: ['Mail.Read', 7],
        delegated_scopes: 'Mail.Send',
        azure_tenant_id: 'contoso',
        azure_client_id: '3ed5e9c2-1f0a-4b8e-9d7c',
        admin_consented_at: '2026-01-01T00:00:00Z',
      },
      centralized_inbox: { auto_assign_threshold: 101 },
      domain_send: { domain_name: '192.168.1.10', inbound_parse_hostname: 'localhost', has_api_key: true, api_key: 'has space in it' },
    });
    expect(res.status).toBe(422);
    expect(res.text).not.toContain('has space in it');
    const byLoc = Object.fromEntries(res.body.errors.map((e: { loc: unknown[]; msg: string }) => [e.loc.join('.'), e.msg]));
    expect(Object.keys(byLoc).sort()).toEqual(
      [
        'body.transport_provider',
        'body.microsoft.application_scopes.1',
        'body.microsoft.delegated_scopes',
        'body.microsoft.azure_tenant_id',
        'body.microsoft.azure_client_id',
        'body.microsoft',
        'body.centralized_inbox.auto_assign_threshold',
        'body.domain_send.domain_name',
        'body.domain_send.inbound_parse_hostname',
        'body.domain_send',
        'body.domain_send.api_key',
      ].sort(),
    );
    expect(byLoc['body.microsoft']).toMatch(/admin_consented_at is set by the platform/);
    expect(byLoc['body.domain_send']).toMatch(/has_api_key/);
    expect(byLoc['body.microsoft.azure_tenant_id']).toMatch(/GUID/);
    expect(byLoc['body.domain_send.domain_name']).toMatch(/host name/);
    expect((await get(orgA.token)).body).toEqual(before);

    for (const [threshold, ok] of [[-1, false], [1.5, false], ['50', false], [0, true], [100, true]] as const) {
      const r = await put(orgA.token, { transport_provider: 'oauth_sync', google: { enabled: true }, centralized_inbox: { auto_assign_threshold: threshold } });
      expect(r.status, `threshold ${threshold}`).toBe(ok ? 200 : 422);
      if (!ok) expect(r.body.errors[0].loc).toEqual(['body', 'centralized_inbox', 'auto_assign_threshold']);
    }
    for (const host of ['mail', 'mail.example.com.', 'mail_box.example.com', '-mail.example.com', 'mail.example.123', `${'a'.repeat(64)}.example.com`, 'mail..example.com']) {
      const r = await put(orgA.token, domainSend({ domain_name: host }));
      expect(r.status, host).toBe(422);
      expect(r.body.errors[0].loc).toEqual(['body', 'domain_send', 'domain_name']);
    }
    expect((await put(orgA.token, domainSend({ domain_name: 'xn--bcher-kva.example' }))).status).toBe(200);
  });

  it('cross-field rules: what each transport needs, Microsoft ids, the platform inbound domain', async () => {
    const oauthWithoutProvider = await put(orgA.token, { transport_provider: 'oauth_sync' });
    expect(oauthWithoutProvider.status).toBe(422);
    expect(oauthWithoutProvider.body.errors.map((e: { loc: unknown[] }) => e.loc)).toEqual([['body', 'transport_provider']]);

    const ms = await put(orgA.token, { transport_provider: 'oauth_sync', microsoft: { enabled: true, is_byo: true } });
    expect(ms.status).toBe(422);
    expect(ms.body.errors.map((e: { loc: unknown[] }) => e.loc.join('.')).sort()).toEqual(['body.microsoft.azure_client_id', 'body.microsoft.azure_tenant_id']);

    const hybridNoDomain = await put(orgB.token, { transport_provider: 'oauth_sync', hybrid_mode_enabled: true, google: { enabled: true } });
    expect(hybridNoDomain.status).toBe(422);
    expect(hybridNoDomain.body.errors.map((e: { loc: unknown[] }) => e.loc.join('.')).sort()).toEqual(['body.domain_send.api_key', 'body.domain_send.domain_name']);

    const underPlatform = await put(orgA.token, domainSend({ inbound_parse_hostname: `${orgB.organizationId}.inbound.receivables.local` }));
    expect(underPlatform.status).toBe(422);
    expect(underPlatform.body.errors[0]).toMatchObject({ loc: ['body', 'domain_send', 'inbound_parse_hostname'], msg: expect.stringMatching(/platform's inbound domain/) });

    const hybrid = await put(orgA.token, {
      transport_provider: 'oauth_sync',
      hybrid_mode_enabled: true,
      microsoft: { enabled: true, azure_tenant_id: TENANT.toUpperCase(), is_byo: true, azure_client_id: CLIENT, delegated_scopes: ['Mail.Read', 'Mail.Send', 'Mail.Read'] },
      domain_send: { domain_name: 'mail.acme.example', inbound_parse_hostname: 'replies.acme.example', api_key: KEY },
    });
    expect(hybrid.status, hybrid.text).toBe(200);
    expect(hybrid.body.microsoft).toMatchObject({ azure_tenant_id: TENANT, azure_client_id: CLIENT, delegated_scopes: ['Mail.Read', 'Mail.Send'] });
  });

  it('admin_consented_at is stamped by the platform when consent turns true, kept while true, cleared when false', async () => {
    const body = (consented: boolean) => ({ transport_provider: 'oauth_sync', microsoft: { enabled: true, azure_tenant_id: TENANT, admin_consented: consented, application_scopes: ['Mail.ReadWrite'] } });
    const before = Date.now();
    const on = await put(orgA.token, body(true));
    expect(on.status, on.text).toBe(200);
    const stamp = on.body.microsoft.admin_consented_at as string;
    expect(stamp).toMatch(/Z$/);
    expect(new Date(stamp).getTime()).toBeGreaterThanOrEqual(before - 5000);
    expect((await put(orgA.token, body(true))).body.microsoft.admin_consented_at).toBe(stamp);
    const off = await put(orgA.token, body(false));
    expect(off.body.microsoft).toMatchObject({ admin_consented: false, admin_consented_at: null });
    const sent = await put(orgA.token, { ...body(true), microsoft: { ...body(true).microsoft, admin_consented_at: stamp } });
    expect(sent.status).toBe(422);
    expect(sent.body.errors[0]).toMatchObject({ loc: ['body', 'microsoft'], msg: expect.stringMatching(/admin_consented_at is set by the platform/) });
  });

  it('tenant isolation: org B sees null, its writes touch only its own settings, and may not take A\'s inbound host (409)', async () => {
    expect((await put(orgA.token, domainSend({ inbound_parse_hostname: 'replies.acme.example' }))).status).toBe(200);
    const a = (await get(orgA.token)).body;
    const b = await get(orgB.token);
    expect(b.status).toBe(200);
    expect(b.body).toBeNull();

    const taken = await put(orgB.token, domainSend({ inbound_parse_hostname: 'REPLIES.acme.example' }));
    expect(taken.status).toBe(409);
    expect(taken.body.type).toBe('conflict');
    expect((await get(orgB.token)).body).toBeNull();

    const own = await put(orgB.token, domainSend({ api_key: 'sk-org-b-0000000000' }));
    expect(own.status).toBe(200);
    expect(own.body.domain_send.effective_inbound_hostname).toBe(`${orgB.organizationId}.inbound.receivables.local`);
    expect((await get(orgA.token)).body).toEqual(a);
  });

  it('a malformed body holding the key is refused without quoting it back', async () => {
    const res = await stack.request('PUT', '/v2/mailbox-settings', {
      token: orgA.token,
      rawBody: `{"transport_provider":"domain_send","domain_send":{"api_key":${KEY}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['body']);
    expect(leaks(res.text, KEY)).toBeNull();
  });
});

describe('mailbox key and the logs', () => {
  let child: ChildProcess;
  let gateway: Gateway;
  let output = '';

  beforeAll(async () => {
    // The admin API in its own process, logging everything, behind a gateway of its own.
    child = spawn(process.execPath, ['--import', 'tsx', 'services/admin/src/server.ts'], {
      env: { ...process.env, ...stack.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'trace' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = output.match(/"port":(\d+)[^\n]*API listening/);
        if (m) {
          clearInterval(timer);
          resolve(Number(m[1]));
        }
      }, 100);
      child.on('exit', (code) => {
        clearInterval(timer);
        reject(new Error(`admin API exited (${code}): ${output}`));
      });
    });
    gateway = await startGateway(
      loadGatewayConfig({
        ...stack.env,
        ADMIN_URL: `http://127.0.0.1:${port}`,
        INTEGRATIONS_URL: `http://127.0.0.1:${stack.apis.integrations.port}`,
        CASH_APP_URL: `http://127.0.0.1:${stack.apis['cash-app'].port}`,
        KNOWLEDGE_URL: `http://127.0.0.1:${stack.apis.knowledge.port}`,
      }),
      { port: 0 },
    );
  }, 120_000);
  afterAll(async () => {
    await gateway?.close();
    child?.kill('SIGTERM');
  });

  it('never prints the key: saved, replaced, refused', async () => {
    const url = `http://127.0.0.1:${gateway.port}/v2/mailbox-settings`;
    const send = (body: unknown, raw?: string) =>
      fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${orgB.token}`, 'content-type': 'application/json' }, body: raw ?? JSON.stringify(body) });
    const secret = 'sk-logged-never-9d8c7b6a5f4e3d2c1b0a';
    expect((await send(domainSend({ api_key: secret }))).status).toBe(200);
    expect((await send(domainSend({ api_key: `${secret}-2` }))).status).toBe(200);
    expect((await send(domainSend({ api_key: `${secret} bad` }))).status).toBe(422);
    expect((await send(null, `{"domain_send":{"api_key":${secret}}}`)).status).toBe(422);
    expect((await send({ ...domainSend({ api_key: secret }), microsoft: { admin_consented_at: 'x' } })).status).toBe(422);
    await expect.poll(() => (output.match(/mailbox settings saved/g) ?? []).length, { timeout: 10_000 }).toBe(2);
    // the service logged these requests, and what changed, but not the key
    expect(output).toMatch(/"api_key_change":"replaced"/);
    await expect.poll(() => (output.match(/"path":"\/v2\/mailbox-settings"/g) ?? []).length, { timeout: 10_000 }).toBe(5);
    expect(output).not.toContain(secret);
    expect(leaks(output, secret)).toBeNull();
  });
});
