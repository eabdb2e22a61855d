import type { Migration } from '@rp/platform';
import * as m001 from './001_ledger.js';
import * as m002 from './002_connections.js';
import * as m004 from './004_predicted_overdue_indexes.js';
import * as m005 from './005_drop_redundant_partner_index.js';
import * as m007PaymentPostings from './007_payment_postings.js';

export const migrations: Migration[] = [m001, m002, m004, m005, m007PaymentPostings];
