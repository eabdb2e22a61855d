/**
 * A promise to pay's coverage (domain/collections/promise-settlement.ts), per invoice the larger of
 * the ledger's reduction since the promise and the payments approved since, never their sum (an
 * approved payment reaches the ledger once the ERP reports it), capped at the open amount when the
 * promise was made; a closed invoice counts 0 open, an invoice gone from the ledger reduces nothing.
 */
import { describe, expect, it } from 'vitest';
import { promiseCoverage } from '../src/domain/collections/promise-settlement.js';

const promise = { invoice_ids: ['a', 'b', 'c'], open_amounts_at_creation: { a: '1000', b: '500', c: '250' } };
const doc = (amount_open: string, status_open = true) => ({ amount_open, status_open });

describe('promise coverage', () => {
  it('takes per invoice the larger of the ledger reduction and the approved payments, never both', () => {
    const docs = new Map([
      ['a', doc('600')], // ledger shows 400 paid …
      ['b', doc('500')],
      ['c', doc('250')],
    ]);
    // … and the approved payment of those 400 is still reported by cash-app: counted once
    expect(promiseCoverage(promise, docs, { a: '400' }).toFixed()).toBe('400');
    // a payment the ledger does not show yet counts in full
    expect(promiseCoverage(promise, docs, { a: '400', b: '120.50' }).toFixed()).toBe('520.5');
  });

  it('counts a closed invoice as fully reduced and caps each invoice at its open amount when promised', () => {
    const docs = new Map([
      ['a', doc('0', false)],
      ['b', doc('500')],
      ['c', doc('250')],
    ]);
    expect(promiseCoverage(promise, docs, { b: '800' }).toFixed()).toBe('1500');
  });

  it('takes nothing from an invoice gone from the ledger, nor from an invoice whose open amount grew', () => {
    const docs = new Map([['b', doc('700')]]);
    expect(promiseCoverage(promise, docs, {}).toFixed()).toBe('0');
    expect(promiseCoverage(promise, docs, { c: '10' }).toFixed()).toBe('10');
  });
});
