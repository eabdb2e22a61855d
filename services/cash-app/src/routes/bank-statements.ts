import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import {
  idSchema,
  pageEnvelopeSchema,
  pageOf,
  pageRequest,
  paginationQueryShape,
  timestampsShape,
  ValidationError,
  type UploadedFile,
} from '@rp/platform';
import { route } from '../deps.js';
import { refuseNul } from '../parsers/nul.js';
import {
  approveStatement,
  deleteUploadedStatement,
  INLINE_TRANSACTIONS_MAX,
  STATEMENT_STATUSES,
  STATUS_DESCRIPTION,
  statementDetail,
  statementTransactions,
  uploadStatement,
} from '../domain/bank-statements.js';
import {
  charsetSupported,
  checkStatements,
  csvMappingSchema,
  DETECTED_CHARSETS,
  detectStatementFormat,
  fromJsonStatement,
  jsonStatementShape,
  parseStatementSteps,
  runParseAsync,
  StatementParseError,
  STATEMENT_FORMATS,
  type ParsedFile,
  type StatementFormat,
} from '../parsers/index.js';
import { listStatements, statementView } from '../store/bank-statements.js';

const MAX_PAGE = 200;
/** Page size limit of a statement's transactions. */
const MAX_TRANSACTION_PAGE = 500;
/** Largest statement upload (the gateway's UPLOAD_LIMIT_BYTES default is the same). */
export const MAX_STATEMENT_BYTES = 50 * 1024 * 1024;

const money = z.string().describe('Decimal string with the currency\'s minor units, e.g. "1250.00".');

const paymentSummarySchema = z.object({
  id: z.string(),
  status: z.string(),
  amount: money,
  currency: z.string(),
  partner_id: z.string().nullable(),
  match_score: z.number().nullable(),
})
  .meta({ id: 'BankTransactionPayment' });

export const bankTransactionSchema = z.object({
  object: z.literal('bank_transaction'),
  id: z.string(),
  statement_id: z.string(),
  bank_account_id: z.string().nullable(),
  unique_import_id: z
    .string()
    .describe(
      'Identity of the bank line, unique per organization: a line is imported once. CAMT.053 (the statement has its own id): ' +
        '`<account>:stmt:<Stmt/Id>:<entry reference>:<entry position>[.<transaction position>]`, so a re-export of the same ' +
        'statement maps onto the same lines while another day\'s statement is new even when the bank reuses its references. ' +
        'Other formats, by content: `<account>:ref:<bank reference>:<booking date>:<amount>` (a reference reused on another ' +
        'day or for another amount is another line), or `<account>:sha256:<hash of the line\'s fields>:<n>` without a ' +
        'reference. The nth identical id inside one file gets `#n` (`:n` for hashes).',
    ),
  sequence: z.number().int().describe('Position in the statement file (1-based).'),
  amount: money.describe('Signed: credits (deposits) positive, debits negative.'),
  currency: z.string(),
  is_deposit: z.boolean(),
  is_payment: z
    .boolean()
    .nullable()
    .describe('Whether the deposit is a customer payment (null until classified). Credits are payments unless they come from one of the organization\'s own accounts, or their bank transaction code or remittance text says interest, refund, internal transfer or reversal.'),
  value_date: z.string().nullable(),
  booking_date: z.string().nullable(),
  counterparty_name: z.string().nullable(),
  counterparty_account: z.string().nullable(),
  counterparty_iban: z.string().nullable(),
  counterparty_bank_code: z.string().nullable(),
  remittance_information: z.string().nullable(),
  bank_reference: z.string().nullable(),
  end_to_end_id: z.string().nullable(),
  transaction_code: z.string().nullable().describe('Bank transaction code: CAMT Domn/Fmly/SubFmly, BAI2 type code, MT940 type; `R:` prefix for entries the bank marks as reversals.'),
  payments: z.array(paymentSummarySchema).describe('Payments proposed (unapproved) or approved for this transaction.'),
  ...timestampsShape,
})
  .meta({ id: 'BankTransaction' });

