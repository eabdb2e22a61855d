/** One-off syncs and the sync-run history of a connection (spec 2.2 "Sync run"). */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { syncRunSchema } from './schemas.js';
import { SYNC_RUN_STATUSES } from '../types.js';
import { syncRunView } from '../views/sync-runs.js';
import { connectionSyncRuns, startOneOffSync } from '../domain/one-off-sync.js';

const MAX_PAGE = 100;

const MAPPING_DOC =
  'QuickBooks Online (Accounting API v3, minorversion 75). **Identity**: every record is keyed by QuickBooks\' own entity `Id` ' +
  '(per kind for documents), so editing an invoice\'s DocNumber or TxnDate updates the same ledger document (same id), never a second one. ' +
  '**Reads**: `GET {api}/v3/company/{realmId}/query` with `SELECT * FROM <Entity> WHERE MetaData.LastUpdatedTime >= \'<since>\' ' +
  'ORDERBY MetaData.LastUpdatedTime, Id MAXRESULTS <n>`: keyset pages of 100 continuing from the last LastUpdatedTime read ' +
  '(records already read at exactly that time are asked for again and dropped), so records inserted, edited or deleted while a sync ' +
  'pages are not skipped (an edited record is read at its new place). Incremental syncs start 5 minutes before timerange_start (Intuit ' +
  'stamps times with its own clock; re-read records are upserted again, not duplicated). Beyond 900 records in one LastUpdatedTime ' +
  'second (QuickBooks answers at most 1,000 rows), the rest of that second is read with `MetaData.LastUpdatedTime = \'<since>\' AND ' +
  'Id > \'<last Id>\' ORDERBY Id` (state `after_id`), then the read continues strictly after it (`strict`). ' +
  '**Deletions and voids**: an incremental sync of invoices and credit memos first calls change data capture ' +
  '(`GET {api}/v3/company/{realmId}/cdc?entities=<Entity>&changedSince=<start − 5 min>`); entries with `status: "Deleted"` close their ' +
  'documents. A deleted document stays in the ledger (its id may be referenced) but leaves open AR: amount_open 0, status_open false, ' +
  'and it is marked deleted (remote_deleted_at). CDC looks back 30 days and answers at most 1,000 objects: an initial sync, a window ' +
  'starting more than 29 days ago, or a CDC answer at that maximum makes the run a full read instead, whose last page closes the ' +
  'connection\'s documents of that kind it did not read. A voided invoice (QuickBooks keeps it with TotalAmt and Balance 0, PrivateNote ' +
  '"Voided") is read as closed. Customers are never deleted in QuickBooks (made inactive instead). Mapping: ' +
  '**Customer → partner** (origin `connection:<connection_id>`): remote_id = Id, name = DisplayName, legal_name = CompanyName, ' +
  'email = PrimaryEmailAddr.Address, phone = PrimaryPhone.FreeFormNumber, currency = CurrencyRef.value, address = BillAddr ' +
  '(line1..line5, city, region = CountrySubDivisionCode, postal_code, country). QuickBooks Online customers carry no bank accounts in its API, so a ' +
  'synced customer has none of the master-data bank accounts the middleware customer push can give (cash application still learns its accounts from approved payments). ' +
  '**Invoice → invoice, CreditMemo → credit memo**: company_code = realmId (credit memos: `<realmId>:credit_memo`, so an invoice and a ' +
  'credit memo with the same DocNumber never overwrite each other), fiscal_year = year of TxnDate, document_number = DocNumber ' +
  '(Id when absent), remote_id = Id, document_date = posting_date = TxnDate, net_due_date = DueDate (credit memos: TxnDate), ' +
  'amount_in_document_currency = TotalAmt, amount_open = Balance, status_open = Balance > 0, currency = CurrencyRef.value, ' +
  'customer_code = CustomerRef.value (links the partner with that remote_id), exchange_rate = ExchangeRate, text = PrivateNote, ' +
  'reference = CustomerMemo.value; line items = the SalesItemLineDetail lines (description, quantity = Qty, unit_amount = UnitPrice, ' +
  'total_amount = Amount), replaced as a set; no early-payment discount terms (the sync does not read the invoices\' SalesTermRef Terms, ' +
  'so synced invoices have none). Amounts are exact decimals (read from the response text, stored as NUMERIC).';

