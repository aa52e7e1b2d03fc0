# syntax=docker/dockerfile:1

# Node 24, the maintained LTS, within package.json's engines (test/runtime.test.ts); .ci/run
# smoke-tests this major, the suite itself runs on the lowest release engines allows. Both
# stages use the same major.
# Build stage: compile the TypeScript sources to dist/ (plain ESM JavaScript, run by node).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

# Final stage: production dependencies and dist/ only; no compiler, no tsx, no tests.
FROM node:24-bookworm-slim
# TZ=UTC: the catalog views hold UTC wall clocks (src/db/process-zone.ts; the process sets it too).
ENV NODE_ENV=production \
    TZ=UTC \
    HOST=0.0.0.0 \
    PORT=4000 \
    EMBEDDED_CACHE_DIR=/app/.cache/agent-graph
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Seeding the embedded database takes several seconds; do it once here, so that every
# container loads the snapshot (about a second) instead. The snapshot is read-only at run time.
RUN node --input-type=module -e "import { loadConfig } from './dist/config.js'; \
import { openEmbeddedDatabase } from './dist/db/embedded/database.js'; \
const { database } = loadConfig({ EMBEDDED_CACHE_DIR: process.env.EMBEDDED_CACHE_DIR }); \
const db = await openEmbeddedDatabase(database); \
await db.driver.close();"
USER node
EXPOSE 4000
# HOST=0.0.0.0 needs AUTH_JWT_SECRET or AUTH_JWKS_URL (or ALLOW_ANONYMOUS=true for a demo):
# the server refuses to serve anonymous callers as administrators on a public address.
# The image has no curl: node's own fetch probes /health.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
