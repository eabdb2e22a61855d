// Where versitygw (the S3-compatible object storage server of the local stack) is: $VERSITYGW,
// then PATH, then Go's bin directory (where `go install` puts it). Plain JavaScript so that
// scripts/bootstrap.mjs can use it before dependencies exist; mirrors temporal-cli.mjs.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const VERSITYGW_MODULE = 'github.com/versity/versitygw/cmd/versitygw@v1.8.0';

/** @returns {string | null} */
export function findVersitygw() {
  const candidates = [];
  if (process.env.VERSITYGW) candidates.push(process.env.VERSITYGW);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) if (dir) candidates.push(path.join(dir, 'versitygw'));
  try {
    const gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (gopath) candidates.push(path.join(gopath.split(path.delimiter)[0], 'bin', 'versitygw'));
  } catch {
    // no Go toolchain
  }
  candidates.push(path.join(os.homedir(), 'go', 'bin', 'versitygw'));
  return candidates.find((c) => existsSync(c)) ?? null;
}
