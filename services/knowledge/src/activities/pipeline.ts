/**
 * The ONE narrow adapter between the playbook-extraction activities and the offline extraction
 * pipeline. The activities call only these functions, whose signatures come from the
 * pipeline's contract (../extraction/types.ts); they own persistence, heartbeats and resume. Each
 * output is deterministic and keyed from its content, so a retried stage recomputes the same keys.
 *
 *   extractPages        → extraction/parse.ts       (unpdf, mammoth, postal-mime, html-to-text, csv-parse)
 *   splitMemories       → extraction/memories.ts
 *   dedupeMemories      → extraction/dedup.ts       (exact hash + MinHash/LSH near duplicates)
 *   enrichMemories      → extraction/enrich.ts      (customer/segment linking, entity normalisation, collection)
 *   synthesizeProposals → extraction/synthesize.ts  (topic grouping → create / revise / archive)
 *   onboardingMemories  → extraction/onboarding.ts  (the organization's own payment data)
 *   synthesisProposals  → extraction/synthesis.ts   (a collection's articles and pending memories: merges, archives)
 */
import { extractPages as parsePages, UnreadableDocumentError } from '../extraction/parse.js';
import { onboardingMemories as onboardingFromStats } from '../extraction/onboarding.js';
import { splitMemories } from '../extraction/memories.js';
import { normaliseText, sha256 } from '../extraction/text.js';
import type { CustomerCashHabits } from '@rp/workflows';
import type { ArticleRef, EnrichedMemory, ExtractionLimits, MemoryDraft, PartnerRef, SourcePage, SupportedMimeType } from '../extraction/types.js';

export { splitMemories } from '../extraction/memories.js';
export { dedupeMemories } from '../extraction/dedup.js';
export { enrichMemories } from '../extraction/enrich.js';
export { synthesizeProposals } from '../extraction/synthesize.js';
export { synthesisProposals } from '../extraction/synthesis.js';

/** A source the parser cannot read (corrupt or unsupported bytes): the job fails with this message. */
export class SourceReadError extends Error {}

export async function extractPages(bytes: Uint8Array, mime: SupportedMimeType, limits?: Pick<ExtractionLimits, 'pdfPages' | 'docxInflatedBytes'>): Promise<SourcePage[]> {
  try {
    return await parsePages(bytes, mime, limits);
  } catch (err) {
    if (err instanceof UnreadableDocumentError) throw new SourceReadError(err.message);
    throw err;
  }
}

/** What the knowledge service can read of a customer's paying from the ledger (onboarding's input). */
export interface CustomerPaymentProfile {
  partner: PartnerRef;
  /** invoices paid (cleared) with a due date; 0 when the ledger holds none */
  paid_invoices: number;
  /** average days between due date and clearing (negative: early) */
  average_days_after_due: number | null;
  /** first and last clearing date (YYYY-MM-DD) of those invoices; null when paid_invoices is 0 */
  first_cleared: string | null;
  last_cleared: string | null;
  /** the customer's cash-app figures (customerPaymentHabits on the cash-app queue), null when it has none in the window */
  cash: CustomerCashHabits | null;
}

function minDate(a: (string | null)[]): string {
  return a.filter((d): d is string => d !== null).sort()[0]!;
}

/**
 * Onboarding: declarative memories scoped to each customer from the ledger's figures (days paid after
 * due) merged with cash-app's (payment method, remittance and deduction habits; delivered by cash-app's
 * customerPaymentHabits activity: this service never reads cash-app's tables). The stats' window spans
 * both sources' dates, so every statement's "between … and …" covers what it counts. A customer
 * without cash-app figures states nothing about them (counts 0, currency XXX).
 */
export function onboardingMemories(profiles: CustomerPaymentProfile[]): EnrichedMemory[] {
  return onboardingFromStats(
    profiles.map((p) => {
      const c = p.cash;
      const starts = [p.paid_invoices > 0 ? p.first_cleared : null, c?.first_date ?? null];
      const ends = [p.paid_invoices > 0 ? p.last_cleared : null, c?.last_date ?? null];
      return {
        customer_id: p.partner.id,
        customer_name: p.partner.name,
        window_start: minDate(starts),
        window_end: ends.filter((d): d is string => d !== null).sort().at(-1)!,
        paid_invoice_count: p.paid_invoices,
        avg_days_after_due: p.average_days_after_due,
        payment_count: c?.payment_count ?? 0,
        usual_payment_method: c?.usual_payment_method ?? null,
        usual_payment_method_share: c?.usual_payment_method_share ?? null,
        remittance_count: c?.remittance_count ?? 0,
        remittances_with_invoice_numbers_share: c?.remittances_with_invoice_numbers_share ?? null,
        deduction_count: c?.deduction_count ?? 0,
        deduction_total: c?.deduction_total ?? '0.00',
        top_deduction_reasons: c?.top_deduction_reasons ?? [],
        currency: c?.currency ?? 'XXX',
      };
    }),
  );
}

/**
 * Synthesis jobs: the collection's pending memories (of earlier jobs) are this job's sources; the
 * live articles are compared with them in the synthesizing stage (synthesisProposals), which also
 * proposes merges of overlapping articles.
 */
export function synthesisMemories(_articles: ArticleRef[], pending: { text: string }[]): MemoryDraft[] {
  const out: MemoryDraft[] = [];
  pending.forEach((m, i) => {
    const normalised = normaliseText(m.text);
    if (!normalised) return;
    const [typed] = splitMemories([{ page: i + 1, text: m.text }]);
    out.push({ key: sha256(`${i + 1}:0:${normalised}`), text: m.text, excerpt: m.text, page: i + 1, start: 0, end: m.text.length, knowledge_type: typed?.knowledge_type ?? 'declarative', text_hash: sha256(normalised) });
  });
  return out;
}
