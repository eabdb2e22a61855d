/**
 * Webhook endpoints: an organization's receivers of events (DESIGN §10). The signing secret
 * (`whsec_` + base64 of 32 random bytes, the Standard Webhooks format) is answered at creation and
 * rotation only and stored sealed (kernel secrets.ts, bound to the endpoint). Delivery itself is the
 * worker's (`webhook-endpoint-<id>` workflows); this module changes the rows and wakes or stops
 * an endpoint's workflow after the change has committed.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { webhookEndpointWorkflowId } from '@rp/workflows';
import { ConflictError, newId, NotFoundError, sealSecret, withTemporalDeadline, type Db, type Logger, type OutboundPolicy, type SecretsKeyConfig } from '@rp/platform';
import {
  deleteEndpoint,
  countEndpoints,
  getEndpoint,
  insertEndpoint,
  listEndpoints,
  lockOrganizationEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
  type EndpointFields,
} from '../../store/webhooks/endpoints.js';
import { endpointSecretAad, type WebhookEndpointRow } from '../../store/webhooks/rows.js';
import { checkEndpointUrl } from './url.js';
import { wakeWebhookEndpoint } from './wake.js';
import { ensureWebhookDispatcher } from './dispatcher.js';

/** Endpoints one organization may have (Stripe's limit too): deliveries fan out per endpoint. */
export const MAX_ENDPOINTS_PER_ORGANIZATION = 16;
/** How long a rotated-out secret still signs deliveries (beside the new one). */
export const PREVIOUS_SECRET_VALIDITY = '24 hours';

export interface WebhookDeps {
  db: Db;
  temporal: Client;
  config: SecretsKeyConfig & { OUTBOUND_ALLOWLIST: OutboundPolicy };
}

function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The organization's endpoint, or 404 (another organization's id included). */
export async function endpointOf({ db }: { db: Db }, organizationId: string, id: string): Promise<WebhookEndpointRow> {
  const row = await getEndpoint(db, organizationId, id);
  if (!row) throw new NotFoundError(`No webhook endpoint ${id}.`);
  return row;
}

export async function endpointsOf({ db }: { db: Db }, organizationId: string, page: { offset: number; pageSize: number }) {
  return listEndpoints(db, organizationId, page.offset, page.pageSize);
}

export interface NewEndpoint {
  url: string;
  events: string[];
  description?: string | null;
  is_enabled?: boolean;
}

/** Creates the endpoint; its secret is returned here and never again (until a rotation). */
export async function createEndpoint(deps: WebhookDeps, organizationId: string, input: NewEndpoint): Promise<{ row: WebhookEndpointRow; secret: string }> {
  await checkEndpointUrl(deps.config.OUTBOUND_ALLOWLIST, input.url);
  const id = newId();
  const secret = newSecret();
  const row = await deps.db.transaction(async (trx) => {
    await lockOrganizationEndpoints(trx, organizationId);
    if ((await countEndpoints(trx, organizationId)) >= MAX_ENDPOINTS_PER_ORGANIZATION) {
      throw new ConflictError(`An organization may have at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints; delete one first (one endpoint may subscribe to any number of event types).`);
    }
    return insertEndpoint(trx, {
      id,
      organization_id: organizationId,
      url: input.url,
      events: input.events,
      description: input.description ?? null,
      is_enabled: input.is_enabled ?? true,
      secret_enc: sealSecret(deps.config, endpointSecretAad(id), secret),
    });
  });
  // The dispatcher queues this endpoint's events; the worker ensures it at start, and so does this.
  if (row.is_enabled) await ensureWebhookDispatcher(deps.temporal);
  return { row, secret };
}

/**
 * Changes the fields present. `is_enabled: true` resumes delivery: it clears what the platform set
 * when it disabled the endpoint and wakes the endpoint's workflow (on every such request, so a
 * request repeated after a 503 still wakes it).
 */
export async function patchEndpoint(deps: WebhookDeps, organizationId: string, id: string, input: Partial<NewEndpoint>): Promise<WebhookEndpointRow> {
  if (input.url !== undefined) await checkEndpointUrl(deps.config.OUTBOUND_ALLOWLIST, input.url);
  const fields: Partial<EndpointFields> = {};
  if (input.url !== undefined) fields.url = input.url;
  if (input.events !== undefined) fields.events = input.events;
  if (input.description !== undefined) fields.description = input.description;
  if (input.is_enabled !== undefined) fields.is_enabled = input.is_enabled;
  const row = await deps.db.transaction(async (trx) => {
    const current = await getEndpoint(trx, organizationId, id, { forUpdate: true });
    if (!current) throw new NotFoundError(`No webhook endpoint ${id}.`);
    return Object.keys(fields).length ? updateEndpoint(trx, organizationId, id, fields) : current;
  });
  if (input.is_enabled === true) {
    await ensureWebhookDispatcher(deps.temporal);
    await wakeWebhookEndpoint(deps.temporal, { organizationId, endpointId: id });
  }
  return row;
}

/** A new secret; the current one keeps signing beside it for {@link PREVIOUS_SECRET_VALIDITY}. */
export async function rotateSecret(deps: WebhookDeps, organizationId: string, id: string): Promise<{ row: WebhookEndpointRow; secret: string }> {
  const secret = newSecret();
  const row = await deps.db.transaction(async (trx) => {
    const current = await getEndpoint(trx, organizationId, id, { forUpdate: true });
    if (!current) throw new NotFoundError(`No webhook endpoint ${id}.`);
    return rotateEndpointSecret(trx, organizationId, id, sealSecret(deps.config, endpointSecretAad(id), secret), PREVIOUS_SECRET_VALIDITY);
  });
  return { row, secret };
}

/**
 * Deletes the endpoint and its deliveries, then asks its delivery workflow to stop. The request is
 * best effort: a workflow that is not running has nothing to stop, and one that missed the request
 * finds no endpoint on its next look and ends, so neither fails the delete.
 */
export async function removeEndpoint(deps: WebhookDeps, organizationId: string, id: string, log: Logger): Promise<WebhookEndpointRow> {
  const row = await deleteEndpoint(deps.db, organizationId, id);
  if (!row) throw new NotFoundError(`No webhook endpoint ${id}.`);
  try {
    await withTemporalDeadline(deps.temporal, () => deps.temporal.workflow.getHandle(webhookEndpointWorkflowId(id)).cancel());
  } catch (e) {
    if (!(e instanceof WorkflowNotFoundError)) log.warn({ err: e, endpointId: id }, 'could not cancel the deleted webhook endpoint\'s delivery workflow');
  }
  return row;
}
