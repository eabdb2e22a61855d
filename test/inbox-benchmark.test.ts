/**
 * The inbox benchmark's labelled corpus (bench/inbox/, `npm run bench -- inbox`), as a test of the
 * benchmark itself rather than of the inbox's scores (those are published in bench/results/inbox.json):
 *  (a) the generator is deterministic: the same seed gives the same messages, labels and MIME text,
 *      another seed another corpus;
 *  (b) it covers what the benchmark claims: ≥ 300 remittance advices from ≥ 20 house styles, every
 *      category, German/French/Dutch wording, both thousands separators, PDF/CSV/XLSX/forwarded
 *      advice, discounts and withholding, auto-replies in five languages, RFC 3464 and other bounces;
 *  (c) its labels are consistent: the lines of every advice add up to its total, each line pays an
 *      open invoice of the labelled customer in full (paid + discount + withheld), no invoice is paid
 *      twice, promised and disputed invoices are the customer's and never paid;
 *  (d) a rendered message says what its label says: every labelled invoice number and amount paid is in the text
 *      the platform's own attachment reader (kernel attachmentText) gets from its body or attachments;
 *  (e) the scorer counts hand-made observations as its definitions say (precision and recall at the
 *      threshold, exact lines, extra allocations, categories, per style).
 * Pure: no database, no services.
 */
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { attachmentText } from '@rp/platform';
import { DEFAULT_SEED, generateCorpus } from '../bench/inbox/corpus.js';
import { amount, dec } from '../bench/inbox/format.js';
import { renderMessage } from '../bench/inbox/render.js';
import { scoreInbox, type ObservedMessage, type ObservedRemittance } from '../bench/inbox/score.js';
import { reminderPlaceholder, type MessageLabel } from '../bench/inbox/types.js';

const corpus = generateCorpus();
const labels = corpus.messages.map((m) => m.label);
const cents = (s: string) => Math.round(Number(s) * 100);

async function readable(raw: Buffer): Promise<string> {
  const p = await PostalMime.parse(raw);
  const parts = [p.subject ?? '', p.text ?? '', p.html ?? ''];
  for (const a of p.attachments) {
    if (a.mimeType === 'message/rfc822') {
      parts.push(await readable(Buffer.from(a.content as ArrayBuffer)));
      continue;
    }
    const t = await attachmentText(new Uint8Array(a.content as ArrayBuffer), a.mimeType, a.filename);
    if ('text' in t) parts.push(t.text);
  }
  return parts.join('\n');
}

