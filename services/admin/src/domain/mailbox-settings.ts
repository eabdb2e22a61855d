/**
 * Mailbox (email) settings of an organization (spec 2.19): how its collectors' email is sent and
 * synced. Two transports:
 *   - `oauth_sync`: the organization's own Microsoft 365 or Google Workspace mailboxes, reached with
 *     OAuth (Microsoft Graph / Gmail API): mail is synced from and sent through those mailboxes.
 *   - `domain_send`: the platform sends from the organization's own domain through an email-sending
 *     API (authenticated by the domain-send API key) and receives replies on an inbound-parse host.
 * The API key is write-only: sealed with the kernel's secrets scheme, answered only as `has_api_key`.
 */
import { ConflictError, sealSecret, ValidationError, type Db, type Logger, type SecretsKeyConfig, type ValidationIssue } from '@rp/platform';
import {
  getMailboxSettings,
  inboundHostTaken,
  lockOrganizationRow,
  saveMailboxSettings as storeSettings,
  type CentralizedInboxSettings,
  type MailboxSettingsRow,
} from '../store/mailbox-settings.js';
import { isWithinDomain } from './hostnames.js';

export const TRANSPORT_PROVIDERS = ['oauth_sync', 'domain_send'] as const;
export type TransportProvider = (typeof TRANSPORT_PROVIDERS)[number];

export interface MailboxSettingsInput {
  transport_provider: TransportProvider;
  hybrid_mode_enabled: boolean;
  microsoft: {
    enabled: boolean;
    admin_consented: boolean;
    application_scopes: string[];
    delegated_scopes: string[];
    azure_tenant_id: string | null;
    azure_client_id: string | null;
    is_byo: boolean;
    uses_legacy_entra_app: boolean;
  };
  google: { enabled: boolean };
  centralized_inbox: CentralizedInboxSettings;
  domain_send: {
    domain_name: string | null;
    inbound_parse_hostname: string | null;
    /** omitted: keep the stored key; null: remove it; a string: replace it */
    api_key?: string | null;
  };
}

export interface MailboxDeps {
  db: Db;
  config: SecretsKeyConfig & { MAIL_INBOUND_DOMAIN: string };
}

/** Binds the sealed key to its organization: an envelope copied onto another organization's row does not open. */
export function mailboxKeyAad(organizationId: string): string {
  return `mailbox-settings:${organizationId}:domain-send-api-key`;
}

export function effectiveInboundHostname(row: Pick<MailboxSettingsRow, 'organization_id' | 'inbound_parse_hostname'>, inboundDomain: string): string {
  return row.inbound_parse_hostname ?? `${row.organization_id}.${inboundDomain.toLowerCase()}`;
}

/** The organization's settings; null until an admin configured them. */
export async function readMailboxSettings({ db }: { db: Db }, organizationId: string): Promise<MailboxSettingsRow | null> {
  return (await getMailboxSettings(db, organizationId)) ?? null;
}

/** The rules between fields (each a 422 naming its field), given what the key will be after the write. */
function crossFieldIssues(input: MailboxSettingsInput, willHaveKey: boolean, inboundDomain: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const at = (...loc: (string | number)[]) => ['body', ...loc];
  const ds = input.domain_send;
  const needsDomainSend = input.transport_provider === 'domain_send' || input.hybrid_mode_enabled;
  const why = input.transport_provider === 'domain_send' ? 'the domain_send transport' : 'hybrid mode (it sends through the domain-send transport)';
  if (needsDomainSend && !ds.domain_name) issues.push({ loc: at('domain_send', 'domain_name'), msg: `is required for ${why}`, type: 'missing' });
  if (needsDomainSend && !willHaveKey) {
    issues.push({ loc: at('domain_send', 'api_key'), msg: `is required for ${why}, and no key is stored`, type: 'missing' });
  }
  if ((input.transport_provider === 'oauth_sync' || input.hybrid_mode_enabled) && !input.microsoft.enabled && !input.google.enabled) {
    issues.push({
      loc: at('transport_provider'),
      msg: `${input.hybrid_mode_enabled ? 'hybrid mode' : 'oauth_sync'} needs a mailbox provider: set microsoft.enabled or google.enabled`,
      type: 'value_error',
    });
  }
  if (input.hybrid_mode_enabled && input.transport_provider !== 'oauth_sync') {
    issues.push({ loc: at('hybrid_mode_enabled'), msg: 'hybrid mode combines OAuth mailbox sync with domain sending: it needs transport_provider oauth_sync', type: 'value_error' });
  }
  const ms = input.microsoft;
  if (ms.enabled && !ms.azure_tenant_id) issues.push({ loc: at('microsoft', 'azure_tenant_id'), msg: 'is required when microsoft.enabled is true', type: 'missing' });
  if (ms.is_byo && !ms.azure_client_id) {
    issues.push({ loc: at('microsoft', 'azure_client_id'), msg: 'is required when is_byo is true (the id of your own Entra application)', type: 'missing' });
  }
  if (ds.inbound_parse_hostname && isWithinDomain(ds.inbound_parse_hostname, inboundDomain)) {
    issues.push({
      loc: at('domain_send', 'inbound_parse_hostname'),
      msg: `must not be under the platform's inbound domain ${inboundDomain} (leave it null to use the platform default)`,
      type: 'value_error',
    });
  }
  return issues;
}

