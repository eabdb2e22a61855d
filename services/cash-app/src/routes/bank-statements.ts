/** The bank-statement routes (/v2/bank-statements…): upload, list, read, approve and delete, each validating and calling one domain function. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, type UploadedFile } from '@rp/platform';
import { route } from '../deps.js';
import { MATCH_STATUSES, STATEMENT_STATUSES, STATUS_DESCRIPTION } from '../domain-types/bank-statements.js';
import { approveStatement, deleteUploadedStatement } from '../domain/statement-changes.js';
import { statementFileTarget } from '../domain/statement-files.js';
import { receiveStatementUpload } from '../domain/statement-intake.js';
import { INLINE_TRANSACTIONS_MAX, statementDetail, statementPage, statementTransactions } from '../domain/statement-reads.js';
import { charsetSupported, csvMappingSchema, DETECTED_CHARSETS, jsonStatementShape, STATEMENT_FORMATS } from '../parsers/index.js';
import { statementDetailView, statementView, transactionRecordView } from '../views/bank-statements.js';
import { bankStatementDetailSchema, bankStatementSchema, bankStatementUploadSchema, bankTransactionSchema } from './bank-statement-schemas.js';

const MAX_PAGE = 200;
/** Page size limit of a statement's transactions. */
const MAX_TRANSACTION_PAGE = 500;

/** What a statement records in the event log (GET /v2/events, webhooks); see domain/events.ts. */
const EVENTS_DESCRIPTION =
  'Events: processing records `bank_statement.processed` when the statement is `ready` (with one `payment.proposed` per ' +
  'proposal, each committed with its proposal) or `bank_statement.failed`; approval records `bank_statement.approved`. ' +
  'Their `data.object` is the statement as GET /v2/bank-statements/{statement_id}?transactions=omit answers it at that ' +
  'moment: without inline transactions (a statement may have 100,000; read them with GET …/transactions). A statement is ' +
  'tied to no business unit, so every user of the organization reads its events.';
/** Largest statement upload (the gateway's UPLOAD_LIMIT_BYTES default is the same). */
export const MAX_STATEMENT_BYTES = 50 * 1024 * 1024;

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
      'The file is stored as it arrives (object storage) and parsed in the request, on worker threads that parse a bounded number of ' +
      'files at once: when all are busy the upload is refused with 503 `service-unavailable` and `Retry-After` (nothing is stored; ' +
      'send it again after that many seconds). The parse threads run at the lowest scheduling priority, behind every request: a parse ' +
      'may use 120 s of CPU time (a file that needs more is refused with 422), and a parse a busy machine leaves without CPU for 300 s ' +
      'is stopped with the same 503 and `Retry-After`. A malformed file gives 422 `request-validation` whose error `loc` and `msg` name the ' +
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
      `Statuses: ${STATUS_DESCRIPTION}\n\n${EVENTS_DESCRIPTION}`,
    tags: ['Cash application'],
    multipart: {
      maxBytes: MAX_STATEMENT_BYTES,
      schema: multipartDoc,
      json: jsonDoc,
      // the file goes to object storage as it arrives (when the service has one), and is parsed from memory
      streamFile: ({ field, identity, deps }) => (field === 'file' && deps.storage ? statementFileTarget(deps.storage, identity.org) : null),
    },
    body: uploadBody,
    response: bankStatementUploadSchema,
    errors: [409, 503],
    handler: async ({ body, identity, deps, log }) => {
      const { statements } = await receiveStatementUpload(deps, { organizationId: identity.org, uploadedBy: identity.sub }, body, log);
      const views = statements.map(statementView);
      return { ...views[0], statements: views };
    },
  }),
  route({
    method: 'get',
    path: '/v2/bank-statements',
    operationId: 'listBankStatements',
    summary: 'List bank statements',
    description: `Newest first, each with its \`match_counts\` (deposits per match status; an extension of the spec). Filters: \`status\`, \`bank_account_id\`. Statuses: ${STATUS_DESCRIPTION}`,
    tags: ['Cash application'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      status: z.enum(STATEMENT_STATUSES).optional(),
      bank_account_id: idSchema().optional(),
    }),
    response: pageEnvelopeSchema(bankStatementSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await statementPage(deps, identity.org, { status: query.status, bankAccountId: query.bank_account_id }, page);
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
      '`match_counts` (an extension of the spec) counts its deposits per `match_status`. ' +
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
    handler: async ({ params, query, identity, deps }) =>
      statementDetailView(await statementDetail(deps, identity.org, params.statement_id, { transactions: query.transactions ?? 'inline', scope: identity.bu })),
  }),
  route({
    method: 'get',
    path: '/v2/bank-statements/{statement_id}/transactions',
    operationId: 'listBankStatementTransactions',
    summary: 'List the transactions of a bank statement',
    description:
      'The statement\'s transactions, paged, in file order (`sequence`, then id: a stable order, so consecutive pages ' +
      'neither repeat nor skip a line), each with the payments proposed or approved for it (for a member, only payments within their business units). `total_records` is the number of ' +
      `stored transactions (that the filter keeps). Page size 1..${MAX_TRANSACTION_PAGE} (default 50). Unknown or another organization's statement: 404. ` +
      '`match_status` (an extension of the spec): match statuses, repeated or comma-separated, e.g. `match_status=unmatched,proposed`, ' +
      'keeps the deposits with one of them (debits have none, so any filter leaves them out); an unknown status is 422. ' +
      'The statement\'s `match_counts` give the number of each.',
    tags: ['Cash application'],
    params: z.object({ statement_id: idSchema() }),
    query: z.object({
      ...paginationQueryShape(MAX_TRANSACTION_PAGE),
      match_status: z
        .union([z.string().max(60), z.array(z.string().max(60)).max(MATCH_STATUSES.length)])
        .transform((v) => [...new Set((Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).map((x) => x.trim()))])
        .pipe(z.array(z.enum(MATCH_STATUSES)).min(1).max(MATCH_STATUSES.length))
        .optional()
        .describe(
          `Any of ${MATCH_STATUSES.map((m) => `\`${m}\``).join(', ')}: the parameter repeated (\`match_status=unmatched&match_status=proposed\`) ` +
            'or comma-separated (`match_status=unmatched,proposed`), each value at most 60 characters.',
        ),
    }),
    response: pageEnvelopeSchema(bankTransactionSchema),
    errors: [404],
    handler: async ({ params, query, identity, deps }) => {
      const page = pageRequest(query, MAX_TRANSACTION_PAGE);
      const { records, total } = await statementTransactions(deps, identity.org, params.statement_id, page, identity.bu, { matchStatuses: query.match_status });
      return pageOf(records.map(transactionRecordView), total, page);
    },
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
      'The body is optional. Unknown or another organization\'s id: 404. Records the event `bank_statement.approved` with the ' +
      'statement as this call answers it.',
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
