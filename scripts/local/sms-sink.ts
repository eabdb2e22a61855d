/**
 * The local SMS sink: what MailDev is for email, for texts. A real HTTP server speaking the part of
 * Twilio's Messages API the platform uses (packages/platform/src/sms.ts), so the SMS adapter runs
 * unchanged against it, `npm start` and the tests included:
 *
 *   POST   /2010-04-01/Accounts/{sid}/Messages.json   form To, From, Body; HTTP Basic sid:token
 *          → 201 Twilio's message JSON (`sid` SM…, `status` queued, `num_segments`), or Twilio's
 *            error JSON {code, message, more_info, status}: 401 code 20003 for wrong credentials,
 *            400 21604/21603/21602 for a missing To/From/Body, 21211/21212 for a To/From not in
 *            E.164, 21617 for a body over 1600 characters. A repeated `Idempotency-Key` answers
 *            the message it first accepted (201) and stores nothing.
 *   GET    /                 HTML page of the received texts, newest first (refreshes itself)
 *   GET    /messages         the same as JSON {messages: [...]}, newest first; `?to=+49…` filters
 *   DELETE /messages         forgets every text (204)
 *   POST   /faults           {status: 429|500|502|503, count?: 1..100, to?, retry_after_seconds?}:
 *                            the next `count` sends (to `to` only, when given) are answered with
 *                            that status instead, as a provider outage would; 204
 *   GET    /healthz          200
 *
 * Texts are kept in memory and, when a file is given (`npm start`: var/sms/messages.json), written
 * there after each one and read back on start. Segments are counted with the kernel's smsMetrics,
 * the SMS templates' rules.
 *
 * As a process: `node --import tsx scripts/local/sms-sink.ts`, configured by SMS_SINK_PORT (1090),
 * SMS_SINK_HOST (127.0.0.1), SMS_ACCOUNT_SID, SMS_AUTH_TOKEN and SMS_SINK_FILE.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { smsMetrics } from '@rp/platform';
import { listening, stopChild } from './components.js';

export interface SinkMessage {
  sid: string;
  account_sid: string;
  to: string;
  from: string;
  body: string;
  num_segments: number;
  encoding: 'GSM-7' | 'UCS-2';
  idempotency_key: string | null;
  received_at: string;
}

export interface SmsSinkOptions {
  /** Listen port; 0 (default): a free one. */
  port?: number;
  host?: string;
  accountSid: string;
  authToken: string;
  /** JSON file the texts are kept in across restarts; none: memory only. */
  file?: string;
}

export interface SmsSink {
  /** Base URL: SMS_PROVIDER_URL of the services. */
  url: string;
  port: number;
  messages: () => SinkMessage[];
  stop: () => Promise<void>;
}

const E164 = /^\+[1-9]\d{7,14}$/;
const MAX_BODY_CHARS = 1600;
const MAX_REQUEST_BYTES = 64 * 1024;

interface Fault {
  status: number;
  remaining: number;
  to: string | null;
  retryAfterSeconds: number | null;
}

