import type { Migration } from '@rp/platform';
import * as m001 from './001_articles_proposals.js';

export const migrations: Migration[] = [m001];
