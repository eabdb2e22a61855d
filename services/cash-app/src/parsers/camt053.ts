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
import { isIsoCurrency, sumMoney } from '@rp/platform';
import {
  decimal,
  fixed,
  inMinorUnits,
  StatementParseError,
  PARSE_BATCH,
  runParse,
  text,
  type ParseSteps,
  type ParsedFile,
  type ParsedStatement,
  type ParsedTransaction,
} from './types.js';
import { bankTimeZone, camtDate } from './camt-dates.js';
import { child, list, readXml, str, type Node } from './camt-xml.js';

export { bankTimeZone, camtDate } from './camt-dates.js';

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
