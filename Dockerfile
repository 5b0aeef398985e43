# syntax=docker/dockerfile:1
# recon's production image: built on Node 24 LTS, runs as a non-root user with production dependencies only.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped here: `prepare` would build before the sources are copied.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY pipelines ./pipelines
COPY scripts/make-pglite-template.ts ./scripts/
RUN npm run build

FROM node:24-bookworm-slim AS runtime
# lbzip2 decompresses bzip2 exports natively with about half the CPU of bzip2, which stays as the fallback
# (recon falls back to a JavaScript decoder without either).
RUN apt-get update && apt-get install -y --no-install-recommends lbzip2 bzip2 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production RECON_DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY sql ./sql
COPY fixtures ./fixtures
RUN ln -s /app/dist/src/cli/main.js /usr/local/bin/recon && chmod +x /app/dist/src/cli/main.js \
  && mkdir -p /data /shared && chown node:node /data /shared
USER node
VOLUME /data
ENTRYPOINT ["recon"]
CMD ["--help"]
