import { describe, expect, it } from 'vitest';
import { loadIntegrationsConfig } from '../src/config.js';
import { mergeSettings, missingSettings, parseSettings } from '../src/domain/connections.js';
import { authorizationUrl, OAuthProviderError, requestTokens } from '../src/domain/oauth.js';
import { ProviderUnreachableError } from '../src/adapters/provider-client.js';
import { providerUrls, requireProviderRuntime } from '../src/domain/provider-runtime.js';
import { PROVIDERS } from '../src/domain/providers.js';

const config = loadIntegrationsConfig({
  DATABASE_URL: 'postgres://u:p@localhost/db',
  IDENTITY_SECRET: 'x'.repeat(32),
  CONNECTION_SECRETS_KEY: Buffer.alloc(32, 3).toString('base64'),
  OAUTH_CLIENTS: JSON.stringify({ acumatica: { client_id: 'acu-id', client_secret: 's' }, quickbooks_online: { client_id: 'qbo-id', client_secret: 's' } }),
  OAUTH_REDIRECT_URI: 'https://app.example.com/cb',
  PROVIDER_URL_OVERRIDES: JSON.stringify({ quickbooks_online: { api_base_url: 'https://sandbox-quickbooks.api.intuit.com/' } }),
});
const acumatica = requireProviderRuntime('acumatica');

describe('provider runtime', () => {
  it('has a runtime for every provider; only QuickBooks pulls, only the middleware is pushed to', () => {
    const adapters = PROVIDERS.map((p) => [p.name, requireProviderRuntime(p.name).adapter]).filter(([, a]) => a);
    expect(adapters).toEqual([
      ['quickbooks_online', 'pull'],
      ['middleware', 'push'],
    ]);
    expect(requireProviderRuntime('quickbooks_online')).toMatchObject({ sync_interval_minutes: 60, credential_check: 'quickbooks_companyinfo' });
    expect(requireProviderRuntime('quickbooks_online').models.map((m) => m.name)).toEqual(['customers', 'invoices', 'credit_memos']);
    for (const p of PROVIDERS) {
      const r = requireProviderRuntime(p.name);
      for (const s of p.required_settings) expect(r.settings[s], `${p.name}.${s}`).toBeDefined();
      if (p.auth_type !== 'oauth2') expect(r.oauth).toBeNull();
    }
  });

  it('applies URL overrides and fills instance URLs from settings', () => {
    expect(providerUrls(config, 'quickbooks_online').api_base_url).toBe('https://sandbox-quickbooks.api.intuit.com');
    expect(providerUrls(config, 'quickbooks_online').token_url).toBe('https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer');
    expect(providerUrls(config, 'acumatica', { base_url: 'https://erp.example.com/' }).token_url).toBe('https://erp.example.com/identity/connect/token');
    expect(providerUrls(config, 'acumatica', {}).token_url).toBeNull();
  });
});

describe('connection settings', () => {
  it('types the Acumatica variant and refuses unknown keys', () => {
    const ok = parseSettings(acumatica, { base_url: 'https://erp.example.com', tenant: 'Co', branches: ['HQ'], default_currency: 'EUR', scope: null });
    expect(ok).toEqual({ ok: true, value: { base_url: 'https://erp.example.com', tenant: 'Co', branches: ['HQ'], default_currency: 'EUR', scope: null } });
    const bad = parseSettings(acumatica, { base_url: 'ftp://x', branches: [1], default_currency: 'EURO', realm_id: 'x' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.issues.map((i) => i.loc.join('.')).sort()).toEqual(['body.settings.base_url', 'body.settings.branches.0', 'body.settings.default_currency', 'body.settings.realm_id']);
    }
  });

  it('derives missing settings and merges patches (null removes)', () => {
    expect(missingSettings(acumatica, { base_url: 'https://x', tenant: '', branches: [] })).toEqual([
      'tenant',
      'endpoint_name',
      'endpoint_version',
      'scope',
      'branches',
      'default_currency',
    ]);
    expect(mergeSettings({ a: 1, b: 2 }, { b: null, c: 3 })).toEqual({ a: 1, c: 3 });
  });
});

describe('authorization URL', () => {
  const row = { id: 'c1', organization_id: 'o1', provider_name: 'acumatica', settings: { base_url: 'https://erp.example.com' }, oauth_state_nonce: 'n' };

  it('points at the instance for Acumatica, with client, redirect, scope and state', () => {
    const url = new URL(authorizationUrl(config, row, 1_800_000_000)!);
    expect(`${url.origin}${url.pathname}`).toBe('https://erp.example.com/identity/connect/authorize');
    expect(url.searchParams.get('client_id')).toBe('acu-id');
    expect(url.searchParams.get('redirect_uri')).toBe('https://app.example.com/cb');
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('scope')).toBe('api offline_access');
    expect(url.searchParams.get('state')).toMatch(/^[\w-]+\.[\w-]+$/);
  });

  it('is null without the instance URL, without a client, or without a redirect URI', () => {
    expect(authorizationUrl(config, { ...row, settings: {} })).toBeNull();
    expect(authorizationUrl(config, { ...row, provider_name: 'xero' })).toBeNull();
    expect(authorizationUrl({ ...config, OAUTH_REDIRECT_URI: undefined }, row)).toBeNull();
  });
});

describe('token endpoint', () => {
  it('tells an unreachable endpoint (→ 502) from a missing client (→ 409)', async () => {
    const closed = { ...config, PROVIDER_HTTP_TIMEOUT_MS: 2000, PROVIDER_URL_OVERRIDES: { quickbooks_online: { token_url: 'http://127.0.0.1:1/token' } } };
    await expect(requestTokens(closed, 'quickbooks_online', {}, { grant_type: 'refresh_token', refresh_token: 'r' })).rejects.toBeInstanceOf(ProviderUnreachableError);
    const noClient = requestTokens(config, 'xero', {}, { grant_type: 'refresh_token', refresh_token: 'r' });
    await expect(noClient).rejects.toBeInstanceOf(OAuthProviderError);
    await expect(noClient).rejects.toMatchObject({ httpStatus: 0 });
  });
});
