/**
 * The template engine's render limit counts the clock a worker thread installs (thread-cpu.ts): on the
 * template threads that is the thread's CPU time, so a render is judged by its own work, never by the
 * time its low-priority thread waited for the CPU (template-worker.ts).
 */
import { describe, expect, it } from 'vitest';
import { createTemplateEngine } from '../src/email-templates.js';
import { withPerformanceClock, type Clock } from '../src/thread-cpu.js';

describe('withPerformanceClock', () => {
  const engine = createTemplateEngine();
  const template = engine.parse('{% for i in (1..50) %}{{ i }}{% endfor %} {{ name }}');

  it("makes the engine's render limit count the installed clock, and restores the real one", () => {
    const real = globalThis.performance;
    // a clock on which every reading is two seconds after the last: past the 1 s limit at once
    let t = 0;
    const racing: Clock = { now: () => (t += 2_000) };
    expect(() => withPerformanceClock(racing, () => engine.renderSync(template, { name: 'x' }))).toThrow(/render limit exceeded/);
    expect(globalThis.performance).toBe(real);
    // a clock that stands still: the same render is within any limit
    const still: Clock = { now: () => 0 };
    expect(withPerformanceClock(still, () => engine.renderSync(template, { name: 'x' }))).toMatch(/ x$/);
    expect(engine.renderSync(template, { name: 'y' })).toMatch(/ y$/);
    expect(globalThis.performance).toBe(real);
  });

  it('runs the function unchanged where no thread clock exists', () => {
    expect(withPerformanceClock(null, () => 42)).toBe(42);
  });
});
