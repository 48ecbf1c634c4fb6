# One image for the API (the default command) and the projector (`node dist/apps/projector/src/main.js`).
#
# Base: Node.js 24, the Active LTS line (22 is supported too; 20 has been end-of-life since 2026-04-30).
# NOT YET PINNED BY DIGEST: no container registry was reachable where this file was written, so no
# real digest could be read. Before a release, pin it, for example:
#   docker buildx imagetools inspect node:24-bookworm-slim --format '{{json .Manifest.Digest}}'
# then build with --build-arg NODE_IMAGE=node:24-bookworm-slim@sha256:<that digest> (or write it here).
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No compiler: better-sqlite3 and argon2 ship Node-API binaries (argon2 picks its own at install).
# Scripts are otherwise skipped: the `node` devDependency's download is for machines without Node
# 24, and its bin link, left dangling, goes, so that npm scripts run the image's Node.
RUN npm ci --ignore-scripts && rm node_modules/.bin/node && npm rebuild argon2
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps apps
COPY libs libs
RUN npm run build && npm prune --omit=dev

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
# The young generation's bound, as .npmrc gives npm scripts (see there): Node 24 alone keeps
# 128 MiB of it resident after a replay.
ENV NODE_OPTIONS=--max-semi-space-size=16
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
# DATA_DIR: owned by the unprivileged user, so a fresh named volume mounted here is writable too;
# the erasure log's directory too, a volume of its own, so that it outlives /data
# (docs/operations.md); the code cache (below) too, so that modules first compiled at run time are
# added to it.
RUN mkdir /data /erasures /app/.compile-cache && chown node:node /data /erasures /app/.compile-cache
ENV ERASURE_LOG=/erasures/erasures.jsonl
USER node
# Node's on-disk code cache (22 and later): most of a start is parsing and compiling modules
# (NestJS, Fastify, the validators), so the image carries them compiled, warmed here by loading both
# apps' modules. Measured outside an image on Node 24.21 (no Docker engine here): loading them took
# 0.55-0.63 s with the cache against 0.69-0.74 s without, on 2 shared cores.
ENV NODE_COMPILE_CACHE=/app/.compile-cache
RUN node -e "require('reflect-metadata'); require('./dist/apps/api/src/app.module'); require('./dist/apps/projector/src/projector.module')"
# 3000: the API. 9464: the operator's listener (/metrics; the projector's /health/*), never published.
EXPOSE 3000 9464
# The API's readiness; the projector's container overrides it (docker-compose.yml).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/apps/api/src/main.js"]
