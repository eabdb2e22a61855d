/** Routes of knowledge files (spec 2.10 `file`): declare with a presigned upload, read with verification, delete. */
import { z } from 'zod';
import { idSchema, STORAGE_UNAVAILABLE_DOC } from '@rp/platform';
import { route, type KnowledgeDeps } from '../deps.js';
import { createFile, deleteFile, readFile } from '../domain/files.js';
import { MAX_KNOWLEDGE_FILE_BYTES, SUPPORTED_MIME_TYPES } from '../extraction/types.js';
import { fileView } from '../views/files.js';
import { fileSchema } from './schemas.js';

const createBody = z.object({
  name: z.string().trim().min(1).max(255).describe('The file\'s name as shown to users, at most 255 characters.'),
  mime_type: z
    .string()
    .max(255)
    .regex(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i, 'must be a MIME type such as text/plain (no parameters)')
    .describe('The MIME type of the bytes (no parameters), at most 255 characters.'),
  size: z.number().int().min(1).max(MAX_KNOWLEDGE_FILE_BYTES).describe(`Bytes, at most ${MAX_KNOWLEDGE_FILE_BYTES} (50 MB).`),
});

/** The files domain's dependencies: storage, database and the organization's quota. */
const fileDeps = (deps: KnowledgeDeps) => ({ ...deps, quotaBytes: deps.config.KNOWLEDGE_STORAGE_QUOTA_BYTES });

const QUOTA_DOC =
  'Storage quota: an organization\'s knowledge files may hold at most KNOWLEDGE_STORAGE_QUOTA_BYTES bytes (default 5 GiB), counted ' +
  'from the declared sizes of all its files (not yet uploaded, verified or refused) until they are deleted.';

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
      `GET the file to have the upload verified. ${QUOTA_DOC} A declaration that would take the organization past its quota is ` +
      '409 `conflict` (the detail gives the bytes in use and the quota), nothing stored. ' +
      STORAGE_UNAVAILABLE_DOC,
    tags: ['Knowledge'],
    body: createBody,
    response: fileSchema,
    errors: [409, 503],
    handler: async ({ body, identity, deps }) => {
      const { file, upload } = await createFile(fileDeps(deps), identity.org, identity.sub ?? null, body);
      return fileView(file, upload);
    },
  }),
  route({
    method: 'get',
    path: '/v2/aether/files/{file_id}',
    operationId: 'getKnowledgeFile',
    summary: 'A file and its verification',
    description:
      'The file. The first read after the upload checks the uploaded object: its size, stored content type, SHA-256 and the type ' +
      'sniffed from its bytes (text formats, which carry no signature, must be valid UTF-8 without NUL bytes) must agree with the ' +
      'declaration, and the real size must fit the organization\'s storage quota. The outcome is recorded once and is final: a ' +
      'verified file is not checked again, and a refused one keeps its `verification_error` (declare a new file for other bytes; ' +
      '`upload_url` is null from then on). `is_verified` false with `verification_error` null: nothing was uploaded yet (a fresh ' +
      '`upload_url` is given). 404 for an unknown, deleted or other organization\'s file. ' +
      STORAGE_UNAVAILABLE_DOC,
    tags: ['Knowledge'],
    params: z.object({ file_id: idSchema() }),
    response: fileSchema,
    errors: [503],
    handler: async ({ params, identity, deps }) => {
      const { file, upload } = await readFile(fileDeps(deps), identity.org, params.file_id);
      return fileView(file, upload);
    },
  }),
  route({
    method: 'delete',
    path: '/v2/aether/files/{file_id}',
    operationId: 'deleteKnowledgeFile',
    summary: 'Delete a file',
    description:
      'Permanently deletes the file and its stored bytes, freeing its bytes of the organization\'s storage quota; 204 with no body. ' +
      'While an extraction job that has not ended (`pending` … `synthesizing`) reads the file: 409 `conflict` naming the job, nothing ' +
      'changed (cancel the job or wait for it to end). Ended jobs keep their counters, memories and proposals; their `file` and ' +
      '`file_id` become null. The file disappears at once (404 on reads); when removing the stored bytes fails (503), a retried ' +
      'DELETE finishes the removal. 404 for an unknown, already deleted or other organization\'s file. ' +
      STORAGE_UNAVAILABLE_DOC,
    tags: ['Knowledge'],
    params: z.object({ file_id: idSchema() }),
    errors: [404, 409, 503],
    handler: async ({ params, identity, deps, log }) => deleteFile(fileDeps(deps), identity.org, params.file_id, log),
  }),
];
