import { errorResponse, mergeOpenApi, ROLE_MODEL_DOC, type OpenApiDocument } from '@rp/platform';
import type { GatewayConfig } from './config.js';

/** POST endpoints that take file uploads and get UPLOAD_LIMIT_BYTES instead of BODY_LIMIT_BYTES. */
export const UPLOAD_PATHS = new Set(['/v2/bank-statements']);

/**
 * The gateway's /openapi.json: the services' documents merged under the platform's info. One
 * function for the gateway and for whoever builds the same document without a running stack (the
 * typed client's generator, scripts/client-generate.ts). `missing` names services that could not
 * be reached while the document was built.
 */
export function gatewayOpenApi(
  config: Pick<GatewayConfig, 'RATE_LIMIT_PER_SECOND' | 'RATE_LIMIT_BURST' | 'AUTH_FAILURE_BURST' | 'AUTH_FAILURE_PER_MINUTE' | 'BODY_LIMIT_BYTES' | 'UPLOAD_LIMIT_BYTES'>,
  docs: OpenApiDocument[],
  missing: string[] = [],
): OpenApiDocument {
  const doc = mergeOpenApi(
    {
      title: 'Receivables Platform API',
      version: '2.0.0',
      description:
        'Accounts receivable, cash application, collections and knowledge, behind one gateway. Every endpoint requires ' +
        '`Authorization: Bearer <token>`, except the public ones marked so and the inbound mail endpoint ' +
        '(`POST /v2/inbound/email/{organization_id}`, authenticated by the organization\'s inbound secret). Errors of /v2 endpoints use `{type, status, title, detail, errors?}`; /v1 endpoints use ' +
        '`{data, error, message}` (validation: `{detail, message}`). Pagination: `page` (0-indexed) and `page_size` (alias `size`), ' +
        'envelope `{data, current_page, total_records, next_page}`. Rate limit: per credential, ' +
        `${config.RATE_LIMIT_PER_SECOND}/s sustained with bursts of ${config.RATE_LIMIT_BURST}; 429 with Retry-After beyond it. ` +
        `Failed authentications: ${config.AUTH_FAILURE_BURST} per client address, regained at ${config.AUTH_FAILURE_PER_MINUTE}/min; beyond that ` +
        '429 with Retry-After before any token look-up (tokens the gateway already verified keep working). ' +
        `Request bodies: at most ${config.BODY_LIMIT_BYTES} bytes (413 beyond); file uploads (${[...UPLOAD_PATHS].join(', ')}) at most ${config.UPLOAD_LIMIT_BYTES} bytes.` +
        `\n\n${ROLE_MODEL_DOC}` +
        (missing.length ? `\n\nNot listed (service unreachable while this document was built): ${missing.join(', ')}.` : ''),
    },
    docs,
  );
  // every operation goes through the proxy: the owning service may be unreachable or too slow
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const op of Object.values(ops) as { responses: Record<string, unknown> }[]) {
      for (const status of [502, 504]) op.responses[status] ??= errorResponse(status, path.startsWith('/v1/'));
    }
  }
  return doc;
}
