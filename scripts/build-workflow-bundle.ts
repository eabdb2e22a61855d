/**
 * Build the prebuilt workflow bundle that production workers load (WORKFLOW_BUNDLE_PATH), so a
 * worker never runs webpack on start.
 *
 *   npx tsx scripts/build-workflow-bundle.ts [out-file]    (default: dist/workflow-bundle.js at the repo root)
 *
 * Prints the absolute path of the written bundle on stdout.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type Logger } from '@temporalio/worker';
import { workflowsPath } from '@rp/workflows/paths';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outFile = process.argv[2] ? path.resolve(process.argv[2]) : path.join(repoRoot, 'dist', 'workflow-bundle.js');

// webpack's progress chatter is noise in build logs; warnings and errors still go to stderr.
const quiet = () => {};
const logger: Logger = {
  log: (level, message, meta) => {
    if (level === 'WARN' || level === 'ERROR') console.error(`[${level}] ${message}`, meta ?? '');
  },
  trace: quiet,
  debug: quiet,
  info: quiet,
  warn: (message, meta) => console.error(`[WARN] ${message}`, meta ?? ''),
  error: (message, meta) => console.error(`[ERROR] ${message}`, meta ?? ''),
};

const { code } = await bundleWorkflowCode({ workflowsPath, logger });
await mkdir(path.dirname(outFile), { recursive: true });
await writeFile(outFile, code);
console.log(outFile);
