/**
 * Promises to pay: a sentence that says the sender will pay ("we will pay invoice 4711 on 5
 * December", "Die Rechnung RE-2026-001 wird am 15.12. überwiesen", "nous réglerons la facture F-12
 * fin du mois", "pagaremos la factura 2026-77 el próximo viernes", "wij betalen factuur 4711
 * volgende week") with its invoices, amount (null: the invoices' open amount) and date. Pure.
 */
import type { PromiseReading } from '../../../domain-types/inbox.js';
import { findAmounts } from './amounts.js';
import { findDates } from './dates.js';
import { invoiceNumbersIn } from './numbers.js';
import { fold, sentences } from './text.js';

export const PROMISE_PHRASES: RegExp[] = [
  // English
  /\b(we|i)\s*(will|shall|'ll|are going to|am going to|intend to|plan to|promise to|expect to|aim to|can|could)\s+(be able to\s+)?(pay|settle|transfer|remit|wire|clear|make (the |a |this )?payment|process (the )?payment|send (the |a )?payment|release (the )?payment)\b/,
  /\bpayment\b.{0,60}\b(will|shall|is going to) be (made|sent|released|processed|executed|initiated|transferred|scheduled|effected)\b/,
  /\bpay(ment)?\b.{0,60}\b(is |are )?(scheduled|planned|booked) (for|on)\b/,
  /\b(will|shall) be (paid|settled|transferred|remitted|cleared|processed)\b/,
  /\b(is|are|has been|have been) scheduled (for payment|to be paid)\b|\bpayment (is |has been )?(scheduled|planned|booked) (for|on)\b|\bscheduled (the |a )?payment\b/,
  /\bpromise to pay\b|\b(be |is |are )?included in (our|the) (next )?payment run\b/,
  // German
  /\b(wir|ich) (werden|werde)\b.{0,200}\b(zahlen|bezahlen|uberweisen|begleichen|anweisen|ausgleichen|freigeben)\b/,
  /\b(wird|werden)\b.{0,200}\b(bezahlt|uberwiesen|beglichen|angewiesen|ausgeglichen|freigegeben)\b(?!\s+worden)/,
  /\b(zahlung|uberweisung|begleichung) (erfolgt|wird\b.{0,40}\berfolgen|ist\b.{0,30}\bgeplant|veranlassen wir|ist\b.{0,20}\bvorgesehen)/,
  /\b(uberweisen|zahlen|begleichen|bezahlen) (wir|ich)\b(?!.{0,40}\b(nicht|keine)\b)/,
  /\b(wir|ich) (uberweisen|zahlen|bezahlen|begleichen)\b/,
  /\bzahlungslauf\b/,
  // French
  /\b(nous|je) (allons|vais|pourrons|pourrai)\s+(payer|regler|effectuer|proceder|virer|verser|solder)\b/,
  /\b(payerons|paierons|paierai|reglerons|reglerai|effectuerons|procederons|virerons|verserons|solderons)\b/,
  /\b(paiement|reglement|virement|versement)\b.{0,60}\b(sera|va etre|interviendra|est prevu|est programme|se fera)\b/,
  /\bsera (payee?s?|reglee?s?|viree?s?|soldee?s?)\b|\bseront (payees?|reglees?|virees?)\b/,
  // Spanish
  /\b(vamos a|voy a|podremos|podemos)\s+(pagar|abonar|transferir|realizar el pago|efectuar el pago|liquidar)\b/,
  /\b(pagaremos|abonaremos|transferiremos|liquidaremos|realizaremos el pago|efectuaremos el pago|haremos el pago)\b/,
  /\b(pago|abono|transferencia)\b.{0,60}\bse (realizara|efectuara|hara|enviara|ejecutara)\b|\b(pago|transferencia) (esta )?(programad[oa]|previst[oa]) para\b/,
  /\bsera (pagada|abonada|transferida|liquidada)s?\b|\bseran (pagadas|abonadas|liquidadas)\b/,
  // Dutch
  /\b(wij|we|ik) (zullen|gaan|zal|ga)\b.{0,200}\b(betalen|overmaken|voldoen|overboeken)\b/,
  /\b(wij|we|ik) (betalen|maken|voldoen)\b.{0,80}\b(op|voor|uiterlijk|volgende|eind|binnen|over|morgen)\b/,
  /\b(zal|zullen|wordt|worden)\b.{0,60}\b(betaald|overgemaakt|voldaan|overgeboekt)\b(?!\s+(is|zijn))/,
  /\b(betaling|overboeking)\b.{0,60}\b(wordt|zal|zullen)\b.{0,40}\b(uitgevoerd|gedaan|verricht|plaatsvinden|verwerkt)\b|\bbetaling (is )?gepland\b/,
];

/** "invoice no. 4711" is a number, not a negation */
const NEGATION = /\b(not|never|cannot|can't|won't|unable|nicht|keine?|nunca|niet|geen)\b|\bne\b.{0,20}\bpas\b|\bn'.{0,20}\bpas\b|\bno\b(?!\s*[.:#°º]|\s*\d)/;

export function promiseSentences(text: string): string[] {
  return sentences(text).filter((s) => {
    const f = fold(s);
    return PROMISE_PHRASES.some((p) => p.test(f)) && !NEGATION.test(f);
  });
}

/**
 * The promise in `own` (the sender's own words; `subject` lends invoice numbers when the sentence
 * names none), or null. Confidence: the promise wording, the invoices, and a date not in the past.
 */
export function readPromise(own: string, subject: string, today: string, attachmentsText = ''): PromiseReading | null {
  const found = promiseSentences(own);
  if (found.length === 0) return null;
  const all = sentences(own);
  const first = found[0];
  const at = all.indexOf(first);
  const excerpt = found.join(' ').slice(0, 500);
  let confidence = 40;
  let invoices = found.flatMap((s) => invoiceNumbersIn(s));
  if (invoices.length) confidence += 25;
  else {
    invoices = [...invoiceNumbersIn(subject), ...invoiceNumbersIn(own), ...invoiceNumbersIn(attachmentsText)];
    if (invoices.length) confidence += 18;
  }
  invoices = [...new Set(invoices)];
  // the date: in the promise sentence, else the one after it
  const window = [first, ...found.slice(1), all[at + 1] ?? ''].join('\n');
  const dates = findDates(window, today);
  const future = dates.filter((d) => d.date >= today);
  const chosen = future[0] ?? null;
  if (chosen) {
    confidence += chosen.kind === 'relative' ? 25 : 30;
    if (chosen.ambiguous) confidence -= 12;
  } else if (dates.length) {
    confidence -= 10;
  } else {
    confidence = Math.min(confidence, 55);
  }
  if (!invoices.length) confidence = Math.min(confidence, 55);
  const amounts = findAmounts(found.join('\n'));
  const amount = amounts.length === 1 ? amounts[0] : null;
  return {
    invoice_numbers: invoices,
    amount: amount?.amount ?? null,
    currency: amount?.currency ?? null,
    promised_date: chosen?.date ?? null,
    confidence: Math.max(0, Math.min(95, confidence)),
    excerpt,
  };
}
