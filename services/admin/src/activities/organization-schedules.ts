/** Activities of the organization-schedules workflow: move every report config's Temporal Schedule to the organization's committed timezone. */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Db } from '@rp/platform';
import type { OrganizationScheduleActivities } from '@rp/workflows';
import { getOrganization } from '../store/organizations.js';
import { findReportConfig, listReportConfigsOfOrganization } from '../store/report-configs.js';
import { upsertReportSchedule } from '../domain/report-schedules.js';

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
  };
}
