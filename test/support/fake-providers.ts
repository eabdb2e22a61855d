/**
 * Fake external providers on loopback, following the providers' documented shapes:
 *
 * - Intuit OAuth 2.0 (QuickBooks Online): POST /qbo/oauth2/v1/tokens/bearer, form-encoded, client
 *   authentication with HTTP Basic; answers `{token_type:'bearer', access_token, refresh_token,
 *   expires_in, x_refresh_token_expires_in}` or 400 `{error:'invalid_grant'}`.
 * - QuickBooks Accounting API: GET /qbo/v3/company/{realmId}/companyinfo/{realmId} with a Bearer token.
 * - Xero: POST /xero/connect/token (same grant shapes), GET /xero/connections.
 * - PKCE (RFC 7636, S256): a code approved with a code_challenge needs the matching code_verifier.
 * - Stripe: GET /stripe/v1/balance with a Bearer secret key.
 * - Jira Cloud: GET /jira/rest/api/3/myself with Basic e-mail:API token.
 *
 * Tokens are random and tracked with their expiry, so a test can tell a refreshed token from the
 * old one; every request is recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface FakeClient {
  client_id: string;
  client_secret: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  form: Record<string, string>;
}

interface Grant {
  provider: 'qbo' | 'xero';
  redirectUri: string;
  realmId?: string;
  /** PKCE (RFC 7636): the authorization request's S256 code_challenge; the token request must send its code_verifier */
  codeChallenge?: string;
}

export class FakeProviders {
  server!: Server;
  url = '';
  readonly requests: RecordedRequest[] = [];
  /** authorization codes the user "approved", per provider */
  readonly codes = new Map<string, Grant>();
  /** live access tokens → expiry (ms) */
  readonly accessTokens = new Map<string, { provider: string; expiresAt: number }>();
  /** live refresh tokens */
  readonly refreshTokens = new Map<string, string>();
  refreshCount = 0;
  /** seconds of validity of the next access tokens issued */
  expiresIn = 3600;
  /** answer the next companyinfo / connections calls with this status instead (e.g. 429, 500) */
  apiStatus: number | null = null;
  /** answer token requests with this status and body (e.g. 500) */
  tokenFailure: { status: number; body: unknown } | null = null;
  /** delay (ms) of refresh answers, to widen the window of concurrent refreshes */
  refreshDelayMs = 0;
  stripeKeys = new Set<string>(['sk_test_valid_key_123456']);
  jiraUsers = new Map<string, string>([['ada@example.com', 'jira-api-token-xyz']]);

