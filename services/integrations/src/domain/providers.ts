/**
 * Provider descriptors (spec 2.2, "Provider descriptor") made from the registry's entries
 * (providers/registry.ts): self-made logos and the capability flags of this platform's adapters.
 */
import { ADAPTER_PROVIDERS, CASH_APP_FEATURES, PROVIDER_ENTRIES, PULL_ADAPTER_PROVIDERS } from '../providers/registry.js';
import type { ProviderCategory, ProviderDescriptor, ProviderEntry } from '../providers/types.js';

export { CASH_APP_FEATURES, PULL_ADAPTER_PROVIDERS, PUSH_ADAPTER_PROVIDERS } from '../providers/registry.js';
export { AUTH_TYPES, PROVIDER_CATEGORIES, type AuthType, type ProviderCategory, type ProviderDescriptor } from '../providers/types.js';


function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function initials(displayName: string): string {
  const words = displayName.split(/[\s/]+/).filter((w) => /^[A-Za-z0-9]/.test(w));
  return (words.length > 1 ? words[0][0] + words[1][0] : displayName.slice(0, 2)).toUpperCase();
}

function svgDataUri(svg: string): string {
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

/**
 * Self-contained logos (SVG data URIs in the provider's colour) rather than links to vendor assets:
 * the platform may run where the internet is not reachable, and we hold no rights to vendor marks.
 */
function logos(entry: ProviderEntry): { logo: string; logo_square: string } {
  const name = escapeXml(entry.display_name);
  const mark = escapeXml(initials(entry.display_name));
  return {
    logo: svgDataUri(
      `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="48" viewBox="0 0 240 48" role="img" aria-label="${name}">` +
        `<rect width="48" height="48" rx="8" fill="${entry.color}"/>` +
        `<text x="24" y="31" font-family="sans-serif" font-size="18" font-weight="700" fill="#fff" text-anchor="middle">${mark}</text>` +
        `<text x="60" y="30" font-family="sans-serif" font-size="15" fill="#1d2330">${name}</text></svg>`,
    ),
    logo_square: svgDataUri(
      `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64" role="img" aria-label="${name}">` +
        `<rect width="64" height="64" rx="12" fill="${entry.color}"/>` +
        `<text x="32" y="41" font-family="sans-serif" font-size="24" font-weight="700" fill="#fff" text-anchor="middle">${mark}</text></svg>`,
    ),
  };
}

function toDescriptor(entry: ProviderEntry): ProviderDescriptor {
  return {
    object: 'provider',
    name: entry.name,
    display_name: entry.display_name,
    color: entry.color,
    connection_guide_url: entry.connection_guide_url,
    documentation_url: entry.documentation_url,
    description: entry.description,
    short_description: entry.short_description,
    ...logos(entry),
    website: entry.website,
    categories: entry.categories,
    auth_type: entry.auth_type,
    is_api_connection: entry.is_api_connection,
    // Capability flags of our adapter (see the note in providers/registry.ts).
    is_webhooks_supported: false,
    is_enabled: ADAPTER_PROVIDERS.has(entry.name),
    is_manual_sync_supported: PULL_ADAPTER_PROVIDERS.has(entry.name),
    connection_instructions: entry.connection_instructions,
    required_settings: entry.required_settings,
    cash_app_features: CASH_APP_FEATURES[entry.name] ?? { can_unpost_payment: false, can_post_on_account_payment: false },
  };
}

/** Every provider, in catalogue order (ERP, accounting, billing and payments, banking, ticketing, CRM, middleware). */
export const PROVIDERS: readonly ProviderDescriptor[] = Object.freeze(PROVIDER_ENTRIES.map(toDescriptor));

const BY_NAME = new Map(PROVIDERS.map((p) => [p.name, p]));

export function findProvider(name: string): ProviderDescriptor | undefined {
  return BY_NAME.get(name);
}

export function listProviders(filter: { category?: ProviderCategory } = {}): ProviderDescriptor[] {
  return filter.category ? PROVIDERS.filter((p) => p.categories.includes(filter.category!)) : [...PROVIDERS];
}
