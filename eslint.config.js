// ESLint flat config: typed linting of every TypeScript file of the monorepo (`npm run lint`).
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const DETERMINISM =
  'Workflow code must be deterministic: no Node builtins (no I/O, clocks, randomness or threads). ' +
  'Put I/O in an activity of the service; import only @temporalio/workflow, other workflow modules and `import type` of activity contracts.';

const NODE_BUILTINS = [
  'fs',
  'path',
  'crypto',
  'http',
  'https',
  'net',
  'child_process',
  'os',
  'stream',
  'url',
  'util',
  'worker_threads',
  'async_hooks',
  'events',
  'buffer',
  'timers',
  'zlib',
  'dns',
];

const NODE_GLOBALS = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'URLSearchParams',
    'fetch',
    'AbortController',
    'AbortSignal',
    'TextEncoder',
    'TextDecoder',
    'structuredClone',
    'queueMicrotask',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'clearImmediate',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  {
    ignores: ['**/node_modules/', 'var/', '**/dist/', 'bench/results/', '.tools/', '.git/'],
  },

  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // A promise nobody awaits loses its rejection: in a handler, a worker or an activity that is a
      // silent failure. Long work belongs in a workflow (DESIGN.md §1), never a fire-and-forget promise.
      '@typescript-eslint/no-floating-promises': 'error',

      // Relaxed where recommendedTypeChecked fights the codebase's style:
      // - knex rows, JSON bodies and zod-parsed payloads are typed `any`/loosely by design; the
      //   no-unsafe-* family would flag nearly every store and test line without finding bugs.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      // - route handlers, migration sources and activity factories implement interfaces that expect
      //   async functions; many of them have nothing to await.
      '@typescript-eslint/require-await': 'off',
      // - explicit `!`/`as` kept for the reader's sake (child-process pipes, driver results) are
      //   harmless; the rule is cosmetic.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // - forwarding a caught rejection reason unchanged (`(e) => reject(e)`) is fine.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },

  // Plain JavaScript (this file, scripts/*.mjs) is outside tsconfig.json: lint it without types.
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: NODE_GLOBALS },
  },

  // Workflow code runs in Temporal's deterministic sandbox and is replayed: no Node builtins.
  // paths.ts (the bundle's location, for workers) and index.ts (contracts for services) are not
  // part of the workflow bundle.
  {
    files: ['workflows/src/**/*.ts'],
    ignores: ['workflows/src/paths.ts', 'workflows/src/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^node:', message: DETERMINISM },
            { regex: `^(${NODE_BUILTINS.join('|')})(/.*)?$`, message: DETERMINISM },
          ],
        },
      ],
    },
  },

  // Layers of every service (DESIGN.md §2): a route validates, calls one domain function and shapes
  // the answer through a view; the domain holds the rules; the store is SQL only. The direction is
  // routes → domain → store, never back, so a reader knows where a rule or a query lives.
  {
    files: ['services/*/src/routes/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '(^|/)store(/|$)', message: 'A route calls the domain, never the store: move the store call and its rule into domain/.' }] },
      ],
    },
  },
  {
    files: ['services/*/src/domain/**/*.ts', 'services/*/src/extraction/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '(^|/)routes(/|$)', message: 'The domain never imports a route: shared shapes belong in the domain or views/.' }] },
      ],
    },
  },
  {
    files: ['services/*/src/store/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)(domain|extraction|routes|views)(/|$)',
              message: 'The store is SQL only and imports no domain, route or view: types both need belong in a module both import.',
            },
          ],
        },
      ],
    },
  },
  // A route handler touches no database handle or transaction: that is the domain's work.
  {
    files: ['services/*/src/routes/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='deps'][property.name='db']", message: 'A route passes deps to one domain function; the domain uses the database.' },
        { selector: "MemberExpression[property.name='transaction']", message: 'Transactions belong in the domain, not in a route.' },
      ],
    },
  },

  // Tests may use `any` for fixtures and loosely shaped responses, and pass mocked methods to
  // `expect(...)` (vitest's spies do not use `this`).
  {
    files: ['test/**/*.ts', '**/test/**/*.ts', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
