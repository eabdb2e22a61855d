/** API shape of a playbook extraction job (spec 2.10), with its file when it still exists. */
import { isoTime } from '@rp/platform';
import type { JobRecord } from '../domain/extractions.js';
import { fileView } from './files.js';

export function jobView({ job: j, file }: JobRecord) {
  return {
    object: 'playbook_extraction' as const,
    id: j.id,
    created_at: isoTime(j.created_at)!,
    modified_at: isoTime(j.modified_at)!,
    completed_at: isoTime(j.completed_at),
    created_by: j.created_by,
    collection: j.collection,
    error: j.error,
    extraction_type: j.extraction_type,
    status: j.status,
    dedup_count: j.dedup_count,
    input_count: j.input_count,
    knowledge_count: j.knowledge_count,
    memory_count: j.memory_count,
    processed_count: j.processed_count,
    progress: j.progress,
    proposal_count: j.proposal_count,
    file: file ? fileView(file, null) : null,
    file_id: j.file_id,
  };
}
