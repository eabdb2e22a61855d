import { route } from '../deps.js';
import { playbookStats } from '../store/playbook-stats.js';
import { playbookStatsSchema } from './schemas.js';

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
      'tied to a collection counts in `pending_proposals` only.',
    tags: ['Knowledge'],
    response: playbookStatsSchema,
    handler: async ({ identity, deps }) => playbookStats(deps.db, identity.org),
  }),
];
