/** Schemas of the collections area shared by its routes: the tag and segment answers and the conditions each may hold (a tag rule may not use tags). */
import { z } from 'zod';
import { conditionSchema, timestampsShape } from '@rp/platform';

export const tagSchema = z
  .object({
    object: z.literal('tag'),
    id: z.string(),
    name: z.string(),
    color: z.string().describe('#RRGGBB'),
    rule_condition: z.record(z.string(), z.unknown()).nullable().describe('Condition tree (see the condition language); null: hand-tagged only.'),
    ...timestampsShape,
  })
  .meta({ id: 'Tag' });

export const segmentSchema = z
  .object({
    object: z.literal('customer_segment'),
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    priority: z.number().int().describe('1 is the highest; unique per organization.'),
    conditions: z.record(z.string(), z.unknown()).describe('Condition tree (see the condition language).'),
    ...timestampsShape,
  })
  .meta({ id: 'CustomerSegment' });

export const tagConditionSchema = () => conditionSchema({ allowTag: false });
export const segmentConditionSchema = () => conditionSchema();
