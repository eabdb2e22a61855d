/** Routes of the caller-ID name registration (spec 2.18): read it, save or submit it. v2. */
import { z } from 'zod';
import { emailSchema, timestampsShape } from '@rp/platform';
import { route } from '../deps.js';
import { putCnamRegistration, readCnamRegistration } from '../domain/cnam.js';
import {
  CNAM_DISPLAY_NAME_MAX,
  CNAM_DISPLAY_NAME_PATTERN,
  E164_PATTERN,
  isCountryCode,
  isHttpsUrl,
  isRealPhoneNumber,
  isSubdivisionCode,
  SUBDIVISION_PATTERN,
} from '../domain/cnam-rules.js';
import { CNAM_STATUSES } from '../domain-types/cnam.js';
import { cnamRegistrationView } from '../views/cnam.js';

/** Fields a submission needs (a draft may leave any of them null). */
const REQUIRED_FOR_SUBMISSION = [
  'display_name',
  'legal_business_name',
  'street_address',
  'city',
  'postal_code',
  'country',
  'phone_number',
  'contact_first_name',
  'contact_last_name',
  'contact_email',
] as const;

const text = (max: number) => z.string().trim().min(1, 'must not be empty (send null to leave it unset)').max(max).nullable().default(null);
const phone = (what: string) =>
  z
    .string()
    .regex(E164_PATTERN, 'must be an E.164 number: + and the country code, up to 15 digits, no spaces (e.g. +14155552671)')
    .refine((v) => !E164_PATTERN.test(v) || isRealPhoneNumber(v), `is not a valid ${what} in its country's numbering plan`)
    .nullable()
    .default(null);

const STATUS_DOC =
  '`draft` (saved with submit false; nothing sent) → `submitted` (a submission is recorded and workflow `cnam-registration-<submission_id>` ' +
  'started) → `in_review` (the registry adapter took it; the default adapter records it for an operator) → `approved` (approved_at set; ' +
  'status_detail an optional note) or `rejected` (status_detail the reason).';

export const cnamRegistrationSchema = z
  .object({
    object: z.literal('cnam_registration'),
    id: z.string(),
    status: z.enum(CNAM_STATUSES).describe(STATUS_DOC),
    status_detail: z.string().nullable().describe('The registry\'s rejection reason or approval note; null otherwise.'),
    display_name: z.string().nullable(),
    legal_business_name: z.string().nullable(),
    street_address: z.string().nullable(),
    city: z.string().nullable(),
    state: z.string().nullable(),
    postal_code: z.string().nullable(),
    country: z.string().nullable(),
    business_type: z.string().nullable(),
    business_industry: z.string().nullable(),
    registration_id_type: z.string().nullable(),
    registration_number: z.string().nullable(),
    regions_of_operation: z.array(z.string()),
    website: z.string().nullable(),
    contact_first_name: z.string().nullable(),
    contact_last_name: z.string().nullable(),
    contact_email: z.string().nullable(),
    contact_phone: z.string().nullable(),
    contact_title: z.string().nullable(),
    phone_number: z.string().nullable(),
    user_id: z.string().nullable().describe('The admin who last saved it; null for backfilled records.'),
    submitted_at: z.string().nullable().describe('Set by the platform when a submission is made (the latest one).'),
    approved_at: z.string().nullable().describe('Set by the platform when the registry approves; null in every other status.'),
    error_message: z.string().nullable().describe('The registry adapter\'s technical error while a submission is being retried; null otherwise.'),
    submission_id: z.string().nullable().describe('The latest submission; its workflow id is `cnam-registration-<submission_id>`.'),
    ...timestampsShape,
  })
  .meta({ id: 'CnamRegistration' });

