/** The scenarios of the suite, in the order they run; `key` is what CHAOS_SCENARIOS selects. */
import { P, type Scenario } from '../context.js';
import { workerInvites } from './invites.js';
import { outage } from './outage.js';
import { apiPush } from './push.js';
import { workerReceipt } from './receipt.js';
import { workerStatement } from './statement.js';
import { workerSync } from './sync.js';
import { workerWelcome } from './welcome.js';
import { workerCollections } from './collections.js';

/**
 * `stopStack`: run on the stack started again with SUPERVISE_BACKOFF_INITIAL_MS = the outage, so a
 * stopped PostgreSQL/Temporal stays down for the outage and is then restarted by the launcher itself.
 */
export const SCENARIOS: { key: string; name: string; fault: string; run: (sc: Scenario) => Promise<void>; ci: boolean; stopStack?: boolean; ledger?: false }[] = [
  { key: 'statement', name: 'cash-app worker killed during statement storing + matching', fault: 'kill -9 cash-app-worker', run: workerStatement, ci: true },
  { key: 'receipt', name: 'cash-app worker killed while payment receipts are emailed', fault: 'kill -9 cash-app-worker', run: workerReceipt, ci: true },
  { key: 'sync', name: 'integrations worker killed during a QuickBooks connection sync', fault: 'kill -9 integrations-worker', run: workerSync, ci: false },
  { key: 'welcome', name: 'admin worker killed while welcome emails are sent', fault: 'kill -9 admin-worker', run: workerWelcome, ci: false, ledger: false },
  { key: 'invites', name: 'admin worker killed during invitations (and a CNAM submission)', fault: 'kill -9 admin-worker', run: workerInvites, ci: false, ledger: false },
  { key: 'collections', name: 'admin worker killed while a collection run\'s emails go out', fault: 'kill -9 admin-worker', run: workerCollections, ci: false, ledger: false },
  { key: 'push', name: 'integrations API killed under invoice push load', fault: 'kill -9 integrations-api', run: apiPush, ci: true },
  { key: 'postgres-outage', name: `PostgreSQL unreachable ${P.outageMs / 1000} s during processing (frozen)`, fault: `PostgreSQL frozen ${P.outageMs / 1000} s (SIGSTOP/SIGCONT)`, run: (sc) => outage(sc, 'postgres', 'freeze'), ci: false },
  { key: 'temporal-outage', name: `Temporal unreachable ${P.outageMs / 1000} s during processing (frozen)`, fault: `Temporal frozen ${P.outageMs / 1000} s (SIGSTOP/SIGCONT)`, run: (sc) => outage(sc, 'temporal', 'freeze'), ci: false },
  { key: 'postgres-stop', name: `PostgreSQL stopped ${P.outageMs / 1000} s during processing`, fault: `PostgreSQL clean stop (SIGINT to the postmaster), restarted by the launcher after ${P.outageMs / 1000} s`, run: (sc) => outage(sc, 'postgres', 'stop'), ci: true, stopStack: true },
  { key: 'temporal-stop', name: `Temporal stopped ${P.outageMs / 1000} s during processing`, fault: `Temporal dev server clean stop (SIGTERM), restarted by the launcher after ${P.outageMs / 1000} s`, run: (sc) => outage(sc, 'temporal', 'stop'), ci: true, stopStack: true },
];