/**
 * PUT: replaces the settings as a whole (blocks and fields left out take their defaults), except
 * the domain-send API key, which changes only when `domain_send.api_key` is present (null removes
 * it). `admin_consented_at` is the platform's: stamped when `microsoft.admin_consented` turns
 * true, kept while it stays true, cleared when it turns false.
 */
export async function saveMailboxSettings(deps: MailboxDeps, actor: { org: string; sub: string | null }, input: MailboxSettingsInput, log: Logger): Promise<MailboxSettingsRow> {
  const inboundDomain = deps.config.MAIL_INBOUND_DOMAIN;
  const { row, keyChange } = await deps.db.transaction(async (trx) => {
    await lockOrganizationRow(trx, actor.org);
    const current = await getMailboxSettings(trx, actor.org, { forUpdate: true });
    const givenKey = input.domain_send.api_key;
    const keyChange: 'kept' | 'replaced' | 'removed' = givenKey === undefined ? 'kept' : givenKey === null ? 'removed' : 'replaced';
    const envelope = givenKey === undefined ? (current?.api_key_envelope ?? null) : givenKey === null ? null : sealSecret(deps.config, mailboxKeyAad(actor.org), givenKey);

    const issues = crossFieldIssues(input, envelope !== null, inboundDomain);
    const host = input.domain_send.inbound_parse_hostname?.toLowerCase() ?? null;
    if (issues.length) throw new ValidationError(issues);
    if (host && (await inboundHostTaken(trx, actor.org, host))) {
      throw new ConflictError(`Another organization already receives mail on ${host}; choose another inbound_parse_hostname.`);
    }

    const consentedBefore = current?.microsoft.admin_consented === true ? current.microsoft.admin_consented_at : null;
    const admin_consented_at = input.microsoft.admin_consented ? (consentedBefore ?? new Date().toISOString()) : null;
    const saved = await storeSettings(trx, {
      organization_id: actor.org,
      transport_provider: input.transport_provider,
      hybrid_mode_enabled: input.hybrid_mode_enabled,
      microsoft: {
        ...input.microsoft,
        application_scopes: [...new Set(input.microsoft.application_scopes)],
        delegated_scopes: [...new Set(input.microsoft.delegated_scopes)],
        azure_tenant_id: input.microsoft.azure_tenant_id?.toLowerCase() ?? null,
        azure_client_id: input.microsoft.azure_client_id?.toLowerCase() ?? null,
        admin_consented_at,
      },
      google: { enabled: input.google.enabled },
      centralized_inbox: input.centralized_inbox,
      domain_name: input.domain_send.domain_name?.toLowerCase() ?? null,
      inbound_parse_hostname: host,
      api_key_envelope: envelope,
      updated_by_user_id: actor.sub,
    });
    if (!saved) throw new ConflictError(`Another organization already receives mail on ${host}; choose another inbound_parse_hostname.`);
    return { row: saved, keyChange };
  });
  // The key itself is never logged: only whether it changed.
  log.info({ transport_provider: row.transport_provider, has_api_key: row.api_key_envelope !== null, api_key_change: keyChange }, 'mailbox settings saved');
  return row;
}
