# Production image: built once, configured by environment (see README "Configuration").
# Node 24, the active LTS line, which CI also runs the test suite on (docs/deployment.md "Node.js versions").
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# WEB_CONCURRENCY=auto: one worker process per CPU core, sharing port 3000 (docs/deployment.md "All cores of one machine").
# Under a CPU quota (docker run --cpus=2) or beside other replicas on one host, set a number instead.
ENV NODE_ENV=production DATA_DIR=/data WEB_CONCURRENCY=auto
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/views ./views
COPY --from=build /app/public ./public
COPY package.json ./
# The staleness check the npm scripts run first: with no src/ here it does nothing, so `npm run migration:run`,
# `migration:show`, `migration:revert` and `verify-license` run dist/ in the image as in a checkout (docs/deployment.md).
COPY --from=build /app/scripts/build-if-stale.mjs ./scripts/
# The operator's command on PATH: docker compose exec app licence-server user reset alice (docs/deployment.md,
# The licence-server command). It runs the built code and never builds.
RUN ln -s /app/dist/src/cli/main.js /usr/local/bin/licence-server
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD node -e "fetch('http://127.0.0.1:3000/api/v1/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/src/main.js"]
