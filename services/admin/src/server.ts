/** Starts the admin service's HTTP API and, beside it, the inbound SMTP listener (INBOUND_SMTP_PORT; 0: none). */
import { runProcess, startServiceApi } from '@rp/platform';
import { adminModule } from './module.js';
import { loadAdminConfig } from './config.js';
import { startInboundSmtp } from './inbound/smtp.js';

await runProcess('admin-api', async () => {
  const config = loadAdminConfig();
  // The API first: it runs the migrations the listener's intake writes into.
  const api = await startServiceApi(adminModule, config, { port: config.PORT, host: process.env.HOST });
  const smtp = config.INBOUND_SMTP_PORT ? await startInboundSmtp(config, { port: config.INBOUND_SMTP_PORT, host: config.INBOUND_SMTP_HOST }) : null;
  return {
    close: async () => {
      await smtp?.close();
      await api.close();
    },
  };
});
