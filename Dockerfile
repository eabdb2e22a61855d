# syntax=docker/dockerfile:1
#
# One image for every service of the platform. The container command chooses the process:
#
#   node --import tsx services/<name>/src/server.ts     HTTP API of a domain service
#   node --import tsx services/<name>/src/worker.ts     Temporal worker of that service
#   node --import tsx services/api-gateway/src/server.ts
#
# (`npx tsx services/<name>/src/server.ts` works as well; `node --import tsx` keeps the service as
# the only process, so it receives SIGTERM directly.) Workers load the prebuilt workflow bundle
# named by WORKFLOW_BUNDLE_PATH instead of running webpack on start. See docker-compose.yml.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------- base: node + the npm of the lockfile
FROM ${NODE_IMAGE} AS base
# The npm that wrote package-lock.json; it also reads package.json's `allowScripts` policy.
ARG NPM_VERSION=11.19.1
ENV npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
RUN npm install --global "npm@${NPM_VERSION}" && npm cache clean --force
WORKDIR /app

# ---------------------------------------------------------------- manifests: root + workspace package.json files
# Only these and package-lock.json decide node_modules. Collecting them in their own stage means the
# `npm ci` layers below are rebuilt when a manifest changes, not when a source file does, and a new
# workspace under packages/, services/ or workflows/ is picked up without editing this file.
FROM base AS manifests
COPY . /src
RUN mkdir /manifests \
 && cd /src \
 && cp package.json package-lock.json /manifests/ \
 && find packages services workflows -maxdepth 2 -name package.json -not -path '*/node_modules/*' \
      -exec cp --parents {} /manifests/ \;

# ---------------------------------------------------------------- deps: the full tree (build tools, tsx)
FROM base AS deps
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci

# ---------------------------------------------------------------- build: the workflow bundle
FROM deps AS build
COPY . .
RUN npx tsx scripts/build-workflow-bundle.ts /app/dist/workflow-bundle.js

# ---------------------------------------------------------------- prod-deps: what the services need at run time
# Dependencies of the workspaces only: no root dependencies (embedded-postgres, MailDev: the local
# stack's stand-ins for PostgreSQL and SMTP) and no devDependencies (vitest, eslint, typescript).
FROM base AS prod-deps
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --omit=dev --workspaces --include-workspace-root=false
# Services run TypeScript with tsx (a root devDependency): take it and esbuild, its one dependency
# (with the native binary for this platform), from the full tree, at the lockfile's versions.
COPY --from=deps /app/node_modules/tsx ./node_modules/tsx
COPY --from=deps /app/node_modules/esbuild ./node_modules/esbuild
COPY --from=deps /app/node_modules/@esbuild ./node_modules/@esbuild
RUN ln -s ../tsx/dist/cli.mjs node_modules/.bin/tsx

# ---------------------------------------------------------------- runtime
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js \
    HOST=0.0.0.0
WORKDIR /app
# node_modules (root and per workspace) first: this layer changes only when a manifest does.
COPY --from=prod-deps /app ./
COPY . .
COPY --from=build /app/dist/workflow-bundle.js ./dist/workflow-bundle.js
# Fail the build, not the container start, when a run-time dependency is missing from the pruned
# tree: load the kernel, the workflow contracts and every service's module graph.
RUN node --import tsx --input-type=module -e " \
      import { existsSync, readdirSync } from 'node:fs'; \
      await import('@rp/platform'); await import('@rp/workflows'); \
      for (const s of readdirSync('services')) \
        if (existsSync('services/' + s + '/src/index.ts')) await import('./services/' + s + '/src/index.ts');" \
 && rm -rf /tmp/tsx-*
# The only directory a service may write to (local file storage); the code itself stays root-owned.
RUN mkdir -p var && chown node:node var
USER node
EXPOSE 8080 8101 8102 8103 8104
CMD ["node", "--import", "tsx", "services/api-gateway/src/server.ts"]
