import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger } from 'pino';

export type { Logger };

export interface RequestContext {
  requestId: string;
  organizationId?: string;
  userId?: string | null;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

const REDACT = [
  'req.headers.authorization',
  'req.headers["x-rp-identity"]',
  'headers.authorization',
  'authorization',
  'token',
  '*.token',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'api_key',
  '*.api_key',
  // a request body's nested key, e.g. the mailbox settings' domain_send.api_key under `body`
  '*.*.api_key',
  // provider credentials (integrations): OAuth tokens and client secrets
  'access_token',
  '*.access_token',
  'refresh_token',
  '*.refresh_token',
  'client_secret',
  '*.client_secret',
  'authorization_code',
  '*.authorization_code',
  // the SMS provider's auth token (HTTP Basic password), as an option or as configuration
  'authToken',
  '*.authToken',
  'SMS_AUTH_TOKEN',
  '*.SMS_AUTH_TOKEN',
];

export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin() {
      const ctx = requestContext.getStore();
      return ctx ? { request_id: ctx.requestId, organization_id: ctx.organizationId } : {};
    },
  });
}
