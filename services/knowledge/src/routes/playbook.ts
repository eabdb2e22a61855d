/** Route of the playbook statistics (spec 2.12). */
import { route } from '../deps.js';
import { playbookStats } from '../domain/playbook.js';
import { playbookStatsView } from '../views/playbook.js';
import { KNOWLEDGE_SCOPE_DOC, playbookStatsSchema } from './schemas.js';

export const playbookRoutes = [
  route({
    method: 'get',
    path: '/v2/aether/playbook/stats',
    operationId: 'getPlaybookStats',
    summary: 'Playbook statistics',
    description:
      'Counts over the organization\'s playbook: live (non-archived) articles, collections holding at least one ' +
      'live article, and pending knowledge proposals, in total and per collection. `collections` lists every ' +
      'collection of the enum in its order, with zero counts where there is nothing. A pending proposal not ' +
      'tied to a collection counts in `pending_proposals` only. Only what the caller may see is counted: articles and proposals hidden by ' +
      'a member\'s business units (as in the article and proposal lists) are not. ' +
      KNOWLEDGE_SCOPE_DOC,
    tags: ['Knowledge'],
    response: playbookStatsSchema,
    handler: async ({ identity, deps }) => playbookStatsView(await playbookStats(deps, identity)),
  }),
];
