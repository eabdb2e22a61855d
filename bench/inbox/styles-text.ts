/**
 * Remittance house styles written in the message body: plain-text lists in English, German, French
 * and Dutch, HTML tables (an SAP payment advice among them, with the payer's own document numbers
 * beside ours), a one-sentence note, a free-mail sole trader, a US check remittance, Swiss `1'234.56`.
 */
import { amount, date, money, pad } from './format.js';
import type { AdviceContext, HouseStyle } from './types.js';

export function textTable(headers: string[], rows: string[][], right: boolean[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)) + 2);
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!, right[i])).join('  ').trimEnd();
  return [line(headers), '-'.repeat(widths.reduce((s, w) => s + w + 2, 0)), ...rows.map(line)].join('\n');
}

export function htmlTable(headers: string[], rows: string[][], opts: { border?: boolean; footer?: string[] } = {}): string {
  const cell = (tag: string, s: string, i: number) => `<${tag}${i > 0 ? ' style="text-align:right"' : ''}>${escapeHtml(s)}</${tag}>`;
  return [
    `<table${opts.border ? ' border="1" cellspacing="0" cellpadding="4"' : ' cellpadding="3"'}>`,
    `<thead><tr>${headers.map((h, i) => cell('th', h, i)).join('')}</tr></thead>`,
    '<tbody>',
    ...rows.map((r) => `<tr>${r.map((c, i) => cell('td', c, i)).join('')}</tr>`),
    '</tbody>',
    ...(opts.footer ? [`<tfoot><tr>${opts.footer.map((c, i) => cell('td', c, i)).join('')}</tr></tfoot>`] : []),
    '</table>',
  ].join('\n');
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export const signature = (ctx: AdviceContext, role = 'Accounts Payable') => `${ctx.customer.clerk}\n${role}\n${ctx.customer.name}`;

const gross = (l: AdviceContext['lines'][number]) => l.paid + l.discount + l.withheld;

export const TEXT_STYLES: HouseStyle[] = [
  {
    name: 'plain_en_list',
    language: 'en',
    deductions: 'none',
    maxLines: 6,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Remittance advice - payment ${money(ctx.total, ctx.currency, 'en', 'code-before')}`,
      text: [
        'Hello,',
        '',
        `Please be advised that we have initiated a payment of ${money(ctx.total, ctx.currency, 'en', 'code-before')} on ${date(ctx.paymentDate, 'long-en')} covering the following invoices:`,
        '',
        ...ctx.lines.map((l) => `  Invoice ${l.invoice.number}   ${amount(l.paid, 'en')}`),
        '',
        `Total: ${amount(ctx.total, 'en')} ${ctx.currency}`,
        '',
        'Kind regards,',
        signature(ctx),
      ].join('\n'),
    }),
  },
  {
    name: 'plain_de_skonto',
    language: 'de',
    deductions: 'discount',
    maxLines: 6,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Zahlungsavis vom ${date(ctx.paymentDate, 'dotted')}`,
      text: [
        'Sehr geehrte Damen und Herren,',
        '',
        `wir haben heute folgende Rechnungen unter Abzug von Skonto zur Zahlung angewiesen (Ausführung ${date(ctx.paymentDate, 'dotted')}):`,
        '',
        textTable(
          ['Rechnungsnr.', 'Rechnungsbetrag', 'Skonto', 'Zahlbetrag'],
          ctx.lines.map((l) => [l.invoice.number, amount(gross(l), 'de'), amount(l.discount, 'de'), amount(l.paid, 'de')]),
          [false, true, true, true],
        ),
        '',
        `Überweisungsbetrag gesamt: ${money(ctx.total, ctx.currency, 'de', 'code-after')}`,
        '',
        'Mit freundlichen Grüßen',
        signature(ctx, 'Kreditorenbuchhaltung'),
      ].join('\n'),
    }),
  },
  {
    name: 'plain_fr_list',
    language: 'fr',
    deductions: 'discount',
    maxLines: 5,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Avis de paiement - ${ctx.customer.name}`,
      text: [
        'Bonjour,',
        '',
        `Nous vous informons du virement de ${money(ctx.total, ctx.currency, 'fr', 'symbol-after')} effectué le ${date(ctx.paymentDate, 'slashed')} en règlement des factures suivantes :`,
        '',
        ...ctx.lines.map((l) =>
          l.discount ? `- Facture n° ${l.invoice.number} : ${amount(gross(l), 'fr')} €, escompte ${amount(l.discount, 'fr')} €, net payé ${amount(l.paid, 'fr')} €` : `- Facture n° ${l.invoice.number} : ${amount(l.paid, 'fr')} €`,
        ),
        '',
        `Montant total du virement : ${amount(ctx.total, 'fr')} €`,
        '',
        'Cordialement,',
        signature(ctx, 'Service comptabilité fournisseurs'),
      ].join('\n'),
    }),
    fits: (c) => c.currency === 'EUR',
  },
  {
    name: 'plain_nl_list',
    language: 'nl',
    deductions: 'none',
    maxLines: 6,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Betalingsadvies ${date(ctx.paymentDate, 'dotted')}`,
      text: [
        'Geachte heer/mevrouw,',
        '',
        `Hierbij ontvangt u de specificatie van onze betaling van ${money(ctx.total, ctx.currency, 'de', 'code-before')} d.d. ${date(ctx.paymentDate, 'dotted')}:`,
        '',
        textTable(['Factuurnummer', 'Factuurdatum', 'Bedrag'], ctx.lines.map((l) => [l.invoice.number, date(l.invoice.documentDate, 'dotted'), amount(l.paid, 'de')]), [false, false, true]),
        '',
        `Totaal betaald: ${amount(ctx.total, 'de')}`,
        '',
        'Met vriendelijke groet,',
        signature(ctx, 'Crediteurenadministratie'),
      ].join('\n'),
    }),
  },
  {
    name: 'html_en_table',
    language: 'en',
    deductions: 'discount',
    maxLines: 8,
    build: (ctx) => ({
      from: { name: `${ctx.customer.name} Accounts Payable`, address: ctx.sender.address },
      subject: `Payment notification from ${ctx.customer.name}`,
      html: [
        '<html><body style="font-family:Arial">',
        `<p>Dear Supplier,</p><p>The following payment has been released on <b>${date(ctx.paymentDate, 'long-en')}</b>.</p>`,
        htmlTable(
          ['Invoice No.', 'Invoice Date', 'Invoice Amount', 'Discount Taken', 'Amount Paid'],
          ctx.lines.map((l) => [l.invoice.number, date(l.invoice.documentDate, 'us'), amount(gross(l), 'en'), amount(l.discount, 'en'), amount(l.paid, 'en')]),
          { border: true, footer: ['Total', '', amount(ctx.lines.reduce((s, l) => s + gross(l), 0), 'en'), amount(ctx.lines.reduce((s, l) => s + l.discount, 0), 'en'), amount(ctx.total, 'en')] },
        ),
        `<p>Currency: ${ctx.currency}. Payment method: ACH / bank transfer.</p><p>This is an automated message, please do not reply.</p>`,
        '</body></html>',
      ].join('\n'),
    }),
  },
  {
    name: 'html_de_table',
    language: 'de',
    deductions: 'discount',
    maxLines: 8,
    build: (ctx) => {
      const html = [
        '<html><body>',
        '<p>Sehr geehrte Damen und Herren,</p>',
        `<p>anbei erhalten Sie die Aufstellung unserer Zahlung vom ${date(ctx.paymentDate, 'dotted')}:</p>`,
        htmlTable(
          ['Ihre Rechnung', 'Datum', 'Brutto', 'Skonto', 'Netto'],
          ctx.lines.map((l) => [l.invoice.number, date(l.invoice.documentDate, 'dotted'), amount(gross(l), 'de'), amount(l.discount, 'de'), amount(l.paid, 'de')]),
          { border: true, footer: ['Summe', '', '', '', amount(ctx.total, 'de')] },
        ),
        `<p>Mit freundlichen Grüßen<br>${ctx.customer.clerk}<br>${ctx.customer.name}</p>`,
        '</body></html>',
      ].join('\n');
      return {
        from: ctx.sender,
        subject: `Zahlungsavis ${ctx.customer.name}`,
        html,
        text: `Sehr geehrte Damen und Herren,\n\nanbei erhalten Sie die Aufstellung unserer Zahlung vom ${date(ctx.paymentDate, 'dotted')}:\n\n${textTable(
          ['Ihre Rechnung', 'Brutto', 'Skonto', 'Netto'],
          ctx.lines.map((l) => [l.invoice.number, amount(gross(l), 'de'), amount(l.discount, 'de'), amount(l.paid, 'de')]),
          [false, true, true, true],
        )}\n\nSumme: ${amount(ctx.total, 'de')} ${ctx.currency}\n\nMit freundlichen Grüßen\n${ctx.customer.clerk}`,
      };
    },
  },
  {
    name: 'html_sap_avis',
    language: 'de',
    deductions: 'mixed',
    maxLines: 10,
    build: (ctx) => {
      const doc = `15000${ctx.r.digits(5)}`;
      const vendor = `7${ctx.r.digits(5)}`;
      return {
        from: { name: 'SAP Zahlungsavis', address: `noreply-fi@${ctx.customer.mailDomain}` },
        subject: `Zahlungsavis ${doc} / Lieferant ${vendor}`,
        html: [
          '<html><body><pre style="font-family:monospace">',
          `Zahlungsavis Nr. ${doc}          Datum: ${date(ctx.paymentDate, 'dotted')}`,
          `Unsere Lieferantennummer bei Ihnen: ${vendor}`,
          `Zahlender Buchungskreis: ${ctx.customer.name}`,
          '</pre>',
          htmlTable(
            ['Belegnr.', 'Ihre Referenz', 'Belegdatum', 'Bruttobetrag', 'Skonto', 'Abzug', 'Zahlbetrag'],
            ctx.lines.map((l) => [`18${ctx.r.digits(8)}`, l.invoice.number, date(l.invoice.documentDate, 'dotted'), amount(gross(l), 'de'), amount(l.discount, 'de'), amount(l.withheld, 'de'), amount(l.paid, 'de')]),
            { footer: ['', '', 'Summe', '', '', '', amount(ctx.total, 'de')] },
          ),
          `<p>Zahlweg: Überweisung · Währung: ${ctx.currency} · Hausbank ${ctx.r.digits(8)}</p>`,
          '</body></html>',
        ].join('\n'),
      };
    },
  },
  {
    name: 'html_fr_table',
    language: 'fr',
    deductions: 'discount',
    maxLines: 8,
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Avis de règlement du ${date(ctx.paymentDate, 'slashed')}`,
      html: [
        '<div>Madame, Monsieur,</div>',
        `<div>Veuillez trouver ci-dessous le détail de notre règlement par virement du ${date(ctx.paymentDate, 'long-fr')}.</div><br>`,
        htmlTable(
          ['N° facture', 'Date facture', 'Montant brut', 'Escompte', 'Net à payer'],
          ctx.lines.map((l) => [l.invoice.number, date(l.invoice.documentDate, 'slashed'), amount(gross(l), 'fr'), amount(l.discount, 'fr'), amount(l.paid, 'fr')]),
          { border: true, footer: ['Total réglé', '', '', '', `${amount(ctx.total, 'fr')} ${ctx.currency}`] },
        ),
        `<br><div>Bien cordialement,<br>${ctx.customer.clerk}<br>${ctx.customer.name}</div>`,
      ].join('\n'),
    }),
  },
  {
    name: 'inline_sentence',
    language: 'en',
    deductions: 'none',
    maxLines: 2,
    build: (ctx) => {
      const nums = ctx.lines.map((l) => l.invoice.number);
      const l = ctx.customer.language;
      const text =
        l === 'de'
          ? `Hallo,\n\nwir haben heute ${nums.length > 1 ? `die Rechnungen ${nums.join(' und ')}` : `die Rechnung ${nums[0]}`} über ${money(ctx.total, ctx.currency, 'de', 'code-after')} überwiesen.\n\nGruß\n${ctx.customer.clerk}`
          : l === 'fr'
            ? `Bonjour,\n\nNous avons réglé ce jour ${nums.length > 1 ? `les factures ${nums.join(' et ')}` : `la facture ${nums[0]}`} pour un montant de ${money(ctx.total, ctx.currency, 'fr', 'code-after')}.\n\nCordialement\n${ctx.customer.clerk}`
            : l === 'nl'
              ? `Goedemiddag,\n\nVandaag hebben wij ${nums.length > 1 ? `de facturen ${nums.join(' en ')}` : `factuur ${nums[0]}`} ad ${money(ctx.total, ctx.currency, 'de', 'code-before')} voldaan.\n\nGroet,\n${ctx.customer.clerk}`
              : `Hi,\n\nJust to let you know we paid ${nums.length > 1 ? `invoices ${nums.join(' and ')}` : `invoice ${nums[0]}`} today, ${money(ctx.total, ctx.currency, 'en', 'code-before')} in total.\n\nThanks,\n${ctx.customer.clerk}`;
      return { from: ctx.sender, subject: l === 'de' ? 'Zahlung' : l === 'fr' ? 'Paiement' : l === 'nl' ? 'Betaling' : 'Payment sent', text };
    },
  },
  {
    name: 'freemail_informal',
    language: 'en',
    deductions: 'none',
    maxLines: 3,
    fits: (c) => c.freeMail,
    build: (ctx) => {
      const style = ctx.customer.language === 'en' ? 'en' : 'de';
      return {
        from: { name: ctx.customer.clerk, address: ctx.customer.email },
        subject: ctx.customer.language === 'en' ? 'paid' : 'bezahlt',
        text: [
          ctx.customer.language === 'en' ? 'hi there,' : 'Hallo,',
          ctx.customer.language === 'en' ? `paid the following today (total ${amount(ctx.total, style)}):` : `heute bezahlt (insgesamt ${amount(ctx.total, style)}):`,
          ...ctx.lines.map((l) => `${l.invoice.number} - ${amount(l.paid, style)}`),
          '',
          ctx.customer.name,
          'Sent from my iPhone',
        ].join('\n'),
      };
    },
  },
  {
    name: 'us_check_remit',
    language: 'en',
    deductions: 'discount',
    maxLines: 6,
    fits: (c) => c.currency === 'USD' || c.currency === 'GBP',
    build: (ctx) => {
      const check = ctx.r.digits(6);
      return {
        from: { name: `${ctx.customer.name} AP`, address: ctx.sender.address },
        subject: `Check #${check} remittance`,
        text: [
          `REMITTANCE ADVICE    Check No. ${check}    Check Date ${date(ctx.paymentDate, 'us')}`,
          `Vendor ID: V${ctx.r.digits(5)}    Payee: ${'Nordlicht Vertrieb GmbH'}`,
          '',
          textTable(
            ['Inv Number', 'Inv Date', 'Gross', 'Deduction', 'Net Paid'],
            ctx.lines.map((l) => [l.invoice.number, date(l.invoice.documentDate, 'us'), money(gross(l), ctx.currency, 'en', 'symbol-before'), money(l.discount + l.withheld, ctx.currency, 'en', 'symbol-before'), money(l.paid, ctx.currency, 'en', 'symbol-before')]),
            [false, false, true, true, true],
          ),
          '',
          `Remit Total: ${money(ctx.total, ctx.currency, 'en', 'symbol-before')}`,
          '',
          signature(ctx),
        ].join('\n'),
      };
    },
  },
  {
    name: 'ch_apostrophe',
    language: 'de',
    deductions: 'discount',
    maxLines: 5,
    fits: (c) => c.country === 'CH' || c.country === 'AT' || c.country === 'DE',
    build: (ctx) => ({
      from: ctx.sender,
      subject: `Zahlungsanzeige ${date(ctx.paymentDate, 'dotted')}`,
      text: [
        'Grüezi',
        '',
        `Wir haben Ihnen am ${date(ctx.paymentDate, 'dotted')} ${ctx.currency} ${amount(ctx.total, 'ch')} überwiesen. Die Zahlung betrifft:`,
        '',
        ...ctx.lines.map((l) => `Rechnung ${l.invoice.number} vom ${date(l.invoice.documentDate, 'dotted')}: ${ctx.currency} ${amount(l.paid, 'ch')}${l.discount ? ` (abzüglich Skonto ${amount(l.discount, 'ch')})` : ''}`),
        '',
        'Freundliche Grüsse',
        signature(ctx, 'Finanzen'),
      ].join('\n'),
    }),
  },
];