const cnamInput = z
  .strictObject({
    submit: z.boolean().default(true).describe('true (default): submit to the registry. false: save as a draft (not allowed on an approved registration).'),
    display_name: z
      .string()
      .max(CNAM_DISPLAY_NAME_MAX, `must be at most ${CNAM_DISPLAY_NAME_MAX} characters`)
      .regex(CNAM_DISPLAY_NAME_PATTERN, 'may contain only ASCII letters, digits, space and , . & - (at least one letter or digit)')
      .nullable()
      .default(null)
      .describe('Caller-ID name: at most 15 characters of the CNAM set (ASCII letters, digits, space, `, . & -`).'),
    legal_business_name: text(256),
    street_address: text(256),
    city: text(128),
    state: text(128),
    postal_code: text(32),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code in upper case (e.g. US)')
      .refine((v) => !/^[A-Z]{2}$/.test(v) || isCountryCode(v), 'is not an assigned ISO 3166-1 alpha-2 country code')
      .nullable()
      .default(null),
    business_type: text(128),
    business_industry: text(128),
    registration_id_type: text(64).describe('e.g. EIN'),
    registration_number: text(64),
    regions_of_operation: z
      .array(z.string().regex(SUBDIVISION_PATTERN, 'must be an ISO 3166-2 code such as US-CA').refine((v) => !SUBDIVISION_PATTERN.test(v) || isSubdivisionCode(v), 'is not an ISO 3166-2 subdivision'))
      .max(100)
      .default([])
      .describe('ISO 3166-2 subdivision codes of the registration\'s country (e.g. US-CA); duplicates are dropped.'),
    website: z.string().max(2048).refine(isHttpsUrl, 'must be an https:// URL of a named host').nullable().default(null),
    contact_first_name: text(128),
    contact_last_name: text(128),
    contact_email: emailSchema().nullable().default(null),
    contact_phone: phone('phone number'),
    contact_title: text(128),
    phone_number: phone('phone number').describe('The number the name is registered for, E.164, valid in its country (full libphonenumber metadata).'),
  })
  .superRefine((v, ctx) => {
    // Reported with the field rules above: every problem of the request at once.
    if (v.submit !== false) {
      for (const f of REQUIRED_FOR_SUBMISSION) {
        if (v[f] === null || v[f] === undefined) ctx.addIssue({ code: 'custom', path: [f], message: 'is required to submit (send submit: false to save a draft)' });
      }
    }
    if (typeof v.country === 'string' && isCountryCode(v.country) && Array.isArray(v.regions_of_operation)) {
      v.regions_of_operation.forEach((r, i) => {
        if (typeof r === 'string' && SUBDIVISION_PATTERN.test(r) && !r.startsWith(`${v.country}-`)) {
          ctx.addIssue({ code: 'custom', path: ['regions_of_operation', i], message: `must be a subdivision of the registration's country ${v.country}` });
        }
      });
    }
  });

export const cnamRoutes = [
  route({
    method: 'get',
    path: '/v2/cnam-registration',
    operationId: 'getCnamRegistration',
    summary: 'The organization\'s caller-ID name registration',
    description: `404 \`entity-not-found\` when the organization has none. Any user of the organization may read it. Status: ${STATUS_DOC}`,
    tags: ['Organization'],
    response: cnamRegistrationSchema,
    errors: [404],
    handler: async ({ identity, deps }) => cnamRegistrationView(await readCnamRegistration(deps, identity.org)),
  }),
  route({
    method: 'put',
    path: '/v2/cnam-registration',
    operationId: 'putCnamRegistration',
    summary: 'Save or submit the caller-ID name registration',
    description:
      'Admins only. Replaces the registration\'s fields (fields left out become null). With `submit` true (the default) the registration ' +
      'is submitted: the platform records a submission, sets `submitted_at` and starts workflow `cnam-registration-<submission_id>` on the ' +
      'admin task queue, which hands it to the registry adapter. The default adapter is connected to no registry: it records the ' +
      'submission and leaves the status `in_review` until an operator records the registry\'s answer with ' +
      '`npm run cli -- cnam decide --org <id> --approve|--reject "reason"`. Required to submit: display_name, legal_business_name, ' +
      'street_address, city, postal_code, country, phone_number, contact_first_name, contact_last_name, contact_email (a draft may leave ' +
      'them null). Field rules: display_name at most 15 ASCII letters, digits, spaces and `, . & -`; phone_number and contact_phone ' +
      'E.164 and valid in their country (libphonenumber full metadata); contact_email an email; country ISO 3166-1 alpha-2 (upper ' +
      'case); regions_of_operation ISO 3166-2 subdivisions of that country; website an https URL; other texts trimmed, not empty. ' +
      'Every problem is reported at once with its `loc`; unknown fields (e.g. status) are refused. 409 while the registration is `submitted` or `in_review`, and for ' +
      '`submit: false` on an approved registration: editing an approved registration means a new submission, which takes it back to ' +
      `\`submitted\` (approved_at cleared). \`submitted_at\`, \`approved_at\` and \`status\` are set by the platform. Status: ${STATUS_DOC}`,
    tags: ['Organization'],
    auth: { role: 'admin' },
    body: cnamInput,
    response: cnamRegistrationSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) =>
      cnamRegistrationView(await putCnamRegistration(deps, { org: identity.org, sub: identity.sub ?? null }, { ...body, regions_of_operation: [...new Set(body.regions_of_operation)] })),
  }),
];
