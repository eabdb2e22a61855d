/**
 * Remittance requests (spec 2.8, outreach_type `remittance_request`): asking the likely payer of a
 * deposit we cannot apply which invoices it pays. The request writes the outreach record (the
 * email's intent) and starts its workflow `remittance-request-<record id>` before it answers; the
 * workflow renders and sends the email (activities/remittance-request.ts).
 *
 * Who is asked: the customer the caller names; else the customer of the deposit's open proposals
 * when they all name one; else the payer matching identifies from the bank line (a known account,
 * else the counterparty name, ties rejected: domain/matching/payers.ts); else nobody, and the answer
 * says why. Once only: while the deposit has a live (pending or sent) request, asking again answers
 * that record.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import {
  activityRetryWindowMinutes,
  ConflictError,
  getPartner,
  getPartners,
  isUuid,
  listMasterDataBankAccounts,
  listPartnersForMatching,
  NotFoundError,
  ValidationError,
  withTemporalDeadline,
  type BusinessUnitScope,
  type Db,
  type LedgerPartner,
} from '@rp/platform';
import { businessSearchAttributes, remittanceRequest, remittanceRequestWorkflowId, TASK_QUEUES, type RemittanceRequestInput } from '@rp/workflows';
import type { CashAppDeps } from '../deps.js';
import { getOutreach, type OutreachRow } from '../store/outreach.js';
import { knownAccounts } from '../store/matching.js';
import { approvedPaymentOf, claimRemittanceRequestRecord, getRequestDeposit, liveRemittanceRequest, proposedPayersOf, type RequestDeposit } from '../store/remittance-requests.js';
import { DEFAULT_MATCH_CONFIG, PartnerIndex, payerCandidates } from './matching/index.js';
import { recordReceiptFailed } from './outreach.js';

const EMAIL = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;

/** A customer's address a request can go to, or null. */
export function requestAddress(partner: Pick<LedgerPartner, 'email'>): string | null {
  const to = partner.email?.trim();
  return to && EMAIL.test(to) ? to : null;
}

/** Stored on a request whose sending could not be started (the workflow engine was unavailable). */
export const REQUEST_NOT_STARTED = 'Sending the remittance request could not be started because a service of the platform was unavailable. Request it again.';

/** A 422 on `body.partner_id` whose detail repeats its message (`partner_id is required: …`). */
const payerIssue = (msg: string, type: string) => new ValidationError([{ loc: ['body', 'partner_id'], msg, type }], `partner_id ${msg}.`);

/** Which customer the deposit came from, as matching reads the bank line; the 422 says why when nobody can be named. */
async function likelyPayer(db: Db, org: string, deposit: RequestDeposit, scope: BusinessUnitScope): Promise<LedgerPartner> {
  const proposed = await proposedPayersOf(db, org, deposit.id);
  let payerId: string | null = proposed.length === 1 ? proposed[0]! : null;
  if (!payerId) {
    const [partners, learned, masterData] = await Promise.all([listPartnersForMatching(db, org), knownAccounts(db, org), listMasterDataBankAccounts(db, org)]);
    // built in slices between which other requests run: an organization may have tens of thousands of customers
    const index = await PartnerIndex.paced(partners, [
      ...learned.map((a) => ({ account_identifier: a.account_identifier, partner_id: a.partner_id, source: 'learned' as const })),
      ...masterData.map((a) => ({ account_identifier: a.account_identifier, partner_id: a.partner_id, source: 'master_data' as const })),
    ], () => new Promise((resolve) => setImmediate(resolve)));
    const found = payerCandidates(deposit, index, DEFAULT_MATCH_CONFIG);
    if (found.payer) payerId = found.payer.partner_id;
    else if (found.twins.length > 0) {
      const names = await getPartners(db, org, found.twins.map((t) => t.id), scope);
      const listed = found.twins.map((t) => names.get(t.id)).filter((p) => p !== undefined).map((p) => JSON.stringify(p.name));
      throw payerIssue(
        `is required: the deposit's counterparty name ${JSON.stringify(deposit.counterparty_name)} fits several customers equally well${listed.length ? ` (${listed.join(', ')})` : ''}; name the one to ask`,
        'value_error.payer_ambiguous',
      );
    } else if (proposed.length > 1) {
      throw payerIssue(`is required: the deposit's proposals name ${proposed.length} different customers; name the one to ask`, 'value_error.payer_ambiguous');
    } else {
      const what = [
        deposit.counterparty_iban || deposit.counterparty_account ? 'its account is no customer\'s known account' : 'it carries no account',
        deposit.counterparty_name ? `its counterparty name ${JSON.stringify(deposit.counterparty_name)} is no customer's name` : 'it carries no counterparty name',
      ].join(' and ');
      throw payerIssue(`is required: matching cannot tell who sent the deposit (${what}); name the customer to ask`, 'value_error.payer_unknown');
    }
  }
  const partner = await getPartner(db, org, payerId, scope);
  // a member asks only customers of their business units: a payer outside them is as if unknown
  if (!partner) throw payerIssue('is required: the deposit\'s likely payer is not a customer within your business units; name the customer to ask', 'value_error.payer_unknown');
  return partner;
}

