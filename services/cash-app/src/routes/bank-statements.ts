import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import {
  ConflictError,
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
  deleteUploadedStatement,
  INLINE_TRANSACTIONS_MAX,
  STATEMENT_STATUSES,
  STATUS_DESCRIPTION,
  statementDetail,
  statementOf,
  statementTransactions,
  uploadStatement,
} from '../domain/bank-statements.js';
import {
  csvMappingSchema,
  detectStatementFormat,
  fromJsonStatement,
  jsonStatementShape,
  parseStatementSteps,
  runParseAsync,
  StatementParseError,
  STATEMENT_FORMATS,
  type ParsedStatement,
  type StatementFormat,
} from '../parsers/index.js';
import { getStatement, listStatements, statementView, transition } from '../store/bank-statements.js';

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
  file_sha256: z.string().nullable(),
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

const uploadedFile = z.custom<UploadedFile>(
  (v) => typeof v === 'object' && v !== null && Buffer.isBuffer((v as UploadedFile).content),
  'must be an uploaded file (multipart field `file`)',
);

const jsonText = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => {
    if (typeof v !== 'string') return v;
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
    if (b.format && b.format !== 'json') ctx.addIssue({ code: 'custom', path: ['file'], message: `required for format ${b.format} (send multipart/form-data)` });
    for (const k of ['account', 'currency', 'transactions'] as const) {
      if (b[k] === undefined) ctx.addIssue({ code: 'custom', path: [k], message: 'required (JSON form)' });
    }
  });