export async function startSmsSink(opts: SmsSinkOptions): Promise<SmsSink> {
  let messages: SinkMessage[] = [];
  if (opts.file && existsSync(opts.file)) {
    try {
      const saved = JSON.parse(readFileSync(opts.file, 'utf8')) as { messages?: SinkMessage[] };
      if (Array.isArray(saved.messages)) messages = saved.messages;
    } catch {
      // an unreadable file starts empty; it is rewritten with the next text
    }
  }
  const faults: Fault[] = [];
  const expectedAuth = Buffer.from(`Basic ${Buffer.from(`${opts.accountSid}:${opts.authToken}`).toString('base64')}`);

  const save = () => {
    if (!opts.file) return;
    mkdirSync(path.dirname(opts.file), { recursive: true });
    writeFileSync(`${opts.file}.tmp`, JSON.stringify({ messages }, null, 1));
    renameSync(`${opts.file}.tmp`, opts.file);
  };

  const authorized = (req: IncomingMessage) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    return given.length === expectedAuth.length && timingSafeEqual(given, expectedAuth);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://sink');
    const send = url.pathname.match(/^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/);
    if (send && req.method === 'POST') return receive(req, res, decodeURIComponent(send[1]!));
    if (url.pathname === '/' && req.method === 'GET') return html(res, page(newestFirst(messages)));
    if (url.pathname === '/messages' && req.method === 'GET') {
      const to = url.searchParams.get('to');
      return json(res, 200, { messages: newestFirst(to ? messages.filter((m) => m.to === to) : messages) });
    }
    if (url.pathname === '/messages' && req.method === 'DELETE') {
      messages = [];
      save();
      return end(res, 204);
    }
    if (url.pathname === '/faults' && req.method === 'POST') return addFault(req, res);
    if (url.pathname === '/healthz' && req.method === 'GET') return json(res, 200, { ok: true });
    return twilioError(res, 404, 20404, 'The requested resource was not found');
  };

  const receive = async (req: IncomingMessage, res: ServerResponse, pathSid: string): Promise<void> => {
    if (!authorized(req) || pathSid !== opts.accountSid) return twilioError(res, 401, 20003, 'Authenticate');
    const raw = await readBody(req);
    if (raw === null) return twilioError(res, 413, 21617, 'Request body too large');
    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
      return twilioError(res, 400, 21100, 'Content-Type must be application/x-www-form-urlencoded');
    }
    const form = new URLSearchParams(raw);
    const to = form.get('To') ?? '';
    const from = form.get('From') ?? '';
    const body = form.get('Body') ?? '';
    if (!to) return twilioError(res, 400, 21604, "A 'To' phone number is required.");
    if (!E164.test(to)) return twilioError(res, 400, 21211, `The 'To' number ${to.slice(0, 40)} is not a valid phone number.`);
    if (!from) return twilioError(res, 400, 21603, "A 'From' phone number is required.");
    if (!E164.test(from)) return twilioError(res, 400, 21212, `The 'From' number ${from.slice(0, 40)} is not a valid phone number.`);
    if (!body) return twilioError(res, 400, 21602, 'Message body is required.');
    if ([...body].length > MAX_BODY_CHARS) return twilioError(res, 400, 21617, 'The concatenated message body exceeds the 1600 character limit.');

    const fault = faults.find((f) => f.remaining > 0 && (f.to === null || f.to === to));
    if (fault) {
      fault.remaining--;
      if (fault.retryAfterSeconds !== null) res.setHeader('retry-after', String(fault.retryAfterSeconds));
      return twilioError(res, fault.status, fault.status === 429 ? 20429 : 20500, fault.status === 429 ? 'Too Many Requests' : 'Internal Server Error');
    }

    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'].slice(0, 200) : null;
    const earlier = key ? messages.find((m) => m.idempotency_key === key && m.account_sid === opts.accountSid) : undefined;
    if (earlier) return json(res, 201, twilioMessage(earlier));

    const metrics = smsMetrics(body);
    const message: SinkMessage = {
      sid: `SM${randomBytes(16).toString('hex')}`,
      account_sid: opts.accountSid,
      to,
      from,
      body,
      num_segments: metrics.estimated_segment_count,
      encoding: metrics.encoding,
      idempotency_key: key,
      received_at: new Date().toISOString(),
    };
    messages.push(message);
    save();
    return json(res, 201, twilioMessage(message));
  };

  const addFault = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    let spec: { status?: unknown; count?: unknown; to?: unknown; retry_after_seconds?: unknown } = {};
    try {
      spec = JSON.parse(raw ?? '') as typeof spec;
    } catch {
      return json(res, 400, { message: 'body must be JSON' });
    }
    const count = spec.count ?? 1;
    const retryAfter = spec.retry_after_seconds ?? null;
    if (
      ![429, 500, 502, 503].includes(spec.status as number) ||
      !Number.isInteger(count) || (count as number) < 1 || (count as number) > 100 ||
      (spec.to !== undefined && (typeof spec.to !== 'string' || !E164.test(spec.to))) ||
      (retryAfter !== null && (!Number.isInteger(retryAfter) || (retryAfter as number) < 0 || (retryAfter as number) > 3600))
    ) {
      return json(res, 400, { message: 'expected {status: 429|500|502|503, count?: 1..100, to?: E.164, retry_after_seconds?: 0..3600}' });
    }
    faults.push({ status: spec.status as number, remaining: count as number, to: (spec.to as string | undefined) ?? null, retryAfterSeconds: retryAfter as number | null });
    return end(res, 204);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { message: (err as Error).message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1';
  return {
    url: `http://${host}:${port}`,
    port,
    messages: () => newestFirst(messages),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The sink as a process of its own (`npm start` supervises it like MailDev): listening on `port`
 * of 127.0.0.1, texts kept in `file`, its output appended to `logFile`.
 */
export async function spawnSmsSink(opts: { port: number; accountSid: string; authToken: string; file: string; logFile: string; detached?: boolean }): Promise<{ url: string; process: ChildProcess; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: {
      ...process.env,
      SMS_SINK_PORT: String(opts.port),
      SMS_SINK_HOST: '127.0.0.1',
      SMS_ACCOUNT_SID: opts.accountSid,
      SMS_AUTH_TOKEN: opts.authToken,
      SMS_SINK_FILE: opts.file,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  await listening(child, opts.port, 'SMS sink', 60_000, opts.logFile);
  return { url: `http://127.0.0.1:${opts.port}`, process: child, stop: () => stopChild(child) };
}

function newestFirst(list: SinkMessage[]): SinkMessage[] {
  return [...list].reverse();
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Twilio's message resource (the fields a client reads; `num_segments` is a string there too). */
function twilioMessage(m: SinkMessage): Record<string, unknown> {
  const at = new Date(m.received_at).toUTCString().replace('GMT', '+0000');
  return {
    sid: m.sid,
    account_sid: m.account_sid,
    api_version: '2010-04-01',
    to: m.to,
    from: m.from,
    body: m.body,
    status: 'queued',
    direction: 'outbound-api',
    num_segments: String(m.num_segments),
    num_media: '0',
    date_created: at,
    date_updated: at,
    date_sent: null,
    price: null,
    error_code: null,
    error_message: null,
    uri: `/2010-04-01/Accounts/${m.account_sid}/Messages/${m.sid}.json`,
  };
}

function twilioError(res: ServerResponse, status: number, code: number, message: string): void {
  json(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function html(res: ServerResponse, body: string): void {
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // texts are shown as text: no script runs on this page, whatever a message says
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  });
  res.end(body);
}

function end(res: ServerResponse, status: number): void {
  res.writeHead(status);
  res.end();
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(list: SinkMessage[]): string {
  const rows = list
    .map(
      (m) => `<tr class="message" data-sid="${escapeHtml(m.sid)}">
  <td class="received">${escapeHtml(m.received_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</td>
  <td class="to">${escapeHtml(m.to)}</td>
  <td class="from">${escapeHtml(m.from)}</td>
  <td class="body">${escapeHtml(m.body)}</td>
  <td class="segments">${m.num_segments} (${m.encoding})</td>
</tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>SMS sink — ${list.length} text${list.length === 1 ? '' : 's'}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.4rem .6rem;text-align:left;vertical-align:top}
td.body{white-space:pre-wrap;max-width:40rem}th{background:#f4f4f4}</style></head>
<body><h1>SMS sink</h1><p>Texts the platform sent, newest first (this page refreshes every 5 s).</p>
${list.length ? `<table><thead><tr><th>Received</th><th>To</th><th>From</th><th>Text</th><th>Segments</th></tr></thead>
<tbody>
${rows}
</tbody></table>` : '<p id="empty">No texts yet.</p>'}
</body></html>`;
}

// As a process (npm start, docker-compose).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const env = process.env;
  const authToken = env.SMS_AUTH_TOKEN;
  if (!authToken) {
    process.stderr.write('sms-sink: set SMS_AUTH_TOKEN (the token the services send)\n');
    process.exit(2);
  }
  const sink = await startSmsSink({
    port: Number(env.SMS_SINK_PORT ?? 1090),
    host: env.SMS_SINK_HOST ?? '127.0.0.1',
    accountSid: env.SMS_ACCOUNT_SID ?? 'AC00000000000000000000000000000000',
    authToken,
    file: env.SMS_SINK_FILE || undefined,
  });
  process.stdout.write(`sms-sink listening on ${sink.url}\n`);
  const stop = () => void sink.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
