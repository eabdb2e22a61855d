/**
 * Remittance house styles inside another message: a bank's notice forwarded inline by the
 * customer's clerk, a colleague of ours forwarding the customer's email as message/rfc822, and a
 * reply to our reminder that quotes every open invoice while paying only some.
 */
import { amount, date, money } from './format.js';
import { signature, textTable } from './styles-text.js';
import { OUR_ORGANIZATION, type HouseStyle } from './types.js';

export const FORWARD_STYLES: HouseStyle[] = [
  {
    name: 'fwd_bank_notice',
    language: 'en',
    deductions: 'none',
    maxLines: 4,
    build: (ctx) => {
      const de = ctx.customer.language === 'de';
      const style = de ? 'de' : 'en';
      return {
        from: ctx.sender,
        subject: `Fwd: ${de ? 'Auftrag ausgeführt' : 'Payment executed'}`,
        text: [
          ctx.lines.length > 1 ? `${de ? 'Aufteilung' : 'Breakdown'}:\n${ctx.lines.map((l) => `${l.invoice.number}: ${amount(l.paid, style)}`).join('\n')}` : de ? 'Zur Info.' : 'FYI, see below.',
          '',
          ctx.customer.clerk,
          '',
          '---------- Forwarded message ---------',
          `From: ${de ? 'Online-Banking' : 'Online Banking'} <noreply@online.bank-bench.example>`,
          `Date: ${date(ctx.paymentDate, de ? 'dotted' : 'long-en')}`,
          `Subject: ${de ? 'Auftrag ausgeführt' : 'Payment executed'}`,
          `To: ${ctx.sender.address}`,
          '',
          de ? 'Ihr Überweisungsauftrag wurde ausgeführt.' : 'Your payment order has been executed.',
          `${de ? 'Empfänger' : 'Beneficiary'}: ${OUR_ORGANIZATION.name}`,
          `${de ? 'Betrag' : 'Amount'}: ${money(ctx.total, ctx.currency, style, 'code-before')}`,
          `${de ? 'Verwendungszweck' : 'Remittance information'}: ${ctx.lines.map((l) => l.invoice.number).join(' ')}`,
          `${de ? 'Ausführungsdatum' : 'Execution date'}: ${date(ctx.paymentDate, de ? 'dotted' : 'iso')}`,
        ].join('\n'),
      };
    },
  },
  {
    name: 'fwd_internal_rfc822',
    language: 'en',
    deductions: 'none',
    maxLines: 5,
    build: (ctx) => ({
      from: { name: 'Max Berger', address: `max.berger@${OUR_ORGANIZATION.domain}` },
      subject: `Fwd: Payment ${ctx.customer.name}`,
      text: `Hi AR team,\n\n${ctx.customer.name} sent this to me instead of you - please book it.\n\nMax Berger\nSales, ${OUR_ORGANIZATION.name}`,
      attachments: [
        {
          filename: 'Payment.eml',
          contentType: 'message/rfc822',
          eml: {
            messageId: `<fwd.${ctx.r.digits(10)}@${ctx.customer.mailDomain}>`,
            date: `${ctx.paymentDate}T09:12:00Z`,
            from: ctx.sender,
            to: [{ name: 'Max Berger', address: `max.berger@${OUR_ORGANIZATION.domain}` }],
            subject: 'Payment',
            text: `Hello Max,\n\nwe paid the following invoices on ${date(ctx.paymentDate, 'iso')}:\n\n${textTable(['Invoice', 'Amount'], ctx.lines.map((l) => [l.invoice.number, money(l.paid, ctx.currency, 'en', 'code-before')]), [false, true])}\n\nTotal ${money(ctx.total, ctx.currency, 'en', 'code-before')}\n\n${signature(ctx)}`,
          },
        },
      ],
    }),
  },
  {
    name: 'reply_reminder_paid',
    language: 'en',
    deductions: 'none',
    maxLines: 3,
    reply: true,
    build: (ctx) => {
      const open = ctx.ledger.invoices.filter((i) => i.customer === ctx.customer.code && i.statusOpen).slice(0, 8);
      const paid = new Set(ctx.lines.map((l) => l.invoice.number));
      const quoted = [...ctx.lines.map((l) => l.invoice), ...open.filter((i) => !paid.has(i.number))].slice(0, 8);
      return {
        from: ctx.sender,
        subject: 'Re: Payment reminder',
        text: [
          `Hello,\n\nthe following ${ctx.lines.length > 1 ? 'invoices were' : 'invoice was'} paid on ${date(ctx.paymentDate, 'long-en')}:`,
          ...ctx.lines.map((l) => `${l.invoice.number}  ${money(l.paid, ctx.currency, 'en', 'code-before')}`),
          'The others will follow with our next payment run.',
          '',
          signature(ctx),
          '',
          `> On ${date('2026-11-12', 'long-en')}, ${OUR_ORGANIZATION.name} <${OUR_ORGANIZATION.ar}> wrote:`,
          `> Dear ${ctx.customer.name},`,
          '> according to our records the following invoices are overdue:',
          ...quoted.map((i) => `> ${i.number}  ${amount(i.amount, 'en')} ${i.currency}  due ${i.netDueDate}`),
          '> Kind regards, Accounts Receivable',
        ].join('\n'),
      };
    },
  },
];
