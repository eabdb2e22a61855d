/** Playbook statistics (spec 2.12): what the caller may see of the organization's playbook, counted. */
import type { Db, Identity } from '@rp/platform';
import { playbookStats as countPlaybook } from '../store/playbook-stats.js';
import { playbookStatsView } from '../views/playbook.js';

export async function playbookStats({ db }: { db: Db }, identity: Identity) {
  return playbookStatsView(await countPlaybook(db, identity.org, identity.bu));
}
