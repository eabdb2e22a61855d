/**
 * A small strict reader for SWIFT MT940 (Customer Statement Message). Tags read: :20: transaction
 * reference, :25: account, :28C: statement/sequence number, :60F:/:60M: opening balance, :61: statement
 * line, :86: information to account owner (attached to the :61: before it), :62F:/:62M: closing
 * balance; :21:, :64:, :65: are accepted and ignored. An optional SWIFT envelope ({1:..}{2:..}{4: .. -})
 * is removed. :61: marks C/D are credit/debit, RC/RD reversal of credit (a debit) / reversal of debit
 * (a credit); dates are YYMMDD (optional MMDD entry date = booking date); amounts use a decimal comma.
 * :86: text is read for the counterparty when it uses the `?NN` subfields (German banks) or the
 * `/NAME/ /IBAN/ /REMI/ /EREF/` codes; otherwise all of it is the remittance information.
 * One statement (one :20:) per upload. Errors name the line.
 */
import { isIsoCurrency } from '@rp/platform';
import {
  calendarDate,
  decimal,
  fixed,
  looksLikeIban,
  PARSE_BATCH,
  runParse,
  StatementParseError,
  text,
  yymmdd,
  type ParseSteps,
  type ParsedFile,
  type ParsedTransaction,
} from './types.js';

interface Field {
  tag: string;
  value: string;
  line: number;
}

function fields(content: string): Field[] {
  let body = content.replace(/^\uFEFF/, '');
  let offset = 0;
  const envelope = body.indexOf('{4:');
  if (envelope >= 0) {
    offset = body.slice(0, envelope + 3).split(/\r?\n/).length - 1;
    body = body.slice(envelope + 3);
    const end = body.lastIndexOf('-}');
    if (end >= 0) body = body.slice(0, end);
  }
  const out: Field[] = [];
  body.split(/\r?\n/).forEach((raw, i) => {
    const lineNo = i + 1 + offset;
    const l = raw.trimEnd();
    if (l === '' || l === '-') return;
    const m = /^:(\d{2}[A-Z]?):(.*)$/.exec(l);
    if (m) out.push({ tag: m[1], value: m[2], line: lineNo });
    else if (out.length) out[out.length - 1].value += `\n${l}`;
    else throw new StatementParseError(`line ${lineNo}`, `"${l.slice(0, 20)}" is not a :tag: field`);
  });
  return out;
}

