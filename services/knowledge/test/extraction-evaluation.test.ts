/**
 * The hand-labelled evaluation set (test/fixtures/knowledge/) through the offline pipeline, scored as
 * `npm run bench -- knowledge` scores it (bench/knowledge/quality.ts evaluateQuality): the quality
 * targets must hold. Deterministic (no timing); pure (no stack).
 */
import { describe, expect, it } from 'vitest';
import { evaluateQuality } from '../../../bench/knowledge/quality.js';

describe('evaluation set', () => {
  it('meets the quality targets: items P ≥ 0.7 / R ≥ 0.8, duplicate pairs P = 1 / R ≥ 0.9, customer links P = 1', async () => {
    const q = await evaluateQuality();
    expect(q.documents.map((d) => d.file)).toEqual(['ar-playbook.pdf', 'short-payment-procedure.docx', 'dispute-thread.eml', 'customer-contacts.csv', 'credit-policy.html', 'team-notes.md', 'ar-meeting-minutes.txt']);
    expect(q.items.recall).toBeGreaterThanOrEqual(0.8);
    expect(q.items.precision).toBeGreaterThanOrEqual(0.7);
    expect(q.duplicates.wrong).toEqual([]);
    expect(q.duplicates.precision).toBe(1);
    expect(q.duplicates.recall).toBeGreaterThanOrEqual(0.9);
    expect(q.customer_links.wrong).toEqual([]);
    expect(q.customer_links.precision).toBe(1);
  });
});
