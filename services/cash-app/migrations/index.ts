import type { Migration } from '@rp/platform';
import * as m001 from './001_ledger_accounts_adjustments.js';
import * as m002 from './002_cash_application.js';
import * as m003 from './003_remittance_attachments_outreach.js';
import * as m004BankStatements from './004_bank_statement_files.js';
import * as m005LineIdsLivePayments from './005_line_ids_and_live_payments.js';
import * as m006AllocationMinorUnits from './006_allocation_minor_units.js';
import * as m007PaymentPosting from './007_payment_posting.js';
import * as m009StatementTotals from './009_statement_totals.js';
import * as m011StatementFiles from './011_statement_files.js';
import * as m012Camt054Format from './012_camt054_format.js';
import * as m013StatementBalanceMismatch from './013_statement_balance_mismatch.js';
import * as m014PaymentPostingAdoption from './014_payment_posting_adoption.js';
import * as m015MatchStatusShortfallAutoApproval from './015_match_status_shortfall_auto_approval.js';
import * as m016CreditMemoAllocations from './016_credit_memo_allocations.js';
import * as m017Events from './017_events.js';
import * as m018PartnerActivity from './018_partner_activity.js';
import * as m019InboundRemittances from './019_inbound_remittances.js';
import * as m020StatementFileObjects from './020_statement_file_objects.js';
import * as m021PaymentChecksProposals from './021_payment_checks_proposals.js';
import * as m022ParsedStatementJson from './022_parsed_statement_json.js';

export const migrations: Migration[] = [
  m001,
  m002,
  m003,
  m004BankStatements,
  m005LineIdsLivePayments,
  m006AllocationMinorUnits,
  m007PaymentPosting,
  m009StatementTotals,
  m011StatementFiles,
  m012Camt054Format,
  m013StatementBalanceMismatch,
  m014PaymentPostingAdoption,
  m015MatchStatusShortfallAutoApproval,
  m016CreditMemoAllocations,
  m017Events,
  m018PartnerActivity,
  m019InboundRemittances,
  m020StatementFileObjects,
  m021PaymentChecksProposals,
  m022ParsedStatementJson,
];
