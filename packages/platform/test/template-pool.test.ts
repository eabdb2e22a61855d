/**
 * The kernel's template pool (template-pool.ts) on its own: real worker threads, the real engine.
 * The end-to-end behaviour through the admin API (a slow preview leaves other requests answered, a
 * full pool answers 503) is in test/template-render-pool.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TemplatePool, TemplatePoolBusyError } from '../src/template-pool.js';

let pool: TemplatePool | null = null;
afterEach(async () => {
  await pool?.close();
  pool = null;
});

// Millions of loop steps: far longer than the few milliseconds the tests below allow a render.
const LONG = '{% for i in (1..3000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}done';

describe('template pool', () => {
  it('renders with the strict engine and reports a template error with its position', async () => {
    pool = new TemplatePool({ threads: 1, maxQueue: 4 });
    expect(await pool.render('Hello {{ customer.name }}', { customer: { name: 'Ada' } })).toEqual({ ok: true, output: 'Hello Ada' });
    const failed = await pool.render('Hi\n{{ nope }}', {});
    expect(failed).toMatchObject({ ok: false, reason: 'error', message: expect.stringMatching(/undefined variable: nope/), position: { line: 2 } });
    expect(pool.pending).toBe(0);
  });

  it('stops a render that outlives its limit by terminating its thread, and renders again on a new one', async () => {
    // The engine would stop this render itself only at its own 1 s limit; the pool's limit is set far
    // below it, so the pool has to end it.
    pool = new TemplatePool({ threads: 1, maxQueue: 4, limitMs: 100, graceMs: 0 });
    expect(await pool.render(LONG, {})).toMatchObject({ ok: false, reason: 'timeout', message: expect.stringMatching(/limit exceeded/) });
    expect(pool.pending).toBe(0);
    // a template stopped at its limit renders on the lowest-priority threads from then on
    expect(pool.isHeavy([{ source: LONG, cacheKey: null }])).toBe(true);
    // the next render runs on a fresh thread (the time limit starts once that thread is ready)
    expect(await pool.render('{{ a }}', { a: 'again' })).toEqual({ ok: true, output: 'again' });
  });

  it('refuses a render when every thread is busy and the queue is full, without queueing it', async () => {
    pool = new TemplatePool({ threads: 1, maxQueue: 1 });
    const running = pool.render(LONG, {});
    const waiting = pool.render('{{ a }}', { a: 'queued' });
    await expect(pool.render('{{ a }}', { a: 'refused' })).rejects.toBeInstanceOf(TemplatePoolBusyError);
    expect(pool.pending).toBe(2);
    await running;
    expect(await waiting).toEqual({ ok: true, output: 'queued' });
    const busy = new TemplatePoolBusyError(1);
    expect(busy).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
  });
  it.runIf(process.platform === 'linux')('moves a template whose render is heavy to the lowest-priority threads, and back once it renders quickly again', async () => {
    pool = new TemplatePool({ threads: 1, maxQueue: 4 });
    // n × 1,000 loop steps: n = 1 is a fraction of a millisecond, n = 1,000 far more than HEAVY_RENDER_CPU_MS of CPU (and far below the 1 s limit)
    const source = '{% for i in (1..n) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}ok';
    const cacheKey = { id: 'tpl-1', field: 'body', modifiedAt: 1 };
    const parts = [{ source, cacheKey }];
    expect(await pool.render(source, { n: 1 }, cacheKey)).toEqual({ ok: true, output: 'ok' });
    expect(pool.isHeavy(parts)).toBe(false);
    expect(await pool.render(source, { n: 1000 }, cacheKey)).toEqual({ ok: true, output: 'ok' });
    expect(pool.isHeavy(parts)).toBe(true);
    // per template and version: another version, or another template, is not heavy
    expect(pool.isHeavy([{ source, cacheKey: { ...cacheKey, modifiedAt: 2 } }])).toBe(false);
    expect(pool.isHeavy([{ source: '{{ a }}', cacheKey: null }])).toBe(false);
    // on the low-priority threads it renders the same, and a quick render moves it back
    expect(await pool.render(source, { n: 1 }, cacheKey)).toEqual({ ok: true, output: 'ok' });
    expect(pool.isHeavy(parts)).toBe(false);
    // a message (subject and body) is judged as one operation
    const message = [{ source: 'Re {{ n }}', cacheKey: { id: 'tpl-1', field: 'subject', modifiedAt: 1 } }, ...parts];
    await pool.renderAll(message, { n: 1000 });
    expect(pool.isHeavy(message)).toBe(true);
  });

  it("renders a message's parts against one context in one operation, each part with its own outcome", async () => {
    pool = new TemplatePool({ threads: 1, maxQueue: 4 });
    const key = (field: string) => ({ id: 't1', field, modifiedAt: 1 });
    const parts = [
      { source: 'Invoice {{ n }}', cacheKey: key('subject') },
      { source: 'Dear {{ name }},\n{{ missing }}', cacheKey: key('body') },
    ];
    const outcomes = await pool.renderAll(parts, { n: 4711, name: 'Ada' });
    expect(outcomes[0]).toEqual({ ok: true, output: 'Invoice 4711' });
    expect(outcomes[1]).toMatchObject({ ok: false, reason: 'error', message: expect.stringMatching(/undefined variable: missing/), position: { line: 2 } });
    expect(await pool.renderAll(parts.slice(0, 1), { n: 1 })).toEqual([{ ok: true, output: 'Invoice 1' }]);
  });

  it('answers timeout for every part when the operation outlives the sum of their limits', async () => {
    pool = new TemplatePool({ threads: 1, maxQueue: 4, limitMs: 50, graceMs: 0 });
    const outcomes = await pool.renderAll([{ source: 'ok', cacheKey: null }, { source: LONG, cacheKey: null }], {});
    expect(outcomes).toEqual([
      { ok: false, reason: 'timeout', message: expect.stringMatching(/limit exceeded/), position: null },
      { ok: false, reason: 'timeout', message: expect.stringMatching(/limit exceeded/), position: null },
    ]);
  });
});
