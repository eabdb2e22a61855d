/** The open-amount rule (domain/open-amounts.ts): what the ledger's amount_open does not include yet. */
import { describe, expect, it } from 'vitest';
import { pendingRelief, reflectedByErp } from '../src/domain/open-amounts.js';

const t = (iso: string) => new Date(iso);

describe('open-amount rule', () => {
  it('subtracts unposted allocations, and posted ones until the ERP reports the document after posted_at', () => {
    const rows = [
      { invoice_id: 'a', posted_at: null, relieved: '400.0000' }, // approved, not posted
      { invoice_id: 'a', posted_at: t('2026-10-15T10:00:00.000Z'), relieved: '100.0000' }, // posted, reported later
      { invoice_id: 'b', posted_at: t('2026-10-15T10:00:00.000Z'), relieved: '250.5000' }, // posted, reported before
      { invoice_id: 'c', posted_at: t('2026-10-15T10:00:00.000Z'), relieved: '0.1000' }, // posted, never reported
    ];
    const reported = new Map([
      ['a', t('2026-10-15T10:00:00.001Z')],
      ['b', t('2026-10-15T09:59:59.999Z')],
    ]);
    expect(pendingRelief(rows, reported)).toEqual(new Map([['a', '400'], ['b', '250.5'], ['c', '0.1']]));
  });

  it('a report at the very instant of the posting does not count as including it', () => {
    expect(reflectedByErp(t('2026-10-15T10:00:00Z'), t('2026-10-15T10:00:00Z'))).toBe(false);
    expect(reflectedByErp(null, t('2026-10-15T10:00:00Z'))).toBe(false);
    expect(reflectedByErp(t('2026-10-15T10:00:00Z'), undefined)).toBe(false);
    expect(reflectedByErp(t('2026-10-15T10:00:00Z'), t('2026-10-15T10:00:01Z'))).toBe(true);
  });

  it('sums exactly', () => {
    const rows = [
      { invoice_id: 'a', posted_at: null, relieved: '0.1000' },
      { invoice_id: 'a', posted_at: t('2026-10-15T10:00:00Z'), relieved: '0.2000' },
    ];
    expect(pendingRelief(rows, new Map()).get('a')).toBe('0.3');
  });
});
