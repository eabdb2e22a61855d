/**
 * Where uploaded statement files are kept: object storage, written as the request arrives (the
 * route's streaming upload target), the key recorded with the file's row. A file whose upload is
 * refused, or that turns out to be one already stored, is removed again.
 */
import type { Logger } from 'pino';
import { newId, type ObjectStorage, type StreamedFileTarget } from '@rp/platform';
import type { Db } from '@rp/platform';
import { statementFileObjectInUse } from '../store/bank-statements.js';

/** What the streaming target hands the handler: where the file's bytes are. */
export interface StoredStatementObject {
  objectKey: string;
}

const CONTENT_TYPE = 'application/octet-stream';

/** The object key of an organization's statement file (one per upload, never reused). */
function statementObjectKey(organizationId: string): string {
  return `bank-statement-files/${organizationId}/${newId()}`;
}

/** The route's streaming target: the file's bytes go to object storage as they arrive. */
export function statementFileTarget(storage: ObjectStorage, organizationId: string): StreamedFileTarget {
  const upload = storage.uploadStream({ key: statementObjectKey(organizationId), contentType: CONTENT_TYPE });
  return {
    writable: upload,
    result: async (): Promise<StoredStatementObject> => {
      await upload.finished;
      return { objectKey: upload.key };
    },
    discard: () => upload.discard(),
  };
}

/** The object key a streamed upload's file was stored under, if it was. */
export function streamedObjectKey(file: { streamed?: unknown } | undefined): string | null {
  const s = file?.streamed as Partial<StoredStatementObject> | undefined;
  return typeof s?.objectKey === 'string' ? s.objectKey : null;
}

/**
 * Removes the object of an upload that stored no file row (refused, a duplicate, failed): unless a
 * committed file row keeps its bytes there. A failure to remove it leaves an unreferenced object;
 * it does not change the answer.
 */
export async function discardUnusedStatementObject(deps: { db: Db; storage: ObjectStorage | null }, organizationId: string, objectKey: string, log?: Logger): Promise<void> {
  try {
    if (!deps.storage || (await statementFileObjectInUse(deps.db, organizationId, objectKey))) return;
    await deps.storage.deleteObject(objectKey);
  } catch (err) {
    log?.warn({ err, object_key: objectKey }, 'could not remove the stored file of a refused statement upload');
  }
}
