/**
 * The category of a message from the readers' signals. A bounce and an auto-reply win outright
 * (they are never a customer answer); an automatic message that is no reply (`Auto-Submitted:
 * auto-generated`, bulk precedence, "do not reply") is read by its content (payables systems send
 * advice that way). The others are scored
 * by their wording in the sender's own words, the subject and the attachments; the highest
 * wins and its confidence falls with the runner-up's score. Pure.
 */
import type { DisputeReading, InboxCategory, ParsedInboundMessage, PromiseReading } from '../../../domain-types/inbox.js';
import type { AutoReplyReading } from './auto-reply.js';
import type { BounceReading } from './bounce.js';
import { findAmounts } from './amounts.js';
import { disputeSignals } from './dispute.js';
import { fold } from './text.js';

export interface ClassifyInput {
  msg: ParsedInboundMessage;
  subject: string;
  own: string;
  full: string;
  attachmentsText: string;
  bounce: BounceReading | null;
  autoReply: AutoReplyReading | null;
  promise: PromiseReading | null;
  dispute: DisputeReading | null;
}

export interface Verdict {
  category: InboxCategory;
  confidence: number;
  reasons: string[];
}

const ADVICE_WORDS =
  /\b(remittance( advice)?|payment (advice|notification|notice|confirmation|details|remittance)|advice of payment|zahlungsavis|zahlungsavise|avis|zahlungsankundigung|zahlungsbenachrichtigung|zahlungsmitteilung|uberweisungsavis|avis de (paiement|virement|reglement)|detail (du|des) (paiement|reglement)s?|betalingsadvies|betaaladvies|betalingsspecificatie|betaalspecificatie|betalingsbericht|aviso de (pago|remesa|transferencia)|notificacion de pago|detalle (del|de) pago|comprobante de pago|confirmacion de pago)\b/;
