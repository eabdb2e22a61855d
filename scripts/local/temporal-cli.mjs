// Where the Temporal CLI is: $TEMPORAL_CLI, then PATH, then Go's bin directory (where `go install`
// puts it). Plain JavaScript so that scripts/bootstrap.mjs can use it before dependencies exist.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

/** @returns {string | null} */
export function findTemporalCli() {
  const candidates = [];
  if (process.env.TEMPORAL_CLI) candidates.push(process.env.TEMPORAL_CLI);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) if (dir) candidates.push(path.join(dir, 'temporal'));
  try {
    const gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (gopath) candidates.push(path.join(gopath.split(path.delimiter)[0], 'bin', 'temporal'));
  } catch {
    // no Go toolchain
  }
  candidates.push(path.join(os.homedir(), 'go', 'bin', 'temporal'));
  return candidates.find((c) => existsSync(c)) ?? null;
}