describe('the inbox corpus generator', () => {
  it('gives the same corpus and the same MIME text for the same seed, another for another seed', async () => {
    const again = generateCorpus(DEFAULT_SEED);
    expect(JSON.stringify(again)).toBe(JSON.stringify(corpus));
    // XLSX files are zip archives stamped with the time of writing; every other message is byte-identical
    const plain = corpus.messages.filter((m) => !m.spec.attachments?.some((a) => a.xlsx)).slice(0, 120);
    for (const m of plain) expect((await renderMessage(m.spec)).equals(await renderMessage(again.messages.find((x) => x.label.id === m.label.id)!.spec)), m.label.id).toBe(true);
    const other = generateCorpus(DEFAULT_SEED + 1);
    expect(JSON.stringify(other.messages.map((m) => m.label))).not.toBe(JSON.stringify(labels));
  });

  it('covers ≥ 300 advices from ≥ 20 house styles, every category, languages, formats and deductions', () => {
    const remittances = labels.filter((l) => l.category === 'remittance');
    expect(remittances.length).toBeGreaterThanOrEqual(300);
    const styles = new Map<string, number>();
    for (const l of remittances) styles.set(l.style, (styles.get(l.style) ?? 0) + 1);
    expect(styles.size).toBeGreaterThanOrEqual(20);
    for (const [style, n] of styles) expect(n, style).toBeGreaterThanOrEqual(10);
    expect(new Set(labels.map((l) => l.category))).toEqual(new Set(['remittance', 'promise_to_pay', 'dispute', 'question', 'auto_reply', 'bounce', 'other']));
    expect(new Set(remittances.map((l) => l.language))).toEqual(new Set(['en', 'de', 'fr', 'nl']));
    expect(new Set(labels.filter((l) => l.category === 'auto_reply').map((l) => l.language))).toEqual(new Set(['en', 'de', 'fr', 'es', 'nl']));
    expect(new Set(labels.filter((l) => l.category === 'bounce').map((l) => l.style))).toEqual(new Set(['bounce_dsn', 'bounce_nonstandard']));
    const attachments = corpus.messages.flatMap((m) => m.spec.attachments ?? []);
    expect(attachments.some((a) => a.pdf)).toBe(true);
    expect(attachments.some((a) => a.xlsx)).toBe(true);
    expect(attachments.some((a) => a.contentType === 'text/csv')).toBe(true);
    expect(attachments.some((a) => a.eml)).toBe(true);
    const lines = remittances.flatMap((l) => l.remittance!.lines);
    expect(lines.some((l) => cents(l.amount_discount) > 0)).toBe(true);
    expect(lines.some((l) => cents(l.amount_withheld) > 0)).toBe(true);
    const text = corpus.messages.map((m) => `${m.spec.text ?? ''}${m.spec.html ?? ''}`).join('\n');
    expect(text).toMatch(/\b\d{1,3}(\.\d{3})+,\d{2}\b/);
    expect(text).toMatch(/\b\d{1,3}(,\d{3})+\.\d{2}\b/);
    expect(labels.filter((l) => l.customer === null).length).toBeGreaterThan(0);
    expect(labels.filter((l) => l.reply_to_reminder).length).toBeGreaterThan(20);
  });

  it('has consistent labels: totals, open invoices of the customer paid in full, none twice', () => {
    const customers = new Set(corpus.ledger.customers.map((c) => c.code));
    // one ledger address per customer: our reminder to an address is that customer's
    expect(new Set(corpus.ledger.customers.map((c) => c.email.toLowerCase())).size).toBe(customers.size);
    const invoices = new Map(corpus.ledger.invoices.map((i) => [i.number, i]));
    expect(invoices.size).toBe(corpus.ledger.invoices.length);
    expect(new Set(labels.map((l) => l.id)).size).toBe(labels.length);
    expect(new Set(labels.map((l) => l.message_id)).size).toBe(labels.length);
    const paid = new Set<string>();
    for (const l of labels) {
      if (l.customer !== null) expect(customers.has(l.customer), l.id).toBe(true);
      if (l.category === 'remittance') {
        const r = l.remittance!;
        expect(r.lines.length, l.id).toBeGreaterThan(0);
        expect(dec(r.lines.reduce((s, x) => s + cents(x.amount_paid), 0)), l.id).toBe(r.total);
        for (const x of r.lines) {
          const inv = invoices.get(x.invoice_number)!;
          expect(inv, `${l.id} ${x.invoice_number}`).toBeDefined();
          expect(inv.customer, l.id).toBe(l.customer);
          expect(inv.statusOpen, l.id).toBe(true);
          expect(inv.currency).toBe(r.currency);
          expect(cents(x.amount_paid) + cents(x.amount_discount) + cents(x.amount_withheld), `${l.id} ${x.invoice_number}`).toBe(inv.amount);
          expect(paid.has(x.invoice_number), `${x.invoice_number} paid twice`).toBe(false);
          paid.add(x.invoice_number);
        }
      } else expect(l.remittance, l.id).toBeNull();
    }
    for (const l of labels) {
      for (const n of [...(l.promise?.invoice_numbers ?? []), ...(l.dispute?.invoice_numbers ?? [])]) {
        expect(invoices.get(n)?.customer, `${l.id} ${n}`).toBe(l.customer);
        expect(paid.has(n), `${n} promised or disputed and paid`).toBe(false);
      }
      if (l.category === 'promise_to_pay') expect(l.promise?.date).toMatch(/^2026-1[12]-\d{2}$/);
      if (l.category === 'bounce') expect(corpus.ledger.customers.find((c) => c.code === l.customer)?.email).toBe(l.bounce?.address);
    }
  });

  it('renders messages that carry what their labels say', async () => {
    for (const m of corpus.messages) {
      const raw = await renderMessage(m.spec);
      if (m.label.reply_to_reminder) expect(raw.toString('utf8'), m.label.id).toContain(reminderPlaceholder(m.label.reply_to_reminder));
      if (m.label.category !== 'remittance' && m.label.category !== 'promise_to_pay' && m.label.category !== 'dispute') continue;
      const text = await readable(raw);
      const numbers = [...(m.label.remittance?.lines.map((l) => l.invoice_number) ?? []), ...(m.label.promise?.invoice_numbers ?? []), ...(m.label.dispute?.invoice_numbers ?? [])];
      for (const n of numbers) expect(text, `${m.label.id} (${m.label.style}) ${n}`).toContain(n);
      // and every line's amount paid, in one of the ways payers write it
      for (const l of m.label.remittance?.lines ?? []) {
        // (a spreadsheet's numeric cell reads as the number itself: 712.5)
        const written = [...(['en', 'de', 'fr', 'ch', 'plain'] as const).map((style) => amount(cents(l.amount_paid), style)), String(cents(l.amount_paid) / 100)];
        expect(written.some((w) => text.includes(w)), `${m.label.id} (${m.label.style}) ${l.invoice_number} ${l.amount_paid}`).toBe(true);
      }
    }
  });
});

