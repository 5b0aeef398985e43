# syntax=docker/dockerfile:1
# recon's production image (target `runtime`, the default): Node 24 LTS, a non-root user, production dependencies
# only, and no sandbox (a development package). Target `sandbox` is the sandbox of the payment service on its own,
# for docker-compose.yml's demonstration.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages ./packages
# Scripts are skipped here: `prepare` would build before the sources are copied.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY cli ./cli
COPY src ./src
COPY pipelines ./pipelines
COPY scripts/make-pglite-template.ts ./scripts/
RUN npm run build

FROM node:24-bookworm-slim AS sandbox
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force && mkdir -p /shared && chown node:node /shared
USER node
ENTRYPOINT ["node", "packages/sandbox/src/cli/main.ts"]
CMD ["--help"]

FROM node:24-bookworm-slim AS runtime
# lbzip2 decompresses bzip2 exports natively with about half the CPU of bzip2, which stays as the fallback
# (recon falls back to a JavaScript decoder without either).
# tini is the container's init: it passes SIGTERM on to recon (which drains) and reaps what recon starts (lbzip2).
RUN apt-get update && apt-get install -y --no-install-recommends lbzip2 bzip2 tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production RECON_DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
# The protocol package only: without packages/sandbox the install holds no sandbox.
COPY packages/protocol ./packages/protocol
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force \
  && test ! -e node_modules/@recon/sandbox
COPY --from=build /app/dist ./dist
COPY sql ./sql
COPY fixtures ./fixtures
RUN ln -s /app/dist/cli/main.js /usr/local/bin/recon && chmod +x /app/dist/cli/main.js \
  && mkdir -p /data /shared && chown node:node /data /shared
USER node
VOLUME /data
# recon serve's public listener (RECON_PORT), and the admin listener of recon serve and recon worker
# (RECON_ADMIN_PORT: /metrics, /healthz), which listens on loopback unless RECON_ADMIN_HOST says otherwise.
EXPOSE 8090 8091
# For recon serve and recon worker: /healthz of the admin listener, which answers 503 while the database does not
# answer or the process drains. A one-shot command (report, ingest...) ends long before the first check.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.RECON_ADMIN_PORT || 8091}/healthz`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "recon"]
CMD ["--help"]
