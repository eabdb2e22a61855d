/** Playbook statistics (spec 2.12): what the caller may see of the organization's playbook, counted. */
import type { Db, Identity } from '@rp/platform';
import { playbookStats as countPlaybook, type StatsRow } from '../store/playbook-stats.js';

/** One row per collection, each with the totals, counting only what the caller's business units show. */
export async function playbookStats({ db }: { db: Db }, identity: Identity): Promise<StatsRow[]> {
  return countPlaybook(db, identity.org, identity.bu);
}
