/**
 * What automatic matching reads and writes: the statement's deposits and earlier open ones, the
 * accounts and remittances that identify payers, and the proposals it inserts as unapproved payments.
 * Every query is scoped by organization.
 */
import type { Knex } from 'knex';
import { documentKinds, Money, newId, type Db } from '@rp/platform';
import type { KnownAccount, MatchRemittance, MatchTransaction, Proposal } from '../domain-types/matching.js';
import { shortfallColumns } from './payments.js';

export interface DepositRow extends MatchTransaction {
  booking_date: string | null;
  value_date: string | null;
}

const TX_MATCH_COLUMNS = [
  't.id', 't.amount', 't.currency', 't.counterparty_name', 't.counterparty_account', 't.counterparty_iban', 't.remittance_information',
  't.bank_reference', 't.end_to_end_id', 't.booking_date', 't.value_date', 't.transaction_code',
];

export async function statementExists(db: Db, organizationId: string, statementId: string): Promise<boolean> {
  const row = await db('bank_statements').select('id').where({ organization_id: organizationId, id: statementId }).first();
  return !!row;
}

/** The statement's deposits (amount > 0, is_payment not false) that have no payment yet, in statement order. */
export async function depositsWithoutPayment(db: Db, organizationId: string, statementId: string): Promise<DepositRow[]> {
  return db('bank_transactions as t')
    .select(TX_MATCH_COLUMNS)
    .where({ 't.organization_id': organizationId, 't.statement_id': statementId })
    .andWhere('t.amount', '>', 0)
    .andWhereRaw('t.is_payment IS DISTINCT FROM false')
    .whereNotExists(db('payments as p').select(db.raw('1')).whereRaw('p.bank_transaction_id = t.id'))
    .orderBy(['t.sequence', 't.id']) as Promise<DepositRow[]>;
}

/**
 * Deposits of the organization's other statements (processed: ready, approved or synced) that still
 * have no payment, in the given currencies, most recent first, at most `limit`: matched again with
 * each new statement, since invoices pushed or payments deleted since may now fit them.
 */
export async function earlierOpenDeposits(db: Db, organizationId: string, statementId: string, currencies: readonly string[], limit: number): Promise<DepositRow[]> {
  return db('bank_transactions as t')
    .join('bank_statements as s', 's.id', 't.statement_id')
    .select(TX_MATCH_COLUMNS)
    .where({ 't.organization_id': organizationId, 's.organization_id': organizationId })
    .whereNot('t.statement_id', statementId)
    .whereIn('s.status', ['ready', 'approved', 'synced'])
    .whereRaw('btrim(t.currency) = ANY(?)', [[...currencies]])
    .andWhere('t.amount', '>', 0)
    .andWhereRaw('t.is_payment IS DISTINCT FROM false')
    .whereNotExists(db('payments as p').select(db.raw('1')).whereRaw('p.bank_transaction_id = t.id'))
    .orderByRaw('t.booking_date DESC NULLS LAST, t.id')
    .limit(limit) as Promise<DepositRow[]>;
}

/** The organization's own bank accounts (statement accounts): identifiers, IBANs and account numbers. */
export async function ownAccountIdentifiers(db: Db, organizationId: string): Promise<string[]> {
  const rows = (await db('bank_accounts').select('account_identifier', 'iban', 'account_number').where({ organization_id: organizationId })) as {
    account_identifier: string | null;
    iban: string | null;
    account_number: string | null;
  }[];
  return [...new Set(rows.flatMap((r) => [r.account_identifier, r.iban, r.account_number]).filter((v): v is string => !!v))];
}

export async function knownAccounts(db: Db, organizationId: string): Promise<KnownAccount[]> {
  return db('partner_bank_accounts').select('account_identifier', 'partner_id').where({ organization_id: organizationId });
}

/**
 * Remittances not used by a payment, with their allocations: `submitted` ones (with the deposit
 * they were sent for, if any: a reply to that deposit's remittance request), and `applied` ones
 * whose payment has since been deleted (with its statement).
 */
