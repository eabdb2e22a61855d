/**
 * The template pool's worker module (see template-pool.ts), run on the kernel's worker threads
 * (worker-pool.ts): renders Liquid templates with the kernel's bounded engine — one, or the fields of
 * one message (subject and body) against one context in a single operation — keeping the parsed form
 * of recently used saved templates on its thread.
 */
import type { Template } from 'liquidjs';
import { createTemplateEngine, liquidErrorPosition } from './email-templates.js';
import { ParsedTemplateCache } from './parsed-templates.js';
import { threadCpuClock, withPerformanceClock } from './thread-cpu.js';
import type { TemplateCacheKey } from './template-pool.js';

const engine = createTemplateEngine();

/**
 * The engine's render limit times itself with `performance.now()`; on this thread it counts the
 * thread's CPU time instead (as the pool's backstop does), since the thread runs behind every request
 * of the machine and a render must not fail for the time it waited for the CPU.
 */
const cpuClock = threadCpuClock();

/** Parsed saved templates of this thread, reused while their modified_at and source are unchanged. */
const parsed = new ParsedTemplateCache(500, 4_000_000, (source) => engine.parse(source));

function parse(key: TemplateCacheKey | null, source: string): Template[] {
  return key === null ? engine.parse(source) : parsed.get(key.id, key.field, key.modifiedAt, source);
}

/** A render's answer as data: a template's own failure is an outcome, not an error of the thread. */
export type TemplateRenderReply = { ok: true; output: string } | { ok: false; message: string; position: { line: number; col: number } | null };

function render(source: string, context: unknown, cacheKey: TemplateCacheKey | null): TemplateRenderReply {
  try {
    const templates = parse(cacheKey, source);
    return { ok: true, output: withPerformanceClock(cpuClock, () => engine.renderSync(templates, context as object)) as string };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err), position: liquidErrorPosition(err) };
  }
}

/** `fn`'s value and the CPU time this thread spent on it (null off Linux): the pool learns which templates are heavy. */
function costed<T>(fn: () => T): { value: T; cpuMs: number | null } {
  const start = cpuClock?.now() ?? null;
  const value = fn();
  return { value, cpuMs: start === null ? null : cpuClock!.now() - start };
}

export const ops = {
  render: (source: string, context: unknown, cacheKey: TemplateCacheKey | null) => costed(() => render(source, context, cacheKey)),
  /** Each part against the same context, in order: the context crosses to the thread once. */
  renderAll: (parts: { source: string; cacheKey: TemplateCacheKey | null }[], context: unknown) => costed(() => parts.map((p) => render(p.source, context, p.cacheKey))),
};
