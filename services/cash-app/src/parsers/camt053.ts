/**
 * ISO 20022 camt.053 (BankToCustomerStatement) and camt.054 (BankToCustomerDebitCreditNotification)
 * reader. The XML is read by saxes (a maintained, strict, well-formedness-checking streaming parser:
 * one pass, about 10x faster than a DOM-building parser on a 10,000-entry statement) into a light
 * tree of the elements. Accepts versions .001.02 to .001.13 (namespace prefixes are dropped; party
 * names are read both from `Dbtr/Nm` and the newer `Dbtr/Pty/Nm`). Each `Stmt` (camt.053) or
 * `Ntfctn` (camt.054: same account and entry structure, usually without balances) is one statement,
 * in document order (element paths then name it `Stmt[n]`). An
 * entry whose `NtryDtls/TxDtls` carries several transactions with their own amounts (batch booking)
 * becomes one transaction per `TxDtls`. A camt.052 account report (`BkToCstmrAcctRpt`) is an intraday
 * report, not a statement, and is refused saying so.
 *
 * Remittance information: `RmtInf` (unstructured lines, structured creditor references, referred
 * document numbers); without it the transaction's `AddtlTxInf`, and for an entry that is not split
 * into several transactions the entry's `AddtlNtryInf`.
 *
 * Dates (see camtDate): a date is taken as written; a date-time with a non-zero offset
 * (`2014-01-05T00:30:00+01:00`) or without one is the date as the bank wrote it (its local date);
 * a UTC date-time (`Z`, `+00:00`) is converted to the local date of the bank's time zone, known from
 * the account's country (IBAN, else the servicing BIC) for the SEPA countries, else its UTC date.
 *
 * Entries: only booked ones (`Sts` BOOK, written `<Sts>BOOK</Sts>` up to .001.07 and
 * `<Sts><Cd>BOOK</Cd></Sts>` from .001.08; an entry without `Sts` is taken as booked) are read;
 * pending, information-only and future entries are counted in `skipped.notBooked`. Balances: `OPBD`
 * opens, else `PRCD` (previous closing, as German banks send it); `CLBD` closes.
 *
 * A SWIFT MX message (the `AppHdr` business application header and the `Document` inside another
 * root element) is read from its `Document`; element paths then start at the root.
 *
 * Errors name the element path, e.g. `Document/BkToCstmrStmt/Stmt/Ntry[2]/Amt`, or the line of
 * XML that is not well-formed.
 */
import { SaxesParser } from 'saxes';
import { isIsoCurrency, sumMoney } from '@rp/platform';
import {
  decimal,
  fixed,
  inMinorUnits,
  isoDate,
  StatementParseError,
  PARSE_BATCH,
  runParse,
  text,
  type ParseSteps,
  type ParsedFile,
  type ParsedStatement,
  type ParsedTransaction,
} from './types.js';

type Node = Record<string, unknown>;

/** Elements that may repeat: always read as arrays. */
const ARRAYS = new Set(['Stmt', 'Ntfctn', 'Rpt', 'Bal', 'Ntry', 'NtryDtls', 'TxDtls', 'Ustrd', 'Strd', 'RfrdDocInf']);

const local = (name: string) => name.slice(name.indexOf(':') + 1);

/** Characters of XML handed to the streaming parser between two yields. */
const XML_CHUNK = 256 * 1024;

/**
 * The document as nested objects: child elements by local name, attributes as `@name`, text as `#text`.
 * The XML is fed to saxes in chunks, yielding between them (see ParseSteps).
 */
