/** Routes of follow-up tasks: list and update (v2). The collections engine creates them (task steps). */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { route } from '../../deps.js';
import { changeTask, tasksOf } from '../../domain/collections/tasks.js';
import { taskView } from '../../views/collections/tasks.js';

const MAX_PAGE = 500;
const STATUS = z.enum(['open', 'done']);
const SCOPE_DOC =
  'User access tokens only (tasks are people\'s work; API keys: 403). Members see and update only tasks of customers tied to no business unit or to one of theirs; other tasks are absent from lists and 404. Admins see all.';

export const taskSchema = z
  .object({
    object: z.literal('task'),
    id: z.string(),
    partner_id: z.string().describe('The customer the task is about.'),
    action_id: z.string().nullable().describe('The collection action (a task step of a policy) that created it; null once that action\'s run is deleted.'),
    assignee_id: z.string().nullable().describe('Who should do it: the customer\'s sender of that run (assignee, covering out-of-office backup, or the organization\'s default sender); null when that user was deleted.'),
    title: z.string(),
    invoice_ids: z.array(z.string()).describe('The invoices the task chases.'),
    status: STATUS,
    note: z.string().nullable(),
    due_date: z.string().nullable().describe('YYYY-MM-DD (the run\'s date in the organization\'s timezone), or null.'),
    completed_at: z.string().nullable().describe('When it was marked done; null while open.'),
    completed_by: z.string().nullable().describe('The user who marked it done; null while open.'),
    ...timestampsShape,
  })
  .meta({ id: 'Task' });

export const taskRoutes = [
  route({
    method: 'get',
    path: '/v2/tasks',
    operationId: 'listTasks',
    summary: 'List follow-up tasks',
    description: `Newest first. Paginated: \`page\` (0-based), \`page_size\` 1..500. Filters combine (AND). ${SCOPE_DOC}`,
    tags: ['Collections'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      assignee_id: idSchema().optional().describe('Only tasks assigned to this user.'),
      partner_id: idSchema().optional().describe('Only tasks about this customer.'),
      status: STATUS.optional().describe('Only open or only done tasks.'),
    }),
    response: pageEnvelopeSchema(taskSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await tasksOf(deps, identity, { assignee_id: query.assignee_id, partner_id: query.partner_id, status: query.status }, page);
      return pageOf(rows.map(taskView), total, page);
    },
  }),
  route({
    method: 'patch',
    path: '/v2/tasks/{task_id}',
    operationId: 'updateTask',
    summary: 'Complete, reopen or annotate a task',
    description:
      `Give \`status\` and/or \`note\` (at least one). \`done\` records who (the calling user) and when; marking a done task done again keeps both. ` +
      `\`open\` reopens it and clears them. \`note\` replaces the note (null clears it). ${SCOPE_DOC}`,
    tags: ['Collections'],
    params: z.object({ task_id: idSchema() }),
    body: z
      .object({
        status: STATUS.optional(),
        note: z.string().max(2000).nullable().optional().describe('At most 2000 characters; null clears it.'),
      })
      .refine((b) => b.status !== undefined || b.note !== undefined, 'give `status` and/or `note`'),
    response: taskSchema,
    errors: [404],
    handler: async ({ params, body, identity, deps }) => taskView(await changeTask(deps, identity, params.task_id, body)),
  }),
];
