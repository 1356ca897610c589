# One image for the server, the worker, the admin CLI and the console; docker-compose.yml picks the command.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Every workspace's package.json before `npm ci`, so that the install layer is rebuilt only when dependencies
# change. scripts/dockerfile.test.ts checks this list against the workspaces in package.json.
COPY apps/console/package.json apps/console/
COPY apps/server/package.json apps/server/
COPY apps/worker/package.json apps/worker/
COPY packages/client/package.json packages/client/
COPY packages/core/package.json packages/core/
COPY packages/db/package.json packages/db/
COPY packages/egress/package.json packages/egress/
COPY packages/json/package.json packages/json/
COPY packages/signing/package.json packages/signing/
COPY e2e/package.json e2e/
RUN npm ci
COPY . .
# Production JavaScript (dist/server.js, dist/worker.js, dist/admin.js) and the console's production build.
RUN npm run build
RUN cd apps/console && NEXT_TELEMETRY_DISABLED=1 node ../../node_modules/next/dist/bin/next build

FROM node:22-bookworm-slim
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1
WORKDIR /app
COPY --from=build /app /app
USER node
EXPOSE 8080 3000
CMD ["node", "--enable-source-maps", "dist/server.js"]