/** The deposit a request may be made for: 404 unknown, 422 a debit, 409 not a customer payment or already applied. */
async function requestableDeposit(db: Db, org: string, bankTransactionId: string): Promise<RequestDeposit> {
  const deposit = isUuid(bankTransactionId) ? await getRequestDeposit(db, org, bankTransactionId) : null;
  if (!deposit) throw new NotFoundError(`No bank transaction ${bankTransactionId}.`);
  if (Number(deposit.amount) <= 0) {
    throw new ValidationError(
      [{ loc: ['body', 'bank_transaction_id'], msg: `is a debit (amount ${deposit.amount} ${deposit.currency}), not a deposit: only money received has a payer to ask`, type: 'value_error.not_a_deposit' }],
      `Bank transaction ${deposit.id} is a debit, not a deposit.`,
    );
  }
  if (deposit.is_payment === false) {
    throw new ConflictError(`Bank transaction ${deposit.id} is classified as not a customer payment (a refund, interest or an own transfer): there is no customer to ask.`);
  }
  const approved = await approvedPaymentOf(db, org, deposit.id);
  if (approved) throw new ConflictError(`Bank transaction ${deposit.id} is already applied by the approved payment ${approved}: its invoices are known.`);
  return deposit;
}

/**
 * The live record answered again; a different customer named for it is a conflict (the deposit's
 * payer is asked once), and so is a record the caller may not see (its customer is outside their
 * business units).
 */
async function sameRequest(db: Db, record: OutreachRow, partnerId: string | undefined, scope: BusinessUnitScope): Promise<OutreachRow> {
  if (!(await getOutreach(db, record.organization_id, record.id, scope))) {
    throw new ConflictError(`Bank transaction ${record.bank_transaction_id} already has a ${record.status} remittance request to a customer outside your business units.`);
  }
  if (partnerId && record.partner_id !== partnerId) {
    throw new ConflictError(
      `Bank transaction ${record.bank_transaction_id} already has a ${record.status} remittance request (${record.id}) to another customer; a deposit's payer is asked once while a request is pending or sent.`,
    );
  }
  return record;
}

/** Start the record's workflow unless it runs (a concurrent request started it). */
async function ensureRequestWorkflow(temporal: Client, input: RemittanceRequestInput): Promise<void> {
  try {
    await temporal.workflow.start(remittanceRequest, {
      taskQueue: TASK_QUEUES.cashApp,
      workflowId: remittanceRequestWorkflowId(input.outreachId),
      args: [input],
      typedSearchAttributes: businessSearchAttributes(input.organizationId, input.bankTransactionId),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * Ask the likely payer of a deposit which invoices it pays (see the module comment): the deposit's
 * live request is answered as is (its workflow started again when a pending one has none), or a new
 * `pending` record is created and its workflow started before this returns.
 */
export async function requestRemittance(
  deps: Pick<CashAppDeps, 'db' | 'temporal' | 'config'>,
  request: { organizationId: string; userId: string | null; bankTransactionId: string; partnerId?: string; requestId?: string; scope: BusinessUnitScope },
): Promise<OutreachRow> {
  const { db, temporal, config } = deps;
  const org = request.organizationId;
  const deposit = await requestableDeposit(db, org, request.bankTransactionId);
  const existing = await liveRemittanceRequest(db, org, deposit.id);
  let record: OutreachRow;
  let created = false;
  if (existing) record = await sameRequest(db, existing, request.partnerId, request.scope);
  else {
    let partner: LedgerPartner;
    if (request.partnerId) {
      const named = isUuid(request.partnerId) ? await getPartner(db, org, request.partnerId, request.scope) : null;
      if (!named) throw payerIssue('is not a customer of this organization', 'value_error.not_found');
      partner = named;
    } else partner = await likelyPayer(db, org, deposit, request.scope);
    if (!requestAddress(partner)) {
      throw payerIssue(
        `names the customer ${JSON.stringify(partner.name)}, who has no valid email address${partner.email ? ` (${JSON.stringify(partner.email)})` : ''}; give the customer one, or name another customer`,
        'value_error.no_email',
      );
    }
    const claimed = await claimRemittanceRequestRecord(db, org, { bankTransactionId: deposit.id, partnerId: partner.id, requestedBy: request.userId });
    record = claimed.created ? claimed.record : await sameRequest(db, claimed.record, request.partnerId, request.scope);
    created = claimed.created;
  }
  const input: RemittanceRequestInput = {
    organizationId: org,
    outreachId: record.id,
    bankTransactionId: deposit.id,
    requestId: request.requestId,
    retry: { maximumAttempts: config.PAYMENT_RECEIPT_MAX_ATTEMPTS, initialIntervalSeconds: config.PAYMENT_RECEIPT_RETRY_SECONDS },
    retryWindowMinutes: activityRetryWindowMinutes(),
  };
  // Temporal unavailable: fail within the start deadline (503 + Retry-After), not after ~20 s.
  const ensure = () => withTemporalDeadline(temporal, () => ensureRequestWorkflow(temporal, input));
  if (created) {
    try {
      await ensure();
    } catch (err) {
      // Nothing will send it: do not leave a pending record that blocks the next request (which makes a new one).
      await recordReceiptFailed(db, org, record.id, REQUEST_NOT_STARTED);
      throw err;
    }
    return record;
  }
  if (record.status === 'pending') await ensure();
  return (await getOutreach(db, org, record.id)) ?? record;
}
