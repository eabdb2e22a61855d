import type { Migration } from '@rp/platform';
import * as m001 from './001_ledger_accounts_adjustments.js';

export const migrations: Migration[] = [m001];