export async function unusedRemittances(db: Db, organizationId: string): Promise<MatchRemittance[]> {
  const rows = (await db('remittances as r')
    .select('r.id', 'r.partner_id', 'r.transaction_amount', 'r.transaction_number', 'r.currency', 'r.payer_bank_details', 'r.bank_transaction_id')
    .where({ 'r.organization_id': organizationId })
    .whereIn('r.status', ['submitted', 'applied'])
    .andWhere((q) => {
      void q.whereNull('r.bank_transaction_id').orWhere('r.status', 'submitted');
    })
    .whereNotExists(db('payments as p').select(db.raw('1')).whereRaw('p.remittance_id = r.id'))
    .orderBy('r.id')) as {
    id: string;
    partner_id: string | null;
    transaction_amount: string | null;
    transaction_number: string | null;
    currency: string | null;
    payer_bank_details: { iban?: string | null; account_number?: string | null } | null;
    bank_transaction_id: string | null;
  }[];
  if (rows.length === 0) return [];
  const allocs = (await db('remittance_allocations')
    .select('remittance_id', 'invoice_id', 'amount_paid', 'amount_discount', 'amount_withheld')
    .where({ organization_id: organizationId })
    .whereIn('remittance_id', rows.map((r) => r.id))
    .orderBy(['remittance_id', 'created_at', 'id'])) as { remittance_id: string; invoice_id: string | null; amount_paid: string; amount_discount: string; amount_withheld: string }[];
  return rows.map((r) => ({
    id: r.id,
    partner_id: r.partner_id,
    transaction_amount: r.transaction_amount,
    transaction_number: r.transaction_number,
    currency: r.currency ? r.currency.trim() : null,
    payer_iban: r.payer_bank_details?.iban ?? null,
    payer_account: r.payer_bank_details?.account_number ?? null,
    bank_transaction_id: r.bank_transaction_id,
    allocations: allocs
      .filter((a) => a.remittance_id === r.id)
      .map((a) => ({ invoice_id: a.invoice_id, amount_paid: a.amount_paid, amount_discount: a.amount_discount, amount_withheld: a.amount_withheld })),
  }));
}

/** Id of the organization's active system adjustment with this key, if any. */
export async function activeSystemAdjustmentId(db: Db, organizationId: string, systemKey: string): Promise<string | null> {
  const row = (await db('adjustments').select('id').where({ organization_id: organizationId, system_key: systemKey, is_active: true }).first()) as { id: string } | undefined;
  return row?.id ?? null;
}

/**
 * Insert proposals as unapproved payments with their allocations and shortfall, set-based, in one transaction.
 * The transactions are locked first and those that meanwhile got a payment are skipped, so a
 * retried or concurrent run never creates a second payment for a transaction. Used remittances are
 * tied to their transaction and marked `applied`. Each allocation records whether its document is
 * an invoice or a credit memo; a proposal whose cash (invoices paid less memos' credit) is outside
 * 0 .. its deposit is not written (the deposit stays without a payment, for a person). Returns how
 * many payments were inserted. `onInserted` runs last in the same transaction with the new payments'
 * ids (the caller records their events there).
 */