const syncStartedSchema = z.strictObject({
  object: z.literal('connection_sync'),
  connection_id: z.string(),
  batch_id: z.string().describe('Shared by the sync runs of this sync.'),
  workflow_id: z.string().describe('Temporal workflow id, `connection-sync-<connection_id>-<batch_id>`.'),
  sync_runs: z.array(syncRunSchema).describe('One `scheduled` run per read-enabled model, in sync order.'),
})
  .meta({ id: 'SyncStarted' });

const connectionParams = z.object({ connection_id: idSchema() });

export const syncRoutes = [
  route({
    method: 'post',
    path: '/v2/integrations/connections/{connection_id}/sync',
    operationId: 'syncConnection',
    summary: 'Run a one-off sync of a connection',
    description:
      'Creates one `scheduled` sync run per read-enabled model (`is_one_off: true`, one shared `batch_id`; `is_initial_sync` when ' +
      'the model never synced, `timerange_start` = where its last completed sync ended, `timerange_end` = now) and starts the ' +
      'durable sync workflow `connection-sync-<connection_id>-<batch_id>`; returns those runs at once (200) — follow them with ' +
      'GET .../sync-runs. Models sync one after the other (customers first). ' +
      '404: not a connection of the caller\'s organization. 409 `conflict`: the provider has no pull adapter (only QuickBooks ' +
      'Online syncs today), the connection awaits authentication, its sync is disabled (`is_sync_disabled`), it has no ' +
      'read-enabled model, or a sync of it is already in progress. 503: the workflow could not be started (the runs are marked failed). ' +
      'Any user of the organization or an organization API key may start a sync. ' +
      '**Events**: each page\'s records commit with their events (`partner.*`, `invoice.*`: one per record that changed, none for a record read again unchanged, ' +
      '`invoice.closed` for deletions and voids), and each run\'s end records `connection.sync_completed` or `connection.sync_failed` with the run as GET .../sync-runs lists it. ' +
      MAPPING_DOC,
    tags: ['Integrations'],
    auth: { credentials: ['user', 'api_key'] },
    params: connectionParams,
    response: syncStartedSchema,
    errors: [404, 409, 503],
    handler: async ({ params, identity, deps, requestId }) => {
      const sync = await startOneOffSync(deps, { organizationId: identity.org, connectionId: params.connection_id, requestId, scope: identity.bu });
      return { object: 'connection_sync' as const, connection_id: sync.connectionId, batch_id: sync.batchId, workflow_id: sync.workflowId, sync_runs: sync.runs.map(syncRunView) };
    },
  }),
  route({
    method: 'get',
    path: '/v2/integrations/connections/{connection_id}/sync-runs',
    operationId: 'listSyncRuns',
    summary: 'List the sync runs of a connection',
    description:
      'Newest first (creation time, then id), optionally only one model\'s (`model` = its name, e.g. `invoices`) or one status\'s. ' +
      'A connection of another organization gives 404; an unknown `status` gives 422. Any user of the organization or an organization API key.',
    tags: ['Integrations'],
    auth: { credentials: ['user', 'api_key'] },
    params: connectionParams,
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      model: z.string().min(1).max(100).optional().describe('Only runs of the model with this name.'),
      status: z.enum(SYNC_RUN_STATUSES).optional().describe('Only runs in this status.'),
    }),
    response: pageEnvelopeSchema(syncRunSchema),
    errors: [404],
    handler: async ({ params, query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await connectionSyncRuns(deps, { organizationId: identity.org, connectionId: params.connection_id, scope: identity.bu, model: query.model, status: query.status }, page);
      return pageOf(rows.map(syncRunView), total, page);
    },
  }),
];
