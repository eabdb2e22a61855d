/**
 * The words payers use in remittance advice, in English, German, French, Dutch and Spanish: column
 * headers (what each amount column means), totals, the payment's own fields (date, amount,
 * reference, method, payer) and the wording that says a text is a remittance advice at all.
 * Compared after `fold` (lower case, accents dropped, punctuation as spaces).
 */

/** What a column (or an inline label) of an advice holds. */
export type ColumnRole = 'invoice' | 'paid' | 'discount' | 'withheld' | 'gross' | 'other_amount' | 'date' | 'reference' | 'text' | 'currency';

export const AMOUNT_ROLES: readonly ColumnRole[] = ['paid', 'discount', 'withheld', 'gross', 'other_amount'];

/** Lower case, accents dropped, every run of other characters one space. */
export function fold(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[^a-z0-9#°]+/g, ' ')
    .trim();
}

const PHRASES: Record<ColumnRole, string[]> = {
  invoice: [
    'invoice', 'invoice no', 'invoice nr', 'invoice number', 'invoice #', 'inv no', 'inv #', 'inv', 'invoice ref', 'invoice reference', 'document no', 'document number', 'doc no', 'your invoice', 'bill no', 'document',
    'rechnung', 'rechnungsnr', 'rechnungsnummer', 'rechnungs nr', 're nr', 'rg nr', 'belegnr', 'belegnummer', 'beleg', 'ihre rechnung', 'rechnung nr',
    'facture', 'n° facture', 'no facture', 'numero de facture', 'num facture', 'votre facture', 'ref facture', 'piece', 'n° piece',
    'factuur', 'factuurnummer', 'factuurnr', 'factuur nr', 'uw factuur', 'documentnummer',
    'factura', 'n° factura', 'no factura', 'numero de factura', 'num factura', 'nro factura', 'su factura', 'documento',
  ],
  paid: [
    'paid', 'amount paid', 'paid amount', 'payment', 'payment amount', 'net paid', 'net amount', 'amount', 'net', 'remitted', 'amount remitted', 'to pay', 'pay amount', 'payment made',
    'zahlbetrag', 'gezahlt', 'bezahlt', 'zahlung', 'betrag', 'uberwiesen', 'uberweisungsbetrag', 'ausgleich', 'gezahlter betrag', 'zahlungsbetrag', 'netto gezahlt',
    'montant paye', 'paye', 'regle', 'montant regle', 'reglement', 'paiement', 'montant', 'net paye', 'net a payer', 'montant du paiement', 'montant vire',
    'betaald', 'betaald bedrag', 'bedrag', 'betaling', 'netto betaald', 'betaalbedrag', 'overgemaakt',
    'pagado', 'importe pagado', 'importe', 'pago', 'monto pagado', 'neto pagado', 'importe neto', 'monto', 'importe del pago',
  ],
  discount: [
    'discount', 'cash discount', 'disc', 'discount taken', 'deduction', 'deductions', 'discount amount', 'early payment discount', 'prompt payment discount',
    'skonto', 'rabatt', 'skontobetrag', 'skontoabzug', 'abzug skonto',
    'escompte', 'remise', 'escompte pour paiement anticipe',
    'korting', 'betalingskorting', 'kortingsbedrag', 'betaalkorting',
    'descuento', 'pronto pago', 'descuento pronto pago', 'dto',
  ],
  withheld: [
    'withholding', 'withheld', 'wht', 'withholding tax', 'tax withheld', 'amount withheld', 'short paid', 'short payment',
    'einbehalt', 'einbehalten', 'quellensteuer', 'abzug', 'abzuge', 'einbehaltung', 'kurzung',
    'retenue', 'retenue a la source', 'montant retenu', 'retenu',
    'inhouding', 'ingehouden', 'bronheffing', 'inhoudingen',
    'retencion', 'deduccion', 'retenido', 'importe retenido',
  ],
  gross: [
    'invoice amount', 'gross', 'gross amount', 'original amount', 'invoice total', 'amount due', 'invoice value', 'inv amount', 'invoice amt', 'document amount',
    'rechnungsbetrag', 'bruttobetrag', 'brutto', 'ursprungsbetrag', 'betrag rechnung', 'rechnungssumme',
    'montant facture', 'montant brut', 'brut', 'montant ttc', 'montant du', 'montant de la facture', 'total facture',
    'factuurbedrag', 'brutobedrag', 'bruto', 'origineel bedrag', 'bedrag factuur',
    'importe factura', 'importe bruto', 'bruto', 'importe original', 'total factura', 'importe de la factura',
  ],
  other_amount: ['open', 'open amount', 'balance', 'remaining', 'outstanding', 'vat', 'tax', 'offen', 'offener betrag', 'restbetrag', 'mwst', 'ust', 'solde', 'reste', 'tva', 'openstaand', 'saldo', 'btw', 'pendiente', 'iva'],
  date: ['date', 'invoice date', 'payment date', 'value date', 'zahlungsdatum', 'valuta', 'doc date', 'document date', 'datum', 'rechnungsdatum', 'belegdatum', 'date facture', 'date de facture', 'factuurdatum', 'fecha', 'fecha factura', 'fecha de factura', 'due date', 'fallig', 'echeance', 'vervaldatum', 'vencimiento'],
  reference: ['po', 'po number', 'purchase order', 'your ref', 'our ref', 'reference', 'ref', 'order', 'bestellung', 'bestellnr', 'referenz', 'auftrag', 'reference', 'commande', 'bon de commande', 'referentie', 'bestelling', 'inkooporder', 'referencia', 'pedido', 'orden de compra', 'customer no', 'kundennr'],
  text: ['description', 'text', 'details', 'beschreibung', 'bezeichnung', 'buchungstext', 'libelle', 'designation', 'omschrijving', 'descripcion', 'concepto', 'remark', 'bemerkung'],
  currency: ['currency', 'cur', 'ccy', 'curr', 'wahrung', 'whg', 'devise', 'valuta', 'munt', 'moneda', 'divisa'],
};

/** Every phrase with its role, longest first (so `invoice amount` wins over `invoice`). */
const ENTRIES: { phrase: string; role: ColumnRole; words: number }[] = Object.entries(PHRASES)
  .flatMap(([role, phrases]) => phrases.map((p) => ({ phrase: fold(p), role: role as ColumnRole, words: fold(p).split(' ').length })))
  .sort((a, b) => b.phrase.length - a.phrase.length);

/** Each phrase's role (the first role listing it). */
const BY_PHRASE = new Map<string, ColumnRole>();
for (const e of ENTRIES) if (!BY_PHRASE.has(e.phrase)) BY_PHRASE.set(e.phrase, e.role);

/** Roles of texts already looked up (words repeat across the lines of a message); bounded. */
const ROLE_CACHE = new Map<string, ColumnRole | null>();
const ROLE_CACHE_SIZE = 20_000;

/** The role of a header cell (its whole text), or null. */
export function cellRole(cell: string): ColumnRole | null {
  const cached = ROLE_CACHE.get(cell);
  if (cached !== undefined) return cached;
  const role = lookupRole(cell);
  if (ROLE_CACHE.size >= ROLE_CACHE_SIZE) ROLE_CACHE.clear();
  ROLE_CACHE.set(cell, role);
  return role;
}

function lookupRole(cell: string): ColumnRole | null {
  const f = fold(cell);
  if (!f || f.length > 60) return null;
  const exact = BY_PHRASE.get(f);
  if (exact) return exact;
  // the longest phrase the cell contains as whole words (`Zahlbetrag EUR`, `Amount paid (USD)`)
  const padded = ` ${f} `;
  const hit = ENTRIES.find((e) => padded.includes(` ${e.phrase} `));
  if (hit) return hit.role;
  // compounds (`Rechnungsnummer`, `Skontobetrag`): a phrase of one word at the start of a word
  const compound = ENTRIES.find((e) => e.words === 1 && e.phrase.length >= 5 && f.split(' ').some((w) => w.startsWith(e.phrase)));
  return compound?.role ?? null;
}

export interface RoleSpan {
  role: ColumnRole;
  /** character offsets in the line */
  index: number;
  end: number;
}

/**
 * The roles a line of text names, in order, with where each is written: header lines whose cells
 * are separated by single spaces (PDF text) are read phrase by phrase, longest phrases first.
 */
export function rolesInLine(line: string): RoleSpan[] {
  const words = [...line.matchAll(/[^\s|;\t]+/g)].map((m) => ({ f: fold(m[0]), index: m.index!, end: m.index! + m[0].length }));
  const spans: RoleSpan[] = [];
  let i = 0;
  while (i < words.length) {
    let matched = false;
    for (let n = Math.min(5, words.length - i); n >= 1; n--) {
      const text = words.slice(i, i + n).map((w) => w.f).join(' ').trim();
      if (!text) continue;
      const role = n === 1 ? cellRole(text) : (BY_PHRASE.get(text) ?? null);
      if (role) {
        spans.push({ role, index: words[i]!.index, end: words[i + n - 1]!.end });
        i += n;
        matched = true;
        break;
      }
    }
    if (!matched) i += 1;
  }
  return spans;
}

/** The last role-naming phrase in a piece of text (`… less discount`), for amounts written inline. */
export function lastRoleIn(text: string): ColumnRole | null {
  const spans = rolesInLine(text);
  return spans.length ? spans[spans.length - 1]!.role : null;
}

const TOTAL_WORDS = ['total', 'totals', 'grand total', 'sum', 'summe', 'gesamt', 'gesamtbetrag', 'gesamtsumme', 'total paye', 'total regle', 'totaal', 'totaal betaald', 'importe total', 'total pagado', 'somme', 'zwischensumme', 'subtotal', 'sous total', 'subtotaal'];
const TOTAL_RE = new RegExp(`^(?:${TOTAL_WORDS.map((w) => w.replace(/ /g, '\\s')).sort((a, b) => b.length - a.length).join('|')})\\b`);

/** The line is a total (or subtotal) line: its first words say so. */
export function isTotalLine(line: string): boolean {
  return TOTAL_RE.test(fold(line));
}

/** Words before an invoice number in running text (`Invoice 4711`, `Rechnung Nr. 4711`, `facture n° 4711`). */
export const INVOICE_LEAD = /\b(?:invoices?|inv|rechnung(?:en)?|rechnungsnummer|rechnungsnr|re|rg|beleg|factures?|factuur|facturen|facturas?|document|doc|bill)\b\.?\s*(?:(?:no|nr|number|nummer|num|n°|nº|#|numero|número)\b\.?|#|n°|nº)?\s*:?\s*$/i;

/**
 * Labels of the payment's own fields (folded phrases; any run of spaces or punctuation between the
 * words), each matched where it ends right before its value.
 */
const LABELS: Record<'payment_date' | 'amount' | 'reference' | 'payer' | 'currency' | 'method', string[]> = {
  payment_date: ['payment date', 'date of payment', 'value date', 'paid on', 'transfer date', 'execution date', 'zahlungsdatum', 'valutadatum', 'valuta', 'ausfuhrungsdatum', 'uberweisungsdatum', 'buchungsdatum', 'date de paiement', 'date du paiement', 'date de valeur', 'date du virement', 'date d execution', 'betaaldatum', 'betalingsdatum', 'valutadatum', 'datum betaling', 'fecha de pago', 'fecha valor', 'fecha del pago', 'fecha de transferencia'],
  amount: ['payment amount', 'total amount', 'amount', 'montant', 'importe', 'amount paid', 'total paid', 'amount remitted', 'zahlbetrag', 'uberweisungsbetrag', 'zahlungsbetrag', 'gesamtbetrag', 'betrag', 'montant du paiement', 'montant total', 'montant vire', 'montant paye', 'montant regle', 'totaal bedrag', 'betaald bedrag', 'betaalbedrag', 'bedrag', 'importe total', 'importe pagado', 'importe del pago', 'monto'],
  reference: ['payment reference', 'payment ref', 'payment no', 'payment number', 'payment id', 'remittance no', 'remittance number', 'advice no', 'transaction id', 'check no', 'cheque no', 'zahlungsreferenz', 'zahlungsnummer', 'zahlungs nr', 'avis nr', 'avisnummer', 'referenz der zahlung', 'reference du paiement', 'reference paiement', 'reference de paiement', 'numero de paiement', 'n° de paiement', 'betalingsreferentie', 'betalingskenmerk', 'betaalreferentie', 'referencia de pago', 'referencia del pago', 'numero de pago'],
  payer: ['payer', 'paid by', 'remitter', 'ordering party', 'zahler', 'auftraggeber', 'zahlungspflichtiger', 'donneur d ordre', 'payeur', 'emetteur', 'betaler', 'opdrachtgever', 'ordenante', 'pagador'],
  currency: ['currency', 'wahrung', 'devise', 'valuta munt', 'munt', 'moneda', 'divisa'],
  method: ['payment method', 'paid via', 'zahlungsart', 'zahlweise', 'mode de paiement', 'moyen de paiement', 'betaalwijze', 'betaalmethode', 'forma de pago', 'metodo de pago'],
};

export type FieldName = keyof typeof LABELS;

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** One pattern per field over `looseFold` text: the longest label first, whole words. */
export const FIELD_LABELS = Object.fromEntries(
  Object.entries(LABELS).map(([field, phrases]) => [
    field,
    new RegExp(`(?<![a-z0-9])(?:${[...phrases].sort((a, b) => b.length - a.length).map((p) => p.split(' ').map(esc).join('[^a-z0-9#°]+')).join('|')})(?![a-z0-9])`, 'g'),
  ]),
) as Record<FieldName, RegExp>;

/** `s` lower case with accents dropped and every other character a space, of the same length (indices stay valid). */
export function looseFold(s: string): string {
  let out = '';
  for (const ch of s) {
    const base = ch.normalize('NFD')[0]!.toLowerCase();
    const keep = /[a-z0-9#°]/.test(base) ? base : ' ';
    out += ch.length === 2 ? `${keep} ` : keep;
  }
  return out;
}

/** Payment methods as written → the value recorded. */
export const METHODS: [RegExp, string][] = [
  [/\bach\b|\bnacha\b/, 'ach'],
  [/\bwire\b|\bswift\b|\btelegraphic\b/, 'wire'],
  [/\bcheck\b|\bcheque\b|\bscheck\b|\bcheques?\b/, 'check'],
  [/\bcredit card\b|\bcard\b|\bkreditkarte\b|\bcarte\b|\btarjeta\b/, 'card'],
  [/\bsepa\b|\bbank transfer\b|\bcredit transfer\b|\buberweisung\b|\bvirement\b|\boverschrijving\b|\boverboeking\b|\btransferencia\b|\bbank giro\b/, 'bank_transfer'],
];

/** Wording that says a text is remittance advice (or a payment notice) rather than an invoice copy or other file. */
export const ADVICE_WORDING = /\b(?:remittance|payment advice|payment notification|payment notice|we have paid|have been paid|were paid|wurden .{0,20}(?:bezahlt|uberwiesen)|ont ete (?:payees|reglees)|zijn betaald|han sido pagadas|we paid|has been paid|paid the following|payment of the following|zahlungsavis|zahlungsavise|avis|zahlungsankundigung|wir haben .{0,40}(?:bezahlt|uberwiesen|angewiesen)|folgende rechnungen|uberweisung|avis de paiement|avis de virement|nous avons regle|nous avons paye|reglement des factures|betalingsadvies|betaaladvies|betalingsspecificatie|wij hebben .{0,40}betaald|aviso de pago|aviso de transferencia|hemos pagado|hemos abonado|detalle de pago)\b/;
