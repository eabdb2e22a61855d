import { createMailer, type ServiceModule } from '@rp/platform';
import { TASK_QUEUES } from '@rp/workflows';
import { migrations } from '../migrations/index.js';
import type { AdminConfig } from './config.js';
import type { AdminDeps } from './deps.js';
import { businessUnitRoutes } from './routes/business-units.js';
import { userRoutes } from './routes/users.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { segmentRoutes } from './routes/collections/segments.js';
import { tagRoutes } from './routes/collections/tags.js';
import { createWelcomeEmailActivities } from './activities/welcome-email.js';

export const adminModule: ServiceModule<AdminConfig, AdminDeps> = {
  name: 'admin',
  schema: 'admin',
  taskQueue: TASK_QUEUES.admin,
  info: { title: 'Admin service', version: '2.0.0', description: 'Organizations, users, business units and credentials.' },
  migrations,
  routes: [
    ...businessUnitRoutes,
    ...userRoutes,
    ...apiKeyRoutes,
    ...segmentRoutes,
    ...tagRoutes,
  ],
  deps: ({ db, temporal, config }) => ({ db, temporal: temporal.client, config }),
  activities: ({ db, log, config }) =>
    createWelcomeEmailActivities({ db, log, mailer: createMailer(config.SMTP_URL), from: config.MAIL_FROM, publicBaseUrl: config.PUBLIC_BASE_URL }),
};
