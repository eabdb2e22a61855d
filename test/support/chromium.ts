/**
 * Headless Chromium driven over the DevTools protocol (a WebSocket; `ws` client), for tests that
 * must see a page as a person does: it renders, clicks, types and takes screenshots. Only what the
 * tests use: one page, JavaScript evaluation, text input, screenshots and the list of requests the
 * page made.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

interface Pending {
  resolve: (v: any) => void;
  reject: (e: Error) => void;
  method: string;
}

export interface BrowserPage {
  /** Every URL the page requested (documents, scripts, styles, images, fetches). */
  requests: string[];
  /** Console errors and uncaught exceptions of the page. */
  errors: string[];
  navigate(url: string): Promise<void>;
  /** Evaluates `expression` in the page (promises awaited) and returns its JSON value. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Polls `expression` until it is truthy; returns its value. Throws with `what` after `timeoutMs`. */
  waitFor<T = unknown>(expression: string, what: string, timeoutMs?: number): Promise<T>;
  /** Clicks the first element matching `selector` (throws when there is none). */
  click(selector: string): Promise<void>;
  /** Focuses the element matching `selector` and types `text` into it as keyboard input. */
  type(selector: string, text: string): Promise<void>;
  /** PNG of the whole page, or of the viewport only (`fullPage: false`). */
  screenshot(opts?: { fullPage?: boolean }): Promise<Buffer>;
  close(): Promise<void>;
}

export async function openPage(opts: { width?: number; height?: number } = {}): Promise<BrowserPage> {
  if (!CHROMIUM) throw new Error('no Chromium at /usr/bin/chromium');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'chromium-'));
  const proc: ChildProcess = spawn(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      'about:blank',
    ],
    // its own process group: Chromium's helper processes (zygote, renderer, crashpad) are stopped with it
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const cleanup = async () => {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      // the group is gone already
    }
    await exited;
    // A helper still exiting may write into the profile a moment longer (ENOTEMPTY): retry, then leave
    // the temporary directory to the OS rather than fail a test that already passed.
    for (let i = 0; ; i++) {
      try {
        rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
        return;
      } catch (err) {
        if (i >= 20) {
          console.warn(`could not remove the Chromium profile ${profile}: ${(err as Error).message}`);
          return;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  let wsUrl: string;
  try {
    wsUrl = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`Chromium did not start: ${err.slice(-2000)}`)), 30_000);
      proc.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      proc.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`Chromium exited (${code}): ${err.slice(-2000)}`));
      });
    });
  } catch (e) {
    await cleanup();
    throw e;
  }

  const ws = new WebSocket(wsUrl, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, Pending>();
  const listeners: ((method: string, params: any, sessionId?: string) => void)[] = [];
  ws.on('message', (raw: WebSocket.RawData) => {
    const msg = JSON.parse((raw as Buffer).toString('utf8')) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: unknown; sessionId?: string };
    if (msg.id !== undefined) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (!p) return;
      if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`));
      else p.resolve(msg.result);
    } else if (msg.method) {
      for (const l of listeners) l(msg.method, msg.params, msg.sessionId);
    }
  });
  const send = (method: string, params: object = {}, sessionId?: string): Promise<any> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject, method });
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });

  const { targetId } = (await send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
  const { sessionId } = (await send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
  const call = (method: string, params: object = {}) => send(method, params, sessionId);
  const requests: string[] = [];
  const errors: string[] = [];
  let loaded: (() => void) | null = null;
  listeners.push((method, params, sid) => {
    if (sid !== sessionId) return;
    if (method === 'Network.requestWillBeSent') requests.push(params.request.url as string);
    if (method === 'Runtime.exceptionThrown') errors.push(String(params.exceptionDetails?.exception?.description ?? params.exceptionDetails?.text));
    if (method === 'Runtime.consoleAPICalled' && params.type === 'error') errors.push(params.args.map((a: { value?: unknown; description?: string }) => a.value ?? a.description).join(' '));
    if (method === 'Log.entryAdded' && params.entry.level === 'error') errors.push(`${params.entry.text} ${params.entry.url ?? ''}`);
    if (method === 'Page.loadEventFired') loaded?.();
  });
  await Promise.all([call('Page.enable'), call('Runtime.enable'), call('Network.enable'), call('Log.enable')]);
  await call('Emulation.setDeviceMetricsOverride', { width: opts.width ?? 1280, height: opts.height ?? 900, deviceScaleFactor: 1, mobile: false });

  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = (await call('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true })) as {
      result: { value?: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails) throw new Error(`evaluate failed: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}\n${expression}`);
    return r.result.value as T;
  };
  const waitFor = async <T>(expression: string, what: string, timeoutMs = 30_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // a DOM node cannot be returned by value: report it as found
      const v = await evaluate<T>(`(() => { const v = (${expression}); return v instanceof Node ? true : v; })()`);
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; page errors: ${errors.join(' | ') || 'none'}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const q = (selector: string) => `document.querySelector(${JSON.stringify(selector)})`;

  return {
    requests,
    errors,
    async navigate(url) {
      const done = new Promise<void>((r) => (loaded = r));
      await call('Page.navigate', { url });
      await done;
    },
    evaluate,
    waitFor,
    async click(selector) {
      const ok = await evaluate<boolean>(`(() => { const el = ${q(selector)}; if (!el) return false; el.scrollIntoView({ block: 'center' }); el.click(); return true; })()`);
      if (!ok) throw new Error(`nothing to click at ${selector}`);
    },
    async type(selector, text) {
      const ok = await evaluate<boolean>(`(() => { const el = ${q(selector)}; if (!el) return false; el.focus(); return document.activeElement === el; })()`);
      if (!ok) throw new Error(`cannot focus ${selector}`);
      await call('Input.insertText', { text });
    },
    async screenshot({ fullPage = true } = {}) {
      const { data } = (await call('Page.captureScreenshot', { format: 'png', captureBeyondViewport: fullPage })) as { data: string };
      return Buffer.from(data, 'base64');
    },
    async close() {
      await send('Browser.close').catch(() => undefined);
      ws.close();
      await cleanup();
    },
  };
}
