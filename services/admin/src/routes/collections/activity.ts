/** The customer timeline route (GET /v2/partners/{partner_id}/activity), served by admin (collections). */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, PARTNER_ACTIVITY_TYPES } from '@rp/platform';
import { route } from '../../deps.js';
import { partnerActivity } from '../../domain/collections/activity.js';
import { activityView } from '../../views/collections/activity.js';

const MAX_PAGE = 200;

const TYPES_DOC =
  '`collection_email` / `collection_sms`: an email or text of a collection action, once sent or failed (at its sending; ref ' +
  '`collection_action`, see GET /v2/collections/actions); `task`: a follow-up task, when created and when done (ref `task`, see ' +
  'GET /v2/tasks); `receipt`: a payment receipt emailed to the customer (ref `outreach_record`, see GET ' +
  '/v2/cash-app/outreach/{outreach_id}); `promise_to_pay`: a promise when made and when kept, broken or cancelled (ref ' +
  '`promise_to_pay`); `dispute`: a dispute when opened and when resolved or rejected (ref `dispute`); `payment_applied`: an ' +
  'approved payment of the customer with the number of invoices it was allocated to, at its approval (ref `payment`, see GET ' +
  '/v2/payments/{payment_id}); `reply`: an email received in the AR inbox and matched to the customer (automatically or by a correction), at its receipt: ' +
  '"Email from <sender> — <subject>" (ref `inbox_message`, see GET /v2/inbox/messages/{inbox_message_id}).';

export const partnerActivitySchema = z
  .object({
    type: z.enum(PARTNER_ACTIVITY_TYPES).describe(TYPES_DOC),
    occurred_at: z.string().describe('When it happened (UTC).'),
    summary: z
      .string()
      .describe('One line for people, in English; amounts in the currency\'s minor units with the ISO code ("500.00 EUR"); free text (a text message, a note, a resolution) quoted to 100 characters.'),
    ref: z
      .object({ object: z.string().describe('The `object` of the resource the item is about.'), id: z.string() })
      .describe('The resource the item is about; one resource may have several items (a task created, then done).'),
  })
  .meta({ id: 'PartnerActivity' });

export const partnerActivityRoutes = [
  route({
    method: 'get',
    path: '/v2/partners/{partner_id}/activity',
    operationId: 'listPartnerActivity',
    summary: 'A customer\'s activity timeline',
    description:
      'Everything that happened with one customer across collections and cash application, newest first (ties: by type, then ' +
      `reference). Types: ${TYPES_DOC} Filter \`type\` (one type). Paginated (\`page\`, \`page_size\` 1..${MAX_PAGE}). A member ` +
      'reads the timeline of customers that belong to no business unit or to one of theirs; an unknown customer, another ' +
      'organization\'s or one outside the member\'s units answers 404. Every item of a visible customer is shown, whoever ' +
      'created it.',
    tags: ['Collections'],
    params: z.object({ partner_id: idSchema() }),
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      type: z.enum(PARTNER_ACTIVITY_TYPES).optional().describe('Only items of this type.'),
    }),
    response: pageEnvelopeSchema(partnerActivitySchema),
    errors: [404],
    handler: async ({ params, query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await partnerActivity(deps, identity, params.partner_id, query.type ? [query.type] : undefined, page);
      return pageOf(rows.map(activityView), total, page);
    },
  }),
];
