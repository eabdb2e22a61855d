/**
 * The suite's results file, bench/results/chaos.json: one entry per profile, replaced by a full run;
 * a subset run (CHAOS_SCENARIOS) merges its scenarios into the profile's recorded entry.
 */
import { execSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { log, P, PROFILE, root, type ScenarioResult, started } from './context.js';

/** What the run measured of its stack besides the scenarios. */
export interface StackFigures {
  stackStartMs: number;
  outageStackStartMs: number | null;
  stackRestarts: number;
}

export function write(results: ScenarioResult[], { stackStartMs, outageStackStartMs, stackRestarts }: StackFigures) {
  const file = path.join(root, 'bench', 'results', 'chaos.json');
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  let commit = '';
  try {
    commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
  } catch {
    // not a git checkout
  }
  const previous = all[PROFILE] as { scenarios?: (ScenarioResult & { measured_separately?: unknown })[]; separately_measured?: unknown[] } | undefined;
  if (P.only.length && previous?.scenarios) {
    // a subset run (CHAOS_SCENARIOS) merges its scenarios into the profile's recorded run, each marked with when and where it was measured
    const measured = { generated_at: new Date().toISOString(), commit, stack_start_ms: stackStartMs, duration_ms: Date.now() - started, machine: { cpus: os.cpus().length, node: process.version } };
    const fresh = new Map(results.map((r) => [r.name, { ...r, measured_separately: measured }]));
    // a scenario measured separately before keeps its earlier runs (outcome and checks) under `earlier_runs`
    const replace = (r: ScenarioResult & { measured_separately?: unknown; earlier_runs?: unknown[] }) => {
      const now = fresh.get(r.name);
      if (!now) return r;
      const { earlier_runs: earlier = [], ...prev } = r;
      return prev.measured_separately ? { ...now, earlier_runs: [...earlier, prev] } : now;
    };
    const scenarios = [...previous.scenarios.map(replace), ...[...fresh.values()].filter((r) => !previous.scenarios!.some((p) => p.name === r.name))];
    all[PROFILE] = {
      ...previous,
      passed: scenarios.filter((r) => r.outcome === 'pass').length,
      failed: scenarios.filter((r) => r.outcome === 'fail').length,
      scenarios,
      separately_measured: [...(previous.separately_measured ?? []), { scenarios: results.map((r) => r.name), ...measured, parameters: { ...P, only: undefined } }],
    };
    writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
    log(`results: merged into ${path.relative(root, file)} (${PROFILE})`);
    return;
  }
  all[PROFILE] = {
    generated_at: new Date().toISOString(),
    commit,
    machine: { cpus: os.cpus().length, node: process.version },
    parameters: { ...P, only: undefined },
    stack_start_ms: stackStartMs,
    outage_stack_start_ms: outageStackStartMs,
    stack_restarts_by_suite: stackRestarts,
    duration_ms: Date.now() - started,
    passed: results.filter((r) => r.outcome === 'pass').length,
    failed: results.filter((r) => r.outcome === 'fail').length,
    scenarios: results,
  };
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  log(`results: ${path.relative(root, file)} (${PROFILE})`);
}
