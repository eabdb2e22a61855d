/**
 * A small strict reader for SWIFT MT940 (Customer Statement Message). Tags read: :20: transaction
 * reference, :25: account, :28C: statement/sequence number, :60F:/:60M: opening balance, :61: statement
 * line, :86: information to account owner (attached to the :61: before it), :62F:/:62M: closing
 * balance; :21:, :64:, :65: are accepted and ignored. :61: marks C/D are credit/debit, RC/RD reversal
 * of credit (a debit) / reversal of debit (a credit); dates are YYMMDD (optional MMDD entry date =
 * booking date); amounts use a decimal comma. :86: text is read for the counterparty when it uses the
 * `?NN` subfields (German banks) or the `/NAME/ /IBAN/ /REMI/ /EREF/` codes; otherwise all of it is
 * the remittance information.
 *
 * A file holds one or more statements, each starting at its :20: (a month of daily statements is the
 * usual export); each becomes one ParsedStatement. What banks wrap messages in is removed: header lines
 * before a message (ING `0000 01INGBNL2AXXXX00001` / `940 00`, ABN AMRO `ABNANL2A` / `940` / `ABNANL2A`,
 * Rabobank `:940:`), SWIFT envelopes `{1:…}{2:…}{3:…}{4:` … `-}{5:…}` (one per message) and the SOH
 * (U+0001) / ETX (U+0003) bytes around them, message terminators `-` and `-XXX`. An MT942 interim
 * report (envelope `{2:I942…}`, a `942` header, or its fields :13D: / :34F: / :90D: / :90C:) is refused
 * as MT942. ING writes the envelope's blocks on lines of their own (`{1:…}`, `{2:…}`, `{4:`); German banks
 * put a blank between the :61: amount and the transaction type (`D12,35 NRTI`). A currency after the
 * account in :25: (`NL20INGB0001234567EUR`) is the account currency.
 * Errors name the line, and control characters in it visibly (`U+0001`).
 */
/* eslint-disable no-control-regex -- control characters (SOH, ETX, C0/C1) are what these expressions look for */
import { isIsoCurrency } from '@rp/platform';
import {
  calendarDate,
  decimal,
  fixed,
  inMinorUnits,
  looksLikeIban,
  PARSE_BATCH,
  runParse,
  StatementParseError,
  text,
  yymmdd,
  type ParseSteps,
  type ParsedFile,
  type ParsedStatement,
  type ParsedTransaction,
} from './types.js';

interface Field {
  tag: string;
  value: string;
  line: number;
}