  constructor(readonly clients: { qbo: FakeClient; xero: FakeClient }) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const form = Object.fromEntries(new URLSearchParams(body));
        const path = (req.url ?? '/').split('?')[0];
        this.requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, form });
        void this.handle(req.method ?? 'GET', path, req, form, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * The user approved the consent screen: the provider will accept this code once. `codeChallenge`:
   * the authorization request carried one (PKCE), so the code is bound to its verifier.
   */
  approve(provider: 'qbo' | 'xero', redirectUri: string, realmId?: string, codeChallenge?: string): string {
    const code = `${provider}-code-${randomBytes(8).toString('hex')}`;
    this.codes.set(code, { provider, redirectUri, realmId, codeChallenge });
    return code;
  }

  revokeAll(): void {
    this.accessTokens.clear();
    this.refreshTokens.clear();
  }

  /** Mark every live access token expired now (as the provider sees it). */
  expireAccessTokens(): void {
    for (const t of this.accessTokens.values()) t.expiresAt = Date.now() - 1000;
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private issue(provider: string) {
    const access = `at-${provider}-${randomBytes(12).toString('hex')}`;
    const refresh = `rt-${provider}-${randomBytes(12).toString('hex')}`;
    this.accessTokens.set(access, { provider, expiresAt: Date.now() + this.expiresIn * 1000 });
    this.refreshTokens.set(refresh, provider);
    return { token_type: 'bearer', access_token: access, refresh_token: refresh, expires_in: this.expiresIn, x_refresh_token_expires_in: 8726400 };
  }

  private bearerValid(req: IncomingMessage, provider: string): boolean {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const t = token ? this.accessTokens.get(token) : undefined;
    return Boolean(t && t.provider === provider && t.expiresAt > Date.now());
  }

  private clientOk(req: IncomingMessage, client: FakeClient): boolean {
    return req.headers.authorization === `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
  }

  private async token(provider: 'qbo' | 'xero', req: IncomingMessage, form: Record<string, string>, res: ServerResponse): Promise<void> {
    if (this.tokenFailure) return this.send(res, this.tokenFailure.status, this.tokenFailure.body);
    if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return this.send(res, 400, { error: 'invalid_request', error_description: 'form body expected' });
    if (!this.clientOk(req, this.clients[provider])) return this.send(res, 401, { error: 'invalid_client' });
    if (form.grant_type === 'authorization_code') {
      const grant = this.codes.get(form.code);
      if (!grant || grant.provider !== provider || grant.redirectUri !== form.redirect_uri) return this.send(res, 400, { error: 'invalid_grant' });
      // RFC 7636 §4.6: BASE64URL(SHA256(code_verifier)) must equal the code_challenge of the authorization request
      if (grant.codeChallenge && createHash('sha256').update(form.code_verifier ?? '').digest('base64url') !== grant.codeChallenge) {
        return this.send(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
      }
      this.codes.delete(form.code);
      return this.send(res, 200, this.issue(provider));
    }
    if (form.grant_type === 'refresh_token') {
      if (this.refreshTokens.get(form.refresh_token) !== provider) return this.send(res, 400, { error: 'invalid_grant', error_description: 'Token invalid' });
      this.refreshCount++;
      if (this.refreshDelayMs) await new Promise((r) => setTimeout(r, this.refreshDelayMs));
      this.refreshTokens.delete(form.refresh_token); // rotating refresh tokens: each is good once
      return this.send(res, 200, this.issue(provider));
    }
    return this.send(res, 400, { error: 'unsupported_grant_type' });
  }

  private async handle(method: string, path: string, req: IncomingMessage, form: Record<string, string>, res: ServerResponse): Promise<void> {
    if (method === 'POST' && path === '/qbo/oauth2/v1/tokens/bearer') return this.token('qbo', req, form, res);
    if (method === 'POST' && path === '/xero/connect/token') return this.token('xero', req, form, res);
    const company = /^\/qbo\/v3\/company\/([^/]+)\/companyinfo\/([^/]+)$/.exec(path);
    if (method === 'GET' && company) {
      if (this.apiStatus) return this.send(res, this.apiStatus, { Fault: { Error: [{ Message: 'fake failure' }], type: 'SERVICE' } });
      if (!this.bearerValid(req, 'qbo')) return this.send(res, 401, { Fault: { Error: [{ Message: 'AuthenticationFailed', code: '3200' }], type: 'AUTHENTICATION' } });
      return this.send(res, 200, { CompanyInfo: { Id: company[1], CompanyName: 'Fake Company', Country: 'US' }, time: new Date().toISOString() });
    }
    if (method === 'GET' && path === '/xero/connections') {
      if (this.apiStatus) return this.send(res, this.apiStatus, { Title: 'fake failure' });
      if (!this.bearerValid(req, 'xero')) return this.send(res, 401, { Title: 'Unauthorized' });
      return this.send(res, 200, [{ id: 'c1', tenantId: 'tenant-1', tenantType: 'ORGANISATION', tenantName: 'Fake Org' }]);
    }
    if (method === 'GET' && path === '/stripe/v1/balance') {
      const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!key || !this.stripeKeys.has(key)) return this.send(res, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
      return this.send(res, 200, { object: 'balance', available: [{ amount: 0, currency: 'usd' }], pending: [], livemode: false });
    }
    if (method === 'GET' && path === '/jira/rest/api/3/myself') {
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const [user, token] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':') : [];
      if (!user || this.jiraUsers.get(user) !== token) return this.send(res, 401, { errorMessages: ['Unauthorized'] });
      return this.send(res, 200, { accountId: 'abc', emailAddress: user, active: true });
    }
    return this.send(res, 404, { error: 'not_found', path });
  }
}
