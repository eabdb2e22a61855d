import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_TABLE, serviceFor } from '@rp/api-gateway';
import { startStack, type TestStack } from './support/stack.js';

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

describe('merged OpenAPI document', () => {
  it('lists every service\'s operations, each routed by the gateway to the service that declares it', async () => {
    const res = await stack.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc).toMatchObject({ openapi: '3.1.0', info: { title: 'Receivables Platform API', version: '2.0.0' } });
    expect(doc.info.description).not.toMatch(/Not listed/);
    expect(doc.components.schemas).toHaveProperty('ProblemV2');
    expect(doc.components.securitySchemes).toHaveProperty('bearerAuth');

    for (const [name, api] of Object.entries(stack.apis)) {
      const own = (await (await fetch(`http://127.0.0.1:${api.port}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      const paths = Object.keys(own.paths);
      expect(paths.length, `${name} declares operations`).toBeGreaterThan(0);
      for (const p of paths) {
        expect(doc.paths[p], `${p} merged`).toBeDefined();
        expect(serviceFor(p.replace(/\{[^}]+\}/g, 'x')), `${p} routes to ${name}`).toBe(name);
      }
    }
    expect(new Set(ROUTE_TABLE.map((r) => r.service))).toEqual(new Set(Object.keys(stack.apis)));
    const listUnits = doc.paths['/v2/business-units'].get;
    expect(listUnits.parameters.find((p: { name: string }) => p.name === 'page_size').schema).toBeDefined();
    expect(listUnits.responses['401'].content['application/json'].schema.$ref).toBe('#/components/schemas/ProblemV2');
  });
});

const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

describe('API reference page', () => {
  it('is served at /docs', async () => {
    const res = await fetch(`${stack.gatewayUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('/openapi.json');
  });

  it.runIf(chromium)('renders every operation in a real browser', async () => {
    const profile = mkdtempSync(path.join(os.tmpdir(), 'chromium-'));
    try {
      const { stdout } = await promisify(execFile)(
        chromium!,
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          `--user-data-dir=${profile}`,
          '--virtual-time-budget=10000',
          '--dump-dom',
          `${stack.gatewayUrl}/docs`,
        ],
        { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      );
      expect(stdout).toContain('Receivables Platform API 2.0.0');
      const doc = (await stack.request('GET', '/openapi.json')).body;
      for (const ops of Object.values(doc.paths) as Record<string, { operationId: string }>[]) {
        for (const op of Object.values(ops)) expect(stdout).toContain(`id="${op.operationId}"`);
      }
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  });
});