const multipartDoc = z.object({
  file: z.string().meta({ format: 'binary', contentMediaType: 'application/octet-stream' }).describe('The statement file.'),
  format: z.enum(STATEMENT_FORMATS).optional().describe('Omitted: detected from the file (camt053, mt940, bai2, json; csv needs `mapping`).'),
  mapping: z.string().optional().describe('CSV only: the column mapping as JSON text, e.g. {"account":"DE89…","date_column":"Date","amount_column":"Amount","currency":"EUR","delimiter":";","decimal_separator":",","date_format":"DD.MM.YYYY"}.'),
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
      : `the format could not be detected from the file (${d.unknown}): send \`format\` (camt053, bai2, mt940, csv, json)`;
  throw new ValidationError([{ loc: ['body', 'format'], msg, type: 'format_undetected' }], `Statement format not detected: ${msg}.`);
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
      'Either `multipart/form-data` with `file` and optionally `format` (`camt053` ISO 20022 camt.053 XML, `bai2`, `mt940`, `csv`, `json`) ' +
      'and for CSV a `mapping` (JSON text: `account`, `date_column`, `amount_column` or `debit_column`+`credit_column`, ' +
      '`currency_column` or `currency`, optional counterparty/remittance/reference columns, `delimiter`, `decimal_separator`, ' +
      '`date_format`), or `application/json` with `account`, `currency` and `transactions` (signed decimal-string amounts). ' +
      `Files up to ${MAX_STATEMENT_BYTES} bytes; one account (one statement) per file.\n\n` +
      'Without `format` the format is detected from the file: camt.053 by its XML namespace ' +
      '(`urn:iso:std:iso:20022:tech:xsd:camt.053.*`), BAI2 by its `01` file header record, MT940 by its field tags ' +
      '(`:20:`, `:25:`, `:60F:`/`:60M:`; entries `:61:`), JSON by its leading `{`; `format` in the answer says which. A CSV file ' +
      'cannot be read without its column mapping: without `mapping` it is refused with 422 saying so (send `mapping`, ' +
      '`format=csv` is then implied). A file none of these fit (another XML message such as camt.052/camt.054, an empty ' +
      'or binary file) gives 422 `request-validation` at `["body","format"]` naming what was seen; nothing is stored.\n\n' +
      'The file is parsed in the request: a malformed file gives 422 `request-validation` whose error `loc` and `msg` name the ' +
      'line (BAI2, MT940, CSV), the XML element path (CAMT) or the JSON path, and nothing is stored. A statement file is text: a NUL byte (U+0000) in it is refused (422, with its line), as is a NUL in any string of the JSON form or the mapping. A valid file is stored ' +
      'with status `uploaded` and processed by the Temporal workflow `bank-statement-<id>` (store transactions, classify ' +
      'deposits, propose payments, then `ready`; `failed` with `error` when processing fails after retries). The workflow is ' +
      'started before the statement is committed: a statement is never left `uploaded` without processing, and when the ' +
      'workflow cannot be started (Temporal unavailable: the start gives up after 5 s) nothing is stored (503 ' +
      '`service-unavailable` with `Retry-After`; upload the same file again). Processing rides out database and Temporal ' +
      'outages (activities retried for ACTIVITY_RETRY_WINDOW_MINUTES); `failed` then says what to do in words for users.\n\n' +
      'Duplicates: uploading a file already imported (same SHA-256) is refused with 409 `conflict` naming the existing ' +
      'statement; if that statement is still `uploaded` with no running workflow (stranded by an earlier failure), its ' +
      'processing is started instead and it is returned (200); if that statement `failed`, its processing is resumed (status ' +
      'back to `uploaded`, error cleared, lines already stored kept and not stored twice) and it is returned (200). A different file that overlaps an earlier one is accepted and ' +
      'stores only the lines not imported before (see `unique_import_id` of a transaction); `transaction_count` counts those.\n\n' +
      `Statuses: ${STATUS_DESCRIPTION}`,
    tags: ['Cash application'],
    multipart: { maxBytes: MAX_STATEMENT_BYTES, schema: multipartDoc, json: jsonDoc },
    body: uploadBody,
    response: bankStatementSchema,
    errors: [409, 503],
    handler: async ({ body, identity, deps }) => {
      let format: StatementFormat;
      let content: Buffer;
      let parsed: ParsedStatement;
      let fileName: string | null = null;
      const options: Record<string, unknown> = {};
      try {
        if (body.file) {
          content = body.file.content;
          format = body.format ?? detectedFormat(content, body.mapping !== undefined);
          fileName = body.file.filename;
          if (body.mapping) options.mapping = body.mapping;
          // In batches with a turn of the event loop between them: a large file does not stall the service.
          parsed = await runParseAsync(parseStatementSteps(format, content, options), () => nextTurn());
        } else {
          format = 'json';
          const doc = Object.fromEntries(Object.keys(jsonStatementShape).map((k) => [k, (body as Record<string, unknown>)[k]]));
          content = Buffer.from(JSON.stringify(doc));
          parsed = fromJsonStatement(doc as Parameters<typeof fromJsonStatement>[0]);
        }
      } catch (err) {
        if (err instanceof StatementParseError) {
          const loc = body.file ? ['body', 'file', err.where] : ['body', err.where];
          throw new ValidationError([{ loc, msg: `${err.where}: ${err.problem}`, type: 'statement_invalid' }], `The ${format!} statement is malformed at ${err.where}: ${err.problem}`);
        }
        throw err;
      }
      refuseNul(body.file ? content! : null, parsed!, options);
      const { statement } = await uploadStatement(deps, { organizationId: identity.org, uploadedBy: identity.sub, format: format!, fileName, content, options, parsed });
      return statementView(statement);
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
    description: 'Moves a `ready` statement to `approved` (it can no longer be deleted). Any other status: 409 `conflict`. Unknown or another organization\'s id: 404.',
    tags: ['Cash application'],
    params: z.object({ statement_id: idSchema() }),
    response: bankStatementSchema,
    errors: [404, 409],
    handler: async ({ params, identity, deps }) => {
      const row = await statementOf(deps, identity.org, params.statement_id);
      const moved = await transition(deps.db, identity.org, row.id, ['ready'], 'approved', { approved_by: identity.sub, approved_at: deps.db.fn.now() });
      if (!moved) {
        const now = await getStatement(deps.db, identity.org, row.id);
        throw new ConflictError(`Only a ready statement can be approved; this one is ${now?.status ?? row.status}.`);
      }
      return statementView((await getStatement(deps.db, identity.org, row.id))!);
    },
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