export const bankStatementSchema = z.object({
  object: z.literal('bank_statement'),
  id: z.string(),
  status: z.enum(STATEMENT_STATUSES).describe(STATUS_DESCRIPTION),
  source: z.enum(['upload', 'connection']),
  format: z.enum(STATEMENT_FORMATS),
  file_name: z.string().nullable(),
  file_sha256: z.string().nullable().describe('SHA-256 of the uploaded file (shared by every statement of a multi-statement file).'),
  file_position: z.number().int().describe('Position of the statement in its file (1-based; files with several statements yield one statement each).'),
  encoding: z
    .string()
    .nullable()
    .describe('Character encoding the file was read in: the upload\'s `charset`, else detected (e.g. `UTF-8`, `windows-1250`, `cp852`). Null for the JSON form and statements stored before this field.'),
  warnings: z
    .array(z.string())
    .describe('What the upload noticed but could not decide, e.g. a statement in another currency than the bank account is kept in, an opening balance that differs from the previous statement\'s closing balance, balances that do not reconcile (see `balance_mismatch`), or balances that could not be checked because of entries in another currency. Empty when none.'),
  balance_mismatch: z
    .object({
      difference: money.describe('Closing balance − (opening balance + the sum of the entries), signed, in `currency`, e.g. "-27.00": a booked entry the closing balance leaves out.'),
      currency: z.string().nullable().describe('The statement\'s currency, which the difference is in.'),
      acknowledged_by: z.string().nullable().describe('The user who approved the statement acknowledging the mismatch (null until then).'),
      acknowledged_at: z.string().nullable().describe('When the mismatch was acknowledged (ISO 8601 UTC), null until then.'),
    })
    .nullable()
    .describe(
      'Set when the file gives both balances and they do not reconcile with the entries (banks send such files, e.g. an entry dated the next day left out of the closing balance). ' +
        'The statement is imported all the same (also named in `warnings`) and is approved only with `acknowledge_balance_mismatch: true`. Null when the balances reconcile or the file gives no two balances.',
    ),
  skipped_entries: z
    .object({
      not_booked: z
        .number()
        .int()
        .describe('camt.053/054 entries not imported because their status (`Sts`) is not BOOK: pending (PDNG), information only (INFO), future (FUTR). They are not money on the account; 0 for other formats.'),
    })
    .describe('Entries of the file that were deliberately not imported, by reason.'),
  bank_account_id: z.string().nullable(),
  account_identifier: z.string().nullable().describe('IBAN or account number of the bank account.'),
  currency: z.string().nullable(),
  statement_number: z.string().nullable(),
  statement_date: z.string().nullable(),
  opening_balance: money.nullable(),
  closing_balance: money.nullable(),
  transaction_count: z.number().int().describe('Transactions stored for this statement (lines imported before by another statement are not counted).'),
  totals: z
    .array(
      z.object({
        currency: z.string(),
        credit_count: z.number().int().describe('Credits (deposits, amount > 0).'),
        credit_total: money.describe('Sum of the credits, e.g. "1250.00".'),
        debit_count: z.number().int().describe('Debits (amount < 0).'),
        debit_total: money.describe('Sum of the debits, signed like the transactions (≤ 0), e.g. "-99.95".'),
      }),
    )
    .describe('Per currency of the stored transactions (ordered by currency): counts and sums of credits and debits. Empty until processing has stored the lines.'),
  error: z.string().nullable().describe('Why processing failed (status `failed`).'),
  workflow_id: z.string().nullable().describe('Temporal workflow processing the statement (`bank-statement-<id>`).'),
  uploaded_by: z.string().nullable(),
  approved_by: z.string().nullable(),
  approved_at: z.string().nullable(),
  ...timestampsShape,
})
  .meta({ id: 'BankStatement' });

export const bankStatementDetailSchema = bankStatementSchema.extend({
  transactions: z
    .array(bankTransactionSchema)
    .optional()
    .describe(`The first ${INLINE_TRANSACTIONS_MAX} transactions in file order (absent with \`transactions=omit\`); page through all of them with GET /v2/bank-statements/{statement_id}/transactions.`),
  transactions_truncated: z.boolean().optional().describe(`With the inline transactions: whether the statement has more than ${INLINE_TRANSACTIONS_MAX} (then only the first ${INLINE_TRANSACTIONS_MAX} are inline).`),
}).meta({ id: 'BankStatementDetail' });

