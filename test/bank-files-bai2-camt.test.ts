/**
 * BAI2 and CAMT files as banks deliver them, uploaded through the gateway with the typed client:
 * BAI2 continuation records (summaries on 88 lines, an empty summary slot, detail text on 88 lines,
 * references after a `/`-ended funds type), funds types V/S/D/Z; CAMT remittance only in AddtlTxInf /
 * AddtlNtryInf, date-times in UTC and with offsets, camt.054 notifications, camt.052 refused.
 * Fixtures (test/fixtures/bank-statements/) were written for these tests from the BAI2 and ISO 20022
 * layouts. No SQL.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, type PlatformClient } from '@rp/client';
import { startStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let rp: PlatformClient;

const fixture = (name: string) => readFileSync(new URL(`./fixtures/bank-statements/${name}`, import.meta.url));

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  const org = await stack.onboard('Bank files BAI2 CAMT');
  rp = createPlatformClient({ baseUrl: stack.gatewayUrl, token: org.token });
});
afterAll(async () => stack?.close());

function uploadFile(name: string, content: Buffer | string, format?: string) {
  const form = new FormData();
  if (format) form.set('format', format);
  form.set('file', new Blob([content]), name);
  return rp.POST('/v2/bank-statements', { body: {} as never, bodySerializer: () => form });
}

async function statementCount(): Promise<number> {
  const { data } = await rp.GET('/v2/bank-statements', { params: { query: { page_size: 1 } as never } });
  return data!.total_records;
}

async function waitReady(id: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { data, error } = await rp.GET('/v2/bank-statements/{statement_id}', { params: { path: { statement_id: id }, query: { transactions: 'omit' } } });
    if (error) throw new Error(JSON.stringify(error));
    if (data.status === 'ready') return data;
    if (data.status === 'failed' || Date.now() > deadline) throw new Error(`statement ${id} did not become ready: ${JSON.stringify(data)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function linesOf(id: string) {
  const { data, error } = await rp.GET('/v2/bank-statements/{statement_id}/transactions', { params: { path: { statement_id: id }, query: { page_size: 500 } as never } });
  if (error) throw new Error(JSON.stringify(error));
  return data.data;
}

/** Uploads without `format`, waits for processing and returns the statement and its lines. */
async function imported(name: string) {
  const { data, error } = await uploadFile(name, fixture(name));
  expect(error, JSON.stringify(error)).toBeUndefined();
  const ready = await waitReady(data!.id);
  return { statement: ready, lines: await linesOf(data!.id) };
}

const pick = (l: Awaited<ReturnType<typeof linesOf>>[number]) => ({
  amount: l.amount,
  booking_date: l.booking_date,
  value_date: l.value_date,
  bank_reference: l.bank_reference,
  end_to_end_id: l.end_to_end_id,
  remittance_information: l.remittance_information,
  counterparty_name: l.counterparty_name,
  transaction_code: l.transaction_code,
});

