import type { Migration } from '@rp/platform';
import * as m001 from './001_ledger.js';
import * as m002 from './002_connections.js';

export const migrations: Migration[] = [m001, m002];