describe('the inbox scorer', () => {
  const label = (id: string, customer: string | null, category: MessageLabel['category'], lines: [string, string, string?][] = []): MessageLabel => ({
    id,
    message_id: `<${id}@x>`,
    style: category === 'remittance' ? 'advice' : 'talk',
    language: 'en',
    category,
    customer,
    reply_to_reminder: null,
    remittance: lines.length ? { currency: 'EUR', payment_date: '2026-11-20', total: '0.00', lines: lines.map(([n, paid, discount]) => ({ invoice_number: n, amount_paid: paid, amount_discount: discount ?? '0.00', amount_withheld: '0.00' })) } : null,
    promise: null,
    dispute: null,
    bounce: null,
  });
  const seen = (id: string, partner: string | null, confidence: number, category: string): [string, ObservedMessage] => [`<${id}@x>`, { id, message_id: `<${id}@x>`, partner_code: partner, match_confidence: confidence, status: 'assigned', category, processing_state: 'processed' }];
  const alloc = (n: string, paid: string, discount = '0.00', resolved: string | null = null) => ({ invoice_number: n, resolved_number: resolved, amount_paid: paid, amount_discount: discount, amount_withheld: '0.00' });

  it('counts precision and recall at the threshold, exact lines and categories', () => {
    const labels = [
      label('a', 'C1', 'remittance', [['RE-2026-01', '100.00', '2.00'], ['EU/2026/002', '50.00']]),
      label('b', 'C2', 'question'),
      label('c', null, 'other'),
      label('d', 'C3', 'dispute'),
      label('e', 'C4', 'auto_reply'),
    ];
    const observed = new Map([seen('a', 'C1', 95, 'remittance'), seen('b', 'C2', 79, 'question'), seen('c', 'C9', 85, 'remittance'), seen('d', 'C3', 80, 'dispute'), seen('e', 'C4', 70, 'auto_reply')]);
    observed.get('<d@x>')!.results = ['dispute'];
    const remittances = new Map<string, ObservedRemittance[]>([
      // the first line by its number written another way and its deductions; the second with a wrong amount; one extra
      ['<a@x>', [{ id: 'r1', transaction_amount: '148.00', agent_error_code: null, allocations: [alloc('re 2026 01', '100.00', '2.00'), alloc('X', '50.01', '0.00', 'EU/2026/002'), alloc('4711', '1.00')] }]],
    ]);
    const s = scoreInbox(labels, observed, remittances, 80);
    expect(s.overall).toMatchObject({ messages: 5, with_customer: 4, assigned: 3, assigned_correct: 2, precision: 0.6667, recall: 0.5, category_correct: 4, category_accuracy: 0.8, lines: 2, lines_exact: 1, lines_exact_share: 0.5, lines_exact_with_deductions: 1, extra_allocations: 1, remittances_read: 1 });
    expect(s.per_style.talk).toMatchObject({ messages: 4, assigned: 2, assigned_correct: 1 });
    expect(s.recorded).toEqual({ promises: { labelled: 0, recorded: 0 }, disputes: { labelled: 1, recorded: 1 } });
    // the auto-reply is left out of the recall over answers
    expect(s.answers).toEqual({ with_customer: 3, assigned_correct: 2, recall: 0.6667 });
    expect(s.thresholds.find((t) => t.threshold === 70)).toEqual({ threshold: 70, precision: 0.8, recall: 1 });
    expect(s.misses.map((m) => `${m.id}:${m.kind}`).sort()).toEqual(['a:line', 'b:customer', 'c:category', 'c:customer', 'e:customer']);
  });

  it('lists a promise to pay that was not recorded from its message', () => {
    const promise = { ...label('p', 'C1', 'promise_to_pay'), promise: { invoice_numbers: ['1'], amount: null, date: '2026-12-05' } };
    const observed = new Map([seen('p', 'C1', 90, 'promise_to_pay')]);
    expect(scoreInbox([promise], observed, new Map(), 80).misses.map((m) => m.kind)).toEqual(['not_recorded']);
    observed.get('<p@x>')!.results = ['promise_to_pay'];
    const s = scoreInbox([promise], observed, new Map(), 80);
    expect(s.misses).toEqual([]);
    expect(s.recorded.promises).toEqual({ labelled: 1, recorded: 1 });
  });

  it('counts a message never received or still unprocessed as missed, not as assigned', () => {
    const s = scoreInbox([label('a', 'C1', 'remittance', [['1', '1.00']])], new Map(), new Map(), 80);
    expect(s.overall).toMatchObject({ processed: 0, assigned: 0, recall: 0, precision: null, lines_exact: 0, category_correct: 0 });
    expect(s.misses.map((m) => m.kind).sort()).toEqual(['category', 'customer', 'line', 'unprocessed']);
  });
});