describe('BAI2 continuation records', () => {
  it('joins 88 records as the standard says: summaries and balances kept, text in the text field, V value dates, S/D fields skipped', async () => {
    const { statement, lines } = await imported('bai2-continuations.txt');
    expect(statement).toMatchObject({
      format: 'bai2',
      account_identifier: '4400123456',
      currency: 'USD',
      statement_number: 'FILE077',
      statement_date: '2026-11-09',
      opening_balance: '12500.00',
      closing_balance: '18987.50',
      transaction_count: 6,
    });
    expect(statement.totals).toEqual([{ currency: 'USD', credit_count: 4, credit_total: '7500.00', debit_count: 2, debit_total: '-1012.50' }]);
    expect(lines.map(pick)).toEqual([
      {
        amount: '1200.00', booking_date: '2026-11-09', value_date: '2026-11-09', bank_reference: 'BAI-0001', end_to_end_id: 'CUST-0001',
        remittance_information: 'ORIG CO NAME:NORTHWIND TRADERS ENTRY DESCR:INVOICE INV-5001 INV-5002 PAYMENT', counterparty_name: 'NORTHWIND TRADERS', transaction_code: '165',
      },
      {
        amount: '1000.00', booking_date: '2026-11-09', value_date: '2026-11-07', bank_reference: 'BAI-0002', end_to_end_id: 'WIRE-77',
        remittance_information: 'FEDWIRE CREDIT FROM CONTOSO, LTD REF INV-5003', counterparty_name: null, transaction_code: '195',
      },
      {
        amount: '300.00', booking_date: '2026-11-09', value_date: '2026-11-09', bank_reference: 'BAI-0003', end_to_end_id: null,
        remittance_information: 'LOCKBOX DEPOSIT 2 CHECKS', counterparty_name: null, transaction_code: '142',
      },
      {
        amount: '5000.00', booking_date: '2026-11-09', value_date: '2026-11-09', bank_reference: 'LBX-0006', end_to_end_id: null,
        remittance_information: 'LOCKBOX 4471 DEPOSIT REMITTANCE INV-5004 INV-5005', counterparty_name: null, transaction_code: '115',
      },
      {
        amount: '-12.50', booking_date: '2026-11-09', value_date: '2026-11-09', bank_reference: 'BAI-0004', end_to_end_id: 'CHK-1043',
        remittance_information: 'CHECK PAID', counterparty_name: null, transaction_code: '475',
      },
      {
        amount: '-1000.00', booking_date: '2026-11-09', value_date: '2026-11-09', bank_reference: 'BAI-0005', end_to_end_id: null,
        remittance_information: 'ACH DEBIT PAYROLL', counterparty_name: null, transaction_code: '699',
      },
    ]);
  });

  it('imports each account of a multi-account file as its own statement, in one upload answer', async () => {
    const { data, error } = await uploadFile('accounts.bai', fixture('bai2-multi-account.txt'));
    expect(error, JSON.stringify(error)).toBeUndefined();
    expect(data!.statements.map((s) => [s.file_position, s.account_identifier, s.currency, s.statement_date, s.opening_balance, s.closing_balance])).toEqual([
      [1, '4400123456', 'USD', '2026-11-11', '18987.50', '20487.50'],
      [2, '4400987654', 'CAD', '2026-11-11', '5000.00', '4800.00'],
      [3, '7700112233', 'JPY', '2026-11-12', '1000000', '1250000'],
    ]);
    expect(new Set(data!.statements.map((s) => s.bank_account_id)).size).toBe(3);
    const lines = [];
    for (const s of data!.statements) {
      await waitReady(s.id);
      lines.push((await linesOf(s.id)).map((l) => [l.amount, l.currency, l.value_date, l.bank_reference, l.end_to_end_id, l.remittance_information]));
    }
    expect(lines).toEqual([
      [['1500.00', 'USD', '2026-11-11', 'BAI-1001', null, 'ACH CREDIT ORIG CO NAME:WAYNE ENTERPRISES INV-5101']],
      [['-200.00', 'CAD', '2026-11-11', 'BAI-1002', null, 'WIRE FEE']],
      [['250000', 'JPY', '2026-11-11', 'BAI-1003', 'TT-88', 'TELEGRAPHIC TRANSFER UMBRELLA CORP']],
    ]);
  });

  it('still refuses a file whose account control total is wrong, naming the trailer line (nothing stored)', async () => {
    const before = await statementCount();
    const bad = fixture('bai2-continuations.txt').toString().replace('49,8050000,17/', '49,8050001,17/').replace('FILE077', 'FILE078');
    const { response, error } = await uploadFile('bad.bai', bad);
    expect(response.status).toBe(422);
    expect(error!.errors![0].msg).toMatch(/^line 19: account control total 8050001 does not match the account's amounts \(8050000\)/);
    expect(await statementCount()).toBe(before);
  });
});

describe('CAMT', () => {
  it('takes remittance from AddtlTxInf / AddtlNtryInf without RmtInf and reads UTC date-times as the bank\'s local date', async () => {
    const { statement, lines } = await imported('camt053-addtl-tz.xml');
    expect(statement).toMatchObject({
      format: 'camt053',
      account_identifier: 'DE27100777770209299700',
      statement_date: '2026-01-15',
      opening_balance: '2000.00',
      closing_balance: '2489.75',
      transaction_count: 3,
    });
    expect(lines.map(pick)).toEqual([
      // 2026-01-14T23:00:00Z is 00:00 on the 15th in Frankfurt (a German IBAN): booked on the 15th.
      {
        amount: '150.00', booking_date: '2026-01-15', value_date: '2026-01-15', bank_reference: 'TZ-0001', end_to_end_id: null,
        remittance_information: 'Rechnung INV-7001 Globex', counterparty_name: 'Globex Handels GmbH', transaction_code: 'PMNT/RCDT/ESCT',
      },
      // 00:30+01:00 is written in the bank's local time: its date as written.
      {
        amount: '-80.25', booking_date: '2026-01-15', value_date: '2026-01-16', bank_reference: 'TZ-0002', end_to_end_id: null,
        remittance_information: 'Kartenzahlung Buerobedarf Filiale 12', counterparty_name: null, transaction_code: 'CARD',
      },
      // RmtInf present: AddtlTxInf and AddtlNtryInf are not remittance; 20:00-05:00 keeps its written date.
      {
        amount: '420.00', booking_date: '2026-01-15', value_date: '2026-01-15', bank_reference: 'TZ-0003', end_to_end_id: 'E2E-INV-7002',
        remittance_information: 'INV-7002', counterparty_name: 'Initech Inc', transaction_code: 'PMNT/RCDT/XBCT',
      },
    ]);
  });

  it('imports a camt.054 notification like camt.053 entries (detected, format camt054), a batch split into its transactions', async () => {
    const { statement, lines } = await imported('camt054.xml');
    expect(statement).toMatchObject({
      format: 'camt054',
      account_identifier: 'AT611904300234573201',
      currency: 'EUR',
      statement_number: 'NTF-20261105-AT61',
      statement_date: '2026-11-05',
      opening_balance: null,
      closing_balance: null,
      transaction_count: 4,
    });
    expect(lines.map(pick)).toEqual([
      {
        amount: '250.00', booking_date: '2026-11-05', value_date: '2026-11-05', bank_reference: 'AT-BATCH-0001-1', end_to_end_id: 'DD-INV-8001',
        remittance_information: 'INV-8001', counterparty_name: 'Alpenblick Hotel KG', transaction_code: 'PMNT/RDDT/BBDD',
      },
      {
        amount: '300.00', booking_date: '2026-11-05', value_date: '2026-11-05', bank_reference: 'AT-BATCH-0001-2', end_to_end_id: 'DD-INV-8002',
        remittance_information: 'INV-8002', counterparty_name: 'Donau Logistik GmbH', transaction_code: 'PMNT/RDDT/BBDD',
      },
      {
        amount: '185.50', booking_date: '2026-11-05', value_date: '2026-11-05', bank_reference: 'AT-BATCH-0001-3', end_to_end_id: 'DD-INV-8003',
        remittance_information: 'Lastschrift INV-8003 Oktober', counterparty_name: 'Bergbahn Tirol AG', transaction_code: 'PMNT/RDDT/BBDD',
      },
      // 23:10Z on the 4th is 00:10 on the 5th in Vienna.
      {
        amount: '-12.00', booking_date: '2026-11-05', value_date: '2026-11-05', bank_reference: 'AT-FEE-0001', end_to_end_id: null,
        remittance_information: 'Entgelt Lastschrifteinzug', counterparty_name: null, transaction_code: 'ACMT/MDOP/CHRG',
      },
    ]);
    expect(lines.map((l) => l.unique_import_id)).toEqual([
      'AT611904300234573201:stmt:NTF-20261105-AT61:AT-BATCH-0001:1.1',
      'AT611904300234573201:stmt:NTF-20261105-AT61:AT-BATCH-0001:1.2',
      'AT611904300234573201:stmt:NTF-20261105-AT61:AT-BATCH-0001:1.3',
      'AT611904300234573201:stmt:NTF-20261105-AT61:AT-FEE-0001:2',
    ]);
  });

  it('refuses a camt.052 intraday report saying so, detected or sent as camt053, and a camt.054 sent as camt053 (nothing stored)', async () => {
    const before = await statementCount();
    const detected = await uploadFile('report.xml', fixture('camt052.xml'));
    expect(detected.response.status).toBe(422);
    expect(detected.error).toMatchObject({ type: 'request-validation', errors: [{ loc: ['body', 'format'], type: 'format_undetected' }] });
    expect(detected.error!.errors![0].msg).toMatch(/camt\.052\.001\.08 account report .*intraday report, not a statement/);

    const asCamt053 = await uploadFile('report.xml', fixture('camt052.xml'), 'camt053');
    expect(asCamt053.response.status).toBe(422);
    expect(asCamt053.error).toMatchObject({ errors: [{ loc: ['body', 'file', 'Document/BkToCstmrAcctRpt'], type: 'statement_invalid' }] });
    expect(asCamt053.error!.errors![0].msg).toMatch(/camt\.052 account report is an intraday report, not a statement/);

    const wrongFormat = await uploadFile('notification.xml', fixture('camt054.xml'), 'camt053');
    expect(wrongFormat.response.status).toBe(422);
    expect(wrongFormat.error!.errors![0].msg).toMatch(/camt\.054 BankToCustomerDebitCreditNotification document: upload it with format camt054/);
    expect(await statementCount()).toBe(before);
  });
});
