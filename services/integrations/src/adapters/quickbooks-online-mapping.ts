/** QuickBooks Online records mapped onto ledger rows (the mapping is listed in quickbooks-online.ts's header). */
import { Money } from '@rp/platform';
import type { DocumentUpsert, LineItemUpsert, PartnerUpsert } from '../types.js';
import { ProviderApiError } from './adapter.js';

export interface QboRef {
  value?: string;
  name?: string;
}
export interface QboAddress {
  Line1?: string;
  Line2?: string;
  Line3?: string;
  Line4?: string;
  Line5?: string;
  City?: string;
  CountrySubDivisionCode?: string;
  PostalCode?: string;
  Country?: string;
}
export interface QboCustomer {
  Id: string;
  MetaData?: QboMetaData;
  SyncToken?: string;
  DisplayName?: string;
  CompanyName?: string;
  GivenName?: string;
  FamilyName?: string;
  Active?: boolean;
  Balance?: string;
  PrimaryEmailAddr?: { Address?: string };
  PrimaryPhone?: { FreeFormNumber?: string };
  BillAddr?: QboAddress;
  CurrencyRef?: QboRef;
}
export interface QboLine {
  Id?: string;
  LineNum?: number;
  Description?: string;
  Amount?: string;
  DetailType?: string;
  SalesItemLineDetail?: { Qty?: string; UnitPrice?: string; ItemRef?: QboRef };
}
export interface QboMetaData {
  CreateTime?: string;
  LastUpdatedTime?: string;
}
export interface QboTransaction {
  Id: string;
  MetaData?: QboMetaData;
  DocNumber?: string;
  TxnDate?: string;
  DueDate?: string;
  TotalAmt?: string;
  Balance?: string;
  ExchangeRate?: string;
  CurrencyRef?: QboRef;
  CustomerRef?: QboRef;
  CustomerMemo?: { value?: string };
  PrivateNote?: string;
  Line?: QboLine[];
}

function text(v: string | undefined | null): string | null {
  const t = v?.trim();
  return t ? t : null;
}

function decimal(v: string | undefined, field: string, id: string): string {
  if (v === undefined || v === null) throw new ProviderApiError('rejected', `QuickBooks record ${id} has no ${field}.`);
  return new Money(v).toFixed();
}

export function mapCustomer(c: QboCustomer): PartnerUpsert {
  const a = c.BillAddr ?? {};
  const address: Record<string, string | null> = {
    line1: text(a.Line1),
    line2: text(a.Line2),
    line3: text(a.Line3),
    line4: text(a.Line4),
    line5: text(a.Line5),
    city: text(a.City),
    region: text(a.CountrySubDivisionCode),
    postal_code: text(a.PostalCode),
    country: text(a.Country),
  };
  return {
    remote_id: String(c.Id),
    name: text(c.DisplayName) ?? text(c.CompanyName) ?? text([c.GivenName, c.FamilyName].filter(Boolean).join(' ')) ?? `Customer ${c.Id}`,
    legal_name: text(c.CompanyName),
    email: text(c.PrimaryEmailAddr?.Address),
    phone: text(c.PrimaryPhone?.FreeFormNumber),
    currency: text(c.CurrencyRef?.value)?.toUpperCase() ?? null,
    address: Object.fromEntries(Object.entries(address).filter(([, v]) => v !== null)),
    attributes: {
      source: 'quickbooks_online',
      given_name: text(c.GivenName),
      family_name: text(c.FamilyName),
      active: c.Active ?? null,
      qbo_balance: c.Balance ?? null,
      sync_token: c.SyncToken ?? null,
    },
  };
}

export function mapTransaction(t: QboTransaction, kind: 'invoice' | 'credit_memo', realmId: string, homeCurrency: string | null): DocumentUpsert {
  const txnDate = t.TxnDate;
  if (!txnDate || !/^\d{4}-\d{2}-\d{2}$/.test(txnDate)) throw new ProviderApiError('rejected', `QuickBooks ${kind} ${t.Id} has no valid TxnDate.`);
  const currency = text(t.CurrencyRef?.value)?.toUpperCase() ?? homeCurrency;
  if (!currency) throw new ProviderApiError('rejected', `QuickBooks ${kind} ${t.Id} has no CurrencyRef.`);
  const total = decimal(t.TotalAmt, 'TotalAmt', t.Id);
  const voided = /^\s*voided\b/i.test(t.PrivateNote ?? '');
  const balance = voided ? '0' : decimal(t.Balance ?? t.TotalAmt, 'Balance', t.Id);
  const lines: LineItemUpsert[] = (t.Line ?? [])
    .filter((l) => l.DetailType === 'SalesItemLineDetail')
    .map((l, i) => ({
      line_number: l.LineNum ?? i + 1,
      description: text(l.Description) ?? text(l.SalesItemLineDetail?.ItemRef?.name),
      quantity: l.SalesItemLineDetail?.Qty ?? null,
      unit_amount: l.SalesItemLineDetail?.UnitPrice ?? null,
      total_amount: l.Amount ?? null,
    }));
  // line_number must be unique per document: fall back to positions if the source repeats one.
  if (new Set(lines.map((l) => l.line_number)).size !== lines.length) lines.forEach((l, i) => (l.line_number = i + 1));
  return {
    kind,
    remote_id: String(t.Id),
    company_code: kind === 'invoice' ? realmId : `${realmId}:credit_memo`,
    fiscal_year: txnDate.slice(0, 4),
    document_number: text(t.DocNumber) ?? String(t.Id),
    customer_code: text(t.CustomerRef?.value),
    currency,
    exchange_rate: t.ExchangeRate ?? null,
    document_type: kind === 'invoice' ? 'Invoice' : 'CreditMemo',
    text: text(t.PrivateNote),
    reference: text(t.CustomerMemo?.value),
    document_date: txnDate,
    posting_date: txnDate,
    net_due_date: kind === 'invoice' ? (t.DueDate ?? txnDate) : txnDate,
    amount_in_document_currency: total,
    amount_open: balance,
    status_open: new Money(balance).greaterThan(0),
    line_items: lines,
  };
}

