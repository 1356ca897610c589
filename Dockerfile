# One image for the server, the worker and the console; docker-compose.yml picks the command.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps/server/package.json apps/server/
COPY apps/worker/package.json apps/worker/
COPY apps/console/package.json apps/console/
COPY packages/core/package.json packages/core/
COPY packages/db/package.json packages/db/
COPY packages/json/package.json packages/json/
COPY e2e/package.json e2e/
RUN npm ci
COPY . .
RUN cd apps/console && NEXT_TELEMETRY_DISABLED=1 node ../../node_modules/next/dist/bin/next build

FROM node:20-bookworm-slim
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1
WORKDIR /app
COPY --from=build /app /app
USER node
EXPOSE 8080 3000
CMD ["node", "--import", "tsx", "apps/server/src/main.ts"]
