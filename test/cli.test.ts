import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitForMail, type TestStack } from './support/stack.js';

const run = promisify(execFile);
let stack: TestStack;

async function cli(args: string[]): Promise<{ code: number; out: any; err: any }> {
  try {
    const { stdout } = await run(process.execPath, ['scripts/bootstrap.mjs', 'cli', '--quiet-bootstrap', ...args], {
      env: { ...process.env, DATABASE_URL: stack.env.DATABASE_URL, TEMPORAL_ADDRESS: stack.env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: stack.namespace },
    });
    return { code: 0, out: JSON.parse(stdout), err: null };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    if (typeof err.stderr !== "string") throw e;
    return { code: err.code, out: null, err: JSON.parse(err.stderr.trim().split('\n').pop()!) };
  }
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'] });
});
afterAll(async () => stack?.close());

describe('npm run cli', () => {
  let org: any;

  it('creates an organization with its first admin, an access token and an API key', async () => {
    const res = await cli(['org', 'create', '--name', 'Cli Corp', '--admin-email', 'boss@cli.example', '--admin-name', 'Bo Boss', '--currency', 'CHF', '--timezone', 'Europe/Zurich']);
    expect(res.code).toBe(0);
    org = res.out;
    expect(org).toMatchObject({
      organization: { object: 'organization', name: 'Cli Corp', base_currency: 'CHF', timezone: 'Europe/Zurich' },
      user: { email: 'boss@cli.example', role: 'admin' },
      organization_id: expect.any(String),
      user_id: expect.any(String),
      access_token: expect.stringMatching(/^rpu_/),
      api_key: expect.stringMatching(/^rpk_/),
    });
    const me = await stack.request('GET', '/v2/users/me', { token: org.access_token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(org.user_id);
    expect(await waitForMail('boss@cli.example')).toHaveLength(1);
  });

  it('creates users and issues, then revokes, tokens and API keys', async () => {
    const user = await cli(['user', 'create', '--org', org.organization_id, '--email', 'm@cli.example', '--name', 'Mo Member']);
    expect(user.code).toBe(0);
    expect(user.out).toMatchObject({ object: 'user', role: 'member', email: 'm@cli.example' });

    const token = await cli(['token', 'issue', '--org', org.organization_id, '--user', user.out.id, '--name', 'laptop']);
    expect(token.out).toMatchObject({ object: 'access_token', name: 'laptop', token: expect.stringMatching(/^rpu_/), user_id: user.out.id });
    expect((await stack.request('GET', '/v2/users/me', { token: token.out.token })).body.email).toBe('m@cli.example');

    const key = await cli(['api-key', 'create', '--org', org.organization_id, '--name', 'erp']);
    expect(key.out).toMatchObject({ object: 'api_key', name: 'erp', token: expect.stringMatching(/^rpk_/) });

    expect((await cli(['token', 'revoke', '--org', org.organization_id, '--id', token.out.id])).out.revoked_at).toEqual(expect.any(String));
    await expect.poll(async () => (await stack.request('GET', '/v2/users/me', { token: token.out.token })).status, { timeout: 2000, interval: 20 }).toBe(401);
    expect((await cli(['api-key', 'revoke', '--org', org.organization_id, '--id', key.out.id])).code).toBe(0);
  });

  it('explains bad input with a JSON error and exit code 2', async () => {
    const bad = await cli(['org', 'create', '--name', 'X', '--admin-email', 'not-an-email', '--admin-name', 'Y', '--currency', 'XYZ']);
    expect(bad.code).toBe(2);
    expect(bad.err.error).toMatch(/--admin-email/);
    expect(bad.err.error).toMatch(/--currency/);
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.err.error).toMatch(/unknown command/);
    const noOrg = await cli(['api-key', 'create', '--org', '00000000-0000-7000-8000-000000000000']);
    expect(noOrg.code).toBe(2);
    expect(noOrg.err.error).toMatch(/no organization/);
    const dup = await cli(['user', 'create', '--org', org.organization_id, '--email', 'M@cli.example', '--name', 'Dup']);
    expect(dup.code).toBe(2);
    expect(dup.err.error).toMatch(/already exists/);
  });
});
