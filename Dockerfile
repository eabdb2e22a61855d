# syntax=docker/dockerfile:1
#
# One image for every service of the platform. The container command chooses the process:
#
#   node --import tsx services/<name>/src/server.ts     HTTP API of a domain service
#   node --import tsx services/<name>/src/worker.ts     Temporal worker of that service
#   node --import tsx services/api-gateway/src/server.ts
#
# A second, small image holds the object storage server (S3): `--target s3` builds versitygw from its
# Go module (the version scripts/local/versitygw.mjs installs for `npm start` and the tests) into a
# busybox image (its wget is the healthcheck's probe). `--target sms-sink` is the local SMS sink.
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

# ---------------------------------------------------------------- s3: versitygw, the S3-compatible object storage
# Built from its Go module like `npm start` does (scripts/local/versitygw.mjs); static (no cgo), so
# it runs on busybox. Its `posix` backend keeps every bucket as a directory under /data (a volume),
# object metadata in extended attributes. Defined before `runtime` so that the default target stays
# the services' image.
FROM golang:1.25-bookworm AS versitygw-build
ARG VERSITYGW_VERSION=v1.8.0
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOBIN=/out go install "github.com/versity/versitygw/cmd/versitygw@${VERSITYGW_VERSION}"

FROM busybox:1.37 AS s3
COPY --from=versitygw-build /out/versitygw /usr/local/bin/versitygw
# A fresh named volume takes this directory's owner: the server runs unprivileged.
RUN mkdir /data && chown 65534:65534 /data
USER 65534:65534
VOLUME /data
EXPOSE 7070
# Root credentials come from ROOT_ACCESS_KEY_ID / ROOT_SECRET_ACCESS_KEY (environment, not argv).
ENTRYPOINT ["versitygw"]
CMD ["--port", ":7070", "--health", "/health", "posix", "/data"]

# ---------------------------------------------------------------- sms-sink: the local SMS sink
# The stand-in for an SMS provider (scripts/local/sms-sink.ts: Twilio's Messages API and a page of
# the texts received), what MailDev is for email. Before `runtime`, which stays the default target.
FROM prod-deps AS sms-sink
ENV NODE_ENV=production \
    SMS_SINK_HOST=0.0.0.0 \
    SMS_SINK_PORT=1090
COPY . .
USER node
EXPOSE 1090
CMD ["node", "--import", "tsx", "scripts/local/sms-sink.ts"]

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
