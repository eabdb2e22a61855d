import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack, type Org } from '../../../test/support/stack.js';
import { providerSchema } from '../src/routes/schemas.js';

let stack: TestStack;
let org: Org;

const DESCRIPTOR_FIELDS = [
  'object', 'name', 'display_name', 'color', 'connection_guide_url', 'documentation_url', 'description', 'short_description',
  'logo', 'logo_square', 'website', 'categories', 'auth_type', 'is_api_connection', 'is_webhooks_supported', 'is_enabled',
  'is_manual_sync_supported', 'connection_instructions', 'required_settings', 'cash_app_features',
].sort();

beforeAll(async () => {
  stack = await startStack();
  org = await stack.onboard();
});
afterAll(async () => stack?.close());

describe('integration providers', () => {
  it('lists the 22 providers, each a complete descriptor, enabled exactly where an adapter exists', async () => {
    const res = await stack.request('GET', '/v2/integrations/providers', { token: org.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ current_page: 0, total_records: 22, next_page: null });
    const providers = res.body.data as any[];
    expect(providers).toHaveLength(22);
    expect(new Set(providers.map((p) => p.name)).size).toBe(22);
    for (const name of ['acumatica', 'netsuite', 'sap_s4hana', 'dynamics_365_business_central', 'quickbooks_online', 'xero', 'sage_intacct', 'stripe', 'chargebee', 'zendesk', 'salesforce', 'hubspot', 'middleware']) {
      expect(providers.map((p) => p.name)).toContain(name);
    }
    for (const p of providers) {
      expect(Object.keys(p).sort()).toEqual(DESCRIPTOR_FIELDS);
      expect(providerSchema.safeParse(p).success).toBe(true);
      expect(p.is_enabled).toBe(['middleware', 'quickbooks_online'].includes(p.name));
      expect(p.is_manual_sync_supported).toBe(p.name === 'quickbooks_online');
      // posting applied cash: QuickBooks posts and deletes Payments; the middleware queue cannot take a posting back
      expect(p.cash_app_features).toEqual({
        can_unpost_payment: p.name === 'quickbooks_online',
        can_post_on_account_payment: ['quickbooks_online', 'middleware'].includes(p.name),
      });
      expect(p.color).toMatch(/^#[0-9A-F]{6}$/i);
      expect(p.logo).toMatch(/^data:image\/svg\+xml,/);
      expect(p.connection_instructions.length).toBeGreaterThan(0);
      expect(p.categories.length).toBeGreaterThan(0);
    }
    // Every category of the spec's examples has providers: banking, billing, ticketing, accounting (ERP).
    for (const c of ['accounting', 'erp', 'billing', 'banking', 'ticketing', 'crm']) {
      expect(providers.some((p) => p.categories.includes(c))).toBe(true);
    }
  });

  it('gets one provider by name', async () => {
    const res = await stack.request('GET', '/v2/integrations/providers/acumatica', { token: org.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'provider', name: 'acumatica', display_name: 'Acumatica', auth_type: 'oauth2', is_enabled: false, is_api_connection: true });
    expect(res.body.required_settings).toEqual(['base_url', 'tenant', 'endpoint_name', 'endpoint_version', 'scope', 'branches', 'default_currency']);
    const listed = (await stack.request('GET', '/v2/integrations/providers', { token: org.token })).body.data.find((p: any) => p.name === 'acumatica');
    expect(res.body).toEqual(listed);

    const middleware = await stack.request('GET', '/v2/integrations/providers/middleware', { token: org.token });
    expect(middleware.body).toMatchObject({ is_api_connection: false, auth_type: 'api_key', categories: ['middleware'] });
  });

  it('answers 404 for an unknown provider', async () => {
    const res = await stack.request('GET', '/v2/integrations/providers/not-a-provider', { token: org.token });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ type: 'entity-not-found', status: 404, title: 'Entity not found' });
  });

  it('paginates', async () => {
    const pages = [];
    for (let page = 0; page < 3; page++) {
      const res = await stack.request('GET', `/v2/integrations/providers?page=${page}&page_size=10`, { token: org.token });
      expect(res.status).toBe(200);
      pages.push(res.body);
    }
    expect(pages.map((p) => [p.current_page, p.data.length, p.next_page, p.total_records])).toEqual([
      [0, 10, 1, 22],
      [1, 10, 2, 22],
      [2, 2, null, 22],
    ]);
    const all = (await stack.request('GET', '/v2/integrations/providers?page_size=100', { token: org.token })).body.data.map((p: any) => p.name);
    expect(pages.flatMap((p) => p.data.map((d: any) => d.name))).toEqual(all);

    const tooBig = await stack.request('GET', '/v2/integrations/providers?page_size=101', { token: org.token });
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.errors[0].loc).toEqual(['query', 'page_size']);
  });

  it('filters by category', async () => {
    const res = await stack.request('GET', '/v2/integrations/providers?category=billing', { token: org.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: any) => p.name)).toEqual(['stripe', 'chargebee', 'zuora', 'recurly']);
    expect(res.body.total_records).toBe(4);
    for (const p of res.body.data) expect(p.categories).toContain('billing');

    const banking = await stack.request('GET', '/v2/integrations/providers?category=banking', { token: org.token });
    expect(banking.body.data.map((p: any) => p.name)).toEqual(['plaid', 'gocardless_bank_account_data']);

    const bad = await stack.request('GET', '/v2/integrations/providers?category=telepathy', { token: org.token });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['query', 'category']);
  });
});
