/**
 * What every part of the fault-injection suite shares: the profile and its parameters (`P`), the run's
 * id and data directory, the log, a scenario's record of checks, and the run's stack, gateway client,
 * fake QuickBooks and organization (`suite`, filled by run.ts before any scenario runs).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FakeQuickbooks } from '../../test/support/fake-quickbooks.js';
import type { Api } from './api.js';
import type { Stack } from './stack.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CI = process.env.CHAOS_PROFILE === 'ci' || process.argv.includes('--ci');
export const PROFILE = CI ? 'ci' : 'full';
export const P = CI
  ? { statementLines: 1500, customers: 40, receipts: 5, collectionCustomers: 60, welcomes: 5, invites: 5, pushBatches: 18, pushBatchSize: 50, pushConcurrency: 3, qboCustomers: 150, qboInvoices: 300, outageMs: 12_000, outageLines: 300, backMs: 90_000, jobMs: 150_000, only: (process.env.CHAOS_SCENARIOS ?? '').split(',').filter(Boolean) }
  : { statementLines: 5000, customers: 100, receipts: 20, collectionCustomers: 300, welcomes: 20, invites: 20, pushBatches: 60, pushBatchSize: 100, pushConcurrency: 4, qboCustomers: 600, qboInvoices: 1500, outageMs: 30_000, outageLines: 1000, backMs: 120_000, jobMs: 360_000, only: (process.env.CHAOS_SCENARIOS ?? '').split(',').filter(Boolean) };

export const started = Date.now();
export const log = (m: string) => process.stdout.write(`[chaos ${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);

export interface Check {
  name: string;
  pass: boolean;
  detail?: string;
}
export interface ScenarioResult {
  name: string;
  fault: string;
  outcome: 'pass' | 'fail';
  checks: Check[];
  recovery_ms: Record<string, number | null>;
  facts: Record<string, unknown>;
  error?: string;
  duration_ms: number;
}

export class Scenario {
  checks: Check[] = [];
  recovery: Record<string, number | null> = {};
  facts: Record<string, unknown> = {};
  check(name: string, pass: boolean, detail?: string) {
    this.checks.push({ name, pass, ...(detail ? { detail } : {}) });
    log(`  ${pass ? 'ok  ' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`);
  }
}

export const runId = `${new Date().toISOString().slice(0, 10).replace(/-/g, '')}${randomBytes(3).toString('hex')}`;
export const varDir = path.join(root, 'var', 'chaos', runId);
/** statement statuses while its workflow runs */
export const RUNNING = ['uploaded', 'processing'];
export const REDIRECT_URI = 'https://app.example.com/oauth/callback';
export const customerName = (i: number) => `Chaos Customer ${i} GmbH`;
export const customerEmail = (i: number) => `ap.${i}.${runId}@chaos.example`;

/** The run's handles: set once by run.ts (stack, client, fake QuickBooks, then the onboarded organization). */
export const suite = {} as {
  stack: Stack;
  api: Api;
  fake: FakeQuickbooks;
  org: { id: string; token: string; apiKey: string };
};
