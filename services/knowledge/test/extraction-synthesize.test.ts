/** synthesizeProposals, synthesisProposals and onboardingMemories (pure: no stack). */
import { describe, expect, it } from 'vitest';
import { enrichMemories } from '../src/extraction/enrich.js';
import { extractPages } from '../src/extraction/parse.js';
import { splitMemories } from '../src/extraction/memories.js';
import { onboardingMemories } from '../src/extraction/onboarding.js';
import { synthesisProposals } from '../src/extraction/synthesis.js';
import { synthesizeProposals } from '../src/extraction/synthesize.js';
import type { ArticleRef, CustomerPaymentStats, StoredMemory } from '../src/extraction/types.js';
import { context, FIXTURE_FILES, fixture } from './extraction-support.js';

function stored(text: string, collection: ArticleRef['collection'] | null = null, prefix = 'm'): StoredMemory[] {
  return enrichMemories(splitMemories([{ page: 1, text }]), { ...context(), collection }).map((m, i) => ({ ...m, id: `${prefix}${i + 1}` }));
}

function article(over: Partial<ArticleRef>): ArticleRef {
  return { id: 'a1', collection: 'deductions', title: 'Deduction write-offs', content: '', customer_id: null, segment_id: null, source_memory_ids: [], ...over };
}

describe('synthesizeProposals', () => {
  it('proposes create for new material, grouped by topic and scope, with extractive title, description and excerpts', async () => {
    const pages = await extractPages(fixture('ar-playbook.pdf'), 'application/pdf');
    const memories = enrichMemories(splitMemories(pages), { ...context(), collection: null }).map((m, i) => ({ ...m, id: `m${i + 1}` }));
    const proposals = synthesizeProposals(memories, []);
    expect(proposals.length).toBeGreaterThan(5);
    expect(proposals.length).toBeLessThanOrEqual(memories.length);
    const used = proposals.flatMap((p) => p.source_excerpts.map((s) => s.memory_id));
    expect([...used].sort()).toEqual(memories.map((m) => m.id).sort()); // every memory in exactly one item
    for (const p of proposals) {
      expect(p.action).toBe('create');
      const sources = p.source_excerpts.map((s) => memories.find((m) => m.id === s.memory_id)!);
      const hay = sources.map((m) => m.text).join('\n').toLowerCase();
      expect(hay).toContain(p.title.toLowerCase());
      expect(hay.replace(/\s+/g, ' ')).toContain(p.description.toLowerCase());
      for (const s of p.source_excerpts) expect(pages[s.page - 1]!.text).toContain(s.text);
      for (const m of sources) expect([m.collection, m.customer_id, m.segment_id]).toEqual([p.collection, p.customer_id, p.segment_id]);
    }
    // stable keys
    expect(synthesizeProposals(memories, []).map((p) => p.key)).toEqual(proposals.map((p) => p.key));
    // the dunning list is one procedural item of its own
    expect(proposals.filter((p) => p.knowledge_type === 'procedural' && p.content.includes('Send a final notice 21 days'))).toHaveLength(1);
  });

  it('proposes revise with the merged content when an approved article covers the topic', () => {
    const a = article({ content: 'Deductions under USD 50 are written off automatically without investigation.\n\nDeductions of USD 50 or more need a claim number.' });
    const memories = stored('Deductions of USD 50 or more need a claim number and proof of delivery before they are accepted. Deductions with a claim number are answered within 5 days.', 'deductions');
    const [p, ...rest] = synthesizeProposals(memories, [a]);
    expect(rest).toEqual([]);
    expect(p).toMatchObject({ action: 'revise', article_id: 'a1', title: 'Deduction write-offs' });
    expect(p!.content).toContain('Deductions under USD 50 are written off automatically without investigation.');
    expect(p!.content).toContain('Deductions with a claim number are answered within 5 days.');
    expect(p!.source_excerpts.map((s) => s.memory_id)).toEqual(['m1', 'm2']);
  });

  it('proposes archive when every source of an article is superseded, and create for the new statement', () => {
    const a = article({ id: 'a2', collection: 'deductions', content: 'Deductions under USD 50 are written off automatically without investigation.', source_memory_ids: ['old1'] });
    const memories = stored('Deductions under USD 100 are written off automatically without investigation.', 'deductions');
    const proposals = synthesizeProposals(memories, [a]);
    expect(proposals.map((p) => [p.action, p.article_id])).toEqual([
      ['archive', 'a2'],
      ['create', null],
    ]);
    expect(proposals[0]!.source_excerpts[0]!.memory_id).toBe('m1');
  });

  it('does not touch an article of another scope or when the material is already in it', () => {
    const a = article({ content: 'Deductions under USD 50 are written off automatically without investigation.', customer_id: 'p-acme' });
    expect(synthesizeProposals(stored('Deductions under USD 100 are written off automatically without investigation.', 'deductions'), [a]).map((p) => p.action)).toEqual(['create']);
    const same = article({ content: 'Deductions under USD 50 are written off automatically without investigation.' });
    expect(synthesizeProposals(stored('Deductions under USD 50 are written off automatically without investigation.', 'deductions'), [same])).toEqual([]);
  });
});

