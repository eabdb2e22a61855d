import type { Migration } from '@rp/platform';
import * as m001 from './001_organizations_users_credentials.js';
import * as m002 from './002_user_permissions.js';
import * as m003 from './003_ooo_and_invites.js';
import * as m004 from './004_mailbox_settings_cnam.js';
import * as m005 from './005_email_templates.js';
import * as m006 from './006_tags_and_segments.js';
import * as m007 from './007_email_template_defaults.js';
import * as m008 from './008_report_configs.js';
import * as m009 from './009_tag_segment_name_keys.js';
import * as m010 from './010_auto_approve_threshold.js';
import * as m011 from './011_events_webhooks.js';
import * as m012 from './012_collections_engine.js';
import * as m014 from './014_collection_run_progress.js';
import * as m015 from './015_promise_amount_within_open.js';
import * as m016 from './016_inbox.js';
import * as m017PartnerReads from './017_partner_reads_notify.js';

export const migrations: Migration[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012, m014, m015, m016, m017PartnerReads];