/** The upload's answer: the first statement of the file (as before), plus all of them. */
export const bankStatementUploadSchema = bankStatementSchema
  .extend({
    statements: z
      .array(bankStatementSchema)
      .min(1)
      .describe(
        'Every statement the file held, in file order (the first is the statement this object describes). A file with one ' +
          'statement answers exactly as before plus this one-element array; a month of daily MT940 statements answers one element per day.',
      ),
  })
  .meta({ id: 'BankStatementUpload' });

const uploadedFile = z.custom<UploadedFile>(
  (v) => typeof v === 'object' && v !== null && Buffer.isBuffer((v as UploadedFile).content),
  'must be an uploaded file (multipart field `file`)',
);

/** The CSV column mapping is a short JSON text (a dozen keys); longer text is refused before it is parsed. */
const MAPPING_MAX_LENGTH = 4000;

const jsonText = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v, ctx) => {
    if (typeof v !== 'string') return v;
    if (v.length > MAPPING_MAX_LENGTH) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAPPING_MAX_LENGTH} characters` });
      return v;
    }
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  }, schema);

const optionalShape = Object.fromEntries(Object.entries(jsonStatementShape).map(([k, s]) => [k, (s as z.ZodType).optional()])) as {
  [K in keyof typeof jsonStatementShape]: z.ZodOptional<(typeof jsonStatementShape)[K]>;
};

const uploadBody = z
  .object({
    file: uploadedFile.optional().describe('multipart only: the statement file.'),
    format: z
      .enum(STATEMENT_FORMATS)
      .optional()
      .describe('Format of `file` (multipart; detected from the file when omitted, see the operation); `json` (default) for the JSON form.'),
    mapping: jsonText(csvMappingSchema).optional().describe('CSV column mapping (multipart: a JSON text field). Required for `csv`.'),
    charset: z
      .string()
      .trim()
      .min(1)
      .max(40)
      .refine(charsetSupported, 'not a character encoding the service can read (e.g. UTF-8, windows-1250, windows-1252, cp852, iso-8859-2)')
      .optional()
      .describe('multipart only: the character encoding of `file`, overriding detection.'),
    ...optionalShape,
  })
  .superRefine((b, ctx) => {
    if (b.file) {
      if (b.format === 'csv' && !b.mapping) ctx.addIssue({ code: 'custom', path: ['mapping'], message: 'required for csv: the column mapping' });
      for (const k of Object.keys(jsonStatementShape)) {
        if ((b as Record<string, unknown>)[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: 'not allowed with a file upload' });
      }
      return;
    }
    if (b.charset) ctx.addIssue({ code: 'custom', path: ['charset'], message: 'only with a file upload (multipart)' });
    if (b.format && b.format !== 'json') ctx.addIssue({ code: 'custom', path: ['file'], message: `required for format ${b.format} (send multipart/form-data)` });
    for (const k of ['account', 'currency', 'transactions'] as const) {
      if (b[k] === undefined) ctx.addIssue({ code: 'custom', path: [k], message: 'required (JSON form)' });
    }
  });

const multipartDoc = z.object({
  file: z.string().meta({ format: 'binary', contentMediaType: 'application/octet-stream' }).describe('The statement file.'),
  format: z.enum(STATEMENT_FORMATS).optional().describe('Omitted: detected from the file (camt053, camt054, mt940, bai2, json; csv needs `mapping`).'),
  mapping: z.string().max(MAPPING_MAX_LENGTH).optional().describe('CSV only: the column mapping as JSON text, e.g. {"account":"DE89…","date_column":"Date","amount_column":"Amount","currency":"EUR","delimiter":";","decimal_separator":",","date_format":"DD.MM.YYYY"}.'),
  charset: z
    .string()
    .max(40)
    .optional()
    .describe(`The file's character encoding (e.g. \`windows-1250\`, \`cp852\`), overriding detection. Omitted: detected (BOM, XML declaration, valid UTF-8, else the best of ${DETECTED_CHARSETS.join(', ')}).`),
});

/**
 * The format of an uploaded file sent without `format` (see detectStatementFormat). With a mapping
 * and no other format recognised it is CSV; otherwise an unrecognised file is a 422 naming what was seen.
 */
