/**
 * Bank files as banks deliver them, end to end through the gateway: MT940 with
 * bank header lines (ING, ABN AMRO, Rabobank) and SWIFT envelopes wrapped in SOH/ETX, several
 * statements per file (one statement record and one processing workflow each, answered together),
 * balances checked in every format, MT942 refused as MT942, text in Windows-1250/1252 and CP852
 * decoded (detected or given as `charset`), and a multipart file part without its own Content-Type
 * (as Python `requests` sends it). Every sample file is under test/fixtures/bank-statements/, written
 * from the banks' published layouts, and its expected lines are spelled out here.
 *
 * No SQL set-up: every state is reached through the API. SQL only reads row counts (to show that a
 * refused upload stored nothing). Processing is slowed (BANK_STATEMENT_CHUNK_SIZE=1,
 * BANK_STATEMENT_CHUNK_PAUSE_MS=100) so a statement can be deleted while it is still processing.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { bankStatementWorkflowId } from '@rp/workflows';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let temporal: TemporalHandle;

const fixture = (name: string) => readFileSync(new URL(`./fixtures/bank-statements/${name}`, import.meta.url));

async function upload(content: Buffer | string, opts: { name?: string; format?: string; charset?: string } = {}) {
  const form = new FormData();
  if (opts.format) form.set('format', opts.format);
  if (opts.charset) form.set('charset', opts.charset);
  form.set('file', new Blob([content]), opts.name ?? 'statement.sta');
  const res = await fetch(`${stack.gatewayUrl}/v2/bank-statements`, { method: 'POST', headers: { authorization: `Bearer ${org.token}` }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

async function counts() {
  const [s] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statements WHERE organization_id = $1`, [org.organizationId]);
  const [f] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statement_files WHERE organization_id = $1`, [org.organizationId]);
  const [t] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_transactions WHERE organization_id = $1`, [org.organizationId]);
  return { statements: s.n as number, files: f.n as number, transactions: t.n as number };
}

/** The statement when processed, with its transactions reduced to what a bank line says. */
async function lines(id: string) {
  const s = await waitForStatement(stack, org.token, id, { timeoutMs: 60_000 });
  return s.transactions.map((t: any) => ({
    amount: t.amount,
    booking_date: t.booking_date,
    value_date: t.value_date,
    name: t.counterparty_name,
    account: t.counterparty_account,
    text: t.remittance_information,
    ref: t.bank_reference,
    e2e: t.end_to_end_id,
    code: t.transaction_code,
  }));
}

const line = (l: Partial<Record<'amount' | 'booking_date' | 'value_date' | 'name' | 'account' | 'text' | 'ref' | 'e2e' | 'code', string | null>>) => ({
  name: null,
  account: null,
  text: null,
  ref: null,
  e2e: null,
  value_date: l.booking_date,
  ...l,
});

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'], env: { BANK_STATEMENT_CHUNK_SIZE: '1', BANK_STATEMENT_CHUNK_PAUSE_MS: '100' } });
  org = await stack.onboard('Bank Files Org');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
});
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

