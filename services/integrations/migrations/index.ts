import type { Migration } from '@rp/platform';

// The provider registry is code (src/domain/providers.ts); tables arrive with connections.
export const migrations: Migration[] = [];
