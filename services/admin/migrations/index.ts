import type { Migration } from '@rp/platform';
import * as m001 from './001_organizations_users_credentials.js';

export const migrations: Migration[] = [m001];
