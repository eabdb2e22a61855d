/**
 * The remittance-advice reader on the inbox benchmark's labelled corpus (bench/inbox: every payer
 * house style, two seeds): each advice message rendered to MIME and parsed as the inbox parses it
 * (postal-mime), its attachments read by the kernel's attachmentText, invoice numbers known to the
 * ledger the corpus seeds, and the lines read compared with the labels. The target: invoice
 * number AND amount paid exact for at least 97 % of lines; no style far behind. Pure: no database.
 */
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { htmlToText } from '@rp/platform';
import { DEFAULT_SEED, generateCorpus } from '../../../bench/inbox/corpus.js';
import { renderMessage } from '../../../bench/inbox/render.js';
import { adviceParts, attachmentPart, bodyPart, candidateNumbers, readableAttachment, type PartText } from '../src/domain/remittance-reading/parts.js';
import { numberKey, strippedKey } from '../src/domain/remittance-reading/rows.js';

const norm = (s: string) => s.toUpperCase().replace(/[^A-Z0-9]/g, '');
const cents = (s: string) => Math.round(Number(s) * 100);

async function score(seed: number) {
  const corpus = generateCorpus(seed);
  const numbers = new Set(corpus.ledger.invoices.map((i) => i.number));
  const openAmounts = new Map(corpus.ledger.invoices.filter((i) => i.statusOpen).map((i) => [i.number, (i.amount / 100).toFixed(2)]));
  const perStyle = new Map<string, { lines: number; exact: number; extra: number }>();
  for (const m of corpus.messages) {
    if (!m.label.remittance) continue;
    const email = await PostalMime.parse(await renderMessage(m.spec));
    const parts: PartText[] = [bodyPart(email.text ?? (email.html ? htmlToText(email.html) : ''), email.html ?? null)];
    for (const [position, a] of email.attachments.entries()) {
      const bytes = new Uint8Array(a.content as ArrayBuffer);
      const att = { position, name: a.filename ?? 'file', mime_type: a.mimeType, size: bytes.length, object_key: `k${position}` };
      if (!readableAttachment(att)) continue;
      const p = await attachmentPart(att, bytes);
      if (!('code' in p)) parts.push(p);
    }
    // the ledger lookup the activity makes: the candidates that are invoice numbers
    const known = new Map<string, string>();
    for (const c of candidateNumbers(parts)) {
      if (!numbers.has(c)) continue;
      known.set(numberKey(c), c);
      if (strippedKey(c)) known.set(strippedKey(c)!, c);
    }
    const pool = adviceParts(parts, known, openAmounts).flatMap((p) => p.reading.lines);
    const s = perStyle.get(m.label.style) ?? { lines: 0, exact: 0, extra: 0 };
    perStyle.set(m.label.style, s);
    const used = new Set<number>();
    for (const line of m.label.remittance.lines) {
      s.lines += 1;
      const at = pool.findIndex((a, i) => !used.has(i) && norm(a.invoice_number) === norm(line.invoice_number));
      if (at < 0) continue;
      used.add(at);
      if (cents(pool[at]!.amount_paid) === cents(line.amount_paid)) s.exact += 1;
    }
    s.extra += pool.length - used.size;
  }
  return perStyle;
}

describe('reader on the inbox benchmark corpus', () => {
  for (const seed of [DEFAULT_SEED, 42]) {
    it(`seed ${seed}: ≥ 97 % of lines exact (invoice number and amount paid), every style ≥ 90 %, few extra lines`, async () => {
      const perStyle = await score(seed);
      const all = [...perStyle.values()].reduce((t, s) => ({ lines: t.lines + s.lines, exact: t.exact + s.exact, extra: t.extra + s.extra }), { lines: 0, exact: 0, extra: 0 });
      expect(perStyle.size).toBeGreaterThanOrEqual(20);
      expect(all.lines).toBeGreaterThan(500);
      expect(all.exact / all.lines).toBeGreaterThanOrEqual(0.97);
      const behind = [...perStyle.entries()].filter(([, s]) => s.exact / s.lines < 0.9).map(([style, s]) => `${style} ${s.exact}/${s.lines}`);
      expect(behind).toEqual([]);
      expect(all.extra / all.lines).toBeLessThan(0.02);
    });
  }
});