describe('several statements in one file', () => {
  it('imports each statement of an ING month file (header lines, account currency in :25:) as its own record, answered together', async () => {
    const res = await upload(fixture('mt940-ing-month.sta'), { name: 'ing-november.sta' });
    expect(res.status).toBe(200);
    const all = res.body.statements;
    expect(all).toHaveLength(3);
    // the answer is the first statement (as for a one-statement file) plus all of them
    expect({ ...res.body, statements: undefined }).toEqual({ ...all[0], statements: undefined });
    expect(all.map((s: any) => [s.format, s.file_position, s.statement_number, s.statement_date, s.opening_balance, s.closing_balance, s.currency, s.account_identifier, s.encoding])).toEqual([
      ['mt940', 1, '00001', '2026-11-02', '1000.00', '1237.50', 'EUR', 'NL36INGB0007654321', 'UTF-8'],
      ['mt940', 2, '00002', '2026-11-03', '1237.50', '2737.50', 'EUR', 'NL36INGB0007654321', 'UTF-8'],
      ['mt940', 3, '00003', '2026-11-04', '2737.50', '2737.50', 'EUR', 'NL36INGB0007654321', 'UTF-8'],
    ]);
    expect(new Set(all.map((s: any) => s.file_sha256)).size).toBe(1);
    expect(new Set(all.map((s: any) => s.id)).size).toBe(3);
    expect(all.map((s: any) => s.workflow_id)).toEqual(all.map((s: any) => bankStatementWorkflowId(s.id)));

    expect(await lines(all[0].id)).toEqual([
      line({ amount: '250.00', booking_date: '2026-11-02', name: 'Alpha BV', account: 'NL30ABNA0512345678', text: 'INV-1001 november', ref: '26110200001', e2e: 'E2E-INV-1001', code: 'NTRF' }),
      line({ amount: '-12.50', booking_date: '2026-11-02', text: 'Kosten betalingsverkeer oktober', ref: '26110200002', code: 'NMSC' }),
    ]);
    expect(await lines(all[1].id)).toEqual([
      line({ amount: '1500.00', booking_date: '2026-11-03', name: 'Bravo NV', account: 'NL70INGB0001112223', text: 'INV-1002 and INV-1003', ref: '26110300001', e2e: 'E2E-INV-1002', code: 'NTRF' }),
    ]);
    expect(await lines(all[2].id)).toEqual([]);
    const tx = await stack.request('GET', `/v2/bank-statements/${all[0].id}/transactions`, { token: org.token });
    expect(tx.body.data.map((t: any) => t.unique_import_id)).toEqual(['NL36INGB0007654321:ref:26110200001:2026-11-02:250.0000', 'NL36INGB0007654321:ref:26110200002:2026-11-02:-12.5000']);
  });

  it('reads ABN AMRO (BIC / 940 / BIC header per message), Rabobank (:940:) and a SWIFT transmission (SOH {1:}{2:}{4: … -}{5:} ETX)', async () => {
    const abn = await upload(fixture('mt940-abnamro.sta'));
    expect(abn.status).toBe(200);
    expect(abn.body.statements.map((s: any) => [s.statement_number, s.opening_balance, s.closing_balance, s.account_identifier])).toEqual([
      ['30601/1', '500.00', '600.00', '512345678'],
      ['30701/1', '600.00', '575.00', '512345678'],
    ]);
    expect(await lines(abn.body.statements[0].id)).toEqual([
      line({ amount: '100.00', booking_date: '2026-11-02', name: 'Charlie BV', account: 'NL36INGB0007654321', text: 'Factuur INV-2001', code: 'N654' }),
    ]);
    expect(await lines(abn.body.statements[1].id)).toEqual([
      line({ amount: '-25.00', booking_date: '2026-11-03', name: 'Delta Energie', account: 'NL70INGB0001112223', text: 'Termijn november', code: 'N422' }),
    ]);

    const rabo = await upload(fixture('mt940-rabobank.swi'));
    expect(rabo.status).toBe(200);
    expect(rabo.body.statements.map((s: any) => [s.statement_number, s.opening_balance, s.closing_balance, s.account_identifier, s.currency])).toEqual([
      ['26308', '0.00', '70.00', 'NL50RABO0310987654', 'EUR'],
    ]);
    expect(await lines(rabo.body.id)).toEqual([
      line({ amount: '75.25', booking_date: '2026-11-04', name: 'Echo BV', account: 'NL36INGB0007654321', text: 'INV-3001', code: 'N541' }),
      line({ amount: '-5.25', booking_date: '2026-11-04', text: 'Bankkosten', code: 'N093' }),
    ]);

    const fin = fixture('mt940-swift-envelope.fin');
    expect(fin.includes(0x01) && fin.includes(0x03)).toBe(true);
    const swift = await upload(fin);
    expect(swift.status).toBe(200);
    expect(swift.body.statements.map((s: any) => [s.statement_number, s.opening_balance, s.closing_balance, s.account_identifier])).toEqual([
      ['00045/001', '2000.00', '2300.00', '37040044/0532013000'],
      ['00046/001', '2300.00', '2250.10', '37040044/0532013000'],
    ]);
    expect(await lines(swift.body.statements[0].id)).toEqual([
      line({ amount: '300.00', booking_date: '2026-11-05', name: 'Foxtrot GmbH', account: 'DE02100500000054540402', text: 'RECHNUNG INV-4001 KUNDE 77', ref: '9876543210', code: 'NTRF' }),
    ]);
    expect(await lines(swift.body.statements[1].id)).toEqual([
      line({ amount: '-49.90', booking_date: '2026-11-06', name: 'Golf Immobilien KG', text: 'MIETE NOVEMBER', ref: '9876543211', code: 'NDDT' }),
    ]);
  });

  it('imports a file covering two accounts, each statement on its own account', async () => {
    const file = [
      ':20:TWOACC1', ':25:NL02ABNA0123456789', ':28C:1/1', ':60F:C261101EUR10,00', ':61:261102C5,00NTRFNONREF//A-1', ':86:/REMI/first account', ':62F:C261102EUR15,00', '-',
      ':20:TWOACC2', ':25:GB82WEST12345698765432', ':28C:1/1', ':60F:C261101GBP20,00', ':61:261102D2,50NTRFNONREF//B-1', ':86:/REMI/second account', ':62F:C261102GBP17,50', '-',
    ].join('\r\n');
    const res = await upload(file);
    expect(res.status).toBe(200);
    expect(res.body.statements.map((s: any) => [s.account_identifier, s.currency, s.opening_balance, s.closing_balance])).toEqual([
      ['NL02ABNA0123456789', 'EUR', '10.00', '15.00'],
      ['GB82WEST12345698765432', 'GBP', '20.00', '17.50'],
    ]);
    expect(res.body.statements[0].bank_account_id).not.toBe(res.body.statements[1].bank_account_id);
    expect((await lines(res.body.statements[0].id)).map((l: any) => [l.amount, l.text])).toEqual([['5.00', 'first account']]);
    expect((await lines(res.body.statements[1].id)).map((l: any) => [l.amount, l.text])).toEqual([['-2.50', 'second account']]);
  });

  it('creates nothing for the same file again; deleting one statement cancels only its processing; the file is free again once all are deleted', async () => {
    const day = (n: number, open: number) => {
      const entries = Array.from({ length: 20 }, (_, i) => `:61:2611${10 + n}C1,00NTRFNONREF//D${n}-${i}\r\n:86:/REMI/day ${n} line ${i}`);
      return `:20:DEL${n}\r\n:25:NL55INGB0000000011\r\n:28C:${n}\r\n:60F:C2611${9 + n}EUR${open},00\r\n${entries.join('\r\n')}\r\n:62F:C2611${10 + n}EUR${open + 20},00\r\n-`;
    };
    const content = `${day(1, 100)}\r\n${day(2, 120)}`;
    const res = await upload(content);
    expect(res.status).toBe(200);
    const [first, second] = res.body.statements;
    // delete the first while it is still being stored: its workflow is cancelled, the second goes on
    expect((await stack.request('DELETE', `/v2/bank-statements/${first.id}`, { token: org.token })).status).toBe(204);
    expect((await temporal.client.workflow.getHandle(bankStatementWorkflowId(first.id)).describe()).status.name).toBe('CANCELLED');
    expect((await lines(second.id)).map((l: any) => l.text)).toEqual(Array.from({ length: 20 }, (_, i) => `day 2 line ${i}`));
    expect(await stack.sql(`SELECT id FROM cash_app.bank_transactions WHERE statement_id = $1`, [first.id])).toEqual([]);

    const before = await counts();
    const again = await upload(content);
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain(second.id);
    expect(await counts()).toEqual(before);

    expect((await stack.request('DELETE', `/v2/bank-statements/${second.id}`, { token: org.token })).status).toBe(204);
    const fresh = await upload(content);
    expect(fresh.status).toBe(200);
    expect(fresh.body.statements).toHaveLength(2);
    expect(fresh.body.statements.map((s: any) => s.id)).not.toContain(second.id);
    for (const s of fresh.body.statements) expect((await waitForStatement(stack, org.token, s.id, { timeoutMs: 60_000 })).transaction_count).toBe(20);
  });
});

