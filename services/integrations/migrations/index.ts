import type { Migration } from '@rp/platform';
import * as m001 from './001_ledger.js';
import * as m002 from './002_connections.js';
import * as m004 from './004_predicted_overdue_indexes.js';
import * as m005 from './005_drop_redundant_partner_index.js';
import * as m006 from './006_remote_document_identity.js';
import * as m007PaymentPostings from './007_payment_postings.js';
import * as m008 from './008_open_amounts_without_local_currency.js';
import * as m009PostingAdoption from './009_payment_posting_adoption.js';
import * as m010MasterData from './010_master_bank_accounts_discount_terms.js';
import * as m011Events from './011_events.js';
import * as m012PartnerReads from './012_partner_reads_notify.js';

export const migrations: Migration[] = [m001, m002, m004, m005, m006, m007PaymentPostings, m008, m009PostingAdoption, m010MasterData, m011Events, m012PartnerReads];
