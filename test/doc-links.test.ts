/**
 * The documentation's dead-link check (scripts/check-doc-links.mjs), run as CI runs it: a process
 * whose exit code and output are the result. A fixture tree with dead links must fail, naming each;
 * a fixture with every kind of sound link (files, folders, heading anchors, repeated headings, HTML
 * anchors, absolute URLs, links inside code) must pass; and the repository's own README.md and docs/
 * must pass.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const script = path.join(repo, 'scripts', 'check-doc-links.mjs');
const fixtures = path.join(repo, 'test', 'fixtures', 'doc-links');

function check(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { cwd: repo }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('documentation link check', () => {
  it('fails on a tree with dead links and lists each one with its file and line', async () => {
    const res = await check(path.join(fixtures, 'dead'));
    expect(res.code).toBe(1);
    const lines = res.stderr.trim().split('\n');
    expect(lines).toEqual([
      'README.md:4: docs/missing.md — no such file or folder',
      'README.md:5: docs/guide.md#no-such-heading — no heading #no-such-heading in docs/guide.md',
      'README.md:6: ../../../../../etc/hostname — points outside the repository',
      'docs/guide.md:5: #setting-down — no heading #setting-down in docs/guide.md',
      'check-doc-links: 4 dead link(s) in 2 file(s)',
    ]);
  });

  it('passes a tree whose links all resolve: files, folders, heading and HTML anchors, absolute URLs, code left alone', async () => {
    const res = await check(path.join(fixtures, 'sound'));
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('(2 files)');
  });

  it('fails a tree without documentation rather than passing it silently', async () => {
    const res = await check(path.join(fixtures, 'sound', 'docs', 'guide'));
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('no README.md or docs/*.md');
  });

  it("passes the repository's README.md and docs/", async () => {
    const res = await check();
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
  });
});
