import type { Migration } from '@rp/platform';
import * as m001 from './001_articles_proposals.js';
import * as m002 from './002_proposal_fields.js';
import * as m003 from './003_files_extraction_jobs.js';
import * as m004 from './004_article_versions_search_deduction_knowledge.js';
import * as m005 from './005_file_deletion_quota.js';
import * as m006 from './006_events.js';

export const migrations: Migration[] = [m001, m002, m003, m004, m005, m006];
