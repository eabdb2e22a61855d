/**
 * The benchmark's statements as a bank sends them: one camt.053.001.02 file with a `Stmt` per
 * account of the organization (EUR, savings, USD, GBP, CHF), one booked entry per line, with the
 * bank transaction code, debtor name and account (IBAN, or account number + routing number), the
 * payer's end-to-end id and unstructured remittance information.
 */
import { fmtCents } from './random.js';
import type { Line } from './lines.js';
import type { World } from './world.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function txCode(code: string): string {
  const [domain, family, sub] = code.split('/');
  return `<BkTxCd><Domn><Cd>${domain}</Cd><Fmly><Cd>${family}</Cd><SubFmlyCd>${sub}</SubFmlyCd></Fmly></Domn></BkTxCd>`;
}

function entry(l: Line, world: World): string {
  const customer = l.truth.partner ? world.customers.find((c) => c.code === l.truth.partner) : undefined;
  const usAccount = !l.counterpartyIban && l.counterpartyAccount ? customer?.account : undefined;
  const account = l.counterpartyIban
    ? `<DbtrAcct><Id><IBAN>${l.counterpartyIban}</IBAN></Id></DbtrAcct>`
    : l.counterpartyAccount
      ? `<DbtrAcct><Id><Othr><Id>${esc(l.counterpartyAccount)}</Id></Othr></Id></DbtrAcct>`
      : '';
  const agent = usAccount ? `<RltdAgts><DbtrAgt><FinInstnId><ClrSysMmbId><MmbId>${usAccount.bank_code}</MmbId></ClrSysMmbId></FinInstnId></DbtrAgt></RltdAgts>` : '';
  const parties = l.counterpartyName || account ? `<RltdPties>${l.counterpartyName ? `<Dbtr><Nm>${esc(l.counterpartyName)}</Nm></Dbtr>` : ''}${account}</RltdPties>` : '';
  const remittance = l.remittance ? `<RmtInf><Ustrd>${esc(l.remittance)}</Ustrd></RmtInf>` : '';
  return (
    `      <Ntry><Amt Ccy="${l.currency}">${fmtCents(l.amount)}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>` +
    `<BookgDt><Dt>${l.bookingDate}</Dt></BookgDt><ValDt><Dt>${l.bookingDate}</Dt></ValDt><AcctSvcrRef>${l.id}</AcctSvcrRef>${txCode(l.transactionCode)}` +
    `<NtryDtls><TxDtls><Refs><EndToEndId>${esc(l.endToEndId ?? 'NOTPROVIDED')}</EndToEndId></Refs>${parties}${agent}${remittance}</TxDtls></NtryDtls></Ntry>`
  );
}

/** A camt.053 file of `lines`, one statement per account that has lines (ids unique per `messageId`). */
export function camtFile(world: World, lines: readonly Line[], messageId: string, created: string): string {
  const statements = world.accounts
    .map((a) => ({ a, entries: lines.filter((l) => l.account === a.key) }))
    .filter((s) => s.entries.length > 0)
    .map(({ a, entries }, i) => {
      const total = entries.reduce((s, l) => s + l.amount, 0);
      const day = entries.reduce((max, l) => (l.bookingDate > max ? l.bookingDate : max), entries[0]!.bookingDate);
      const balance = (type: string, cents: number) =>
        `<Bal><Tp><CdOrPrtry><Cd>${type}</Cd></CdOrPrtry></Tp><Amt Ccy="${a.currency}">${fmtCents(cents)}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${day}</Dt></Dt></Bal>`;
      return [
        `    <Stmt><Id>${messageId}-${i + 1}</Id><CreDtTm>${created}T18:00:00</CreDtTm>`,
        `      <Acct><Id><IBAN>${a.iban}</IBAN></Id><Ccy>${a.currency}</Ccy></Acct>`,
        `      ${balance('OPBD', 0)}${balance('CLBD', total)}`,
        ...entries.map((l) => entry(l, world)),
        '    </Stmt>',
      ].join('\n');
    });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">',
    `  <BkToCstmrStmt><GrpHdr><MsgId>${messageId}</MsgId><CreDtTm>${created}T18:00:00</CreDtTm></GrpHdr>`,
    ...statements,
    '  </BkToCstmrStmt>',
    '</Document>',
    '',
  ].join('\n');
}