function* readXml(xml: string): Generator<number, Node, void> {
  const parser = new SaxesParser({ position: true });
  const root: Node = {};
  const stack: Node[] = [root];
  parser.on('opentag', (tag) => {
    const node: Node = {};
    for (const [k, v] of Object.entries(tag.attributes as Record<string, string>)) {
      if (k !== 'xmlns' && !k.startsWith('xmlns:')) node[`@${local(k)}`] = v;
    }
    const parent = stack[stack.length - 1];
    const name = local(tag.name);
    const existing = parent[name];
    if (existing === undefined) parent[name] = ARRAYS.has(name) ? [node] : node;
    else if (Array.isArray(existing)) existing.push(node);
    else parent[name] = [existing, node];
    stack.push(node);
  });
  const onText = (t: string) => {
    const node = stack[stack.length - 1];
    node['#text'] = ((node['#text'] as string | undefined) ?? '') + t;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    stack.pop();
  });
  const fail = (err: unknown) =>
    new StatementParseError(`line ${parser.line}`, `XML is not well-formed: ${(err as Error).message.replace(/^[^:]*:\d+:\d+: /, '')}`);
  let at = 0;
  while (at < xml.length) {
    let end = Math.min(xml.length, at + XML_CHUNK);
    // never split a surrogate pair between two chunks
    const last = xml.charCodeAt(end - 1);
    if (end < xml.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    try {
      parser.write(xml.slice(at, end));
    } catch (err) {
      throw fail(err);
    }
    at = end;
    yield parser.line;
  }
  try {
    parser.close();
  } catch (err) {
    throw fail(err);
  }
  return root;
}

function child(node: unknown, ...path: string[]): unknown {
  let cur: unknown = node;
  for (const p of path) {
    if (cur == null || typeof cur !== 'object') return undefined;
    cur = (cur as Node)[p];
    if (Array.isArray(cur)) cur = cur[0];
  }
  return cur;
}

function str(node: unknown, ...path: string[]): string | null {
  const v = child(node, ...path);
  if (v == null) return null;
  if (typeof v === 'object') return text((v as Node)['#text'] as string | undefined);
  return text(String(v as string | number));
}

function list(node: unknown, name: string): Node[] {
  if (node == null || typeof node !== 'object') return [];
  const v = (node as Node)[name];
  if (v == null) return [];
  return (Array.isArray(v) ? v : [v]) as Node[];
}

function amountOf(node: unknown, where: string): { value: string; currency: string } {
  const amt = child(node, 'Amt');
  if (amt == null) throw new StatementParseError(`${where}/Amt`, 'missing');
  const raw = typeof amt === 'object' ? ((amt as Node)['#text'] as string | undefined) : String(amt as string | number);
  const ccy = typeof amt === 'object' ? ((amt as Node)['@Ccy'] as string | undefined) : undefined;
  if (!ccy || !isIsoCurrency(ccy)) throw new StatementParseError(`${where}/Amt`, `attribute Ccy "${ccy ?? ''}" is not an ISO 4217 currency`);
  const d = inMinorUnits(decimal(raw ?? '', `${where}/Amt`), raw ?? '', ccy, `${where}/Amt`);
  if (d.isNegative()) throw new StatementParseError(`${where}/Amt`, 'amounts are unsigned; the sign is CdtDbtInd');
  return { value: fixed(d), currency: ccy };
}

function sign(node: unknown, where: string): 1 | -1 {
  const ind = str(node, 'CdtDbtInd');
  if (ind === 'CRDT') return 1;
  if (ind === 'DBIT') return -1;
  throw new StatementParseError(`${where}/CdtDbtInd`, ind == null ? 'missing' : `"${ind}" is neither CRDT nor DBIT`);
}

/**
 * Time zones of the banks of the SEPA countries (by ISO country code, as in an IBAN or a BIC). Where a
 * country spans several zones (Spain, Portugal) its capital's is the banks' one.
 */
const BANK_TIME_ZONES: Record<string, string> = {
  AD: 'Europe/Andorra', AT: 'Europe/Vienna', BE: 'Europe/Brussels', BG: 'Europe/Sofia', CH: 'Europe/Zurich',
  CY: 'Asia/Nicosia', CZ: 'Europe/Prague', DE: 'Europe/Berlin', DK: 'Europe/Copenhagen', EE: 'Europe/Tallinn',
  ES: 'Europe/Madrid', FI: 'Europe/Helsinki', FR: 'Europe/Paris', GB: 'Europe/London', GI: 'Europe/Gibraltar',
  GR: 'Europe/Athens', HR: 'Europe/Zagreb', HU: 'Europe/Budapest', IE: 'Europe/Dublin', IS: 'Atlantic/Reykjavik',
  IT: 'Europe/Rome', LI: 'Europe/Vaduz', LT: 'Europe/Vilnius', LU: 'Europe/Luxembourg', LV: 'Europe/Riga',
  MC: 'Europe/Monaco', MT: 'Europe/Malta', NL: 'Europe/Amsterdam', NO: 'Europe/Oslo', PL: 'Europe/Warsaw',
  PT: 'Europe/Lisbon', RO: 'Europe/Bucharest', SE: 'Europe/Stockholm', SI: 'Europe/Ljubljana', SK: 'Europe/Bratislava',
  SM: 'Europe/San_Marino', VA: 'Europe/Vatican',
};

