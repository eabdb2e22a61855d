/** dedupeMemories: exact and near duplicates, never merging distinct facts (pure: no stack). */
import { describe, expect, it } from 'vitest';
import { dedupeMemories, minhash, shingles } from '../src/extraction/dedup.js';
import { splitMemories } from '../src/extraction/memories.js';

const drafts = (...texts: string[]) => splitMemories([{ page: 1, text: texts.join('\n\n') }]);

describe('dedupeMemories', () => {
  it('removes exact duplicates by normalised text (case, punctuation, spacing ignored), keeping the first', () => {
    const d = drafts('Acme Foods pays by ACH on the 15th.', 'acme foods pays by ACH, on the 15th!');
    const r = dedupeMemories(d, []);
    expect(r.kept.map((k) => k.key)).toEqual([d[0]!.key]);
    expect(r.removed).toEqual([{ key: d[1]!.key, duplicate_of: { kind: 'draft', id: d[0]!.key }, reason: 'exact' }]);
  });

  it('removes near duplicates (MinHash + LSH, verified Jaccard)', () => {
    const d = drafts(
      'Initech Software GmbH pays by SEPA credit transfer and quotes the invoice number in the remittance.',
      'Initech Software GmbH pays by SEPA credit transfer and quotes the invoice number in the remittance advice.',
    );
    const r = dedupeMemories(d, []);
    expect(r.kept).toHaveLength(1);
    expect(r.removed[0]).toMatchObject({ key: d[1]!.key, reason: 'near' });
  });

  it.each([
    ['Key Accounts customers receive net 45 days when approved by the credit manager.', 'Key Accounts customers receive net 60 days when approved by the credit manager.'],
    ['Deductions under USD 50 are written off automatically without any investigation at all.', 'Deductions under USD 100 are written off automatically without any investigation at all.'],
    ['Acme Foods pays every invoice by ACH transfer on 15 March 2026 at the latest.', 'Acme Foods pays every invoice by ACH transfer on 15 April 2026 at the latest.'],
    ['Acme Foods pays every invoice by ACH transfer on the fifteenth of the month.', 'Globex Retail pays every invoice by ACH transfer on the fifteenth of the month.'],
    ['The credit manager approves write-offs of pricing deductions for Key Accounts.', 'The credit manager never approves write-offs of pricing deductions for Key Accounts.'],
  ])('never merges distinct facts (numbers, amounts, dates, names, negation): %s', (a, b) => {
    expect(dedupeMemories(drafts(a, b), []).removed).toEqual([]);
    // and the same wording with the same facts is merged
    expect(dedupeMemories(drafts(a, a.replace(/\.$/, ' .')), []).removed).toHaveLength(1);
  });

  it('dedupes against stored memories and against the sentences of approved articles, which win over drafts', () => {
    const d = drafts('Standard payment terms are net 30 days from the invoice date.', 'Globex Retail requires a purchase order number on every invoice.', 'Something entirely new about credit holds and sales orders.');
    const r = dedupeMemories(d, [
      { id: 'mem-1', kind: 'memory', text: 'Our standard payment terms are net 30 days from the invoice date.' },
      { id: 'art-1', kind: 'article', text: 'Globex Retail\n\nGlobex Retail pays by check. Globex Retail requires a purchase order number on every invoice.' },
    ]);
    expect(r.kept.map((k) => k.text)).toEqual(['Something entirely new about credit holds and sales orders.']);
    expect(r.removed.map((x) => [x.duplicate_of, x.reason])).toEqual([
      [{ kind: 'memory', id: 'mem-1' }, 'near'],
      [{ kind: 'article', id: 'art-1' }, 'exact'],
    ]);
  });

  it('computes deterministic MinHash signatures over word shingles', () => {
    const a = minhash(shingles('Late payment interest of 1.5% per month.'));
    expect(a).toEqual(minhash(shingles('late payment interest of 1.5% per month')));
    expect(a).not.toEqual(minhash(shingles('Early payment discount of 2% within ten days.')));
  });
});
