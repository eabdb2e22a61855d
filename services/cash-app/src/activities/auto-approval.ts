import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Db } from '@rp/platform';
import type { AutoApprovalActivities, AutoApproveResult, ProposePaymentsInput } from '@rp/workflows';
import type { Logger } from 'pino';
import { heartbeatPacer } from './pacer.js';
import { autoApproveStatementProposals } from '../domain/auto-approval.js';
import { statementExists } from '../store/matching.js';

export interface AutoApprovalDeps {
  db: Db;
  temporal: Client;
  log?: Logger;
}

function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null; // called outside an activity (tests, scripts)
  }
}

export function createAutoApprovalActivities(deps: AutoApprovalDeps): AutoApprovalActivities {
  return {
    /**
     * Approve the statement's proposals at or above the organization's threshold (nothing when it is
     * off). A retry approves what the previous attempt did not: approved payments are no longer
     * candidates. Heartbeats between approvals; a cancellation (statement deleted) stops it there.
     */
    async autoApproveProposals(input: ProposePaymentsInput): Promise<AutoApproveResult> {
      const { organizationId, statementId } = input;
      if (!(await statementExists(deps.db, organizationId, statementId))) return { approved: 0, refused: 0 };
      let done = 0;
      const pace = heartbeatPacer(activityContext(), () => ({ done }));
      const result = await autoApproveStatementProposals(deps, organizationId, statementId, {
        afterEach: async () => {
          done++;
          await pace();
        },
      });
      if (result.approved + result.refused > 0) deps.log?.info({ organization_id: organizationId, statement_id: statementId, ...result }, 'proposals approved automatically');
      return result;
    },
  };
}
