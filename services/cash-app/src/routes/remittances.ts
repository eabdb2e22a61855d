/** The v1 remittance routes (/v1/remittances…): listing, reading and recording advices given as JSON or CSV. */
import { z } from 'zod';
import { emailSchema, idSchema, isDecimalString, isoCurrencyCode, Money, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { route } from '../deps.js';
import { REMITTANCE_STATUSES } from '../domain/remittances.js';
import { createRemittance, createRemittanceFromCsv, MAX_REMITTANCE_LINES, remittancePage, remittanceRecord } from '../domain/remittance-intake.js';
import { remittanceView } from '../views/remittances.js';

const MAX_PAGE = 500;
const MAX_LINES = MAX_REMITTANCE_LINES;
/** A CSV advice of MAX_LINES lines of ordinary width (invoice number, three amounts, a few other columns) fits well within 1 MB. */
const CSV_MAX_LENGTH = 1_000_000;

// ---------- response schemas ----------

const bankDetailsSchema = z
  .object({
    account_number: z.string().nullable(),
    bank_name: z.string().nullable(),
    bank_number: z.string().nullable(),
    branch_number: z.string().nullable(),
    iban: z.string().nullable(),
    type: z.string().nullable(),
  })
  .nullable()
  .meta({ id: 'RemittanceBankDetails' });

const allocationSchema = z.object({
  object: z.literal('remittance_allocation'),
  id: z.string(),
  remittance_id: z.string(),
  invoice_number: z.string(),
  invoice_id: z.string().nullable().describe('The ledger invoice the number was linked to; null when none (see agent_uncertainties).'),
  amount_paid: z.number(),
  amount_discount: z.number(),
  amount_withheld: z.number(),
  invoice: z
    .object({
      id: z.string(),
      currency: z.string(),
      amount_due: z.number().describe('The invoice total (document currency).'),
      amount_paid: z.number().describe('What has been paid of it so far: total minus the open amount the ledger reports.'),
      due_date: z.string().nullable(),
    })
    .nullable(),
  ...timestampsShape,
})
  .meta({ id: 'RemittanceAllocation' });

export const remittanceSchema = z.object({
  object: z.literal('remittance'),
  id: z.string(),
  status: z.enum(REMITTANCE_STATUSES),
  agent_confidence_score: z
    .number()
    .describe(
      '0..1: how much of the advice (by amount) links cleanly to open invoices, reduced for each doubt (see createRemittance); an advice read from email loses a further ×0.9 when the reader had to guess which column an amount stood in, and is 0 when nothing could be read.',
    ),
  agent_confidence_reason: z.string().describe('The score in words; for an advice read from email it starts with where the lines were read (`Read 2 lines from the attachment avis.pdf.`).'),
  agent_error_code: z
    .string()
    .nullable()
    .describe(
      '`no_invoice_matched` when no line linked to a ledger invoice. An advice read from email where no line could be read at all is still recorded (without allocations, so a clerk sees it arrived) with `no_remittance_lines`, `unsupported_attachment` (TNEF/winmail.dat), `unreadable_attachment` (a file that fails to parse or is over 25 MiB) or `attachment_missing`.',
    ),
  agent_uncertainties: z
    .array(z.string())
    .describe(
      'Each doubt as `code` or `code: detail` (codes in createRemittance). Advice read from email adds the reader\'s own: `total_differs: total <t>, lines <s>` (the stated total is not the sum of the lines paid), `line_amounts_unclear: <invoice>` (an amount\'s column guessed), `amount_not_split: <amount> for <invoices>` (one amount for several invoices that their open amounts do not add up to), and per unreadable part its error code with the file.',
    ),
  allocations: z.array(allocationSchema),
  attachment: z
    .object({
      object: z.literal('attachment'),
      file_name: z.string().nullable(),
      content_type: z.string(),
      size: z.number().int(),
      presigned_url: z
        .string()
        .nullable()
        .describe('A GET of the file valid for one hour from the answer (spec 2.5): set for an advice read from an email attachment (the file is kept in object storage); null for a CSV posted to the API, when the service has no object storage, and in the `remittance.created` event (a link would expire before the event is read).'),
      presigned_url_expires_at: z.string().nullable().describe('When presigned_url stops working (ISO 8601 UTC); null with it.'),
    })
    .nullable()
    .describe('The file the remittance was read from: the CSV advice posted to the API, or the email attachment (PDF, CSV, XLSX…) the advice was read from; null for JSON and for advice read from an email body.'),
  currency: z.string().nullable(),
  email: z
    .object({
      object: z.literal('inbox_message'),
      id: z.string().describe('The inbox message (GET /v2/inbox/messages/{id}).'),
      message_id: z.string().describe('Its Message-ID header.'),
      from: z.string().nullable().describe('Sender address.'),
      from_name: z.string().nullable(),
      subject: z.string().nullable(),
      received_at: z.string(),
    })
    .nullable()
    .meta({ id: 'RemittanceEmail' })
    .describe('The email the advice arrived in (`source` email: read from the AR inbox); null for remittances created through the API.'),
  partner: z
    .object({ object: z.literal('partner'), id: z.string(), name: z.string(), account_number: z.string().nullable(), email: z.string().nullable() })
    .nullable(),
  payee_bank_details: bankDetailsSchema,
  payer_bank_details: bankDetailsSchema,
  payer_email: z.string().nullable(),
  payer_name: z.string().nullable(),
  payment_method: z.string().nullable(),
  transaction_amount: z.number().nullable(),
  transaction_date: z.string().nullable(),
  transaction_number: z.string().nullable(),
  source: z
    .enum(['json', 'csv', 'email'])
    .describe('How the advice came in: `json` or `csv` through this API, `email` read from a message of the AR inbox (see `email`).'),
  bank_transaction_id: z
    .string()
    .nullable()
    .describe(
      'The bank deposit a payment applied this remittance to (status `applied`); while `submitted`, the deposit an emailed advice was sent for (a reply to that deposit\'s remittance request), else null.',
    ),
  ...timestampsShape,
})
  .meta({ id: 'Remittance' });

// ---------- request schemas ----------

const amount = (what: string) =>
  z
    .number()
    .nonnegative()
    .max(1e14)
    .refine((v) => new Money(v).decimalPlaces() <= 4, 'must have at most 4 decimals')
    .describe(what);

const optionalText = (max: number) => z.string().trim().max(max).nullable().optional();

const bankDetailsInput = z
  .object({
    account_number: optionalText(64),
    bank_name: optionalText(200),
    bank_number: optionalText(64),
    branch_number: optionalText(64),
    iban: optionalText(64),
    type: optionalText(64),
  })
  .nullable()
  .optional();

const headerShape = {
  payer_name: optionalText(300),
  payer_email: emailSchema().nullable().optional(),
  transaction_number: optionalText(200),
  transaction_date: z.iso.date().nullable().optional().describe('YYYY-MM-DD'),
  currency: isoCurrencyCode().nullable().optional().describe('ISO 4217; default: the linked invoices\' currency, else the organization base currency.'),
  payment_method: optionalText(100),
};

const createBody = z.object({
  ...headerShape,
  transaction_amount: amount('Total of the payment; compared with the sum of amount_paid (else `sum_mismatch`).').positive().nullable().optional(),
  payer_bank_details: bankDetailsInput,
  payee_bank_details: bankDetailsInput,
  allocations: z
    .array(
      z.object({
        invoice_number: z.string().trim().min(1).max(100),
        amount_paid: amount('Amount paid against the invoice.'),
        amount_discount: amount('Discount taken.').default(0),
        amount_withheld: amount('Amount withheld (e.g. withholding tax).').default(0),
      }),
    )
    .min(1)
    .max(MAX_LINES),
});

const csvQuery = z.object({
  ...headerShape,
  transaction_amount: z
    .string()
    .max(40)
    .refine((v) => isDecimalString(v) && !v.startsWith('-') && Number(v) > 0 && (v.split('.')[1]?.length ?? 0) <= 4, 'must be a positive decimal amount, e.g. 1190.00')
    .optional(),
  file_name: z.string().trim().max(255).optional().describe('Name of the advice file, kept on the attachment.'),
});

const CREATE_NOTES =
  'Each allocation is linked to the ledger invoice with that document number (`invoice_id`, `invoice`); the customer ' +
  '(`partner`) is the one all linked invoices belong to, else the one partner whose name or legal name equals `payer_name` ' +
  '(ignoring case). `agent_confidence_score` (0..1) is the amount-weighted share of allocations that link cleanly to an open ' +
  'invoice (a linked line with a problem counts half), reduced for a sum that differs from `transaction_amount` (×0.8), ' +
  'invoices of several customers (×0.7), no customer identified (×0.8), a payer name pointing to another customer (×0.9) or ' +
  'a repeated invoice number (×0.9). `agent_uncertainties` lists each doubt: `invoice_not_found: <no>`, ' +
  '`ambiguous_invoice: <no>`, `invoice_closed: <no>`, `amount_exceeds_open: <no>` (paid + discount + withheld above the ' +
  'open amount), `currency_mismatch: <no>`, `duplicate_invoice: <no>`, `sum_mismatch`, `multiple_partners`, ' +
  '`partner_not_identified`, `payer_name_mismatch`; `agent_error_code` is `no_invoice_matched` when nothing linked. ' +
  'The remittance starts `submitted`; it becomes `applied` once a payment uses it. Answers 200 with the remittance, and ' +
  'records the event `remittance.created` with it (GET /v2/events, webhooks; read by a member under the business-unit rule of ' +
  'GET /v1/remittances, judged when it was recorded). ' +
  'Errors use the v1 shapes: validation `{detail: {<location>: {<field>: [msg]}}, message}`, others `{data, error, message}`.';

export const remittanceRoutes = [
  route({
    method: 'get',
    path: '/v1/remittances',
    operationId: 'listRemittances',
    summary: 'List remittances',
    description:
      'Remittance advices, newest first, with their allocations. Filters: `status` (`submitted`, `applied`), `partner_id`, ' +
      '`date_from` / `date_to` (inclusive, on `transaction_date`, YYYY-MM-DD). Paginated with `page` (0-based) and ' +
      '`page_size` (1..500, default 50; `size` is an alias). A member sees only remittances whose customer and linked invoices ' +
      'are of their business units or of none (GET of another: 404); a member\'s new remittance links only such invoices and customers.',
    tags: ['Remittances'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      status: z.enum(REMITTANCE_STATUSES).optional(),
      partner_id: idSchema().optional(),
      date_from: z.iso.date().optional().describe('transaction_date on or after (YYYY-MM-DD).'),
      date_to: z.iso.date().optional().describe('transaction_date on or before (YYYY-MM-DD).'),
    }),
    response: pageEnvelopeSchema(remittanceSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { records, total } = await remittancePage(
        deps,
        identity.org,
        { status: query.status, partnerId: query.partner_id, dateFrom: query.date_from, dateTo: query.date_to, scope: identity.bu },
        page,
      );
      return pageOf(records.map(remittanceView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v1/remittances/{remittance_id}',
    operationId: 'getRemittance',
    summary: 'Get a remittance',
    description: 'The remittance with its allocations and their invoices. Unknown or another organization\'s id: 404 `{data, error, message}`.',
    tags: ['Remittances'],
    params: z.object({ remittance_id: idSchema() }),
    response: remittanceSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => remittanceView(await remittanceRecord(deps, identity.org, params.remittance_id, identity.bu)),
  }),
  route({
    method: 'post',
    path: '/v1/remittances',
    operationId: 'createRemittance',
    summary: 'Create a remittance',
    description: `Records a remittance advice given as JSON (1..${MAX_LINES} allocations; amounts are JSON numbers with at most 4 decimals). ${CREATE_NOTES}`,
    tags: ['Remittances'],
    body: createBody,
    response: remittanceSchema,
    handler: async ({ body, identity, deps }) => {
      const lines = body.allocations.map((a) => ({
        invoice_number: a.invoice_number,
        amount_paid: new Money(a.amount_paid).toFixed(),
        amount_discount: new Money(a.amount_discount).toFixed(),
        amount_withheld: new Money(a.amount_withheld).toFixed(),
      }));
      const header = { ...body, transaction_amount: body.transaction_amount == null ? null : new Money(body.transaction_amount).toFixed() };
      return remittanceView(await createRemittance(deps, identity.org, identity.bu, header, lines));
    },
  }),
  route({
    method: 'post',
    path: '/v1/remittances/csv',
    operationId: 'createRemittanceFromCsv',
    summary: 'Create a remittance from a CSV advice',
    description:
      'The request body is the CSV remittance advice itself (`Content-Type: text/csv`): a header row, then one line per invoice. ' +
      'Columns (header names, case and spacing ignored): invoice number (`invoice_number`, `Invoice No.`, `Invoice`, …) and ' +
      'amount paid (`amount_paid`, `Paid`, `Amount`, …) required; `discount` and `withheld` optional (empty = 0); other ' +
      'columns are ignored. Separator `,` or `;`; amounts are plain decimals with a dot (`1190.00`). The payment\'s own fields ' +
      '(payer_name, payer_email, transaction_amount as a decimal string, transaction_date, transaction_number, currency, ' +
      'payment_method, file_name) are query parameters. A malformed file gives 422 naming each line and column ' +
      `(\`detail.body["line 3.amount_paid"]\`), nothing stored; at most ${MAX_LINES} lines. The file is kept as the ` +
      `remittance's \`attachment\`. ${CREATE_NOTES}`,
    tags: ['Remittances'],
    textBody: 'text/csv',
    query: csvQuery,
    body: z.string().min(1, 'The CSV body is empty.').max(CSV_MAX_LENGTH, `The CSV body is at most ${CSV_MAX_LENGTH} characters.`),
    response: remittanceSchema,
    handler: async ({ query, body, identity, deps }) => {
      const { file_name: fileName, ...header } = query;
      return remittanceView(
        await createRemittanceFromCsv(deps, identity.org, identity.bu, { ...header, transaction_amount: query.transaction_amount ?? null }, { text: body, fileName: fileName ?? null }),
      );
    },
  }),
];