export async function insertProposals(
  db: Db,
  organizationId: string,
  proposals: readonly Proposal[],
  deposits: ReadonlyMap<string, DepositRow>,
  onInserted?: (trx: Knex.Transaction, paymentIds: string[]) => Promise<void>,
): Promise<number> {
  if (proposals.length === 0) return 0;
  return db.transaction(async (trx) => {
    const ids = proposals.map((p) => p.transaction_id);
    // only deposits still there (a statement deleted meanwhile takes its deposits with it)
    const locked = new Set(((await trx('bank_transactions').select('id').where({ organization_id: organizationId }).whereIn('id', ids).forUpdate()) as { id: string }[]).map((r) => r.id));
    const taken = new Set(((await trx('payments').select('bank_transaction_id').where({ organization_id: organizationId }).whereIn('bank_transaction_id', ids)) as { bank_transaction_id: string }[]).map((r) => r.bank_transaction_id));
    // a proposal may apply credit memos: each allocation records its document's kind from the ledger
    const kinds = await documentKinds(trx, organizationId, proposals.flatMap((p) => p.allocations.map((a) => a.invoice_id)));
    // A proposal whose cash (invoices paid less memos' credit) is outside 0 .. its deposit is left for a
    // person rather than written: the database refuses it, and one such proposal must not fail the chunk.
    const cashFits = (p: Proposal) => {
      const cash = p.allocations.reduce((sum, a) => (kinds.get(a.invoice_id) === 'credit_memo' ? sum.minus(a.amount_paid) : sum.plus(a.amount_paid)), new Money(0));
      return cash.gte(0) && cash.lte(deposits.get(p.transaction_id)!.amount);
    };
    const todo = proposals.filter((p) => locked.has(p.transaction_id) && !taken.has(p.transaction_id) && deposits.has(p.transaction_id) && cashFits(p));
    if (todo.length === 0) return 0;
    const payments = todo.map((p) => {
      const tx = deposits.get(p.transaction_id)!;
      return {
        id: newId(),
        organization_id: organizationId,
        bank_transaction_id: p.transaction_id,
        partner_id: p.partner_id,
        remittance_id: p.remittance_id,
        status: 'unapproved',
        amount: tx.amount,
        currency: tx.currency,
        payment_date: tx.booking_date ?? tx.value_date,
        match_score: p.score,
        match_reasons: JSON.stringify(p.reasons),
        ...shortfallColumns(p.shortfall),
      };
    });
    for (let i = 0; i < payments.length; i += 1000) await trx('payments').insert(payments.slice(i, i + 1000));
    const allocations = todo.flatMap((p, i) =>
      p.allocations.map((a) => ({ id: newId(), organization_id: organizationId, payment_id: payments[i]!.id, ...a, document_kind: kinds.get(a.invoice_id) ?? 'invoice' })),
    );
    for (let i = 0; i < allocations.length; i += 1000) await trx('payment_allocations').insert(allocations.slice(i, i + 1000));
    // A proposal that states no shortfall (the field absent) gets the one its allocations carry: their
    // discount, withheld and adjustment amounts, the reason being the largest (ties: discount,
    // deduction, fee) — the rule of domain shortfallOf without the part left open, which needs the
    // invoices' open amounts that matching alone knows.
    const unstated = todo.flatMap((p, i) => (p.shortfall === undefined ? [payments[i]!.id] : []));
    if (unstated.length > 0) {
      await trx.raw(
        `UPDATE payments p SET shortfall_amount = s.total,
                shortfall_reason = CASE WHEN s.discount >= s.withheld AND s.discount >= s.fee THEN 'discount'
                                        WHEN s.withheld >= s.fee THEN 'deduction' ELSE 'fee' END
           FROM (SELECT payment_id, sum(amount_discount) AS discount, sum(amount_withheld) AS withheld, sum(adjustment_amount) AS fee,
                        sum(amount_discount + amount_withheld + adjustment_amount) AS total
                   FROM payment_allocations WHERE organization_id = ? AND payment_id = ANY(?::uuid[]) GROUP BY payment_id) s
          WHERE p.id = s.payment_id AND p.organization_id = ? AND s.total > 0`,
        [organizationId, unstated, organizationId],
      );
    }
    const withRemittance = todo.filter((p) => p.remittance_id);
    for (const p of withRemittance) {
      await trx('remittances')
        .where({ organization_id: organizationId, id: p.remittance_id! })
        .andWhere((q) => {
          void q.whereNull('bank_transaction_id').orWhere('bank_transaction_id', p.transaction_id);
        })
        .update({ bank_transaction_id: p.transaction_id, status: 'applied', modified_at: trx.fn.now() });
    }
    await onInserted?.(trx, payments.map((p) => p.id));
    return payments.length;
  });
}

/**
 * Open deposits (amount > 0, not marked as no payment, no payment yet, of a processed statement)
 * that the given remittances may explain: the deposit a remittance was sent for, one of its
 * amount in its currency, or one whose texts quote its transaction number. At most `limit`, most
 * recent first.
 */
export async function depositsForRemittances(db: Db, organizationId: string, remittanceIds: readonly string[], limit: number): Promise<DepositRow[]> {
  if (remittanceIds.length === 0) return [];
  const { rows } = await db.raw(
    `SELECT ${TX_MATCH_COLUMNS.join(', ')}
       FROM bank_transactions t
       JOIN bank_statements s ON s.id = t.statement_id AND s.organization_id = t.organization_id
      WHERE t.organization_id = ? AND s.status IN ('ready', 'approved', 'synced')
        AND t.amount > 0 AND t.is_payment IS DISTINCT FROM false
        AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.bank_transaction_id = t.id)
        AND EXISTS (
          SELECT 1 FROM remittances r
           WHERE r.organization_id = t.organization_id AND r.id = ANY(?::uuid[])
             AND (r.bank_transaction_id = t.id
                  OR (r.bank_transaction_id IS NULL AND (r.currency IS NULL OR btrim(r.currency) = btrim(t.currency))
                      AND (r.transaction_amount = t.amount
                           OR (length(r.transaction_number) >= 3
                               AND strpos(lower(concat_ws(' ', t.remittance_information, t.bank_reference, t.end_to_end_id)), lower(r.transaction_number)) > 0)))))
      ORDER BY t.booking_date DESC NULLS LAST, t.id
      LIMIT ?`,
    [organizationId, [...remittanceIds], limit],
  );
  return rows as DepositRow[];
}