describe('refused files name the real reason and store nothing', () => {
  it('refuses MT942, a control character, balances out of sequence or in another currency', async () => {
    const before = await counts();
    const detected = await upload(fixture('mt942-interim.sta'));
    expect(detected.status).toBe(422);
    expect(detected.body.errors[0]).toMatchObject({ loc: ['body', 'format'], msg: expect.stringContaining('MT942') });
    const named = await upload(fixture('mt942-interim.sta'), { format: 'mt940' });
    expect(named.status).toBe(422);
    expect(named.body.errors[0]).toMatchObject({ loc: ['body', 'file', 'line 4'], msg: expect.stringContaining('MT942 interim transaction report') });

    const base = fixture('mt940.txt').toString();
    const control = await upload(base.replace(':86:Bank charges November', ':86:Bank charges\u0001November'), { format: 'mt940' });
    expect(control.status).toBe(422);
    expect(control.body.errors[0].msg).toContain('control character U+0001');
    expect(control.body.errors[0].loc).toEqual(['body', 'file', 'line 8']);

    const ing = fixture('mt940-ing-month.sta').toString();
    const gap = await upload(ing.replace(':60F:C261102EUR1237,50', ':60F:C261102EUR1237,00').replace(':62F:C261103EUR2737,50', ':62F:C261103EUR2737,00'));
    expect(gap.status).toBe(422);
    expect(gap.body.errors[0].msg).toBe(
      'line 19: statement 2 (number 00002, line 19): the statement opens with 1237.00, but statement 1 (number 00001, line 4) of account NL36INGB0007654321 before it closes with 1237.50: the balances are not in sequence (a statement is missing or out of order)',
    );

    const ccy = await upload(ing.replace(/EUR/g, 'USD').replace(':25:NL36INGB0007654321USD', ':25:NL36INGB0007654321EUR'));
    expect(ccy.status).toBe(422);
    expect(ccy.body.errors[0].msg).toContain('statement 1 (number 00001, line 4): the statement states its balances in USD, but the account\'s currency is EUR');


    expect(await counts()).toEqual(before);
  });

  it('imports balances that do not add up, in every format, with the difference in the statement\'s currency', async () => {
    const base = fixture('mt940.txt').toString();
    // another account: its lines are new lines (the file's own account is imported by a later test)
    const sum = await upload(base.replace(':25:NL91ABNA0417164300', ':25:NL69ABNA0222333444').replace(':62F:C261103EUR6425,05', ':62F:C261103EUR6425,00'), { format: 'mt940' });
    expect(sum.status).toBe(200);
    expect(sum.body.balance_mismatch).toMatchObject({ difference: '-0.05', currency: 'EUR' });
    expect(sum.body.warnings).toEqual([
      'the balances do not reconcile: opening balance 5000.00 EUR + 4 entries (1425.05 EUR) = 6425.05 EUR, but the closing balance is 6425.00 EUR: a difference of -0.05 EUR',
    ]);
    const camt = await upload(fixture('camt053.xml').toString().replace('12007.67', '12007.76'));
    expect(camt.status).toBe(200);
    expect(camt.body.balance_mismatch).toMatchObject({ difference: '0.09', currency: 'EUR' });
    await waitForStatement(stack, org.token, sum.body.id, { timeoutMs: 60_000 });
    await waitForStatement(stack, org.token, camt.body.id, { timeoutMs: 60_000 });
  });

  it('warns (and imports) when the account is kept in another currency than the statement', async () => {
    const eur = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: { account: 'WARN-ACCT-1', currency: 'EUR', transactions: [{ amount: '1.00', booking_date: '2026-11-01' }] } });
    expect(eur.status).toBe(200);
    expect(eur.body.warnings).toEqual([]);
    const usd = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: { account: 'WARN-ACCT-1', currency: 'USD', transactions: [{ amount: '2.00', booking_date: '2026-11-02' }] } });
    expect(usd.status).toBe(200);
    expect(usd.body.warnings).toEqual(['the account WARN-ACCT-1 is kept in EUR; this statement is in USD']);
    expect((await waitForStatement(stack, org.token, usd.body.id)).warnings).toEqual(usd.body.warnings);
  });

  it('warns (and imports) when an account\'s statement does not open with the closing balance of its previous one', async () => {
    const stmt = (date: string, open: string, amount: string, close: string) => ({
      account: 'WARN-SEQ-1',
      currency: 'EUR',
      statement_number: date,
      statement_date: date,
      opening_balance: open,
      closing_balance: close,
      transactions: [{ amount, booking_date: date, bank_reference: `SEQ-${date}` }],
    });
    const first = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: stmt('2026-11-01', '0.00', '10.00', '10.00') });
    expect(first.body.warnings).toEqual([]);
    const next = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: stmt('2026-11-02', '10.00', '5.00', '15.00') });
    expect(next.body.warnings).toEqual([]);
    const gap = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: stmt('2026-11-04', '20.00', '1.00', '21.00') });
    expect(gap.status).toBe(200);
    expect(gap.body.warnings).toEqual([
      `the statement opens with 20.00, but the account's previous statement ${next.body.id} (number 2026-11-02) of 2026-11-02 closed with 15.00: a statement may be missing`,
    ]);
  });
});

