/** One task queue per domain service; each service's worker polls its own. */
export const TASK_QUEUES = {
  integrations: 'integrations',
  cashApp: 'cash-app',
  knowledge: 'knowledge',
  admin: 'admin',
} as const;

export type TaskQueue = (typeof TASK_QUEUES)[keyof typeof TASK_QUEUES];
