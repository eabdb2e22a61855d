/** SMS templates (spec 2.4, endpoint row 5). v2 routes. Any user of the organization may manage them. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { route } from '../../deps.js';
import * as domain from '../../domain/collections/sms-templates.js';
import { smsTemplateView } from '../../views/collections/sms-templates.js';

const MAX_PAGE = 200;
const TAGS = ['Collections outreach'];

const SMS_DOC =
  'The body is a Liquid template with the same variable catalogue and validation as email templates (see POST /v1/email-templates): ' +
  'a syntax error or unknown variable gives 422 naming the line and column. `character_count` and `estimated_segment_count` are computed ' +
  '(sms-segments-calculator) on the body as written, BEFORE variable substitution, so the real message may differ: GSM-7 fits 160 septets ' +
  'in one segment and 153 per part beyond; extension characters (€ [ ] { } \\ ^ ~ |) count two septets; any character outside GSM-7 ' +
  'switches the whole message to UCS-2 (70 per single segment, 67 per part). `character_count` counts septets (GSM-7) or UTF-16 units (UCS-2). ' +
  'At most one default per organization: setting `is_default` clears the previous default atomically.';

const smsTemplateSchema = z
  .object({
    object: z.literal('sms_template'),
    id: z.string(),
    name: z.string(),
    body: z.string(),
    description: z.string().nullable(),
    is_default: z.boolean(),
    character_count: z.number().int().describe('Approximate, before variable substitution.'),
    estimated_segment_count: z.number().int().describe('Segments under the encoding the body needs (160/153 GSM-7, 70/67 UCS-2); may differ after substitution.'),
    encoding: z.enum(['GSM-7', 'UCS-2']).describe('Encoding the body as written needs.'),
    ...timestampsShape,
  })
  .meta({ id: 'SmsTemplate' });

const name = z.string().trim().min(1).max(128);
const body = z.string().min(1).max(1600);
const description = z.string().max(2000).nullable();
const params = z.object({ sms_template_id: idSchema() });

export const smsTemplateRoutes = [
  route({
    method: 'post',
    path: '/v2/sms-templates',
    operationId: 'createSmsTemplate',
    summary: 'Create an SMS template',
    description: `name ≤ 128 characters, body ≤ 1600. ${SMS_DOC}`,
    tags: TAGS,
    body: z.object({ name, body, description: description.optional(), is_default: z.boolean().optional() }),
    response: smsTemplateSchema,
    handler: async ({ body: b, identity, deps }) =>
      smsTemplateView(await domain.createSmsTemplate(deps, identity, { name: b.name, body: b.body, description: b.description ?? null, is_default: b.is_default ?? false })),
  }),
  route({
    method: 'get',
    path: '/v2/sms-templates',
    operationId: 'listSmsTemplates',
    summary: 'List SMS templates',
    description: 'Oldest first. `page` >= 0, `page_size` (alias `size`) 1..200.',
    tags: TAGS,
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(smsTemplateSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await domain.listSmsTemplates(deps, identity.org, page);
      return pageOf(rows.map(smsTemplateView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/sms-templates/{sms_template_id}',
    operationId: 'getSmsTemplate',
    summary: 'Get an SMS template',
    tags: TAGS,
    params,
    response: smsTemplateSchema,
    errors: [404],
    handler: async ({ params: p, identity, deps }) => smsTemplateView(await domain.getSmsTemplate(deps, identity.org, p.sms_template_id)),
  }),
  route({
    method: 'patch',
    path: '/v2/sms-templates/{sms_template_id}',
    operationId: 'updateSmsTemplate',
    summary: 'Update an SMS template',
    description: `Only the fields sent change (row 5); \`description: null\` clears it. name ≤ 128, body ≤ 1600 → 422 beyond. ${SMS_DOC}`,
    tags: TAGS,
    params,
    body: z.object({ name: name.optional(), body: body.optional(), description: description.optional(), is_default: z.boolean().optional() }),
    response: smsTemplateSchema,
    errors: [404],
    handler: async ({ params: p, body: b, identity, deps }) => smsTemplateView(await domain.updateSmsTemplate(deps, identity, p.sms_template_id, b)),
  }),
  route({
    method: 'delete',
    path: '/v2/sms-templates/{sms_template_id}',
    operationId: 'deleteSmsTemplate',
    summary: 'Delete an SMS template',
    description: 'Permanent; 204 on success, 404 when unknown. A template a collection policy step sends cannot be deleted: 409 naming the policy (change the step or delete the policy first).',
    tags: TAGS,
    params,
    errors: [404, 409],
    handler: async ({ params: p, identity, deps }) => domain.deleteSmsTemplate(deps, identity.org, p.sms_template_id),
  }),
];
