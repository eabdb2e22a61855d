/**
 * Realistic customer names of the benchmark's world, per country (legal forms as the commercial
 * registers spell them), the look-alike pairs a cash-application clerk confuses, and the forms a
 * payer's name takes on a bank line (upper case, umlauts transliterated, legal form left out,
 * truncated to the bank's field length).
 */
import type { Rng } from './random.js';

interface NameStyle {
  bases: string[];
  industries: string[];
  forms: string[];
  /** "Dupont Emballages" or "Emballages Dupont" */
  industryFirst?: number;
}

const DE_BASES = [
  'Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Schulz', 'Hoffmann', 'Koch', 'Richter',
  'Klein', 'Wolf', 'Schröder', 'Neumann', 'Schwarz', 'Zimmermann', 'Braun', 'Krüger', 'Hartmann', 'Lange', 'Werner',
  'Krause', 'Lehmann', 'Köhler', 'Herrmann', 'König', 'Walter', 'Huber', 'Kaiser', 'Fuchs', 'Peters', 'Scholz', 'Möller',
  'Weiß', 'Jung', 'Hahn', 'Vogel', 'Friedrich', 'Keller', 'Günther', 'Berger', 'Winkler', 'Roth', 'Beck', 'Lorenz',
  'Baumann', 'Albrecht', 'Sonnenhof', 'Alpenblick', 'Rheintal', 'Elbtal', 'Hanse', 'Bergland', 'Seeblick', 'Waldner',
  'Brandt', 'Dietrich', 'Engel', 'Graf', 'Haas', 'Jäger', 'Kühn', 'Ludwig', 'Marx', 'Otto', 'Pohl', 'Sauer', 'Thiel',
];
const DE_INDUSTRIES = [
  'Logistik', 'Maschinenbau', 'Handels', 'Elektrotechnik', 'Bau', 'Metallbau', 'Transporte', 'Spedition', 'Druckerei',
  'Verpackung', 'Automation', 'Kunststofftechnik', 'Lebensmittel', 'Gebäudetechnik', 'Software', 'Medizintechnik',
  'Werkzeugbau', 'Agrarhandel', 'Holzbau', 'Antriebstechnik', 'Stahlhandel', 'Baustoffe', 'Sanitär', 'Feinmechanik',
];

const STYLES: Record<string, NameStyle> = {
  DE: { bases: DE_BASES, industries: DE_INDUSTRIES, forms: ['GmbH', 'GmbH', 'GmbH', 'GmbH & Co. KG', 'AG', 'KG', 'e.K.', 'SE'] },
  AT: { bases: DE_BASES, industries: DE_INDUSTRIES, forms: ['GmbH', 'GmbH', 'AG', 'KG', 'OG'] },
  CH: { bases: [...DE_BASES.slice(0, 30), 'Brunner', 'Gerber', 'Steiner', 'Zürcher', 'Bühler'], industries: DE_INDUSTRIES, forms: ['AG', 'AG', 'GmbH', 'SA'] },
  FR: {
    bases: ['Dupont', 'Martin', 'Bernard', 'Lefebvre', 'Moreau', 'Laurent', 'Girard', 'Roux', 'Fournier', 'Mercier', 'Blanc', 'Garnier', 'Chevalier', 'Lambert', 'Bonnet', 'Faure', 'Rousseau', 'Vincent'],
    industries: ['Emballages', 'Transports', 'Industrie', 'Distribution', 'Logistique', 'Matériaux', 'Équipements', 'Services', 'Mécanique'],
    forms: ['SAS', 'SAS', 'SA', 'SARL'],
    industryFirst: 0.5,
  },
  NL: {
    bases: ['Van der Berg', 'De Vries', 'Jansen', 'Bakker', 'Visser', 'Smit', 'Meijer', 'De Boer', 'Mulder', 'De Groot', 'Van Dijk', 'Hendriks'],
    industries: ['Transport', 'Techniek', 'Handel', 'Logistiek', 'Installatietechniek', 'Groothandel', 'Verpakkingen'],
    forms: ['B.V.', 'B.V.', 'N.V.'],
  },
  BE: { bases: ['Peeters', 'Janssens', 'Maes', 'Jacobs', 'Mertens', 'Willems', 'Claes', 'Goossens'], industries: ['Logistics', 'Techniek', 'Distribution', 'Bouw'], forms: ['BV', 'NV', 'SRL'] },
  IT: { bases: ['Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi', 'Romano', 'Colombo', 'Ricci', 'Marino', 'Greco'], industries: ['Trasporti', 'Meccanica', 'Imballaggi', 'Forniture', 'Elettronica'], forms: ['S.r.l.', 'S.r.l.', 'S.p.A.'] },
  ES: { bases: ['García', 'Fernández', 'López', 'Martínez', 'Sánchez', 'Pérez', 'Gómez'], industries: ['Logística', 'Suministros', 'Industrial', 'Transportes'], forms: ['S.L.', 'S.A.'] },
  GB: {
    bases: ['Thompson', 'Harris', 'Clarke', 'Walker', 'Wright', 'Robinson', 'Hughes', 'Edwards', 'Green', 'Hall', 'Wood', 'Turner', 'Bailey', 'Cooper'],
    industries: ['Supplies', 'Engineering', 'Logistics', 'Distribution', 'Packaging', 'Components', 'Trading'],
    forms: ['Ltd', 'Ltd', 'Limited', 'PLC'],
  },
  US: {
    bases: ['Anderson', 'Miller', 'Johnson', 'Carter', 'Bennett', 'Parker', 'Reed', 'Brooks', 'Hayes', 'Sullivan', 'Foster', 'Morgan'],
    industries: ['Industries', 'Supply', 'Manufacturing', 'Logistics', 'Technologies', 'Components', 'Materials'],
    forms: ['Inc.', 'Inc.', 'LLC', 'Corp.'],
  },
};

