/** Routes of knowledge articles and playbook search (spec 2.12). */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { CUSTOMER_BOOST, getArticle, listArticles, searchArticles } from '../domain/articles.js';
import { articleDetailView, articleView, searchHitView } from '../views/articles.js';
import { articleDetailSchema, articleSchema, searchHitSchema } from './review-schemas.js';
import { collectionSchema, KNOWLEDGE_SCOPE_DOC } from './schemas.js';

const MAX_PAGE = 200;
const MAX_SEARCH_PAGE = 100;

export const articleRoutes = [
  route({
    method: 'get',
    path: '/v2/aether/playbook/articles',
    operationId: 'listKnowledgeArticles',
    summary: 'List knowledge articles',
    description:
      'Articles of the organization (made by approving proposals), newest first. Filters: `collection`, `customer_id`, `segment_id`, ' +
      '`status` (`live` or `archived`; default both). Paginated: `page` (0-based), `page_size` 1..200 (default 50; `size` alias). ' +
      KNOWLEDGE_SCOPE_DOC,
    tags: ['Knowledge'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      collection: collectionSchema.optional(),
      customer_id: idSchema().optional(),
      segment_id: idSchema().optional(),
      status: z.enum(['live', 'archived']).optional(),
    }),
    response: pageEnvelopeSchema(articleSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await listArticles(
        deps,
        identity.org,
        identity.bu,
        { collection: query.collection, customer_id: query.customer_id, segment_id: query.segment_id, status: query.status },
        page.offset,
        page.pageSize,
      );
      return pageOf(rows.map(articleView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/aether/playbook/articles/{article_id}',
    operationId: 'getKnowledgeArticle',
    summary: 'Get a knowledge article with its versions',
    description:
      'The article\'s current state and every version (oldest first) with the source excerpts and proposal that made it. 404 when unknown, ' +
      'another organization\'s, or its current customer is outside a member\'s business units. An earlier version whose customer is outside ' +
      'them is left out of `versions` (the version numbers then skip it). ' + KNOWLEDGE_SCOPE_DOC,
    tags: ['Knowledge'],
    params: z.object({ article_id: idSchema() }),
    response: articleDetailSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => {
      const { article, versions } = await getArticle(deps, identity.org, identity.bu, params.article_id);
      return articleDetailView(article, versions);
    },
  }),
  route({
    method: 'get',
    path: '/v2/aether/playbook/search',
    operationId: 'searchKnowledgeArticles',
    summary: 'Search the playbook',
    description:
      'Full-text search (PostgreSQL, English configuration) over the organization\'s live (approved, not archived) articles: `q` in web-search ' +
      'syntax (`websearch_to_tsquery`: words, "quoted phrases", `or`, `-excluded`), ranked by `ts_rank_cd` over title (weight A), ' +
      `description (B) and content (C). With \`customer_id\` the customer's own articles score ×${CUSTOMER_BOOST.own}, articles without a ` +
      `customer scope ×${CUSTOMER_BOOST.general} and other customers' articles ×${CUSTOMER_BOOST.other} (boosted, not filtered). ` +
      '`collection` restricts to one collection. Each hit carries its `rank` and a `headline` (content fragments, matches between `**`). ' +
      'A query of stop words only matches nothing. Paginated: `page` (0-based), `page_size` 1..100 (default 20; `size` alias). ' +
      KNOWLEDGE_SCOPE_DOC,
    tags: ['Knowledge'],
    query: z.object({
      ...paginationQueryShape(MAX_SEARCH_PAGE, 20),
      q: z.string().trim().min(1, 'must not be empty').max(500).describe('The search words (web-search syntax), at most 500 characters.'),
      collection: collectionSchema.optional(),
      customer_id: idSchema().optional(),
    }),
    response: pageEnvelopeSchema(searchHitSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_SEARCH_PAGE, 20);
      const { rows, total } = await searchArticles(deps, identity.org, identity.bu, { q: query.q, collection: query.collection, customer_id: query.customer_id }, page.offset, page.pageSize);
      return pageOf(rows.map(searchHitView), total, page);
    },
  }),
];
