# A production image: built in one stage, run from `npm ci --omit=dev` as the non-root `node` user.
# Not built in CI (these machines have no Docker); `scripts/production-smoke.mjs` checks the same
# install (`npm ci --omit=dev`, then `node dist/main.js`) on every run of `.ci/run`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/bundle-main.mjs ./scripts/
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The alerts' SQLite file (ALERTS_DATA_DIR): mount a volume here so that alerts outlive the container.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME /app/data
ENV ALERTS_DATA_DIR=/app/data
USER node
EXPOSE 4000
# The Node flags of `npm start` (package.json), why in docs/operations.md ("V8's flags").
CMD ["node", "--max-semi-space-size=32", "--no-allocation-site-pretenuring", "dist/main.js"]
