/** enrichMemories: customer and segment links, normalised values, collection (pure: no stack). */
import { describe, expect, it } from 'vitest';
import { enrichMemories, normaliseEntities } from '../src/extraction/enrich.js';
import { splitMemories } from '../src/extraction/memories.js';
import type { PartnerRef } from '../src/extraction/types.js';
import { context } from './extraction-support.js';

const ctx = { ...context(), collection: null };
const enrich = (text: string, c: Parameters<typeof enrichMemories>[1] = ctx) => enrichMemories(splitMemories([{ page: 1, text }]), c)[0]!;

describe('enrichMemories: customers (cash-app payer rule: ties are not linked)', () => {
  it('links a customer named by name, by legal name and by account number', () => {
    expect(enrich('Acme Foods pays by ACH on the 15th of each month.').customer_id).toBe('p-acme');
    expect(enrich('Short payments from Stark Hardware Supply Co. need a review.').customer_id).toBe('p-stark');
    expect(enrich('The customer with account number C-50020 may only be called before noon.').customer_id).toBe('p-stark');
    expect(enrich("Globex Retail's AP team is closed on Fridays.").customer_id).toBe('p-globex');
  });

  it('does not link a name two partners share, but links their distinct account numbers', () => {
    expect(enrich('Northwind Traders sends remittance advice by email.').customer_id).toBeNull();
    expect(enrich('Customer: Northwind Traders; Account number: C-40002; Contact: Kim Lee').customer_id).toBe('p-northwind-west');
  });

  it('does not link when two customers are named, nor on a weak or generic mention', () => {
    expect(enrich('Acme Foods and Globex Retail both pay by check.').customer_id).toBeNull();
    expect(enrich('Acme pays by check every week.').customer_id).toBeNull();
    expect(enrich('Retail customers pay by check every week.').customer_id).toBeNull();
  });

  it('ties within the margin are not linked (two similar names)', () => {
    const partners: PartnerRef[] = [
      { id: 'a', name: 'Blue Ocean Foods', legal_name: null, account_number: null },
      { id: 'b', name: 'Blue Ocean Food', legal_name: null, account_number: null },
    ];
    expect(enrich('Blue Ocean Foods pays late.', { partners, segments: [], collection: null }).customer_id).toBeNull();
    expect(enrich('Blue Ocean Foods pays late.', { partners: [partners[0]!], segments: [], collection: null }).customer_id).toBe('a');
  });
});

describe('enrichMemories: segments and collection', () => {
  it('links a named segment; two different segments give none', () => {
    expect(enrich('All Public Sector customers are exempt from credit insurance.').segment_id).toBe('s-public');
    expect(enrich('Key Accounts and Small Business customers get reminders.').segment_id).toBeNull();
  });

  it('infers the collection by keywords when the job gave none, else uses the given one', () => {
    expect(enrich('Deductions under USD 50 are written off automatically.').collection).toBe('deductions');
    expect(enrich('Send the first reminder email 3 days after the due date to overdue customers.').collection).toBe('collections');
    expect(enrich('Credit limits are reviewed every 12 months.').collection).toBe('credit_risk');
    expect(enrich('Acme Foods pays by ACH on the 15th.').collection).toBe('payments');
    expect(enrich('Deductions under USD 50 are written off automatically.', { ...ctx, collection: 'disputes' }).collection).toBe('disputes');
  });
});

describe('normaliseEntities', () => {
  it('normalises amounts, percentages, day counts and dates', () => {
    const e = normaliseEntities(
      'Balances above EUR 5,000 or 1.250,50 € or $1,000.5 or 2k USD pay 1.5% interest (2 percent for Acme) within net 30, thirty days or 10 business days; due 2026-03-15, 15.03.2026, 03/04/2026, 13/04/2026, March 5, 2026 and 5 March 2026.',
    );
    expect(e.amounts.map((a) => [a.currency, a.value])).toEqual([
      ['EUR', '5000.00'],
      ['USD', '1000.50'],
      ['EUR', '1250.50'],
      ['USD', '2000.00'],
    ]);
    expect(e.percentages.map((p) => p.value)).toEqual(['1.5', '2']);
    expect(e.day_counts.map((d) => d.days)).toEqual([30, 30, 10]);
    expect(e.dates.map((d) => d.date)).toEqual(['2026-03-15', '2026-03-15', '2026-03-04', '2026-04-13', '2026-03-05', '2026-03-05']);
  });

  it('rejects impossible dates', () => {
    expect(normaliseEntities('due 31.02.2026').dates).toEqual([]);
  });
});