function balance(f: Field): { amount: string; currency: string; date: string } {
  const where = `line ${f.line}`;
  const m = /^([CD])(\d{6})([A-Z]{3})(\d+,\d*)$/.exec(f.value.trim());
  if (!m) throw new StatementParseError(where, `:${f.tag}: "${f.value}" is not <C|D><YYMMDD><currency><amount>`);
  if (!isIsoCurrency(m[3])) throw new StatementParseError(where, `currency "${m[3]}" is not an ISO 4217 currency`);
  const v = decimal(m[4].replace(',', '.'), where);
  return { amount: fixed(m[1] === 'C' ? v : v.neg()), currency: m[3], date: yymmdd(m[2], where) };
}

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
  if (/\/(NAME|REMI|IBAN|EREF)\//.test(flat)) {
    const get = (code: string) => {
      const m = new RegExp(`/${code}/(.*?)(?=/(?:NAME|REMI|IBAN|EREF|BIC|TRTP|CNTP|ORDP|BENM|ID|ADDR|SVCL|MARF|CSID|RTRN)/|$)`).exec(flat);
      return m ? text(m[1]) : null;
    };
    const iban = get('IBAN');
    return { name: get('NAME'), account: iban, iban: looksLikeIban(iban) ? iban!.replace(/\s+/g, '').toUpperCase() : null, bank: get('BIC'), remittance: get('REMI'), eref: get('EREF') };
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
  const first = (tag: RegExp) => fs.find((f) => tag.test(f.tag));
  const need = (tag: RegExp, name: string) => {
    const f = first(tag);
    if (!f) throw new StatementParseError(`line ${fs[fs.length - 1].line + 1}`, `missing :${name}: field`);
    return f;
  };
  const twenties = fs.filter((f) => f.tag === '20');
  if (twenties.length > 1) throw new StatementParseError(`line ${twenties[1].line}`, 'one statement (:20:) per upload');
  const ref = need(/^20$/, '20');
  const acct = need(/^25[P]?$/, '25');
  const opening = balance(need(/^60[FM]$/, '60F'));
  const closingField = need(/^62[FM]$/, '62F');
  const closing = balance(closingField);
  const currency = opening.currency;
  if (closing.currency !== currency) throw new StatementParseError(`line ${closingField.line}`, `closing balance currency ${closing.currency} differs from the opening balance's ${currency}`);
  const accountId = acct.value.trim().replace(/\s+/g, '');
  if (!accountId) throw new StatementParseError(`line ${acct.line}`, 'account identification is empty');
  const ibanish = looksLikeIban(accountId.split('/')[0]) ? accountId.split('/')[0].toUpperCase() : null;

  const transactions: ParsedTransaction[] = [];
  let last: ParsedTransaction | null = null;
  for (let n = 0; n < fs.length; n++) {
    if (n > 0 && n % PARSE_BATCH === 0) yield n;
    const f = fs[n];
    const where = `line ${f.line}`;
    if (f.tag === '61') {
      const [head, ...supplementary] = f.value.split('\n');
      const m = /^(\d{6})(\d{4})?(RC|RD|C|D)([A-Z])?(\d+,\d*)([NFS][A-Z0-9]{3})(.*)$/.exec(head.trim());
      if (!m) throw new StatementParseError(where, `:61: "${head}" is not <YYMMDD>[MMDD]<C|D|RC|RD>[funds code]<amount><N|F|S + type><reference>`);
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
      const v = decimal(m[5].replace(',', '.'), where);
      const [custRef, bankRef] = m[7].split('//');
      const t: ParsedTransaction = {
        amount: fixed(credit ? v : v.neg()),
        currency,
        valueDate,
        bookingDate,
        counterpartyName: null,
        counterpartyAccount: null,
        counterpartyIban: null,
        counterpartyBankCode: null,
        remittanceInformation: text(supplementary.join(' ')),
        bankReference: text(bankRef),
        endToEndId: ((c) => (c && c !== 'NONREF' ? c : null))(text(custRef)),
        transactionCode: `${mark.startsWith('R') ? 'R:' : ''}${m[6]}`,
      };
      transactions.push(t);
      last = t;
    } else if (f.tag === '86') {
      if (!last) continue; // statement-level information
      const info = info86(f.value);
      last.counterpartyName = info.name;
      last.counterpartyAccount = info.account;
      last.counterpartyIban = info.iban;
      last.counterpartyBankCode = info.bank;
      last.remittanceInformation = [info.remittance, last.remittanceInformation].filter(Boolean).join(' ') || null;
      if (info.eref && info.eref !== 'NOTPROVIDED') last.endToEndId = info.eref;
      last = null;
    } else if (!['20', '21', '25', '25P', '28', '28C', '60F', '60M', '62F', '62M', '64', '65'].includes(f.tag)) {
      throw new StatementParseError(where, `:${f.tag}: is not an MT940 field`);
    } else {
      last = null;
    }
  }
  return {
    statements: [
      {
        account: { identifier: ibanish ?? accountId, iban: ibanish, accountNumber: accountId, bankCode: accountId.includes('/') ? accountId.split('/')[0] : null, currency, name: null },
        statementNumber: text(need(/^28C?$/, '28C').value) ?? text(ref.value),
        statementDate: closing.date,
        openingBalance: opening.amount,
        closingBalance: closing.amount,
        currency,
        transactions,
      },
    ],
  };
}
