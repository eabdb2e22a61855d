import http from 'node:http';
import { Transform } from 'node:stream';
import type Koa from 'koa';
import { PayloadTooLargeError, UpstreamError } from '@rp/platform';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

export function createAgent(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 256, keepAliveMsecs: 10_000 });
}

export interface ProxyOptions {
  target: URL;
  agent: http.Agent;
  /** headers added after client identity headers were stripped */
  headers: Record<string, string>;
  /** the client's address as the gateway determined it (ClientAddress) */
  clientAddress: string;
  timeoutMs: number;
  bodyLimitBytes: number;
  /** pass the client's Authorization header on (the inbound mail endpoint's HTTP Basic secret); every other route drops it */
  keepAuthorization?: boolean;
  /** awaited before the service's answer is passed on (its status given), e.g. a credential-cache sync after an admin write */
  beforeRespond?: (status: number) => Promise<void>;
}

/**
 * Stream the request to the owning service and its response back. Client-supplied `x-rp-*`
 * headers and the bearer token are not forwarded. Unreachable service → 502, no answer in
 * time → 504, body over the limit → 413 (checked on Content-Length and while streaming).
 *
 * The client's connection stays usable whatever the service did with the body. When the answer
 * (the service's, a 502 or a 504) comes before the client's body was read to its end — a service
 * refuses a body before reading it, and closes its own connection rather than read the rest — the
 * gateway stops forwarding and reads the rest itself, still counted against the limit: a client
 * that writes its whole body before reading the answer, then reuses the connection, would
 * otherwise wait behind its own unread bytes for an answer that never comes. A body over the limit
 * is never read to its end: its answer closes the connection (Connection: close).
 */
export function proxyRequest(ctx: Koa.Context, opts: ProxyOptions): Promise<void> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > opts.bodyLimitBytes) {
    // Node would otherwise read (and discard) the whole declared body to keep the connection
    ctx.set('Connection', 'close');
    throw new PayloadTooLargeError(opts.bodyLimitBytes);
  }
  const hasBody = Boolean(declared || ctx.get('transfer-encoding'));

  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || (name === 'authorization' && !opts.keepAuthorization) || name.startsWith('x-rp-')) continue;
    headers[name] = value;
  }
  headers['x-forwarded-for'] = opts.clientAddress;
  headers['x-forwarded-proto'] = ctx.protocol;
  headers['x-forwarded-host'] = ctx.host;
  Object.assign(headers, opts.headers);
  if (ctx.get('transfer-encoding')) headers['transfer-encoding'] = 'chunked';

  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let seen = 0;
    // the byte count of the client's body (none without a body: a GET costs no stream)
    const limiter = hasBody
      ? new Transform({
          transform(chunk: Buffer, _enc, cb) {
            seen += chunk.length;
            if (seen > opts.bodyLimitBytes) {
              cb(new PayloadTooLargeError(opts.bodyLimitBytes));
              return;
            }
            cb(null, chunk);
          },
        })
      : null;
    /**
     * Answered before the client's body was read to its end: the rest is read here and dropped (see
     * above). False when nothing is left to read, or the body is over the limit (never read on).
     */
    const readRestOfBody = (): boolean => {
      if (!limiter || ctx.req.complete || seen > opts.bodyLimitBytes) return false;
      limiter.unpipe(upstream);
      limiter.resume();
      return true;
    };
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      readRestOfBody();
      reject(err);
    };
    const upstream = http.request({
      host: opts.target.hostname,
      port: opts.target.port,
      method: ctx.method,
      path: ctx.originalUrl,
      headers,
      agent: opts.agent,
      timeout: opts.timeoutMs,
    });
    upstream.on('socket', (socket) => socket.setNoDelay(true));
    upstream.on('timeout', () => {
      upstream.destroy();
      fail(new UpstreamError(504, 'The service did not answer in time.'));
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      fail(new UpstreamError(502, err.code === 'ECONNREFUSED' ? 'The service is not reachable.' : 'The service connection failed.'));
    });
    upstream.on('response', (res) => {
      if (settled) {
        res.resume();
        return;
      }
      settled = true;
      // the service's request stays unfinished: its connection is of no further use once the answer is in
      if (readRestOfBody()) res.once('end', () => upstream.destroy());
      if (opts.beforeRespond) {
        res.on('error', () => {}); // the answer waits; a broken upstream socket meanwhile ends it in respondTo
        const go = () => respondTo(res);
        opts.beforeRespond(res.statusCode ?? 502).then(go, go);
      } else respondTo(res);
    });
    const respondTo = (res: http.IncomingMessage) => {
      ctx.status = res.statusCode ?? 502;
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined || HOP_BY_HOP.has(name)) continue;
        ctx.set(name, value as string | string[]);
      }
      // Stream the body with a plain pipe rather than Koa's respond(): Koa uses stream.pipeline,
      // whose per-request AbortController is a measurable share of the gateway's CPU (see bench/).
      ctx.respond = false;
      const out = ctx.res;
      if (ctx.status === 204 || ctx.status === 304 || ctx.method === 'HEAD') {
        res.resume();
        out.end();
      } else {
        res.on('error', () => out.destroy());
        out.on('close', () => {
          if (!res.complete) res.destroy();
        });
        res.pipe(out);
      }
      resolve();
    };

    if (!limiter) {
      upstream.end();
      return;
    }
    limiter.on('error', (err) => {
      ctx.req.unpipe(limiter);
      if (!settled) {
        upstream.destroy();
        ctx.set('Connection', 'close');
        fail(err);
      } else if (!ctx.res.headersSent) ctx.res.setHeader('Connection', 'close');
      else if (ctx.res.writableFinished) ctx.req.socket.destroy();
      else ctx.res.once('finish', () => ctx.req.socket.destroy());
    });
    ctx.req.pipe(limiter).pipe(upstream);
  });
}
