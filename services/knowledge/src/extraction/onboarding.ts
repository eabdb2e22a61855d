/**
 * Onboarding extraction (pure): per-customer payment statistics → declarative memories scoped to the
 * customer. Each memory's text is a statement of the figures (its own source: excerpt = text, page 1,
 * offsets 0..length), so the proposals synthesised from them quote the figures they rest on.
 * A statement is made only with evidence: at least MIN_SAMPLE paid invoices / payments / remittances;
 * deductions from their first occurrence. Collections: days after due → collections, payment method →
 * payments, invoice numbers in remittances → cash_application, deductions → deductions.
 */
import type { Collection } from '../types.js';
import { normaliseEntities } from './enrich.js';
import { normaliseText, sha256 } from './text.js';
import type { CustomerPaymentStats, EnrichedMemory } from './types.js';

export const MIN_SAMPLE = 3;

const METHOD_NAMES: Record<string, string> = {
  ach: 'ACH',
  wire: 'wire transfer',
  check: 'check',
  cheque: 'cheque',
  card: 'card',
  sepa_credit_transfer: 'SEPA credit transfer',
  sepa_direct_debit: 'SEPA direct debit',
  direct_debit: 'direct debit',
};

function pct(share: number): string {
  return `${Math.round(share * 100)}%`;
}

function memory(s: CustomerPaymentStats, field: string, collection: Collection, text: string): EnrichedMemory {
  const norm = normaliseText(text);
  return {
    key: sha256(`onboarding:${s.customer_id}:${field}:${norm}`),
    text,
    excerpt: text,
    page: 1,
    start: 0,
    end: text.length,
    knowledge_type: 'declarative',
    text_hash: sha256(norm),
    customer_id: s.customer_id,
    segment_id: null,
    collection,
    entities: normaliseEntities(text),
  };
}

export function onboardingMemories(stats: CustomerPaymentStats[]): EnrichedMemory[] {
  const out: EnrichedMemory[] = [];
  for (const s of stats) {
    const period = `between ${s.window_start} and ${s.window_end}`;
    if (s.avg_days_after_due !== null && s.paid_invoice_count >= MIN_SAMPLE) {
      const d = Math.round(s.avg_days_after_due * 10) / 10;
      const when = d > 0 ? `${d} days after the due date` : d < 0 ? `${-d} days before the due date` : 'on the due date';
      out.push(memory(s, 'days', 'collections', `${s.customer_name} pays on average ${when} (${s.paid_invoice_count} invoices paid ${period}).`));
    }
    if (s.usual_payment_method && s.usual_payment_method_share !== null && s.payment_count >= MIN_SAMPLE) {
      const method = METHOD_NAMES[s.usual_payment_method] ?? s.usual_payment_method.replace(/_/g, ' ');
      out.push(memory(s, 'method', 'payments', `${s.customer_name} usually pays by ${method} (${pct(s.usual_payment_method_share)} of ${s.payment_count} payments ${period}).`));
    }
    if (s.remittances_with_invoice_numbers_share !== null && s.remittance_count >= MIN_SAMPLE) {
      const share = s.remittances_with_invoice_numbers_share;
      const habit = share >= 0.8 ? 'names the invoice numbers in its remittances' : share <= 0.2 ? 'rarely names invoice numbers in its remittances' : 'names invoice numbers in some of its remittances';
      out.push(memory(s, 'remittances', 'cash_application', `${s.customer_name} ${habit} (${pct(share)} of ${s.remittance_count} remittances ${period}).`));
    }
    if (s.deduction_count > 0) {
      const reasons = s.top_deduction_reasons.slice(0, 3).map((r) => `${r.reason} (${r.count})`);
      const tail = reasons.length > 0 ? `, most often for ${reasons.join(', ')}` : '';
      out.push(memory(s, 'deductions', 'deductions', `${s.customer_name} took ${s.deduction_count} deductions totalling ${s.currency} ${s.deduction_total} ${period}${tail}.`));
    }
  }
  return out;
}
