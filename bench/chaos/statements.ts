/**
 * Bank statements as the scenarios use them: an upload through the gateway, its state, waiting for its
 * end, and the invariants of a processed statement (read through the API, cross-checked in SQL).
 */
import { type Body, type LedgerInvoice, sql, statementBody } from './api.js';
import { customerName, runId, type Scenario, suite } from './context.js';
import { waitFor } from './wait.js';

export async function uploadStatement(tag: string, lines: LedgerInvoice[], timeoutMs = 120_000) {
  return suite.api.call('POST', '/v2/bank-statements', { token: suite.org.token, body: statementBody(`${runId}-${tag}`, lines, customerName), timeoutMs });
}

export async function statementOf(id: string) {
  return suite.api.call('GET', `/v2/bank-statements/${id}?transactions=omit`, { token: suite.org.token, timeoutMs: 10_000 });
}

/** Wait for a statement to end (ready or failed) and return it. */
export async function statementEnd(id: string, timeoutMs: number) {
  return waitFor(`statement ${id} to be ready`, timeoutMs, async () => {
    const s = await statementOf(id);
    return s.status === 200 && ['ready', 'failed'].includes(s.body.status) ? s.body : null;
  }, 500);
}

/** The invariants of a processed statement: ready, every line stored once, one payment proposal per line. */
export async function checkStatement(sc: Scenario, id: string, lines: number, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  let s: Body;
  try {
    s = await statementEnd(id, timeoutMs);
  } catch (err) {
    const last = await statementOf(id);
    sc.check('statement completes', false, `${(err as Error).message}; last seen ${JSON.stringify(last.body).slice(0, 300)}`);
    return Date.now();
  }
  const doneAt = Date.now();
  sc.check('statement completes (ready, not failed)', s.status === 'ready', `status ${s.status}${s.error ? `, error ${JSON.stringify(s.error)}` : ''} after ${((doneAt - t0) / 1000).toFixed(1)} s more`);
  sc.check(`transaction_count = ${lines}`, s.transaction_count === lines, `transaction_count ${s.transaction_count}`);
  const txs = await suite.api.call('GET', `/v2/bank-statements/${id}/transactions?page_size=1`, { token: suite.org.token });
  sc.check(`GET …/transactions lists ${lines}`, txs.body?.total_records === lines, `total_records ${txs.body?.total_records}`);
  const pays = await suite.api.call('GET', `/v2/payments?statement_id=${id}&page_size=1`, { token: suite.org.token });
  sc.check(`one proposed payment per line (${lines})`, pays.body?.total_records === lines, `total_records ${pays.body?.total_records}`);
  const [dup] = await sql(suite.stack.localEnv!.DATABASE_URL, `SELECT count(*)::int AS rows, count(DISTINCT unique_import_id)::int AS distinct_lines,
      (SELECT count(*)::int FROM cash_app.payments p WHERE p.bank_transaction_id IN (SELECT id FROM cash_app.bank_transactions WHERE statement_id = $1)) AS payments,
      (SELECT count(DISTINCT p.bank_transaction_id)::int FROM cash_app.payments p WHERE p.bank_transaction_id IN (SELECT id FROM cash_app.bank_transactions WHERE statement_id = $1)) AS paid_lines
    FROM cash_app.bank_transactions WHERE statement_id = $1`, [id]);
  sc.check('no row lost or duplicated (SQL cross-check)', dup.rows === lines && dup.distinct_lines === lines && dup.payments === dup.paid_lines && dup.payments === lines, JSON.stringify(dup));
  return doneAt;
}
