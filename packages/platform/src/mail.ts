import nodemailer, { type Transporter } from 'nodemailer';

export interface Mailer {
  send(message: { from: string; to: string; subject: string; text: string; html?: string; messageId?: string; headers?: Record<string, string> }): Promise<{ messageId: string }>;
  close(): void;
}

/** SMTP mailer from SMTP_URL (smtp:// or smtps://, credentials in the URL). */
export function createMailer(smtpUrl: string): Mailer {
  const transport: Transporter = nodemailer.createTransport(smtpUrl);
  return {
    async send(message) {
      const info = await transport.sendMail(message);
      return { messageId: String(info.messageId) };
    },
    close: () => transport.close(),
  };
}
