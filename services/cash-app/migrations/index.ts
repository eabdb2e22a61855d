import type { Migration } from '@rp/platform';
import * as m001 from './001_ledger_accounts_adjustments.js';
import * as m002 from './002_cash_application.js';

export const migrations: Migration[] = [m001, m002];
