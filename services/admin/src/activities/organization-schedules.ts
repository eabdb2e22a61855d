/** Activities of the organization-schedules workflow: move every report config's Temporal Schedule to the organization's committed timezone, and write the daily collections Schedule from the committed state. */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Db } from '@rp/platform';
import type { OrganizationScheduleActivities } from '@rp/workflows';
import { getOrganization } from '../store/organizations.js';
import { findReportConfig, listReportConfigsOfOrganization } from '../store/report-configs.js';
import { upsertReportSchedule } from '../domain/report-schedules.js';
import { writeCollectionsSchedule } from '../domain/collections/collections-schedule.js';
import { policyCounts } from '../store/collections/policies.js';

export interface OrganizationScheduleDeps {
  db: Db;
  log: Logger;
  temporal: Client;
}

/** The steps of the organization's Schedule reconcile: each reads the committed state when it runs. */
export function createOrganizationScheduleActivities(deps: OrganizationScheduleDeps): OrganizationScheduleActivities {
  return {
    async reportConfigIdsOfOrganization({ organizationId }) {
      return (await listReportConfigsOfOrganization(deps.db, organizationId)).map((c) => c.id);
    },

    async reconcileReportSchedule({ organizationId, configId }) {
      const config = await findReportConfig(deps.db, configId);
      // deleted meanwhile: its Schedule is deleted with it (or deletes itself at its next action)
      if (!config || config.organization_id !== organizationId) return;
      const timezone = (await getOrganization(deps.db, organizationId))?.timezone ?? 'UTC';
      await upsertReportSchedule(deps.temporal, config, timezone);
      deps.log.info({ organization_id: organizationId, config_id: configId, timezone }, 'report Schedule reconciled');
    },

    async reconcileCollectionsSchedule({ organizationId }) {
      const org = await getOrganization(deps.db, organizationId);
      // organization gone: nothing of it runs any more (its Schedule fails to find it and does nothing)
      if (!org) return;
      const policies = await policyCounts(deps.db, organizationId);
      const outcome = await writeCollectionsSchedule(deps.temporal, { organizationId, timezone: org.timezone, runTime: org.collections_run_time, policies });
      deps.log.info({ organization_id: organizationId, outcome, policies, run_time: org.collections_run_time, timezone: org.timezone }, 'collections Schedule reconciled');
    },
  };
}
