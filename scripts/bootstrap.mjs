#!/usr/bin/env node
// Entry of `npm start`, `npm test`, `npm run bench`, `npm run chaos` and `npm run cli`: installs what is missing
// (npm dependencies, the Temporal CLI, versitygw) and then runs the real command. Plain Node, no dependencies.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findTemporalCli, TEMPORAL_CLI_MODULE } from './local/temporal-cli.mjs';
import { findVersitygw, VERSITYGW_MODULE } from './local/versitygw.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quiet = process.argv.includes('--quiet-bootstrap');

function say(msg) {
  if (!quiet) process.stderr.write(`[bootstrap] ${msg}\n`);
}

// An installation step's output goes to stderr: stdout is the command's own (`npm run cli` prints JSON
// that scripts read, as scripts/fuzz.sh does).
function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { stdio: ['inherit', 2, 2], cwd: root, ...opts });
  if (res.status !== 0) {
    process.stderr.write(`[bootstrap] ${cmd} ${args.join(' ')} failed (exit ${res.status ?? res.signal})\n`);
    process.exit(res.status ?? 1);
  }
}

function ensureDependencies() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  const stale = !existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs + 1000);
  if (!stale) return;
  say('installing npm dependencies (npm ci)…');
  run('npm', ['ci', '--no-audit', '--no-fund']);
}

function ensureTemporalCli() {
  if (process.env.TEMPORAL_ADDRESS && process.argv[2] === 'start') return; // external Temporal
  if (findTemporalCli()) return;
  if (spawnSync('go', ['version']).status !== 0) {
    process.stderr.write('[bootstrap] The Temporal CLI is missing and Go is not installed to build it. Install Go, or set TEMPORAL_CLI, or set TEMPORAL_ADDRESS to an existing server.\n');
    process.exit(1);
  }
  say(`building the Temporal CLI once (go install ${TEMPORAL_CLI_MODULE}); this takes a few minutes…`);
  run('go', ['install', TEMPORAL_CLI_MODULE]);
  if (!findTemporalCli()) {
    process.stderr.write('[bootstrap] go install finished but the temporal binary was not found in $(go env GOPATH)/bin\n');
    process.exit(1);
  }
}

// versitygw, the S3-compatible object storage of the local stack and the tests, built like the CLI.
function ensureVersitygw() {
  if (process.env.S3_ENDPOINT && process.argv[2] === 'start') return; // external object storage
  if (findVersitygw()) return;
  if (spawnSync('go', ['version']).status !== 0) {
    process.stderr.write('[bootstrap] versitygw is missing and Go is not installed to build it. Install Go, or set VERSITYGW, or set S3_ENDPOINT (and the S3_* credentials) to an existing S3 server.\n');
    process.exit(1);
  }
  say(`building versitygw once (go install ${VERSITYGW_MODULE}); this takes a few minutes…`);
  run('go', ['install', VERSITYGW_MODULE]);
  if (!findVersitygw()) {
    process.stderr.write('[bootstrap] go install finished but the versitygw binary was not found in $(go env GOPATH)/bin\n');
    process.exit(1);
  }
}

function exec(cmd, args) {
  const child = spawn(cmd, args, { stdio: 'inherit', cwd: root, env: process.env });
  // The terminal sends Ctrl-C to the whole process group; let the child shut down and exit with it.
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const [command, ...rest] = process.argv.slice(2).filter((a) => a !== '--quiet-bootstrap');
const tsx = [process.execPath, '--import', 'tsx'];

switch (command) {
  case 'install':
    ensureDependencies();
    ensureTemporalCli();
    ensureVersitygw();
    break;
  case 'start':
    ensureDependencies();
    ensureTemporalCli();
    ensureVersitygw();
    exec(tsx[0], [...tsx.slice(1), 'scripts/start.ts', ...rest]);
    break;
  case 'test':
    ensureDependencies();
    ensureTemporalCli();
    ensureVersitygw();
    exec(process.execPath, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...rest]);
    break;
  case 'bench':
    ensureDependencies();
    ensureTemporalCli();
    ensureVersitygw();
    exec(tsx[0], [...tsx.slice(1), 'bench/run.ts', ...rest]);
    break;
  case 'chaos':
    ensureDependencies();
    ensureTemporalCli();
    exec(tsx[0], [...tsx.slice(1), 'bench/chaos/run.ts', ...rest]);
    break;
  case 'cli':
    ensureDependencies();
    exec(tsx[0], [...tsx.slice(1), 'services/admin/src/cli.ts', ...rest]);
    break;
  default:
    process.stderr.write('usage: node scripts/bootstrap.mjs install|start|test|bench|chaos|cli [args…]\n');
    process.exit(2);
}
