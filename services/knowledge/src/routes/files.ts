import { z } from 'zod';
import { idSchema } from '@rp/platform';
import { route } from '../deps.js';
import { createFile, getFileView } from '../domain/files.js';
import { MAX_KNOWLEDGE_FILE_BYTES, SUPPORTED_MIME_TYPES } from '../extraction/types.js';
import { fileSchema } from './schemas.js';

const createBody = z.object({
  name: z.string().trim().min(1).max(255),
  mime_type: z
    .string()
    .max(255)
    .regex(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i, 'must be a MIME type such as text/plain (no parameters)'),
  size: z.number().int().min(1).max(MAX_KNOWLEDGE_FILE_BYTES).describe(`Bytes, at most ${MAX_KNOWLEDGE_FILE_BYTES} (50 MB).`),
});

export const fileRoutes = [
  route({
    method: 'post',
    path: '/v2/aether/files',
    operationId: 'createKnowledgeFile',
    summary: 'Create a file and its upload URL',
    description:
      'Declares a file and answers it with a presigned PUT (`upload_url`, valid 15 minutes) on the object storage, bound to the ' +
      'declared `size` (at most 50 MB) and `mime_type`: the client uploads the bytes directly, sending exactly `upload_headers`. ' +
      `Any type is accepted as a file; extraction reads ${SUPPORTED_MIME_TYPES.join(', ')} and refuses others (422 naming the type). ` +
      'GET the file to have the upload verified. 503 `storage-unavailable` when the service has no object storage.',
    tags: ['Knowledge'],
    body: createBody,
    response: fileSchema,
    errors: [503],
    handler: async ({ body, identity, deps }) => createFile(deps, identity.org, identity.sub ?? null, body),
  }),
  route({
    method: 'get',
    path: '/v2/aether/files/{file_id}',
    operationId: 'getKnowledgeFile',
    summary: 'A file and its verification',
    description:
      'The file; until it is verified the uploaded object is checked on each read: its size, stored content type, SHA-256 and ' +
      'the type sniffed from its bytes (text formats, which carry no signature, must be valid UTF-8 without NUL bytes) must agree ' +
      'with the declaration. `is_verified` false with `verification_error` null: nothing was uploaded yet (a fresh `upload_url` ' +
      'is given while unverified). A verified file is not checked again. 404 for an unknown or other organization\'s file.',
    tags: ['Knowledge'],
    params: z.object({ file_id: idSchema() }),
    response: fileSchema,
    errors: [503],
    handler: async ({ params, identity, deps }) => getFileView(deps, identity.org, params.file_id),
  }),
];