describe('encodings', () => {
  it('decodes CP852, Windows-1250 and Windows-1252 files, detected from the bytes', async () => {
    const pl = [
      line({ amount: '1230.00', booking_date: '2026-11-05', name: 'Zakład Usług Łączności Sp. z o.o.', text: 'Płatność za fakturę FV-2026/11/05, żółć gęślą jaźń', ref: 'PL-REF-1', code: 'NTRF' }),
      line({ amount: '-45.99', booking_date: '2026-11-05', name: 'Przedsiębiorstwo Ślęża', text: 'Opłata za usługę', ref: 'PL-REF-2', code: 'NTRF' }),
    ];
    const cp852 = await upload(fixture('mt940-cp852.sta'));
    expect(cp852.status).toBe(200);
    expect(cp852.body.encoding).toBe('cp852');
    expect(await lines(cp852.body.id)).toEqual(pl);

    // the same lines in Windows-1250: same import ids, so they were stored by the CP852 file already
    const w1250 = await upload(fixture('mt940-windows-1250.sta'));
    expect(w1250.status).toBe(200);
    expect(w1250.body.encoding).toBe('windows-1250');
    expect((await waitForStatement(stack, org.token, w1250.body.id)).transaction_count).toBe(0);

    const cz = await upload(fixture('mt940-cz-windows-1250.sta'));
    expect(cz.body.encoding).toBe('windows-1250');
    expect(await lines(cz.body.id)).toEqual([
      line({ amount: '2500.00', booking_date: '2026-11-05', name: 'Příliš žluťoučký kůň s.r.o.', text: 'Úhrada faktury 2026-105, ďábelské ódy', ref: 'CZ-REF-1', code: 'NTRF' }),
    ]);

    const w1252 = await upload(fixture('mt940-windows-1252.sta'));
    expect(w1252.body.encoding).toBe('windows-1252');
    expect(await lines(w1252.body.id)).toEqual([
      line({ amount: '80.00', booking_date: '2026-11-05', name: 'Müller & Söhne GmbH', text: 'Überweisung für Rechnung 4711 über 80,00 €', ref: 'DE-REF-1', code: 'NTRF' }),
      line({ amount: '20.00', booking_date: '2026-11-05', name: 'Société Générale à Lyon', text: 'Réglement facture élève n° 12, reçu', ref: 'DE-REF-2', code: 'NTRF' }),
    ]);
  });

  it('reads the file in the `charset` given, and refuses an unknown one', async () => {
    const content = fixture('mt940-windows-1252.sta').toString('latin1').replace(':20:DE261105', ':20:DE261105CS').replace(/DE-REF-/g, 'CS-REF-');
    const res = await upload(Buffer.from(content, 'latin1'), { charset: 'windows-1250' });
    expect(res.status).toBe(200);
    expect(res.body.encoding).toBe('windows-1250');
    // à (0xE0 in Windows-1252) is ŕ in Windows-1250: the given charset wins over detection
    expect((await lines(res.body.id))[1].name).toBe('Société Générale ŕ Lyon');

    const bad = await upload(fixture('mt940.txt'), { charset: 'klingon-8' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].loc).toEqual(['body', 'charset']);
  });
});

describe('multipart', () => {
  it('accepts a file part without its own Content-Type header, as Python requests sends it', async () => {
    const boundary = 'a3f9c1e2b7d44e0f8a6b5c4d3e2f1a0b';
    const file = fixture('mt940.txt').toString().replace(':20:STMT20261102', ':20:PYREQ').replace(/BREF-/g, 'PY-');
    // what requests.post(url, files={'file': ('statement.sta', data)}, data={'format': 'mt940'}) puts on the wire
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="format"\r\n\r\nmt940\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="statement.sta"\r\n\r\n`),
      Buffer.from(file),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const res = await fetch(`${stack.gatewayUrl}/v2/bank-statements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    const json = (await res.json()) as any;
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(json).toMatchObject({ format: 'mt940', file_name: 'statement.sta', statement_number: '00102/1', opening_balance: '5000.00', closing_balance: '6425.05' });
    expect((await lines(json.id)).map((l: any) => l.amount)).toEqual(['1250.00', '-99.95', '200.00', '75.00']);
  });
});
