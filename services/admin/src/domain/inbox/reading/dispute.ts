/**
 * Disputes: the sender contests an invoice ("invoice 4711 is wrong, the goods arrived damaged",
 * "Rechnung RE-1 ist falsch, doppelt berechnet", "la facture F-12 est erronée", "la factura 77 es
 * incorrecta", "factuur 4711 klopt niet") with a reason code read from the wording. Pure.
 */
import type { DisputeReading, DisputeReasonCode } from '../../../domain-types/inbox.js';
import { findAmounts } from './amounts.js';
import { invoiceNumbersIn } from './numbers.js';
import { fold, sentences } from './text.js';

const GOODS = '(goods|items?|delivery|order|shipment|parcel|package|service|products?|material|ware|waren|lieferung|bestellung|sendung|leistung|marchandises?|livraison|commande|colis|produits?|mercancias?|pedido|envio|productos?|servicio|goederen|levering|bestelling|zending|producten|artikelen|dienst)';

/** reason code → its wording in the five languages (folded text) */
const REASONS: [DisputeReasonCode, RegExp][] = [
  ['damaged', /\b(damaged|broken|arrived broken|smashed|dented|beschadigt|beschaedigt|beschadigd|kaputt|zerbrochen|transportschaden|endommage(e|es|s)?|abime(e|es|s)?|casse(e|es|s)?|danad[oa]s?|rot[oa]s?|roto|kapot)\b/],
  [
    'not_received',
    new RegExp(
      `\\b(not|never|haven't|have not|did not|didn't) (yet )?(received|arrived|been delivered|delivered)\\b.{0,60}\\b${GOODS}|\\b${GOODS}\\b.{0,60}\\b(not|never|nie|nicht|pas|jamais|no|nunca|niet|nooit) (yet |noch |encore |todavia |nog )?(received|arrived|delivered|erhalten|angekommen|geliefert|eingegangen|recue?s?|livree?s?|arrivee?s?|recibid[oa]s?|llegad[oa]|entregad[oa]s?|ontvangen|geleverd|aangekomen)|\\b(nie|nicht|keine?) .{0,30}(erhalten|geliefert|angekommen)\\b|\\b(jamais|pas) (ete )?(recue?s?|livree?s?)\\b|\\bno (hemos )?(recibido|ha llegado|llego|han llegado)\\b|\\bnunca (recibimos|llego)\\b|\\b(niet|nooit) (ontvangen|geleverd|aangekomen)\\b|\\bnever arrived\\b`,
    ),
  ],
  ['duplicate_billing', /\b(charged|billed|invoiced) (us )?twice\b|\bduplicate (invoice|billing|charge)\b|\bdouble[- ]?(billed|charged|invoiced)\b|\b(doppelt|zweimal) (berechnet|gestellt|in rechnung gestellt|fakturiert|belastet)\b|\bbereits (berechnet|in rechnung gestellt|fakturiert)\b|\bdoppelte rechnung\b|\bfacture(e|s)? (deux fois|en double)\b|\bdoublon\b|\b(facturad[oa]|cobrad[oa]) dos veces\b|\bfactura duplicada\b|\b(dubbel|twee keer|tweemaal) gefactureerd\b|\bdubbele factuur\b/],
  ['tax', /\b(vat|tax rate|sales tax)\b.{0,40}\b(wrong|incorrect|not correct|missing|should be)\b|\b(wrong|incorrect) (vat|tax)\b|\b(mehrwertsteuer|mwst|ust|umsatzsteuer|steuersatz)\b.{0,40}\b(falsch|fehlerhaft|nicht korrekt)\b|\bfalsche[rn]? (mehrwertsteuer|mwst|ust|steuersatz)\b|\b(tva|taux de tva)\b.{0,40}\b(incorrecte?|erronee?|faux|fausse)\b|\b(iva|tipo de iva)\b.{0,40}\b(incorrect[oa]|erróne[oa]|erroneo)\b|\b(btw|btw-tarief)\b.{0,40}\b(onjuist|verkeerd|fout|klopt niet)\b/],
  ['pricing', /\b(wrong|incorrect) (price|pricing|rate|unit price)\b|\bprice\b.{0,30}\b(wrong|incorrect|not correct|higher than)\b|\b(agreed|quoted|contract) (price|rate)\b|\bovercharged\b|\bprice difference\b|\bdiscount (was )?not (applied|deducted)\b|\bfalsche[rn]? preis(e)?\b|\bpreis(e)?\b.{0,30}\b(falsch|nicht korrekt|zu hoch)\b|\bvereinbarten? preis|\bpreisdifferenz\b|\brabatt\b.{0,30}\bnicht\b|\bprix\b.{0,30}\b(incorrects?|errones?|faux|trop eleves?)\b|\bprix convenus?\b|\bremise\b.{0,30}\bnon appliquee\b|\bprecios?\b.{0,30}\b(incorrectos?|erroneos?|acordados?)\b|\bdescuento\b.{0,20}\bno (aplicado|se ha aplicado)\b|\b(verkeerde|onjuiste) prijs\b|\bafgesproken prijs\b|\bprijs\b.{0,30}\b(klopt niet|onjuist|te hoog)\b|\bkorting\b.{0,30}\bniet\b/],
  ['quantity', /\b(wrong|incorrect) (quantity|quantities|number of)\b|\bquantit(y|ies)\b.{0,30}\b(wrong|incorrect|differs|does not match)\b|\bshort (delivery|shipment|shipped)\b|\bonly (received|got|delivered) \d+\b|\b(items?|units?|pieces?|boxes) (are |were )?missing\b|\b(falsche|fehlerhafte) menge\b|\bmenge\b.{0,30}\b(falsch|stimmt nicht)\b|\bfehlmenge\b|\bteillieferung\b|\bnur \d+ .{0,20}(geliefert|erhalten)\b|\bquantite\b.{0,30}\b(incorrecte|erronee|ne correspond pas)\b|\b(articles?|pieces?) manquante?s?\b|\bcantidad\b.{0,30}\b(incorrecta|erronea|no coincide)\b|\bfaltan \d+\b|\bhoeveelheid\b.{0,30}\b(klopt niet|onjuist|verkeerd)\b|\bte weinig (geleverd|ontvangen)\b/],
  ['quality', /\b(defective|faulty|poor quality|bad quality|not working|does not work|doesn't work|not as described|not as ordered|wrong (goods|items?|product)|does not meet)\b|\b(mangelhaft|defekt|fehlerhafte ware|qualitatsmangel|schlechte qualitat|funktioniert nicht|falsche ware)\b|\b(defectueu(x|se)|non conformes?|mauvaise qualite|ne fonctionne pas|defaut de qualite)\b|\b(defectuos[oa]s?|mala calidad|no funciona|no conformes?)\b|\b(defect|slechte kwaliteit|werkt niet|niet conform|kwaliteitsprobleem)\b/],
];

/** wording that contests an invoice without naming why */
export const DISPUTE_PHRASES: RegExp[] = [
  /\b(we|i) (dispute|contest|reject|refuse|object to|do not accept|don't accept|cannot accept|can't accept|will not pay|won't pay|disagree)\b|\bin dispute\b|\bdisputed?\b|\bcomplaint\b/,
  /\b(invoice|amount|charge|bill)\b.{0,40}\b(is|seems|looks) (wrong|incorrect|not correct|in error|erroneous|too high)\b|\b(wrong|incorrect) (invoice|amount|charge)\b|\bplease (issue|send) (us )?a credit note\b|\bcredit note\b/,
  /\b(reklamation|reklamieren|beanstanden|beanstandung|widersprechen|widerspruch|nicht einverstanden|bestreiten|gutschrift)\b|\b(rechnung|betrag)\b.{0,40}\bist (falsch|fehlerhaft|nicht korrekt|nicht richtig|zu hoch)\b|\b(falsche|fehlerhafte) rechnung\b/,
  /\b(contestons|contester|conteste|litige|reclamation|refusons|desaccord)\b|\b(facture|montant)\b.{0,40}\best (incorrecte?|erronee?|fausse|faux|trop eleve)\b|\b(un avoir|note de credit)\b/,
  /\b(disputamos|reclamacion|reclamamos|rechazamos|no estamos de acuerdo|impugnamos)\b|\b(factura|importe)\b.{0,40}\bes (incorrecta|erronea|incorrecto|erroneo)\b|\bnota de (credito|abono)\b/,
  /\b(betwisten|betwist|bezwaar|klacht|niet akkoord|oneens)\b|\b(factuur|bedrag)\b.{0,40}\b(is (onjuist|niet correct|fout|te hoog)|klopt niet)\b|\bcreditnota\b/,
];

export function disputeSignals(text: string): { phrases: number; reason: DisputeReasonCode | null } {
  const f = fold(text);
  const phrases = DISPUTE_PHRASES.filter((p) => p.test(f)).length;
  const reason = REASONS.find(([, p]) => p.test(f))?.[0] ?? null;
  return { phrases, reason };
}

/** The dispute in `own` (the sender's own words), or null. */
export function readDispute(own: string, subject: string): DisputeReading | null {
  const all = sentences(own);
  const hits = all.filter((s) => {
    const { phrases, reason } = disputeSignals(s);
    return phrases > 0 || reason !== null;
  });
  if (hits.length === 0) return null;
  const { phrases, reason } = disputeSignals(own);
  let confidence = 30 + Math.min(2, phrases) * 15 + (reason ? 25 : 0);
  // the invoice: in the disputing sentences, else the sentence before them, the subject, the rest
  let invoices = hits.flatMap((s) => invoiceNumbersIn(s));
  if (invoices.length) confidence += 20;
  else {
    const before = all[all.indexOf(hits[0]) - 1] ?? '';
    invoices = [...invoiceNumbersIn(before), ...invoiceNumbersIn(subject), ...invoiceNumbersIn(own)];
    if (invoices.length) confidence += 14;
  }
  invoices = [...new Set(invoices)];
  if (!invoices.length) confidence = Math.min(confidence, 55);
  const amounts = findAmounts(hits.join('\n'));
  return {
    invoice_numbers: invoices,
    reason_code: reason ?? 'other',
    amount: amounts.length === 1 ? amounts[0].amount : null,
    confidence: Math.max(0, Math.min(95, confidence)),
    excerpt: hits.join(' ').slice(0, 500),
  };
}
