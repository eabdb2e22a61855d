/** The ERP posting fields of the payment schema, shared by the payment and posting routes. */
import { z } from 'zod';

/** The ERP posting fields of a payment response (besides `posting_error` and `posted_at`). */
export const postingShape = {
  posting_status: z
    .enum(['not_posted', 'pending', 'posted', 'failed', 'unposting'])
    .describe(
      'Posting of the payment to the ERP its invoices came from: `not_posted` (unapproved), `pending` (workflow ' +
        '`payment-posting-<id>` runs: the ERP call, or the middleware queue waits for its answer), `posted`, `failed` ' +
        '(see `posting_error`; POST …/post retries), `unposting` (removal from the ERP in progress).',
    ),
  erp_provider: z.string().nullable().describe('The provider that holds (or refused) the posting: `quickbooks_online` or `middleware`.'),
  erp_payment_id: z.string().nullable().describe('The ERP\'s id of the posted payment (QuickBooks Payment Id).'),
  erp_document_number: z
    .string()
    .nullable()
    .describe(
      'The ERP\'s document number of the posting (reported by the middleware; QuickBooks: the Payment\'s PaymentRefNum, which holds ' +
        'the payment\'s posting key `RP…` (21 characters) that every attempt writes, so an earlier attempt is found before posting again; ' +
        'the bank reference is in the Payment\'s PrivateNote).',
    ),
  erp_posting_adopted: z
    .boolean()
    .describe(
      'True when the ERP payment was not created by the posting that recorded it but found in the ERP by the payment\'s posting key: ' +
        'an earlier attempt that the ERP stored while its answer was lost (a timeout or 5xx, then 401 or exhausted retries). The ' +
        'posting adopted it instead of creating a second ERP payment.',
    ),
  can_unpost: z.boolean().describe('Whether POST …/unpost can remove the posting (the provider\'s cash_app_features.can_unpost_payment).'),
};
