import type { Migration } from '@rp/platform';
import * as m001 from './001_organizations_users_credentials.js';
import * as m002 from './002_user_permissions.js';
import * as m006 from './006_tags_and_segments.js';

export const migrations: Migration[] = [m001, m002, m006];