function detectedFormat(content: Buffer, hasMapping: boolean): StatementFormat {
  const d = detectStatementFormat(content);
  if ('format' in d) return d.format;
  if (hasMapping) return 'csv';
  const msg =
    'csv' in d
      ? 'the file looks like CSV, which cannot be read without its column mapping: send `mapping` (format csv)'
      : `the format could not be detected from the file (${d.unknown}): send \`format\` (camt053, camt054, bai2, mt940, csv, json)`;
  throw new ValidationError([{ loc: ['body', 'format'], msg, type: 'format_undetected' }], `Statement format not detected: ${msg}.`);
}

/** `transactions[1].amount` (where the JSON form's parse names a field) as a `loc` path: transactions, 1, amount. */
function jsonPath(where: string): (string | number)[] {
  return [...where.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]));
}

const jsonDoc = z.object({
  format: z.literal('json').optional().describe('`json` (the default) for this form.'),
  ...jsonStatementShape,
});

export const bankStatementRoutes = [
  route({
    method: 'post',
    path: '/v2/bank-statements',
    operationId: 'uploadBankStatement',
    summary: 'Upload a bank statement',
    description:
      'Either `multipart/form-data` with `file` and optionally `format` (`camt053` ISO 20022 camt.053 XML, `camt054` camt.054 debit/credit notification, `bai2`, `mt940`, `csv`, `json`) ' +
      'and for CSV a `mapping` (JSON text: `account`, `date_column`, `amount_column` or `debit_column`+`credit_column`, ' +
      '`currency_column` or `currency`, optional counterparty/remittance/reference columns, `delimiter`, `decimal_separator`, ' +
      '`date_format`), or `application/json` with `account`, `currency` and `transactions` (signed decimal-string amounts). ' +
      `Files up to ${MAX_STATEMENT_BYTES} bytes. A file part without its own Content-Type header (as Python \`requests\` and many scripts send it) is read as the file.\n\n` +
      'Several statements in one file (a month of daily MT940 statements, several `Stmt` of a camt.053, several accounts in ' +
      'BAI2): each becomes its own statement (one record each, `file_position` 1, 2, …), all created together and answered ' +
      'together: the answer is the first statement\'s fields (exactly as for a one-statement file) plus `statements`, every ' +
      'statement of the file in order. Several accounts in one file are imported, each account\'s statements as their own ' +
      'records. Each statement is processed by its own workflow `bank-statement-<id>`, so deleting one statement cancels only ' +
      'its processing; the file is kept until its last statement is deleted.\n\n' +
      'Balances (every format; 422 `request-validation` naming the statement, nothing stored, when the file contradicts ' +
      'itself): balances in another currency than the account currency the file states (or than each other) are refused; for consecutive ' +
      'statements of one account in the file each opening balance must equal the closing balance before it. Where a statement ' +
      'gives both balances and opening balance + the sum of its entries differs from its closing balance, it is imported ' +
      'all the same (banks send such files: a booked entry dated the next day left out of the closing balance) with ' +
      '`balance_mismatch` (the difference and its currency) and a warning saying it, and it is approved only with ' +
      '`acknowledge_balance_mismatch: true`. CAMT entries that are not booked (`Sts` PDNG, INFO, FUTR) are not imported; ' +
      '`skipped_entries.not_booked` counts them. A camt.053 without an opening balance (OPBD) opens with its previous closing ' +
      'balance (PRCD); a camt.053 inside a SWIFT MX envelope (`AppHdr` and `Document` under another root element) is read ' +
      'from its `Document`.\n\n' +
      'Amounts are taken exactly as written: an amount with more decimals than its currency has (USD 2, JPY 0, KWD 3; ' +
      'trailing zeros do not count) or more digits than can be stored (16 before the decimal point, 4 after) is refused ' +
      'with 422 naming the line, element or JSON path, never rounded.\n\n' +
      'What the file cannot contradict is a warning on the statement (`warnings`): a bank account the platform keeps in another currency ' +
      'than the statement\'s, an opening balance that differs from the closing balance of the account\'s previous statement ' +
      '(the latest dated before it, uploaded earlier: a statement may be missing), balances not checkable because of entries ' +
      'in another currency.\n\n' +
      'Character encoding: `charset` (multipart field, e.g. `windows-1250`, `windows-1252`, `cp852`, `iso-8859-2`, `UTF-8`) ' +
      'overrides detection. Otherwise a byte order mark, then an XML `encoding` declaration, then valid UTF-8 (plain ASCII ' +
      'included) decide; any other file is read in the single-byte code page (windows-1252, windows-1250, iso-8859-2, cp852) ' +
      'under which its non-ASCII characters are letters, ties broken by a statistical detector (chardet). `encoding` in the ' +
      'answer says which was used. An unknown `charset` is 422.\n\n' +
      'MT940: bank header lines before a message (ING `0000 01INGBNL2AXXXX00001` / `940 00`, ABN AMRO `ABNANL2A` / `940` / ' +
      '`ABNANL2A`, Rabobank `:940:`), SWIFT envelopes `{1:…}{2:…}{3:…}{4:` … `-}{5:…}` (also with each block on its own ' +
      'line, as ING sends them) and the SOH/ETX bytes around them are accepted, as is a blank between a `:61:` amount and ' +
      'its transaction type (`D12,35 NRTI`, German bank exports); control characters elsewhere are refused and named visibly (`U+0001`). An MT942 interim report is refused ' +
      'as MT942.\n\n' +
      'Without `format` the format is detected from the file: camt.053 by its XML namespace ' +
      '(`urn:iso:std:iso:20022:tech:xsd:camt.053.*`; camt.054 by `camt.054.*`), BAI2 by its `01` file header record, MT940 by its field tags ' +
      '(`:20:`, `:25:`, `:60F:`/`:60M:`; entries `:61:`), JSON by its leading `{`; `format` in the answer says which. A CSV file ' +
      'cannot be read without its column mapping: without `mapping` it is refused with 422 saying so (send `mapping`, ' +
      '`format=csv` is then implied). A camt.052 account report is refused as an intraday report, not a statement. A file none of these fit (another XML message, an empty ' +
      'or binary file) gives 422 `request-validation` at `["body","format"]` naming what was seen; nothing is stored.\n\n' +
      'The file is parsed in the request: a malformed file gives 422 `request-validation` whose error `loc` and `msg` name the ' +
      'line (BAI2, MT940, CSV), the XML element path (CAMT) or the JSON path, and nothing is stored. A statement file is text: a NUL byte (U+0000) in it is refused (422, with its line), as is a NUL in any string of the JSON form or the mapping. A valid file is stored ' +
      'with status `uploaded` and processed by the Temporal workflow `bank-statement-<id>` (store transactions, classify ' +
      'deposits, propose payments, then `ready`; `failed` with `error` when processing fails after retries). The workflow is ' +
      'started before the statement is committed: a statement is never left `uploaded` without processing, and when the ' +
      'workflow cannot be started (Temporal unavailable: the start gives up after 5 s) nothing is stored (503 ' +
      '`service-unavailable` with `Retry-After`; upload the same file again). Processing rides out database and Temporal ' +
      'outages (activities retried for ACTIVITY_RETRY_WINDOW_MINUTES); `failed` then says what to do in words for users.\n\n' +
      'Duplicates: uploading a file already imported (same SHA-256) is refused with 409 `conflict` naming its existing ' +
      'statements, and nothing is created; if one of them is still `uploaded` with no running workflow (stranded by an earlier failure), its ' +
      'processing is started instead, and if one of them `failed`, its processing is resumed (status back to `uploaded`, error ' +
      'cleared, lines already stored kept and not stored twice); the file\'s statements are then returned (200). After some statements of a file were ' +
      'deleted the file still counts as imported (409); once all are deleted it can be uploaded again. A different file that overlaps an earlier one is accepted and ' +
      'stores only the lines not imported before (see `unique_import_id` of a transaction); `transaction_count` counts those.\n\n' +
      'BAI2: `88` continuation records continue the previous record with its next field (summaries of an `03` record, ' +
      'references and text of a `16` record); the text of a `16` record (to the end of the record, across its `88` lines) ' +
      'is `remittance_information`, the customer reference `end_to_end_id`, the bank reference `bank_reference`; funds type ' +
      '`V` gives the line\'s `value_date`, otherwise it is the group\'s as-of date. CAMT: without `RmtInf` the remittance ' +
      'information is `AddtlTxInf` (or the entry\'s `AddtlNtryInf`); a date-time is the bank\'s local date: as written ' +
      'when it has a non-zero offset or none, and a UTC one (`Z`) converted to the time zone of the account\'s country ' +
      '(IBAN, else the servicing BIC; SEPA countries), else its UTC date. A camt.054 notification and the camt.053 ' +
      'statement of the same day report the same bookings under different ids: import one of the two per account.\n\n' +
      `Statuses: ${STATUS_DESCRIPTION}`,
    tags: ['Cash application'],
    multipart: { maxBytes: MAX_STATEMENT_BYTES, schema: multipartDoc, json: jsonDoc },
    body: uploadBody,
    response: bankStatementUploadSchema,
    errors: [409, 503],
    handler: async ({ body, identity, deps }) => {
      let format: StatementFormat;
      let content: Buffer;
      let parsed: ParsedFile;
      let fileName: string | null = null;
      const options: Record<string, unknown> = {};
      try {
        if (body.file) {
          content = body.file.content;
          format = body.format ?? detectedFormat(content, body.mapping !== undefined);
          fileName = body.file.filename;
          if (body.mapping) options.mapping = body.mapping;
          if (body.charset) options.charset = body.charset;
          // In batches with a turn of the event loop between them: a large file does not stall the service.
          parsed = await runParseAsync(parseStatementSteps(format, content, options), () => nextTurn());
          if (parsed.statements.length === 0) throw new StatementParseError('line 1', 'the file holds no statement');
        } else {
          format = 'json';
          const doc = Object.fromEntries(Object.keys(jsonStatementShape).map((k) => [k, (body as Record<string, unknown>)[k]]));
          content = Buffer.from(JSON.stringify(doc));
          parsed = { statements: [fromJsonStatement(doc as Parameters<typeof fromJsonStatement>[0])] };
          try {
            checkStatements(parsed);
          } catch (err) {
            // the JSON form has one statement: what its balances contradict is said at `closing_balance`
            if (err instanceof StatementParseError) throw new StatementParseError('closing_balance', err.problem);
            throw err;
          }
        }
        checkStatements(parsed);
      } catch (err) {
        if (err instanceof StatementParseError) {
          const loc = body.file ? ['body', 'file', err.where] : ['body', ...jsonPath(err.where)];
          throw new ValidationError([{ loc, msg: `${err.where}: ${err.problem}`, type: 'statement_invalid' }], `The ${format!} statement is malformed at ${err.where}: ${err.problem}`);
        }
        throw err;
      }
      refuseNul(body.file ? content! : null, parsed!, options);
      const { statements } = await uploadStatement(deps, { organizationId: identity.org, uploadedBy: identity.sub, format: format!, fileName, content, options, parsed: parsed! });
      const views = statements.map(statementView);
      return { ...views[0], statements: views };
    },
  }),
  route({
    method: 'get',
    path: '/v2/bank-statements',
    operationId: 'listBankStatements',
    summary: 'List bank statements',
    description: `Newest first. Filters: \`status\`, \`bank_account_id\`. Statuses: ${STATUS_DESCRIPTION}`,
    tags: ['Cash application'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      status: z.enum(STATEMENT_STATUSES).optional(),
      bank_account_id: idSchema().optional(),
    }),
    response: pageEnvelopeSchema(bankStatementSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await listStatements(deps.db, identity.org, { status: query.status, bankAccountId: query.bank_account_id }, page.offset, page.pageSize);
      return pageOf(rows.map(statementView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/bank-statements/{statement_id}',
    operationId: 'getBankStatement',
    summary: 'Get a bank statement',
    description:
      'The statement with its counts and totals (`transaction_count`; `totals`: per currency the number and sum of credits ' +
      `and of debits, decimal strings) and, by default, its first ${INLINE_TRANSACTIONS_MAX} transactions in file order, each ` +
      'with the payments proposed or approved for it (for a member, only payments within their business units, as in GET /v2/payments; `transactions_truncated: true` when it has more). ' +
      '`transactions=omit` leaves the transactions out. Page through all transactions with ' +
      'GET /v2/bank-statements/{statement_id}/transactions. (Until this version the transactions were always inline and ' +
      `uncapped: a 10,000-line statement answered about 7.5 MB; statements up to ${INLINE_TRANSACTIONS_MAX} lines answer as before.) ` +
      'Unknown or another organization\'s id: 404.',
    tags: ['Cash application'],
    params: z.object({ statement_id: idSchema() }),
    query: z.object({
      transactions: z
        .enum(['inline', 'omit'])
        .optional()
        .describe(`\`inline\` (default): the first ${INLINE_TRANSACTIONS_MAX} transactions in the answer; \`omit\`: none.`),
    }),
    response: bankStatementDetailSchema,
    errors: [404],
    handler: async ({ params, query, identity, deps }) => statementDetail(deps, identity.org, params.statement_id, { transactions: query.transactions ?? 'inline', scope: identity.bu }),
  }),
  route({
    method: 'get',
    path: '/v2/bank-statements/{statement_id}/transactions',
    operationId: 'listBankStatementTransactions',
    summary: 'List the transactions of a bank statement',
    description:
      'The statement\'s transactions, paged, in file order (`sequence`, then id: a stable order, so consecutive pages ' +
      'neither repeat nor skip a line), each with the payments proposed or approved for it (for a member, only payments within their business units). `total_records` is the number of ' +
      `stored transactions. Page size 1..${MAX_TRANSACTION_PAGE} (default 50). Unknown or another organization's statement: 404.`,
    tags: ['Cash application'],
    params: z.object({ statement_id: idSchema() }),
    query: z.object({ ...paginationQueryShape(MAX_TRANSACTION_PAGE) }),
    response: pageEnvelopeSchema(bankTransactionSchema),
    errors: [404],
    handler: async ({ params, query, identity, deps }) =>
      statementTransactions(deps, identity.org, params.statement_id, pageRequest(query, MAX_TRANSACTION_PAGE), identity.bu),
  }),
  route({
    method: 'post',
    path: '/v2/bank-statements/{statement_id}/approve',
    operationId: 'approveBankStatement',
    summary: 'Approve a processed bank statement',
    description:
      'Moves a `ready` statement to `approved` (it can no longer be deleted). Any other status: 409 `conflict`. ' +
      'A statement whose balances do not reconcile (`balance_mismatch` is set: its closing balance differs from the opening ' +
      'balance plus its entries) is approved only with `acknowledge_balance_mismatch: true` in the body; without it the ' +
      'answer is 409 `conflict` naming the difference and its currency, and nothing changes. The acknowledgement is ' +
      'recorded (`balance_mismatch.acknowledged_by` / `acknowledged_at`); for a statement without a mismatch it is ignored. ' +
      'The body is optional. Unknown or another organization\'s id: 404.',
    tags: ['Cash application'],
    params: z.object({ statement_id: idSchema() }),
    body: z
      .object({
        acknowledge_balance_mismatch: z
          .boolean()
          .default(false)
          .describe('Approve although the statement\'s balances do not reconcile (`balance_mismatch`), after checking it against the bank. Default false.'),
      })
      .optional(),
    response: bankStatementSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps }) =>
      statementView(
        await approveStatement(deps, { organizationId: identity.org, userId: identity.sub }, params.statement_id, {
          acknowledgeBalanceMismatch: body?.acknowledge_balance_mismatch ?? false,
        }),
      ),
  }),
  route({
    method: 'delete',
    path: '/v2/bank-statements/{statement_id}',
    operationId: 'deleteBankStatement',
    summary: 'Delete a bank statement',
    description:
      'Removes the statement, its transactions and their payments (204). `approved`: refused with 409 `conflict`, nothing ' +
      'changes. `synced` (from a bank connection): organization admins only (403 `forbidden` for members). Any other status: ' +
      'any user; when its processing workflow is still running it is cancelled first (the activities see the cancellation ' +
      'through their heartbeats, at most every 0.5 s, so the answer comes within a few seconds) and the rows are removed only ' +
      'after the workflow has closed, so no transaction or payment appears afterwards. A statement with an approved payment ' +
      'is refused with 409; the check and the delete run under the lock a payment approval takes, so an approval racing the ' +
      'delete either comes first (the delete answers 409 and nothing is removed) or finds the payment gone (404). ' +
      'A member may not delete a statement with payments outside their business units (409; an admin may). ' +
      'Unknown or another organization\'s id: 404.',
    tags: ['Cash application'],
    params: z.object({ statement_id: idSchema() }),
    errors: [404, 409],
    handler: async ({ params, identity, deps, log }) => {
      await deleteUploadedStatement(deps, { organizationId: identity.org, role: identity.role, scope: identity.bu }, params.statement_id, log);
    },
  }),
];
