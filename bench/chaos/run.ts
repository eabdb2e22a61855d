/**
 * `npm run chaos`: the fault-injection suite. Brings up the real stack with the
 * `npm start` launcher (scripts/start.ts) on free ports and a data directory of its own
 * (var/chaos/<run>), onboards an organization of its own, and per scenario injects a fault and
 * checks the invariants through the gateway, as an API client would:
 *
 *   cash-app worker kill -9 while a multi-thousand-line statement is stored and matched
 *   cash-app worker kill -9 while payment receipts are being emailed (exactly one email each, MailDev)
 *   integrations worker kill -9 while a QuickBooks connection syncs (fake QuickBooks on loopback)
 *   admin worker kill -9 while welcome emails are being sent (exactly one each)
 *   admin worker kill -9 while user invitations are emailed and a CNAM registration is submitted
 *     (one invitation each with a working token; the operator CLI's decision approves it once)
 *   integrations API kill -9 under invoice push load (only unacknowledged batches fail, with 502/503;
 *     a retry of every batch returns the same ids)
 *   PostgreSQL stopped, Temporal stopped during processing (503 meanwhile, never 500; every in-flight
 *     job completes afterwards without a manual step; an upload refused during the outage succeeds
 *     when retried)
 *
 * The process "comes back" is the launcher's supervision; a stopped PostgreSQL/Temporal that the
 * launcher does not restart within the outage is started again by the suite (same command line).
 * SQL is used only for read-only cross-checks no endpoint can answer (duplicate rows, ledger counts).
 *
 * CHAOS_PROFILE=ci (or --ci): the bounded form for CI: smaller statement and load, 12 s outages, one
 * stack (restart backoff = the outage throughout), without the sync, welcome-email, invitation and frozen-dependency
 * scenarios. CHAOS_SCENARIOS=key,key runs a subset (keys in SCENARIOS, scenarios/index.ts); its results are merged into the
 * profile's recorded entry (each marked `measured_separately`), not replacing the other scenarios.
 * Results: bench/results/chaos.json (per profile) and the exit code (1 when an invariant broke).
 *
 * Layout: context.ts (profile, parameters, the run's shared handles), stack.ts (the launcher's stack and
 * the faults it takes), ledger.ts and statements.ts (the organization's set-up, statement checks),
 * scenarios/ (one file per scenario, listed in scenarios/index.ts), results.ts (chaos.json).
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startFakeQuickbooks } from '../../test/support/fake-quickbooks.js';
import { Api } from './api.js';
import { CI, log, P, PROFILE, REDIRECT_URI, root, runId, Scenario, type ScenarioResult, started, suite, varDir } from './context.js';
import { ledgerInvoiceCount, onboard, setUpLedger } from './ledger.js';
import { write } from './results.js';
import { SCENARIOS } from './scenarios/index.js';
import { Stack } from './stack.js';

let stackRestarts = 0;
let stackStartMs = 0;
let outageStackStartMs: number | null = null;

async function ensureStack(): Promise<void> {
  const { stack } = suite;
  if (stack.running() && (await stack.readyz()) === 200) return;
  log(`the stack is down (${stack.exitNote || 'gateway not ready'}): starting it again`);
  await stack.stop();
  stackRestarts++;
  await stack.start();
}

async function main(): Promise<number> {
  log(`profile ${PROFILE}, run ${runId}, data in ${path.relative(root, varDir)}`);
  mkdirSync(varDir, { recursive: true });
  const fake = (suite.fake = await startFakeQuickbooks());
  const stack = (suite.stack = await Stack.create(root, varDir, {
    RATE_LIMIT_PER_SECOND: '0',
    OUTBOUND_ALLOWLIST: '127.0.0.0/8,::1',
    OAUTH_CLIENTS: JSON.stringify({ quickbooks_online: { client_id: 'qbo-client', client_secret: 'qbo-secret' } }),
    OAUTH_REDIRECT_URI: REDIRECT_URI,
    // the bounded form runs on one stack: the restart backoff that holds a stopped component down for the outage from the start
    ...(CI ? { SUPERVISE_BACKOFF_INITIAL_MS: String(P.outageMs) } : {}),
    PROVIDER_URL_OVERRIDES: JSON.stringify({ quickbooks_online: { token_url: `${fake.url}/oauth2/v1/tokens/bearer`, api_base_url: fake.url } }),
  }, log));
  suite.api = new Api(stack.gatewayUrl, stack.mailUrl);
  const results: ScenarioResult[] = [];
  try {
    stackStartMs = await stack.start();
    log(`stack ready in ${(stackStartMs / 1000).toFixed(1)} s (gateway ${stack.gatewayUrl})`);
    await onboard();
    const selected = SCENARIOS.filter((s) => (!P.only.length || P.only.includes(s.key)) && (!CI || s.ci));
    // the ledger (customers + open invoices) only when a selected scenario uses it
    if (selected.some((s) => s.ledger !== false)) await setUpLedger();
    log(`organization ${suite.org.id}: ${ledgerInvoiceCount() ? `${P.customers} customers, ${ledgerInvoiceCount()} open invoices` : 'no ledger (not used by the selected scenarios)'}`);
    for (const s of selected) {
      const sc = new Scenario();
      const t0 = Date.now();
      log(`scenario: ${s.name}`);
      let error: string | undefined;
      try {
        if (s.stopStack && !stack.extraEnv.SUPERVISE_BACKOFF_INITIAL_MS) {
          log(`starting the stack again with SUPERVISE_BACKOFF_INITIAL_MS=${P.outageMs} (a stopped component stays down for the outage)`);
          await stack.stop();
          stack.extraEnv = { ...stack.extraEnv, SUPERVISE_BACKOFF_INITIAL_MS: String(P.outageMs) };
          outageStackStartMs = await stack.start();
        }
        await ensureStack();
        await s.run(sc);
      } catch (err) {
        error = (err as Error).message;
        log(`  FAIL ${error}`);
      }
      const outcome = !error && sc.checks.length > 0 && sc.checks.every((c) => c.pass) ? 'pass' : 'fail';
      log(`  → ${outcome} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      results.push({ name: s.name, fault: s.fault, outcome, checks: sc.checks, recovery_ms: sc.recovery, facts: sc.facts, ...(error ? { error } : {}), duration_ms: Date.now() - t0 });
    }
  } catch (err) {
    log(`set-up failed: ${(err as Error).message}`);
    results.push({ name: 'set-up', fault: 'none', outcome: 'fail', checks: [], recovery_ms: {}, facts: {}, error: (err as Error).message, duration_ms: Date.now() - started });
  } finally {
    log('stopping the stack');
    await stack.stop();
    await fake.close();
  }
  const failed = results.filter((r) => r.outcome === 'fail');
  write(results, { stackStartMs, outageStackStartMs, stackRestarts });
  if (failed.length) log(`${failed.length} scenario(s) FAILED: ${failed.map((f) => f.name).join('; ')} (logs kept in ${varDir})`);
  else {
    log('every scenario passed');
    rmSync(varDir, { recursive: true, force: true });
  }
  return failed.length ? 1 : 0;
}

let exiting = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (exiting) return;
    exiting = true;
    log(`${sig}: stopping the stack`);
    void (suite.stack ? suite.stack.stop() : Promise.resolve()).finally(() => process.exit(130));
  });
}
process.exit(await main());
