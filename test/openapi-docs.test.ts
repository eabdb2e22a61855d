import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_ASSET_PREFIX, ROUTE_TABLE, serviceFor, SWAGGER_UI_VERSION } from '@rp/api-gateway';
import { CHROMIUM, openPage } from './support/chromium.js';
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
      const own = (await (await fetch(`http://127.0.0.1:${api.port}/openapi.json`)).json()) as { paths: Record<string, unknown>; webhooks?: Record<string, unknown> };
      // the events a service declares (its webhooks) are merged as that service documents them
      for (const [type, hook] of Object.entries(own.webhooks ?? {})) expect(doc.webhooks?.[type], `${type} merged from ${name}`).toEqual(hook);
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

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
/** Where the screenshot of the reference page is written (var/ is git-ignored). */
const SCREENSHOT = fileURLToPath(new URL('../var/test-output/api-reference.png', import.meta.url));
const TRY_IT_SCREENSHOT = fileURLToPath(new URL('../var/test-output/api-reference-try-it.png', import.meta.url));

describe('API reference page', () => {
  it('is Swagger UI from the installed package, served by the gateway with content types and caching, no CDN', async () => {
    const page = await fetch(`${stack.gatewayUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self';.*connect-src 'self'/);
    const html = await page.text();
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//); // every asset from this gateway
    expect((await fetch(`${stack.gatewayUrl}/docs/`)).status).toBe(200);

    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets).toEqual(expect.arrayContaining([`${DOCS_ASSET_PREFIX}swagger-ui-bundle.js`, `${DOCS_ASSET_PREFIX}swagger-ui.css`, '/docs/init.js']));
    expect(DOCS_ASSET_PREFIX).toBe(`/docs/assets/${SWAGGER_UI_VERSION}/`);
    const types: Record<string, RegExp> = { '.js': /^text\/javascript; charset=utf-8$/, '.css': /^text\/css; charset=utf-8$/, '.png': /^image\/png$/ };
    for (const url of assets) {
      const res = await fetch(stack.gatewayUrl + url, { headers: { 'accept-encoding': 'gzip' } });
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-type'), url).toMatch(types[url.slice(url.lastIndexOf('.'))]);
      expect(res.headers.get('cache-control'), url).toBe(url.startsWith(DOCS_ASSET_PREFIX) ? 'public, max-age=31536000, immutable' : 'no-cache');
      const etag = res.headers.get('etag');
      expect(etag, url).toMatch(/^"[\w-]+"$/);
      if (!url.endsWith('.png')) expect(res.headers.get('content-encoding'), url).toBe('gzip');
      expect(res.headers.get('vary'), url).toMatch(/Accept-Encoding/i);
      expect((await res.arrayBuffer()).byteLength, url).toBeGreaterThan(0);
      const again = await fetch(stack.gatewayUrl + url, { headers: { 'if-none-match': etag!, 'accept-encoding': 'gzip' } });
      expect(again.status, url).toBe(304);
      const identity = await fetch(stack.gatewayUrl + url, { headers: { 'if-none-match': etag!, 'accept-encoding': 'identity' } });
      expect(identity.status, url).toBe(url.endsWith('.png') ? 304 : 200); // another coding, another validator
    }
    const bundle = await (await fetch(`${stack.gatewayUrl}${DOCS_ASSET_PREFIX}swagger-ui-bundle.js`)).text();
    expect(bundle).toContain('SwaggerUIBundle');

    const missing = await stack.request('GET', `${DOCS_ASSET_PREFIX}package.json`);
    expect(missing.status).toBe(404);
    expect((await stack.request('GET', '/docs/assets/0.0.1/swagger-ui-bundle.js')).status).toBe(404);
    const post = await stack.request('POST', '/docs');
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it.runIf(CHROMIUM)('renders every operation and webhook of /openapi.json, and "Try it out" with a pasted token calls the gateway', async () => {
    const doc = (await stack.request('GET', '/openapi.json')).body;
    const operationIds: string[] = [];
    for (const ops of Object.values(doc.paths) as Record<string, { operationId: string }>[]) {
      for (const [method, op] of Object.entries(ops)) if (HTTP_METHODS.has(method)) operationIds.push(op.operationId);
    }
    // the webhooks section (the events POSTed to subscribed endpoints) renders one block per event type too
    for (const hook of Object.values(doc.webhooks ?? {}) as { post: { operationId: string } }[]) operationIds.push(hook.post.operationId);
    expect(operationIds.length).toBeGreaterThan(40);
    const org = await stack.onboard('Docs reader');

    mkdirSync(fileURLToPath(new URL('../var/test-output/', import.meta.url)), { recursive: true });
    const page = await openPage({ width: 1280, height: 1000 });
    try {
      await page.navigate(`${stack.gatewayUrl}/docs`);
      // From 150 tags and operations on, Swagger UI virtualizes the list (only what is near the viewport is
      // in the DOM), so the page is scrolled through and every operation rendered on the way is collected.
      const shown = await page.waitFor<string[]>(
        `(async () => {
          const seen = (window.__operationsSeen ??= new Set());
          for (let y = 0; y <= document.documentElement.scrollHeight; y += 400) {
            window.scrollTo(0, y);
            await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
            for (const e of document.querySelectorAll('.opblock .opblock-summary-operation-id')) seen.add(e.textContent.trim());
          }
          return seen.size >= ${operationIds.length} && [...seen];
        })()`,
        `${operationIds.length} operations`,
      );
      expect([...shown].sort()).toEqual([...operationIds].sort());
      expect(await page.evaluate<string>(`document.querySelector('.info .title').textContent`)).toContain('Receivables Platform API');

      // "Try it out" on GET /v2/adjustments/ledger-accounts, first without a token (401 from the gateway)…
      const op = '[id$="-listLedgerAccounts"]';
      // scrolls from the top until the (possibly virtualized) operation is in the DOM
      const reveal = async () => {
        await page.evaluate('window.scrollTo(0, 0)');
        await page.waitFor(`document.querySelector('${op} .opblock-summary') || (window.scrollBy(0, 400), false)`, 'listLedgerAccounts scrolled into the list');
      };
      await reveal();
      await page.click(`${op} .opblock-summary-control`);
      await page.waitFor(`document.querySelector('${op} .try-out__btn')`, 'the Try it out button');
      await page.click(`${op} .try-out__btn`);
      await page.waitFor(`document.querySelector('${op} .execute')`, 'the Execute button');
      await page.click(`${op} .execute`);
      const status = `document.querySelector('${op} .live-responses-table .response .response-col_status')?.textContent.trim()`;
      expect(await page.waitFor<string>(status, 'the first response')).toBe('401');
      expect(await page.evaluate<string>(`document.querySelector('${op} .request-url pre').textContent`)).toBe(`${stack.gatewayUrl}/v2/adjustments/ledger-accounts`);

      // …then with the token pasted into Authorize: the gateway's real answer is shown.
      await page.click('.auth-wrapper .authorize');
      await page.waitFor(`document.querySelector('.modal-ux input')`, 'the Authorize dialog');
      await page.type('.modal-ux input', org.token);
      await page.click('.modal-ux .auth-btn-wrapper .authorize');
      await page.waitFor(`document.querySelector('.modal-ux .btn-done')`, 'the authorized state');
      await page.click('.modal-ux .btn-done');
      await reveal();
      await page.waitFor(`document.querySelector('${op} .execute')`, 'the Execute button again');
      await page.click(`${op} .execute`);
      expect(await page.waitFor<string>(`(${status}) === '200' && '200'`, 'the authorized response')).toBe('200');
      const body = JSON.parse(await page.evaluate<string>(`document.querySelector('${op} .live-responses-table .response-col_description pre').textContent`));
      const direct = await stack.request('GET', '/v2/adjustments/ledger-accounts', { token: org.token });
      expect(body).toEqual(direct.body);
      expect(body.data.map((a: { number: string }) => a.number)).toContain('4900');
      expect(await page.evaluate<string>(`document.querySelector('${op} .curl-command').textContent`)).toContain(`Authorization: Bearer ${org.token}`);
      await page.evaluate(`document.querySelector('${op} .live-responses-table').scrollIntoView({ block: 'start' })`);
      writeFileSync(TRY_IT_SCREENSHOT, await page.screenshot({ fullPage: false }));
      console.log(`API reference "Try it out" screenshot: ${TRY_IT_SCREENSHOT}`);

      // Nothing came from anywhere but this gateway, and the page raised no error (CSP included).
      const foreign = page.requests.filter((u) => !u.startsWith(`${stack.gatewayUrl}/`) && !u.startsWith('data:'));
      expect(foreign).toEqual([]);
      expect(page.errors.filter((e) => !/401 \(Unauthorized\)/.test(e))).toEqual([]);
    } finally {
      writeFileSync(SCREENSHOT, await page.screenshot());
      console.log(`API reference screenshot: ${SCREENSHOT}`);
      await page.close();
    }
  });
});
