/**
 * The mutable state of one matching run: open amounts as proposals consume them, remittances used,
 * and the lookup indexes over the open documents (by document key, looser key, partner and amount)
 * and over the remittances (by transaction number and amount), built once per run.
 */
import { Money } from '@rp/platform';
import type { MatchInvoice, MatchRemittance, ProposedAllocation } from '../../domain-types/matching.js';
import { byDue, relievedBy, type Dec } from './amounts.js';
import type { MatchContext } from './config.js';
import { PartnerIndex } from './payers.js';
import { documentKeys, normalizeKey, variantKeys } from './tokens.js';

export function isCreditMemo(inv: MatchInvoice): boolean {
  return inv.kind === 'credit_memo';
}

/** Remittances of a batch: by transaction number, by amount, and by the deposit they were sent for. */
export interface RemittanceIndex {
  byNumber: Map<string, MatchRemittance[]>;
  byAmount: Map<string, MatchRemittance[]>;
  byDeposit: Map<string, MatchRemittance[]>;
}

/** Mutable state of a batch: open amounts consumed by earlier proposals, remittances used. */
export class MatchState {
  /**
   * Open amounts of the documents a deposit has looked at or a proposal consumed; the others are
   * still their `open_amount` (parsed on first use: a statement looks at few of a large ledger's documents).
   */
  private readonly open = new Map<string, Dec>();
  readonly usedRemittances = new Set<string>();
  readonly invoiceById = new Map<string, MatchInvoice>();
  /** exact keys (normalized number or reference, numeric without leading zeros) → documents */
  readonly byKey = new Map<string, MatchInvoice[]>();
  private variantIndex: Map<string, MatchInvoice[]> | null = null;
  /** a partner's open invoices (not credit memos), oldest due first */
  readonly byPartner = new Map<string, MatchInvoice[]>();
  /** a partner's open credit memos */
  readonly memosByPartner = new Map<string, MatchInvoice[]>();
  private amountIndex: Map<string, MatchInvoice[]> | null = null;
  private partnerIndex: PartnerIndex | null = null;
  private remittanceIndex: RemittanceIndex | null = null;

  constructor(invoices: readonly MatchInvoice[]) {
    for (const inv of [...invoices].sort(byDue)) {
      this.invoiceById.set(inv.id, inv);
      const keys = new Set([...documentKeys(inv.document_number), ...documentKeys(inv.reference)]);
      for (const k of keys) push(this.byKey, k, inv);
      if (inv.partner_id) push(isCreditMemo(inv) ? this.memosByPartner : this.byPartner, inv.partner_id, inv);
    }
  }

  /** Looser keys (zero-dropped groups, prefix dropped) → documents, built on first use (most statements name most documents exactly). */
  get byVariant(): Map<string, MatchInvoice[]> {
    if (!this.variantIndex) {
      this.variantIndex = new Map();
      for (const inv of this.invoiceById.values()) {
        const exact = new Set([...documentKeys(inv.document_number), ...documentKeys(inv.reference)]);
        // a looser key that is an exact key of the same document adds nothing ("#8100001" of "INV-8100001" for 8100001)
        const variants = new Set([...variantKeys(inv.document_number, true), ...variantKeys(inv.reference, true)]);
        for (const k of variants) if (!(k.startsWith('#') && exact.has(k.slice(1)))) push(this.variantIndex, k, inv);
      }
    }
    return this.variantIndex;
  }

  /** Invoices by currency and open amount at the start of the run (for typo confirmation), built on first use. */
  byAmount(key: string): readonly MatchInvoice[] {
    if (!this.amountIndex) {
      this.amountIndex = new Map();
      for (const inv of this.invoiceById.values()) if (!isCreditMemo(inv)) push(this.amountIndex, amountKey(inv.currency, new Money(inv.open_amount)), inv);
    }
    return this.amountIndex.get(key) ?? [];
  }

  /** The partner index of a context, built once per batch. */
  partnersOf(ctx: MatchContext): PartnerIndex {
    this.partnerIndex ??= new PartnerIndex(ctx.partners, ctx.knownAccounts);
    return this.partnerIndex;
  }

  /**
   * Remittances by normalized transaction number and by amount, built once per batch; those sent
   * for one deposit (a reply to its remittance request) by that deposit only.
   */
  remittancesOf(ctx: MatchContext): RemittanceIndex {
    if (!this.remittanceIndex) {
      const byNumber = new Map<string, MatchRemittance[]>();
      const byAmount = new Map<string, MatchRemittance[]>();
      const byDeposit = new Map<string, MatchRemittance[]>();
      for (const r of ctx.remittances) {
        if (r.bank_transaction_id) {
          push(byDeposit, r.bank_transaction_id, r);
          continue;
        }
        const key = r.transaction_number ? normalizeKey(r.transaction_number) : '';
        if (key.length >= 3) push(byNumber, key, r);
        if (r.transaction_amount) push(byAmount, new Money(r.transaction_amount).toFixed(4), r);
      }
      this.remittanceIndex = { byNumber, byAmount, byDeposit };
    }
    return this.remittanceIndex;
  }

  available(id: string): Dec {
    let open = this.open.get(id);
    if (open === undefined) {
      const inv = this.invoiceById.get(id);
      open = new Money(inv ? inv.open_amount : 0);
      if (inv) this.open.set(id, open);
    }
    return open;
  }

  consume(allocations: readonly ProposedAllocation[]): void {
    for (const a of allocations) this.open.set(a.invoice_id, Money.max(this.available(a.invoice_id).minus(relievedBy(a)), 0));
  }

  /** Give back what `allocations` consumed (a proposal withdrawn during assignment). */
  release(allocations: readonly ProposedAllocation[]): void {
    for (const a of allocations) this.open.set(a.invoice_id, this.available(a.invoice_id).plus(relievedBy(a)));
  }
}

export function amountKey(currency: string, amount: Dec): string {
  return `${currency} ${amount.toFixed(4)}`;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
