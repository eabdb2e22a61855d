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
const TITLE =
  /\b(manager|director|head|officer|accountant|clerk|specialist|assistant|controller|treasurer|analyst|accounts payable|accounting|finance|financial|department|team|ceo|cfo|buchhaltung|kreditorenbuchhaltung|finanzbuchhaltung|leiter(in)?|sachbearbeiter(in)?|abteilung|comptabilit[ée]|comptable|responsable|service|contabilidad|contable|departamento|jefe|boekhouding|crediteurenadministratie|administratie|afdeling|medewerker)\b/i;

function fromDisplayName(from: MailAddress | null): string | null {
  const name = from?.name?.trim();
  if (!name) return null;
  const parts = name.split(/\s+[|–—-]\s+|\s*[(),]\s*/).map((p) => p.trim()).filter(Boolean);
  return parts.find((p) => LEGAL_FORM.test(p)) ?? null;
}

/** The signature company, or null when the signature names none. */
export function readSignatureCompany(own: string, from: MailAddress | null): string | null {
  const lines = own.split('\n').map((l) => l.trim());
  let start = -1;
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    if (CLOSING.test(fold(lines[i]))) {
      start = i;
      break;
    }
  }
  const block = start >= 0 ? lines.slice(start + 1, start + 10) : lines.slice(-6);
  const candidates = block.filter((l) => l && l.length <= 80 && !/^--\s*$/.test(l));
  const legal = candidates.find((l) => LEGAL_FORM.test(l) && !CONTACT.test(l.replace(LEGAL_FORM, '')));
  if (legal) return legal.replace(/^[-|•·\s]+|[-|•·\s]+$/g, '').split(/\s+[|•·]\s+/).find((p) => LEGAL_FORM.test(p)) ?? legal;
  const display = fromDisplayName(from);
  if (display) return display;
  if (start < 0) return null;
  // "Name / Title / Company": the first line after the name that is no title and no contact detail
  const rest = candidates.slice(1).filter((l) => !CONTACT.test(l) && !TITLE.test(l) && /^[A-Z0-9ÄÖÜÉÈÀ]/.test(l) && l.split(/\s+/).length <= 6 && !/\d{4,}/.test(l));
  return rest[0] ?? null;
}