const PAID_WORDS: RegExp[] = [
  /\b(we|i) (have |'ve )?(just |now |today )?(paid|settled|transferred|remitted|wired|made (a |the )?payment|processed (the )?payment|initiated (a |the )?payment|released (the )?payment|sent (the )?payment)\b/,
  /\b(has|have) (now )?been (paid|settled|transferred|remitted|processed|released|wired|initiated)\b|\bpayment (has been|was) (made|sent|released|executed|initiated|processed|transferred)\b/,
  /\b(was|were) (paid|settled|transferred|remitted|wired)\b|\bpaid the following\b|\b(heute|gestern|soeben|bereits) (bezahlt|uberwiesen|beglichen)\b|\b(vandaag|gisteren) (betaald|overgemaakt)\b|\b(paye|regle|vire) (aujourd'hui|hier)\b/,
  /\bplease find (attached |below |enclosed )?(our |the )?(payment|remittance)\b|\bthe following (invoices|items) (have been|were|are being) paid\b|\bpaid (today|yesterday|on)\b/,
  /\b(haben|hatten) (wir|ich)?\b.{0,200}\b(uberwiesen|bezahlt|beglichen|angewiesen|ausgeglichen|uberwiesen)\b|\b(wurde|wurden|ist|sind) .{0,200}\b(uberwiesen|bezahlt|beglichen|angewiesen|ausgeglichen)( worden)?\b(?! werden)|\bfolgende (rechnungen|posten|belege) (wurden )?(bezahlt|beglichen|ausgeglichen)|\bwir zahlten\b/,
  /\b(nous avons|j'ai) .{0,200}\b(paye|regle|effectue|procede|vire|verse|solde)\b|\b(a|ont) ete (payee?s?|reglee?s?|viree?s?|versee?s?|soldee?s?)\b|\b(paiement|virement|reglement) (a ete|est) (effectue|emis|execute|realise)\b/,
  /\b(hemos|he) (pagado|abonado|realizado|efectuado|transferido|liquidado)\b|\b(ha|han) sido (pagad[oa]s?|abonad[oa]s?|transferid[oa]s?|liquidad[oa]s?)\b|\b(se ha|se han) (realizado|efectuado) (el|los) pagos?\b/,
  /\b(wij hebben|we hebben|ik heb|hebben wij|hebben we|heb ik)\b.{0,200}\b(betaald|overgemaakt|voldaan|overgeboekt)\b|\b(is|zijn|werd|werden) .{0,40}\b(betaald|overgemaakt|voldaan|overgeboekt)\b(?! worden)/,
];
const ADVICE_ATTACHMENT = /(remit|advice|avis|payment|zahlung|paiement|virement|betaling|pago|transfer|uberweisung|overboeking|settlement)/;
const TOTAL_WORDS = /\b(total paid|payment total|amount paid|total amount|gesamtbetrag|zahlbetrag|summe|montant (total|regle|paye)|total (regle|paye)|importe (total|pagado)|total pagado|totaalbedrag|betaald bedrag|totaal|insgesamt|total)\b/;
const QUESTION_WORDS = [
  /\b(could|can|would|will) you\b|\bplease (send|provide|confirm|advise|let (us|me) know|explain|clarify|resend|share|check)\b|\bkindly (send|provide|confirm|advise|share)\b|\b(need|require|request) (a |the )?(copy|statement|duplicate)\b|\bcopy of (the )?invoice\b|\b(bank details|which account|account details)\b|\bhow (do|can|should|much)\b|\bwhat is\b|\bis it possible\b|\b(any|a) question\b/,
  /\b(konnten|konnen|wurden) sie\b|\bbitte (senden|schicken|teilen|bestatigen|ubermitteln|erklaren|prufen)\b|\bkopie (der|einer) rechnung\b|\bwie (konnen|sollen|hoch)\b|\bwas ist\b|\bist es moglich\b|\b(eine )?frage\b|\bbankverbindung\b/,
  /\b(pourriez|pouvez|voudriez)-vous\b|\bmerci de (nous|me) (envoyer|faire parvenir|confirmer|transmettre|communiquer|preciser)\b|\bcopie de (la|cette) facture\b|\best-ce que\b|\bune question\b|\bcoordonnees bancaires\b|\bquel est\b/,
  /\b(podrian|podria|pueden|puede) (enviar|confirmar|indicar|mandar|explicar)\b|\bpor favor (envien|enviar|confirmen|indiquen|manden)\b|\bcopia de la factura\b|\buna pregunta\b|\bes posible\b|\bdatos bancarios\b|\bcual es\b/,
  /\b(kunt u|kunnen jullie|zou u|zouden jullie|wilt u|willen jullie)\b|\bgraag (ontvangen|een kopie)\b|\bkopie van (de|deze) factuur\b|\been vraag\b|\bis het mogelijk\b|\bbankgegevens\b|\bwat is\b/,
];
/** an amount with two decimals (1,234.56 / 1.234,56 / 1 234,56 / 1'234.56 / 99,28); it starts where a number starts (linear time) */
const LINE_WITH_AMOUNT = /(?<![\d.,'])(?:\d{1,3}(?:[.,' ]\d{3})+|\d+)[.,]\d{2}(?!\d)/;
const AMOUNTS_IN_LINE = new RegExp(LINE_WITH_AMOUNT.source, 'g');
const INVOICE_TOKEN = /\b([A-Z]{0,6}[-/]?\d{3,}[-/\d]*)\b/i;

/** lines that look like an advice's table: an invoice-like token and an amount on the same line */
function tableLines(text: string): number {
  let count = 0;
  for (const line of text.split('\n')) {
    if (!LINE_WITH_AMOUNT.test(line)) continue;
    const withoutAmounts = line.replace(AMOUNTS_IN_LINE, ' ');
    if (INVOICE_TOKEN.test(withoutAmounts)) count += 1;
  }
  return count;
}

function remittanceScore(input: ClassifyInput, reasons: string[]): number {
  const { msg, subject, own, attachmentsText } = input;
  const fSubject = fold(subject);
  const fOwn = fold(own);
  let score = 0;
  if (ADVICE_WORDS.test(fSubject) || ADVICE_WORDS.test(fOwn)) {
    score += 55;
    reasons.push('Names a remittance or payment advice');
  }
  const paid = PAID_WORDS.filter((p) => p.test(fOwn) || p.test(fSubject)).length;
  if (paid > 0) {
    score += 45;
    reasons.push('Says the invoices have been paid');
  }
  const adviceFiles = msg.attachments.filter((a) => (a.rows || /pdf|csv|sheet|excel/.test(a.mime_type)) && ADVICE_ATTACHMENT.test(fold(a.name)));
  if (adviceFiles.length > 0) {
    score += 35;
    reasons.push(`Attachment named like an advice: ${adviceFiles.map((a) => a.name).join(', ')}`);
  }
  const lines = tableLines(own) + tableLines(attachmentsText);
  if (lines >= 2) {
    score += 30;
    reasons.push(`${lines} lines pair an invoice number with an amount`);
  } else if (lines === 1 && score > 0) {
    score += 10;
  }
  if (score > 0 && (TOTAL_WORDS.test(fOwn) || TOTAL_WORDS.test(fold(attachmentsText.slice(0, 20_000))))) score += 10;
  if (score > 0 && ADVICE_WORDS.test(fold(attachmentsText.slice(0, 5000)))) score += 15;
  return score;
}

function promiseScore(input: ClassifyInput, reasons: string[]): number {
  if (!input.promise) return 0;
  reasons.push(`Promises to pay: "${input.promise.excerpt.slice(0, 120)}"`);
  let score = 50;
  if (input.promise.promised_date) score += 20;
  if (input.promise.invoice_numbers.length) score += 10;
  return score;
}

function disputeScore(input: ClassifyInput, reasons: string[]): number {
  if (!input.dispute) return 0;
  const { phrases, reason } = disputeSignals(`${input.subject}\n${input.own}`);
  reasons.push(`Contests an invoice (${input.dispute.reason_code}): "${input.dispute.excerpt.slice(0, 120)}"`);
  return 35 + Math.min(2, phrases) * 15 + (reason ? 25 : 0);
}

function questionScore(input: ClassifyInput, reasons: string[]): number {
  const f = fold(`${input.subject}\n${input.own}`);
  const marks = Math.min(2, (input.own.match(/\?(\s|$)/g) ?? []).length + (/\?\s*$/.test(input.subject) ? 1 : 0));
  const words = QUESTION_WORDS.filter((p) => p.test(f)).length;
  const score = marks * 20 + Math.min(2, words) * 25;
  if (score > 0) reasons.push(marks ? 'Asks a question' : 'Makes a request');
  return score;
}

export function classify(input: ClassifyInput): Verdict {
  if (input.bounce) return { category: 'bounce', confidence: input.bounce.confidence, reasons: input.bounce.reasons };
  const remittanceReasons: string[] = [];
  const remittance = remittanceScore(input, remittanceReasons);
  if (input.autoReply && !input.autoReply.generatedOnly) {
    return { category: 'auto_reply', confidence: input.autoReply.confidence, reasons: [...input.autoReply.reasons, 'An automatic reply never counts as a customer answer'] };
  }
  const scored: { category: InboxCategory; score: number; reasons: string[] }[] = [];
  scored.push({ category: 'remittance', score: remittance, reasons: remittanceReasons });
  for (const [category, fn] of [
    ['promise_to_pay', promiseScore],
    ['dispute', disputeScore],
    ['question', questionScore],
  ] as const) {
    const reasons: string[] = [];
    scored.push({ category, score: fn(input, reasons), reasons });
  }
  // a promise sentence about future payment beats an advice-like word in a quoted subject line
  scored.sort((a, b) => b.score - a.score);
  const [top, second] = scored;
  if (input.autoReply?.generatedOnly) {
    // automatic but no reply: an ERP's advice is an advice; without such content, a header that says
    // auto-generated is an automatic message, and a newsletter or notice is other
    if (top.score >= 45) top.reasons.push(...input.autoReply.reasons.map((r) => `${r} (automatic, read by its content)`));
    else if (input.msg.headers['auto-submitted']) return { category: 'auto_reply', confidence: input.autoReply.confidence, reasons: [...input.autoReply.reasons, 'An automatic message never counts as a customer answer'] };
    else return { category: 'other', confidence: 70, reasons: [...input.autoReply.reasons, 'A bulk or automated message with no payment, promise, dispute or question'] };
  }
  if (top.score < 25) {
    const amounts = findAmounts(input.own).length;
    return { category: 'other', confidence: top.score > 0 ? 50 : 60, reasons: [amounts ? 'Mentions amounts but no payment, promise, dispute or question' : 'No payment, promise, dispute or question recognised'] };
  }
  const base = Math.min(97, 40 + top.score * 0.5);
  const penalty = (second.score / top.score) * 25;
  return { category: top.category, confidence: Math.max(30, Math.round(base - penalty)), reasons: top.reasons };
}
