/**
 * The inbox's remittance activity on cash-app's task queue (contract: workflows/src/admin/
 * inbox-contract.ts): admin's inbox workflow hands over a message it read as remittance advice;
 * this reads the advice from the body and from the attachments in object storage, records the
 * remittances (domain/inbound-remittances.ts) and matches again the open bank lines they may
 * explain, so a deposit that arrived before its advice meets it now. A deposit arriving after the
 * advice meets it through the statement's own matching (remittance by transaction number, by
 * amount and payer, or the deposit it was sent for).
 */
import { storageUnavailableFailure, type Db, type ObjectStorage } from '@rp/platform';
import type { InboundRemittanceActivities, InboundRemittanceInput, InboundRemittanceResult } from '@rp/workflows';
import type { Logger } from 'pino';
import { recordInboundRemittances } from '../domain/inbound-remittances.js';
import { recordPaymentEvents } from '../domain/events.js';
import { MatchState, matchStatementPaced, type Proposal } from '../domain/matching/index.js';
import { depositsForRemittances, insertProposals, type DepositRow } from '../store/matching.js';
import { loadMatchContext, type MatchingDeps } from './matching.js';

export interface InboundRemittanceActivityDeps {
  db: Db;
  storage: ObjectStorage | null;
  config: MatchingDeps['config'];
  log?: Logger;
}

/** Open deposits one message's advice may explain, matched again at most. */
const REMATCH_LIMIT = 200;

/**
 * Match again the open deposits the remittances may explain (their deposit, their amount, their
 * number quoted), with the whole organization's matching context, and write the proposals. Returns
 * the deposits that got a payment proposal.
 */
export async function rematchForRemittances(db: Db, organizationId: string, remittanceIds: readonly string[], config: MatchingDeps['config']): Promise<string[]> {
  const deposits = (await depositsForRemittances(db, organizationId, remittanceIds, REMATCH_LIMIT)).map((d) => ({ ...d, currency: d.currency.trim() }));
  if (deposits.length === 0) return [];
  const currencies = [...new Set(deposits.map((d) => d.currency))];
  const ctx = await loadMatchContext(db, organizationId, currencies, config);
  const outcomes = await matchStatementPaced(deposits, ctx, new MatchState(ctx.invoices), async () => {});
  const proposals: Proposal[] = outcomes.flatMap((o) => (o.outcome === 'proposed' ? [o.proposal] : []));
  if (proposals.length === 0) return [];
  const byId = new Map<string, DepositRow>(deposits.map((d) => [d.id, d]));
  await insertProposals(db, organizationId, proposals, byId, (trx, ids) => recordPaymentEvents(trx, organizationId, 'payment.proposed', ids));
  const withPayment = new Set(
    ((await db('payments').select('bank_transaction_id').where({ organization_id: organizationId }).whereIn('bank_transaction_id', proposals.map((p) => p.transaction_id))) as { bank_transaction_id: string }[]).map(
      (r) => r.bank_transaction_id,
    ),
  );
  return proposals.map((p) => p.transaction_id).filter((id) => withPayment.has(id));
}

export function createInboundRemittanceActivities(deps: InboundRemittanceActivityDeps): InboundRemittanceActivities {
  return {
    /**
     * Idempotent: a retry finds the remittances recorded per (message, part) and proposes nothing
     * twice (a deposit that got a payment is no longer open). Without object storage the attempt
     * fails retryably (StorageUnavailable): the attachments cannot be read.
     */
    async recordInboundRemittances(input: InboundRemittanceInput): Promise<InboundRemittanceResult> {
      if (!deps.storage) throw storageUnavailableFailure('cash-app worker');
      const recorded = await recordInboundRemittances({ db: deps.db, storage: deps.storage }, input);
      const rematchedTransactionIds = recorded.errorCode ? [] : await rematchForRemittances(deps.db, input.organizationId, recorded.remittanceIds, deps.config);
      deps.log?.info(
        { organization_id: input.organizationId, inbox_message_id: input.inboxMessageId, remittances: recorded.remittanceIds.length, rematched: rematchedTransactionIds.length, error_code: recorded.errorCode },
        'inbound remittances recorded',
      );
      return { ...recorded, rematchedTransactionIds };
    },
  };
}
