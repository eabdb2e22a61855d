import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

async function start(entry: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, ['--import', 'tsx', entry], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 });
    return { code: 0, stderr: '' };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
}

describe('start-up with a bad configuration', () => {
  it.each([
    ['services/admin/src/server.ts', 'admin-api'],
    ['services/knowledge/src/worker.ts', 'knowledge-worker'],
    ['services/api-gateway/src/server.ts', 'api-gateway'],
  ])('%s stops with a message naming each bad variable', async (entry, name) => {
    const res = await start(entry, { DATABASE_URL: 'mysql://db/x', IDENTITY_SECRET: 'too-short', RATE_LIMIT_BURST: '0', TEMPORAL_ADDRESS: 'no-port' });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`${name}: Invalid configuration`);
    expect(res.stderr).toMatch(/DATABASE_URL: must be a postgres:\/\/ URL/);
    expect(res.stderr).toMatch(/IDENTITY_SECRET: must be at least 32 characters \(got "\*\*\*"\)/);
    expect(res.stderr).not.toContain('too-short');
  });
});