export function companyName(r: Rng, country: string): { base: string; industry: string; form: string; name: string } {
  const s = STYLES[country] ?? STYLES.DE!;
  const base = r.pick(s.bases);
  const industry = r.pick(s.industries);
  const form = r.pick(s.forms);
  const core = s.industryFirst && r.chance(s.industryFirst) ? `${industry} ${base}` : `${base} ${industry}`;
  return { base, industry, form, name: `${core} ${form}` };
}

/**
 * The look-alike of a name: the same company core with another legal form ("… GmbH" / "… AG"),
 * or a one-word variant ("Handels" / "Handel", "Transporte" / "Transport").
 */
export function lookAlikeOf(r: Rng, name: string, country: string): string {
  const forms = (STYLES[country] ?? STYLES.DE!).forms;
  const variants: [RegExp, string][] = [[/Handels\b/, 'Handel'], [/Transporte\b/, 'Transport'], [/Logistik\b/, 'Logistics'], [/Bau\b/, 'Bauten']];
  const word = variants.find(([re]) => re.test(name));
  if (word && r.chance(0.5)) return name.replace(word[0], word[1]);
  const current = forms.find((f) => name.endsWith(` ${f}`));
  const other = forms.filter((f) => f !== current);
  const core = current ? name.slice(0, -current.length - 1) : name;
  return `${core} ${other.length ? r.pick(other) : 'Holding'}`;
}

const TRANSLIT: Record<string, string> = { ä: 'ae', ö: 'oe', ü: 'ue', Ä: 'AE', Ö: 'OE', Ü: 'UE', ß: 'ss' };

/** How a bank line spells a payer's name: as registered, upper-cased and transliterated, without legal form, or truncated. */
export type NameForm = 'as_registered' | 'upper_transliterated' | 'without_legal_form' | 'truncated';

export function payerName(name: string, form: NameForm, r: Rng): string {
  const upper = () =>
    name
      .replace(/[äöüÄÖÜß]/g, (c) => TRANSLIT[c]!)
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toUpperCase();
  switch (form) {
    case 'as_registered':
      return name;
    case 'upper_transliterated':
      return upper();
    case 'without_legal_form':
      return name.replace(/\s+(GmbH & Co\. KG|GmbH|AG|KG|e\.K\.|SE|OG|SAS|SA|SARL|B\.V\.|N\.V\.|BV|NV|SRL|S\.r\.l\.|S\.p\.A\.|S\.L\.|S\.A\.|Ltd|Limited|PLC|Inc\.|LLC|Corp\.)$/, '');
    case 'truncated': {
      // banks cut the debtor name at their field length (often 20 to 27 characters), mid-word
      const u = upper();
      const cut = Math.min(u.length - 1, r.int(18, 22));
      return u.slice(0, cut).trimEnd();
    }
  }
}

/** Suppliers, card acquirers and banks whose credits reach the account and are not customer payments. */
export const SUPPLIERS = ['Würth Industrie Service GmbH', 'Office Depot Deutschland GmbH', 'Deutsche Telekom AG', 'Allianz Versicherungs-AG', 'Shell Deutschland GmbH', 'DB Schenker AG', 'Finanzamt München'];
export const ACQUIRERS: { name: string; text: (r: Rng) => string; code: string }[] = [
  { name: 'Stripe Payments Europe Ltd', text: (r) => `STRIPE PAYOUT PO_1${r.letters(3)}${r.digits(4)}${r.letters(2)}${r.digits(6)}`, code: 'PMNT/RCDT/ESCT' },
  { name: 'Adyen N.V.', text: (r) => `ADYEN SETTLEMENT BATCH ${r.int(1000, 9999)} MERCHANT RECEIVABLES`, code: 'PMNT/MCRD/POSP' },
  { name: 'PayPal (Europe) S.a r.l. et Cie', text: (r) => `PP.${r.digits(4)}.PP AUSZAHLUNG PAYPAL`, code: 'PMNT/RCDT/ESCT' },
  { name: 'SumUp Payments Ltd', text: (r) => `SUMUP PAYOUT ${r.digits(8)}`, code: 'PMNT/MCRD/POSP' },
];
