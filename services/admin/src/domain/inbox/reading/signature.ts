/**
 * The company in the sender's signature: the lines after a closing ("Kind regards", "Mit
 * freundlichen Grüßen", "Cordialement", "Saludos", "Met vriendelijke groet"), preferring a line with
 * a legal form (GmbH, Ltd, SARL, S.L., B.V., …); else the display name's "Name | Company" part. Pure.
 */
import type { MailAddress } from '../../../domain-types/inbox.js';
import { fold } from './text.js';

const CLOSING =
  /^(best regards|kind regards|warm regards|regards|best wishes|best|thanks( again)?|thank you|many thanks|cheers|sincerely|yours sincerely|yours faithfully|yours truly|mit freundlichen gru(s|ss)en|freundliche gru(s|ss)e|viele gru(s|ss)e|beste gru(s|ss)e|liebe gru(s|ss)e|herzliche gru(s|ss)e|gru(s|ss)e|mfg|vg|lg|cordialement|bien cordialement|salutations|bien a vous|sinceres salutations|meilleures salutations|salutations distinguees|saludos( cordiales)?|un saludo|atentamente|cordiales saludos|reciba un cordial saludo|met vriendelijke groet(en)?|vriendelijke groet(en)?|groet(en)?|mvg|hartelijke groet(en)?)\b[,.!]?\s*$/;
export const LEGAL_FORM =
  /(?:^|[\s,])(GmbH( & Co\.? KG)?|AG|KG|OHG|UG( \(haftungsbeschränkt\))?|e\.K\.|SE|Ltd\.?|Limited|LLC|L\.L\.C\.|Inc\.?|Corp\.?|Corporation|PLC|plc|LLP|S\.A\.S\.?|SAS|S\.A\.|SA|SARL|S\.à r\.l\.|SNC|EURL|S\.L\.U?\.?|SL|S\.p\.A\.|S\.r\.l\.|B\.V\.|BV|N\.V\.|NV|VOF|Pty Ltd|Oy|AB|A\/S|ApS)(?=$|[\s,.)])/;
const CONTACT = /(@|https?:|www\.|\+?\d[\d\s().-]{6,}|\b(tel|phone|fax|mobile|mob|telefon|telefoon|tél|tfno|e-?mail|web)\b)/i;
/** titles and departments (folded text) */
const TITLE =
  /\b(manager|director|head|officer|accountant|clerk|specialist|assistant|controller|treasurer|analyst|accounts( payable| receivable)?|accounting|finance|finances|financial|department|team|ceo|cfo|buchhaltung|kreditorenbuchhaltung|finanzbuchhaltung|rechnungswesen|finanzen|leiter(in)?|sachbearbeiter(in)?|abteilung|geschaftsfuhrer(in)?|inhaber(in)?|comptabilite|comptable|responsable|service|tresorerie|contabilidad|contable|departamento|jefe|finanzas|tesoreria|boekhouding|crediteurenadministratie|administratie|afdeling|medewerker|financien|sales|vertrieb|einkauf|purchasing|achats|compras|inkoop)\b/;
const CONNECTOR = /^(&|und|and|et|de|van|der|den|du|des|la|le|y|e|von|zu|het|of)$/i;
const CAPITALIZED = /^[A-ZÄÖÜÉÈÀÂÇÑ0-9][\p{L}\p{N}'’.&-]*$/u;

/** The company a line names by its legal form: the capitalized words just before the form ("… from Services Martin SAS." → "Services Martin SAS"). */
export function companyInLine(line: string): string | null {
  const m = LEGAL_FORM.exec(line);
  if (!m) return null;
  const formStart = m.index + (m[0].length - m[0].trimStart().length);
  const form = m[1]!;
  const words = line.slice(0, formStart).trim().split(/\s+/).filter(Boolean);
  const taken: string[] = [];
  for (let i = words.length - 1; i >= 0 && taken.length < 6; i -= 1) {
    const w = words[i]!.replace(/[,:;]$/, '');
    if (w !== words[i] && taken.length > 0) break;
    if (CAPITALIZED.test(w) || (CONNECTOR.test(w) && taken.length > 0)) taken.unshift(w);
    else break;
  }
  // a capitalized "De", "Van", "La" opens a name; a lower-case connector does not
  while (taken.length && CONNECTOR.test(taken[0]!) && taken[0] === taken[0]!.toLowerCase()) taken.shift();
  if (!taken.length) return null;
  // the full stop ending a sentence is not part of "Ltd" or "Inc"
  const sentence = words.length >= 5 && line.trimEnd().endsWith(form) && /^(Ltd|Inc|Corp)\.$/.test(form);
  return `${taken.join(' ')} ${sentence ? form.slice(0, -1) : form}`.trim();
}

function fromDisplayName(from: MailAddress | null): string | null {
  const name = from?.name?.trim();
  if (!name) return null;
  for (const part of name.split(/\s+[|–—-]\s+|\s*[(),]\s*/)) {
    const company = companyInLine(part.trim());
    if (company) return company;
  }
  return null;
}

/** The closing's line index (the last one in the text), or -1. */
function closingAt(lines: string[]): number {
  for (let i = lines.length - 1; i >= 0; i -= 1) if (CLOSING.test(fold(lines[i]!))) return i;
  return -1;
}

/** The signature company, or null when the signature names none. */
export function readSignatureCompany(own: string, from: MailAddress | null): string | null {
  const lines = own.split('\n').map((l) => l.trim());
  const start = closingAt(lines);
  // the signature: after the closing, else the last lines before a forwarded or quoted block
  const block = start >= 0 ? lines.slice(start + 1, start + 10) : lines.slice(-6);
  // "Label: value" lines are fields (a bank notice's beneficiary is us), not a signature
  const candidates = block.filter((l) => l && l.length <= 100 && !/^--\s*$/.test(l) && !l.includes(':') && !CONTACT.test(l.replace(LEGAL_FORM, '')));
  for (const l of candidates) {
    const company = companyInLine(l);
    if (company) return company;
  }
  const display = fromDisplayName(from);
  if (display) return display;
  // a notice without a closing ("You have received a payment advice from Services Martin SAS.")
  if (start < 0) {
    for (const l of lines.slice(0, 8)) {
      if (l.includes(':')) continue;
      const company = companyInLine(l);
      if (company && / from |\bvon |\bde la part de |\bvan /i.test(l)) return company;
    }
    return null;
  }
  // "Name / Title / Company": the first line after the name that is no title and no contact detail
  const rest = candidates.slice(1).filter((l) => !TITLE.test(fold(l)) && /^[A-Z0-9ÄÖÜÉÈÀ]/.test(l) && l.split(/\s+/).length <= 6 && !/\d{4,}/.test(l) && !/[.!?]$/.test(l));
  return rest[0] ?? null;
}