describe('synthesisProposals', () => {
  it('merges articles of one topic (revise the longest, archive the others) and synthesises pending memories', () => {
    const a1 = article({ id: 'a1', title: 'Write-offs', content: 'Deductions under USD 50 are written off automatically without investigation. Write-offs are reported monthly to the controller.' });
    const a2 = article({ id: 'a2', title: 'Small deductions', content: 'Deductions under USD 50 are written off automatically without investigation. Small write-offs are reported monthly.', source_memory_ids: ['x9'] });
    const a3 = article({ id: 'a3', title: 'Dunning', collection: 'collections', content: 'Send the first reminder 3 days after the due date.' });
    const proposals = synthesisProposals([a1, a2, a3], stored('A credit hold blocks new sales orders.', 'credit_risk'));
    expect(proposals.map((p) => [p.action, p.article_id])).toEqual([
      ['revise', 'a1'],
      ['archive', 'a2'],
      ['create', null],
    ]);
    expect(proposals[0]!.content).toContain('Small write-offs are reported monthly.');
    expect(proposals[0]!.content.match(/Deductions under USD 50/g)).toHaveLength(1);
    expect(proposals[1]!.source_excerpts[0]!.memory_id).toBe('x9');
  });
});

describe('onboardingMemories', () => {
  const stats: CustomerPaymentStats = {
    customer_id: 'p-acme',
    customer_name: 'Acme Foods',
    window_start: '2025-07-01',
    window_end: '2025-12-31',
    paid_invoice_count: 38,
    avg_days_after_due: 12.26,
    payment_count: 20,
    usual_payment_method: 'ach',
    usual_payment_method_share: 0.85,
    remittance_count: 18,
    remittances_with_invoice_numbers_share: 0.1,
    deduction_count: 4,
    deduction_total: '812.40',
    currency: 'USD',
    top_deduction_reasons: [{ reason: 'pricing', count: 3 }, { reason: 'freight', count: 1 }],
  };

  it('turns payment statistics into declarative memories scoped to the customer', () => {
    const ms = onboardingMemories([stats]);
    expect(ms.map((m) => [m.collection, m.text])).toEqual([
      ['collections', 'Acme Foods pays on average 12.3 days after the due date (38 invoices paid between 2025-07-01 and 2025-12-31).'],
      ['payments', 'Acme Foods usually pays by ACH (85% of 20 payments between 2025-07-01 and 2025-12-31).'],
      ['cash_application', 'Acme Foods rarely names invoice numbers in its remittances (10% of 18 remittances between 2025-07-01 and 2025-12-31).'],
      ['deductions', 'Acme Foods took 4 deductions totalling USD 812.40 between 2025-07-01 and 2025-12-31, most often for pricing (3), freight (1).'],
    ]);
    for (const m of ms) {
      expect(m).toMatchObject({ customer_id: 'p-acme', knowledge_type: 'declarative', excerpt: m.text, page: 1, start: 0, end: m.text.length });
    }
    expect(ms[3]!.entities.amounts).toEqual([{ text: 'USD 812.40', currency: 'USD', value: '812.40' }]);
    expect(onboardingMemories([stats]).map((m) => m.key)).toEqual(ms.map((m) => m.key));
  });

  it('says nothing without enough evidence', () => {
    expect(onboardingMemories([{ ...stats, paid_invoice_count: 2, payment_count: 1, remittance_count: 0, remittances_with_invoice_numbers_share: null, deduction_count: 0, top_deduction_reasons: [] }])).toEqual([]);
  });

  it('feeds synthesis: one proposal per customer topic, scoped to the customer', () => {
    const ms = onboardingMemories([stats]).map((m, i) => ({ ...m, id: `o${i + 1}` }));
    const ps = synthesizeProposals(ms, []);
    expect(ps).toHaveLength(4);
    expect(ps.every((p) => p.customer_id === 'p-acme' && p.action === 'create')).toBe(true);
  });
});

describe('the evaluation set end to end (parse → split → enrich → synthesise) on every format', () => {
  it.each(FIXTURE_FILES)('%s yields proposals whose excerpts are in the source pages', async (file, mime) => {
    const pages = await extractPages(fixture(file), mime);
    const memories = enrichMemories(splitMemories(pages), { ...context(), collection: null }).map((m, i) => ({ ...m, id: `m${i + 1}` }));
    const proposals = synthesizeProposals(memories, []);
    expect(proposals.length).toBeGreaterThan(0);
    for (const p of proposals) for (const s of p.source_excerpts) expect(pages.find((x) => x.page === s.page)!.text).toContain(s.text);
  });
});