/** The bank's time zone from the account's IBAN country, else its BIC's country; null when not known. */
export function bankTimeZone(iban: string | null, bic: string | null): string | null {
  const country = iban && /^[A-Z]{2}\d{2}/.test(iban) ? iban.slice(0, 2) : bic && /^[A-Z]{6}/.test(bic) ? bic.slice(4, 6) : null;
  return country ? (BANK_TIME_ZONES[country] ?? null) : null;
}

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * The account-local date of an ISO date or date-time: the date part as written, except for a UTC
 * date-time (`Z`, `+00:00`, `-00:00`), which is the date in the bank's time zone `zone` (its UTC date
 * when the zone is not known). A date-time with another offset was written in the bank's local time:
 * its date part is that local date.
 */
export function camtDate(raw: string, where: string, zone: string | null): string {
  const s = raw.trim();
  const m = DATE_TIME.exec(s);
  // Not an ISO date-time the zone rule can read: its leading date as written, or an error naming it.
  if (!m) return isoDate(s, where);
  const date = isoDate(m[1], where);
  const utc = m[2] !== undefined && m[5] !== undefined && (m[5] === 'Z' || /^[+-]00:?00$/.test(m[5]));
  if (!utc || !zone) {
    if (m[2] !== undefined && (Number(m[2]) > 24 || Number(m[3]) > 59 || Number(m[4] ?? 0) > 60)) throw new StatementParseError(where, `"${raw}" is not a valid time`);
    return date;
  }
  const instant = new Date(`${date}T${m[2]}:${m[3]}:${m[4] ?? '00'}Z`);
  if (Number.isNaN(instant.getTime())) throw new StatementParseError(where, `"${raw}" is not a valid time`);
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(instant);
  const part = (t: string) => parts.find((p) => p.type === t)!.value;
  return `${part('year')}-${part('month')}-${part('day')}`;
}

function dateOf(node: unknown, el: string, where: string, zone: string | null): string | null {
  const n = child(node, el);
  if (n == null) return null;
  const raw = str(n, 'Dt') ?? str(n, 'DtTm');
  if (raw == null) throw new StatementParseError(`${where}/${el}`, 'has neither Dt nor DtTm');
  return camtDate(raw, `${where}/${el}`, zone);
}

function partyName(party: unknown): string | null {
  return str(party, 'Nm') ?? str(party, 'Pty', 'Nm');
}

function bankTxCode(ntry: unknown, reversal: boolean): string | null {
  const domn = child(ntry, 'BkTxCd', 'Domn');
  let code: string | null = null;
  if (domn) {
    code = [str(domn, 'Cd'), str(domn, 'Fmly', 'Cd'), str(domn, 'Fmly', 'SubFmlyCd')].filter(Boolean).join('/') || null;
  }
  code ??= str(ntry, 'BkTxCd', 'Prtry', 'Cd');
  if (reversal) return `R:${code ?? ''}`;
  return code;
}

function remittance(tx: unknown): string | null {
  const rmt = child(tx, 'RmtInf');
  if (!rmt) return null;
  const parts: string[] = [];
  for (const u of list(rmt, 'Ustrd')) {
    const t = text(typeof u === 'object' ? ((u as Node)['#text'] as string) : String(u));
    if (t) parts.push(t);
  }
  for (const s of list(rmt, 'Strd')) {
    const ref = str(s, 'CdtrRefInf', 'Ref');
    if (ref) parts.push(ref);
    for (const doc of list(s, 'RfrdDocInf')) {
      const nb = str(doc, 'Nb');
      if (nb) parts.push(nb);
    }
    const addtl = str(s, 'AddtlRmtInf');
    if (addtl) parts.push(addtl);
  }
  return parts.length ? parts.join(' ') : null;
}

