import { z } from 'zod';
import { AUTH_TYPES, PROVIDER_CATEGORIES } from '../domain/providers.js';

export const providerCategorySchema = z.enum(PROVIDER_CATEGORIES);

export const providerSchema = z.strictObject({
  object: z.literal('provider'),
  name: z.string().describe('Stable identifier; the `provider_name` of connections.'),
  display_name: z.string(),
  color: z.string().describe('Brand colour, #RRGGBB.'),
  connection_guide_url: z.string(),
  documentation_url: z.string(),
  description: z.string(),
  short_description: z.string(),
  logo: z.string().describe('Wide logo as an SVG data URI.'),
  logo_square: z.string().describe('Square logo as an SVG data URI.'),
  website: z.string().nullable(),
  categories: z.array(providerCategorySchema),
  auth_type: z.enum(AUTH_TYPES),
  is_api_connection: z.boolean().describe('The platform calls the provider\'s API (false: the provider pushes to the platform).'),
  is_webhooks_supported: z.boolean().describe('The platform\'s adapter receives the provider\'s webhooks.'),
  is_enabled: z.boolean().describe('A working adapter exists and connections to this provider can be created.'),
  is_manual_sync_supported: z.boolean().describe('The platform\'s adapter can run a sync on request.'),
  connection_instructions: z.array(z.string()),
  required_settings: z.array(z.string()).describe('Settings a connection to this provider must have before it can sync.'),
  cash_app_features: z.strictObject({
    can_unpost_payment: z.boolean().default(false),
    can_post_on_account_payment: z.boolean().default(false),
  }),
});
