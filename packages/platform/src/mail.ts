import type { Readable } from 'node:stream';
import nodemailer, { type Transporter } from 'nodemailer';

/** A file attached to a message: its bytes, or a stream of them (read once, while sending). */
export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer | Readable;
}

export interface Mailer {
  send(message: {
    from: string;
    to: string | string[];
    cc?: string[];
    subject: string;
    text: string;
    html?: string;
    messageId?: string;
    headers?: Record<string, string>;
    attachments?: MailAttachment[];
  }): Promise<{ messageId: string }>;
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