/** RmtInf, else the transaction's additional information (AddtlTxInf). */
function remittanceOrAdditional(tx: unknown): string | null {
  return remittance(tx) ?? str(tx, 'AddtlTxInf');
}

function details(tx: unknown, credit: boolean) {
  const parties = child(tx, 'RltdPties');
  const who = credit ? 'Dbtr' : 'Cdtr';
  const acct = child(parties, `${who}Acct`, 'Id');
  const iban = str(acct, 'IBAN');
  const agent = child(tx, 'RltdAgts', `${who}Agt`, 'FinInstnId');
  return {
    counterpartyName: partyName(child(parties, who)) ?? partyName(child(parties, credit ? 'UltmtDbtr' : 'UltmtCdtr')),
    counterpartyIban: iban ? iban.replace(/\s+/g, '').toUpperCase() : null,
    counterpartyAccount: iban ? iban.replace(/\s+/g, '').toUpperCase() : str(acct, 'Othr', 'Id'),
    counterpartyBankCode: str(agent, 'BICFI') ?? str(agent, 'BIC') ?? str(agent, 'ClrSysMmbId', 'MmbId'),
    remittanceInformation: remittanceOrAdditional(tx),
    endToEndId: ((e) => (e && e !== 'NOTPROVIDED' ? e : null))(str(tx, 'Refs', 'EndToEndId')),
    txReference: str(tx, 'Refs', 'AcctSvcrRef'),
  };
}

export function parseCamt053(content: Buffer): ParsedFile {
  return runParse(parseCamt053Steps(content));
}

/** The two ISO 20022 bank-to-customer messages read here: their document element and statement element. */
const MESSAGES = {
  camt053: { doc: 'BkToCstmrStmt', stmt: 'Stmt', what: 'camt.053 BankToCustomerStatement' },
  camt054: { doc: 'BkToCstmrDbtCdtNtfctn', stmt: 'Ntfctn', what: 'camt.054 BankToCustomerDebitCreditNotification' },
} as const;
export type CamtFormat = keyof typeof MESSAGES;

/** parseCamt053 as ParseSteps (yields while reading the XML and every PARSE_BATCH entries). */
export function parseCamt053Steps(content: Buffer): ParseSteps {
  return parseCamtSteps(content, 'camt053');
}

/** A camt.054 notification (`Ntfctn`): its entries are read as camt.053 entries. */
export function parseCamt054Steps(content: Buffer): ParseSteps {
  return parseCamtSteps(content, 'camt054');
}

/** How deep below the root a `Document` inside a message envelope is looked for. */
const ENVELOPE_DEPTH = 4;

/**
 * The ISO 20022 `Document` and its element path: the root element, or (a SWIFT MX message: the
 * business application header `AppHdr` beside the `Document`, both inside an envelope element such as
 * `BizMsgEnvlp`, `RequestPayload` or `DataPDU/Body`) the first `Document` below the root, looked for
 * breadth-first a few levels deep.
 */
function findDocument(doc: Node): { node: unknown; path: string } {
  if (doc.Document !== undefined) return { node: child(doc, 'Document'), path: 'Document' };
  let level: { node: unknown; path: string }[] = Object.entries(doc).map(([k, v]) => ({ node: Array.isArray(v) ? v[0] : v, path: k }));
  for (let depth = 0; depth < ENVELOPE_DEPTH && level.length; depth++) {
    const next: { node: unknown; path: string }[] = [];
    for (const { node, path } of level) {
      if (node == null || typeof node !== 'object') continue;
      const d = (node as Node).Document;
      if (d !== undefined) return { node: child(node, 'Document'), path: `${path}/Document` };
      for (const [k, v] of Object.entries(node as Node)) if (!k.startsWith('@') && !k.startsWith('#')) next.push({ node: Array.isArray(v) ? v[0] : v, path: `${path}/${k}` });
    }
    level = next;
  }
  return { node: undefined, path: 'Document' };
}

/** The `Sts` of an entry: `<Sts>BOOK</Sts>` (up to camt.053.001.07) or `<Sts><Cd>BOOK</Cd></Sts>` (.08 on); null when absent. */
function entryStatus(ntry: unknown): string | null {
  return str(ntry, 'Sts', 'Cd') ?? str(ntry, 'Sts', 'Prtry') ?? str(ntry, 'Sts');
}

