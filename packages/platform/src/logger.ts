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

let stdout: ReturnType<typeof pino.destination> | undefined;

/**
 * The process's one log destination: stdout written asynchronously (a line is queued and written
 * with the lines that follow it while a write is in flight, never held back waiting for more), so a
 * request does not wait for a write(2) of its access line. Whatever is still queued is written
 * synchronously when the process exits (a fatal line before process.exit included).
 */
function logDestination(): ReturnType<typeof pino.destination> {
  if (!stdout) {
    const dest = pino.destination({ dest: 1, sync: false, minLength: 0 });
    process.on('exit', () => {
      try {
        dest.flushSync();
      } catch {
        // stdout already closed: nothing left to write to
      }
    });
    stdout = dest;
  }
  return stdout;
}

export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino(
    {
      name: service,
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin() {
        const ctx = requestContext.getStore();
        return ctx ? { request_id: ctx.requestId, organization_id: ctx.organizationId } : {};
      },
    },
    logDestination(),
  );
}