/** Control characters (C0 other than tab, DEL, C1) written visibly: `U+0001`. */
export function visible(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const MT942 =
  'the file is an MT942 interim transaction report, not an MT940 customer statement: MT942 carries no opening and closing ' +
  'balances and is not imported; upload the MT940 end-of-day statement';

/**
 * Lines banks put before (or between) messages, outside any field: ING `0000 01INGBNL2AXXXX00001` and
 * `940 00`, ABN AMRO's BIC / `940` / BIC header, Rabobank's `:940:` first line. `mt942` when the
 * header names an MT942.
 */
function bankHeader(l: string): 'header' | 'mt942' | null {
  if (/^:?942:?$/.test(l) || /^942( \d{2})?$/.test(l)) return 'mt942';
  if (/^:940:$/.test(l) || /^940( \d{2})?$/.test(l)) return 'header';
  if (/^0000 \d{2}[A-Z]{6}[A-Z0-9]{2}[A-Z0-9]*$/.test(l)) return 'header';
  if (/^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(l)) return 'header';
  return null;
}

/** Reads `{n:…}` blocks (nested braces allowed) from the start of `l`; returns them and the rest. */
function envelopeBlocks(l: string): { blocks: { id: string; body: string }[]; rest: string } {
  const blocks: { id: string; body: string }[] = [];
  let i = 0;
  while (l[i] === '{') {
    const m = /^\{([0-9A-Z]):/.exec(l.slice(i));
    if (!m) break;
    if (m[1] === '4') {
      blocks.push({ id: '4', body: '' });
      return { blocks, rest: l.slice(i + 3) };
    }
    let depth = 0;
    let j = i;
    for (; j < l.length; j++) {
      if (l[j] === '{') depth++;
      else if (l[j] === '}' && --depth === 0) break;
    }
    if (depth !== 0) break;
    blocks.push({ id: m[1], body: l.slice(i + 3, j) });
    i = j + 1;
  }
  return { blocks, rest: l.slice(i) };
}

/**
 * The fields of the file, in order, with their lines. Removes what wraps the messages: bank header
 * lines, SWIFT envelopes (`{1:…}{2:…}{3:…}{4:` … `-}{5:…}`), the SOH (U+0001) and ETX (U+0003) bytes
 * of a SWIFT transmission around them, and message terminators (`-`, ING's `-XXX`).
 */
function fields(content: string): Field[] {
  const lines = content.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  const out: Field[] = [];
  // inside a message: a line that is not a tag continues the field before it
  let open = false;
  // the line of an envelope's first block while its text block ({4:) has not come yet
  let envelope: number | null = null;
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const fail = (problem: string): never => {
      throw new StatementParseError(`line ${n}`, problem);
    };
    // SOH opens and ETX closes a message in a SWIFT transmission
    let l = lines[i].trimEnd().replace(/^[\u0001\u0003]+/, '').replace(/[\u0001\u0003]+$/, '').trimEnd();
    if (l === '') continue;
    if (l.startsWith('-}') || /^-(XXX)?$/.test(l)) {
      open = false;
      // the trailer blocks ({5:…}, {S:…}) after the end of the text block; maybe the next message's envelope
      l = (l.startsWith('-}') ? l.slice(2) : '').replace(/^(\{[5S]:(?:[^{}]|\{[^{}]*\})*\})+/, '').replace(/^[\u0001\u0003]+/, '').trim();
      if (l === '') continue;
    }
    // The envelope's blocks on one line, or each on its own line (ING: `{1:…}`, `{2:…}`, then `{4:`).
    if (/^\{[1-4]:/.test(l) && (!open || l.startsWith('{1:') || l.startsWith('{2:'))) {
      const { blocks, rest } = envelopeBlocks(l);
      const app = blocks.find((b) => b.id === '2');
      const type = app ? /^[IO](\d{3})/.exec(app.body)?.[1] : undefined;
      if (type === '942') fail(MT942);
      if (type && type !== '940') fail(`the SWIFT envelope holds an MT${type} message, not an MT940 customer statement`);
      if (!blocks.some((b) => b.id === '4')) {
        if (rest.trim() !== '') fail(`the SWIFT envelope "${visible(l.slice(0, 40))}" has no text block ({4:) before "${visible(rest.trim().slice(0, 20))}"`);
        envelope = envelope ?? n;
        open = false;
        continue;
      }
      envelope = null;
      open = true;
      l = rest.trimEnd();
      if (l === '') continue;
    }
    if (envelope !== null) fail(`the SWIFT envelope opened on line ${envelope} has no text block ({4:) before this line`);
    const control = CONTROL.exec(l);
    if (control) fail(`control character ${visible(control[0])} in "${visible(l.slice(0, 40))}"`);
    const m = /^:(\d{2}[A-Z]?):(.*)$/.exec(l);
    if (m) {
      if (['13', '13D', '34F', '90C', '90D'].includes(m[1])) fail(`${MT942} (field :${m[1]}: belongs to MT942)`);
      out.push({ tag: m[1], value: m[2], line: n });
      open = true;
      continue;
    }
    if (!open) {
      const header = bankHeader(l);
      if (header === 'mt942') fail(MT942);
      if (header === 'header') continue;
    }
    if (out.length && open) {
      out[out.length - 1].value += `\n${l}`;
      continue;
    }
    fail(
      `"${visible(l.slice(0, 30))}" is not an MT940 :tag: field, nor a bank header line (ING \`0000 01<BIC>…\` / \`940 00\`, ` +
        'ABN AMRO <BIC> / `940`, Rabobank `:940:`) or a SWIFT envelope (`{1:…}{2:…}{4:`)',
    );
  }
  if (envelope !== null) throw new StatementParseError(`line ${envelope}`, 'the SWIFT envelope has no text block ({4:)');
  return out;
}

function balance(f: Field): { amount: string; currency: string; date: string } {
  const where = `line ${f.line}`;
  const m = /^([CD])(\d{6})([A-Z]{3})(\d+,\d*)$/.exec(f.value.trim());
  if (!m) throw new StatementParseError(where, `:${f.tag}: "${f.value}" is not <C|D><YYMMDD><currency><amount>`);
  if (!isIsoCurrency(m[3])) throw new StatementParseError(where, `currency "${m[3]}" is not an ISO 4217 currency`);
  const v = inMinorUnits(decimal(m[4].replace(',', '.'), where), m[4], m[3], where);
  return { amount: fixed(m[1] === 'C' ? v : v.neg()), currency: m[3], date: yymmdd(m[2], where) };
}

const INFO_CODES = 'NAME|REMI|IBAN|EREF|BIC|TRTP|CNTP|ORDP|BENM|ID|ADDR|SVCL|MARF|CSID|RTRN|ISDT|PURP|ULTC|ULTD|EXCH|CHGS|SUM|TRCD|CDTRREF|CDTRREFTP';

function info86(raw: string) {
  const flat = raw.replace(/\n/g, '');
  if (/\?\d{2}/.test(flat)) {
    const sub: Record<string, string[]> = {};
    for (const m of flat.matchAll(/\?(\d{2})([^?]*)/g)) (sub[m[1]] ??= []).push(m[2]);
    const pick = (...keys: string[]) => text(keys.flatMap((k) => sub[k] ?? []).join(''));
    const remit = ['20', '21', '22', '23', '24', '25', '26', '27', '28', '29', '60', '61', '62', '63'].flatMap((k) => sub[k] ?? []).join(' ');
    const account = pick('31');
    return { name: pick('32', '33'), account, iban: looksLikeIban(account) ? account!.replace(/\s+/g, '').toUpperCase() : null, bank: pick('30'), remittance: text(remit), eref: null };
  }
  if (/\/(NAME|REMI|IBAN|EREF|CNTP)\//.test(flat)) {
    // the structured codes of Dutch banks (ING, ABN AMRO, Rabobank) and the SEPA MT940 guidelines
    const get = (code: string) => {
      const m = new RegExp(`/${code}/(.*?)(?=/(?:${INFO_CODES})/|$)`).exec(flat);
      return m ? text(m[1].replace(/\/+$/, '')) : null;
    };
    // ING: /CNTP/<account>/<BIC>/<name>/<city>/
    const [cpAccount, cpBic, cpName] = (get('CNTP') ?? '').split('/').map((v) => text(v));
    const iban = get('IBAN') ?? cpAccount ?? null;
    // /REMI/USTD//<text>/ (unstructured) or /REMI/STRD/CUR/<creditor reference>/
    const remi = get('REMI')?.replace(/^USTD\/\//, '').replace(/^STRD\/[A-Z]{3,4}\//, '') ?? null;
    return {
      name: get('NAME') ?? cpName ?? null,
      account: iban,
      iban: looksLikeIban(iban) ? iban!.replace(/\s+/g, '').toUpperCase() : null,
      bank: get('BIC') ?? cpBic ?? null,
      remittance: text(remi),
      eref: get('EREF'),
    };
  }
  return { name: null, account: null, iban: null, bank: null, remittance: text(raw.replace(/\n/g, ' ')), eref: null };
}

export function parseMt940(content: Buffer): ParsedFile {
  return runParse(parseMt940Steps(content));
}

/** parseMt940 as ParseSteps (yields every PARSE_BATCH fields). */
export function* parseMt940Steps(content: Buffer): ParseSteps {
  const fs = fields(content.toString('utf8'));
  if (fs.length === 0) throw new StatementParseError('line 1', 'the file has no MT940 fields');
  if (fs[0].tag !== '20') throw new StatementParseError(`line ${fs[0].line}`, `:${fs[0].tag}: before the first :20: (a statement starts with its transaction reference :20:)`);
  // one statement per :20: (a month of daily statements is one file)
  const groups: Field[][] = [];
  for (const f of fs) {
    if (f.tag === '20') groups.push([]);
    groups[groups.length - 1].push(f);
  }
  const statements: ParsedStatement[] = [];
  let done = 0;
  for (const g of groups) {
    statements.push(yield* statementOf(g, done));
    done += g.length;
  }
  return { statements };
}

/** IBAN check digits (ISO 13616 mod 97). */
function ibanValid(v: string): boolean {
  if (!looksLikeIban(v)) return false;
  const moved = (v.slice(4) + v.slice(0, 4)).toUpperCase().replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let r = 0;
  for (const d of moved) r = (r * 10 + Number(d)) % 97;
  return r === 1;
}

/**
 * :25: account identification: an IBAN or `<bank code>/<account>`, which some banks (ING) follow with
 * the account currency (`NL20INGB0001234567EUR`). The currency is split off when what precedes it is
 * a valid IBAN or ends with a digit (and the whole is not itself a valid IBAN).
 */
function accountOf(f: Field) {
  const raw = f.value.trim().replace(/\s+/g, '');
  if (!raw) throw new StatementParseError(`line ${f.line}`, 'account identification is empty');
  let id = raw;
  let currency: string | null = null;
  const m = /^(.*[0-9])([A-Z]{3})$/.exec(raw);
  if (m && isIsoCurrency(m[2]) && !ibanValid(raw) && (ibanValid(m[1]) || !looksLikeIban(m[1]))) {
    id = m[1];
    currency = m[2];
  }
  const first = id.split('/')[0];
  const iban = looksLikeIban(first) ? first.toUpperCase() : null;
  return { id, iban, currency };
}

function* statementOf(fs: Field[], offset: number): Generator<number, ParsedStatement, void> {
  const ref = fs[0];
  const first = (tag: RegExp) => fs.find((f) => tag.test(f.tag));
  const need = (tag: RegExp, name: string) => {
    const f = first(tag);
    if (!f) throw new StatementParseError(`line ${fs[fs.length - 1].line + 1}`, `missing :${name}: field in the statement of :20: ${text(ref.value) ?? ''} (line ${ref.line})`);
    return f;
  };
  const acct = accountOf(need(/^25P?$/, '25'));
  const opening = balance(need(/^60[FM]$/, '60F'));
  const closingField = need(/^62[FM]$/, '62F');
  const closing = balance(closingField);
  if (closing.currency !== opening.currency) throw new StatementParseError(`line ${closingField.line}`, `closing balance currency ${closing.currency} differs from the opening balance's ${opening.currency}`);
  const currency = acct.currency ?? opening.currency;

  const transactions: ParsedTransaction[] = [];
  let last: ParsedTransaction | null = null;
  for (let n = 0; n < fs.length; n++) {
    if ((offset + n) % PARSE_BATCH === 0 && offset + n > 0) yield offset + n;
    const f = fs[n];
    const where = `line ${f.line}`;
    if (f.tag === '61') {
      const [head, ...supplementary] = f.value.split('\n');
      const m = /^(\d{6})(\d{4})?(RC|RD|C|D)([A-Z])?(\d+,\d*) ?([NFS][A-Z0-9]{3})(.*)$/.exec(head.trim());
      // German banks' exports put a blank between the amount and the type (`D12,35 NRTI`): accepted.
      if (!m) throw new StatementParseError(where, `:61: "${visible(head)}" is not <YYMMDD>[MMDD]<C|D|RC|RD>[funds code]<amount><N|F|S + type><reference>`);
      const valueDate = yymmdd(m[1], where);
      let bookingDate = valueDate;
      if (m[2]) {
        let year = Number(valueDate.slice(0, 4));
        const vm = Number(valueDate.slice(5, 7));
        const em = Number(m[2].slice(0, 2));
        if (vm === 12 && em === 1) year += 1;
        if (vm === 1 && em === 12) year -= 1;
        bookingDate = calendarDate(year, em, Number(m[2].slice(2, 4)), where, m[2]);
      }
      const mark = m[3];
      const credit = mark === 'C' || mark === 'RD';
      const v = inMinorUnits(decimal(m[5].replace(',', '.'), where), m[5], opening.currency, where);
      const [custRef, bankRef] = m[7].split('//');
      // supplementary details (subfield 9, the line after): a counterparty IBAN (Rabobank) or a note
      const extra = text(supplementary.join(' '));
      const extraIban = extra && looksLikeIban(extra) ? extra.replace(/\s+/g, '').toUpperCase() : null;
      const t: ParsedTransaction = {
        amount: fixed(credit ? v : v.neg()),
        currency: opening.currency,
        valueDate,
        bookingDate,
        counterpartyName: null,
        counterpartyAccount: null,
        counterpartyIban: null,
        counterpartyBankCode: null,
        remittanceInformation: null,
        bankReference: text(bankRef),
        // `NONREF`: no reference; ING's `EREF`: the end-to-end id is in :86: /EREF/
        endToEndId: ((c) => (c && c !== 'NONREF' && c !== 'EREF' ? c : null))(text(custRef)),
        transactionCode: `${mark.startsWith('R') ? 'R:' : ''}${m[6]}`,
      };
      if (extraIban) {
        t.counterpartyAccount = extraIban;
        t.counterpartyIban = extraIban;
      } else t.remittanceInformation = extra;
      transactions.push(t);
      last = t;
    } else if (f.tag === '86') {
      if (!last) continue; // statement-level information
      const info = info86(f.value);
      last.counterpartyName = info.name ?? last.counterpartyName;
      last.counterpartyAccount = info.account ?? last.counterpartyAccount;
      last.counterpartyIban = info.iban ?? last.counterpartyIban;
      last.counterpartyBankCode = info.bank;
      // the :86: text, else the :61: supplementary details
      last.remittanceInformation = info.remittance ?? last.remittanceInformation;
      if (info.eref && info.eref !== 'NOTPROVIDED') last.endToEndId = info.eref;
      last = null;
    } else if (!['20', '21', '25', '25P', '28', '28C', '60F', '60M', '62F', '62M', '64', '65'].includes(f.tag)) {
      throw new StatementParseError(where, `:${f.tag}: is not an MT940 field`);
    } else {
      if (n > 0 && ['20', '25', '25P', '28', '28C', '60F', '60M', '62F', '62M'].includes(f.tag) && first(new RegExp(`^${f.tag}$`)) !== f) {
        throw new StatementParseError(where, `a second :${f.tag}: in the statement of :20: ${text(ref.value) ?? ''} (line ${ref.line})`);
      }
      last = null;
    }
  }
  return {
    account: { identifier: acct.iban ?? acct.id, iban: acct.iban, accountNumber: acct.id, bankCode: acct.id.includes('/') ? acct.id.split('/')[0] : null, currency, name: null },
    statementNumber: text(first(/^28C?$/)?.value) ?? text(ref.value),
    statementDate: closing.date,
    openingBalance: opening.amount,
    closingBalance: closing.amount,
    currency,
    balanceCurrency: opening.currency,
    transactions,
    source: `line ${ref.line}`,
  };
}