function* parseCamtSteps(content: Buffer, format: CamtFormat): ParseSteps {
  const xml = yield* readXml(content.toString('utf8').replace(/^\uFEFF/, ''));
  const { node: doc, path: docPath } = findDocument(xml);
  const msg = MESSAGES[format];
  const root = `${docPath}/${msg.doc}`;
  const bk = child(doc, msg.doc);
  if (!bk) {
    if (child(doc, 'BkToCstmrAcctRpt')) {
      throw new StatementParseError(`${docPath}/BkToCstmrAcctRpt`, 'a camt.052 account report is an intraday report, not a statement: it is not imported (upload the camt.053 statement or camt.054 notification)');
    }
    const other = Object.entries(MESSAGES).find(([, m]) => child(doc, m.doc));
    if (other) throw new StatementParseError(`${docPath}/${other[1].doc}`, `a ${other[1].what} document: upload it with format ${other[0]} (or without a format)`);
    throw new StatementParseError(root, `missing: not a ${msg.what} document`);
  }
  const stmts = list(bk, msg.stmt);
  if (stmts.length === 0) throw new StatementParseError(`${root}/${msg.stmt}`, 'missing');
  const statements: ParsedStatement[] = [];
  for (let n = 0; n < stmts.length; n++) {
    const stmt = stmts[n];
    const sp = stmts.length > 1 ? `${root}/${msg.stmt}[${n + 1}]` : `${root}/${msg.stmt}`;

    const acctId = child(stmt, 'Acct', 'Id');
    const iban = str(acctId, 'IBAN')?.replace(/\s+/g, '').toUpperCase() ?? null;
    const other = str(acctId, 'Othr', 'Id');
    if (!iban && !other) throw new StatementParseError(`${sp}/Acct/Id`, 'missing IBAN or Othr/Id');
    const acctCcy = str(stmt, 'Acct', 'Ccy');
    const svcr = child(stmt, 'Acct', 'Svcr', 'FinInstnId');
    const bic = str(svcr, 'BICFI') ?? str(svcr, 'BIC');
    const zone = bankTimeZone(iban, bic);
    if (acctCcy && !isIsoCurrency(acctCcy)) throw new StatementParseError(`${sp}/Acct/Ccy`, `"${acctCcy}" is not an ISO 4217 currency`);

    // OPBD is the opening balance; without it (German banks) the previous closing balance PRCD is.
    let opening: string | null = null;
    let previousClosing: string | null = null;
    let closing: string | null = null;
    let balCcy: string | null = null;
    let statementDate: string | null = null;
    list(stmt, 'Bal').forEach((bal, i) => {
      const where = `${sp}/Bal[${i + 1}]`;
      const tp = str(bal, 'Tp', 'CdOrPrtry', 'Cd') ?? str(bal, 'Tp', 'CdOrPrtry', 'Prtry');
      if (tp !== 'OPBD' && tp !== 'PRCD' && tp !== 'CLBD') return;
      const amt = amountOf(bal, where);
      const value = sign(bal, where) === 1 ? amt.value : fixed(decimal(amt.value, where).neg());
      // every balance read must be in one currency (the first one's); the account currency is checked by checkStatements
      if (balCcy && amt.currency !== balCcy) {
        throw new StatementParseError(`${where}/Amt`, `the balance is in ${amt.currency}, the statement's other balances in ${balCcy}: the file contradicts itself`);
      }
      balCcy ??= amt.currency;
      if (tp === 'OPBD') opening = value;
      else if (tp === 'PRCD') previousClosing = value;
      else {
        closing = value;
        statementDate = dateOf(bal, 'Dt', where, zone);
      }
    });
    opening ??= previousClosing;

    const transactions: ParsedTransaction[] = [];
    const entries = list(stmt, 'Ntry');
    let notBooked = 0;
    for (let i = 0; i < entries.length; i++) {
      if (i > 0 && i % PARSE_BATCH === 0) yield i;
      const ntry = entries[i];
      const where = `${sp}/Ntry[${i + 1}]`;
      // Only booked entries are on the account: pending (PDNG), information (INFO) and future (FUTR)
      // entries are not money received, and the closing booked balance leaves them out.
      const status = entryStatus(ntry);
      if (status != null && status !== 'BOOK') {
        notBooked += 1;
        continue;
      }
      const amt = amountOf(ntry, where);
      const s = sign(ntry, where);
      const reversal = str(ntry, 'RvslInd') === 'true';
      const bookingDate = dateOf(ntry, 'BookgDt', where, zone);
      const valueDate = dateOf(ntry, 'ValDt', where, zone);
      if (!bookingDate && !valueDate) throw new StatementParseError(`${where}/BookgDt`, 'missing (neither BookgDt nor ValDt)');
      const entryRef = str(ntry, 'AcctSvcrRef') ?? str(ntry, 'NtryRef');
      const code = bankTxCode(ntry, reversal);
      const txs = list(ntry, 'NtryDtls').flatMap((d) => list(d, 'TxDtls'));
      const base = { currency: amt.currency, valueDate, bookingDate, transactionCode: code };

      // Batch booking: several TxDtls, each with its own amount that add up to the entry.
      const txAmounts = txs.map((tx) => child(tx, 'AmtDtls', 'TxAmt') ?? (child(tx, 'Amt') ? tx : undefined));
      if (txs.length > 1 && txAmounts.every(Boolean)) {
        const parts = txs.map((tx, j) => amountOf(txAmounts[j], `${where}/NtryDtls/TxDtls[${j + 1}]${txAmounts[j] === tx ? '' : '/AmtDtls/TxAmt'}`));
        const total = sumMoney(parts.map((p) => p.value));
        if (!total.eq(amt.value)) {
          throw new StatementParseError(`${where}/NtryDtls`, `transaction amounts add up to ${fixed(total)}, the entry amount is ${amt.value}`);
        }
        txs.forEach((tx, j) => {
          const d = details(tx, s === 1);
          const v = decimal(parts[j].value, where);
          transactions.push({
            ...base,
            amount: fixed(s === 1 ? v : v.neg()),
            counterpartyName: d.counterpartyName,
            counterpartyIban: d.counterpartyIban,
            counterpartyAccount: d.counterpartyAccount,
            counterpartyBankCode: d.counterpartyBankCode,
            remittanceInformation: d.remittanceInformation,
            endToEndId: d.endToEndId,
            bankReference: d.txReference ?? (entryRef ? `${entryRef}/${j + 1}` : null),
            lineKey: `${entryRef ?? ''}:${i + 1}.${j + 1}`,
          });
        });
        continue;
      }

      const d = details(txs[0], s === 1);
      const v = decimal(amt.value, where);
      transactions.push({
        ...base,
        amount: fixed(s === 1 ? v : v.neg()),
        counterpartyName: d.counterpartyName,
        counterpartyIban: d.counterpartyIban,
        counterpartyAccount: d.counterpartyAccount,
        counterpartyBankCode: d.counterpartyBankCode,
        remittanceInformation:
          (txs.length > 1 ? txs.map(remittanceOrAdditional).filter(Boolean).join(' ') || null : d.remittanceInformation) ?? str(ntry, 'AddtlNtryInf'),
        endToEndId: d.endToEndId,
        bankReference: entryRef ?? d.txReference,
        lineKey: `${entryRef ?? ''}:${i + 1}`,
      });
    }

    const currency = acctCcy ?? balCcy ?? transactions[0]?.currency;
    if (!currency) throw new StatementParseError(`${sp}/Acct/Ccy`, 'missing, and no balance or entry names a currency');
    const created = str(stmt, 'CreDtTm');
    const statement: ParsedStatement = {
      account: {
        identifier: iban ?? other!,
        iban,
        accountNumber: other,
        bankCode: bic,
        currency,
        name: str(stmt, 'Acct', 'Nm'),
      },
      statementId: str(stmt, 'Id'),
      statementNumber: str(stmt, 'ElctrncSeqNb') ?? str(stmt, 'LglSeqNb') ?? str(stmt, 'Id'),
      statementDate: statementDate ?? (created ? camtDate(created, `${sp}/CreDtTm`, zone) : null),
      openingBalance: opening,
      closingBalance: closing,
      currency,
      balanceCurrency: balCcy,
      transactions,
      source: sp,
      skipped: { notBooked },
    };
    statements.push(statement);
  }
  return { statements };
}
