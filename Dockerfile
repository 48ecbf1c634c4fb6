FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3 argon2
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps apps
COPY libs libs
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
# DATA_DIR: owned by the unprivileged user, so a fresh named volume mounted here is writable too.
RUN mkdir /data && chown node:node /data
USER node
EXPOSE 3000
# The API; the projector runs from the same image: node dist/apps/projector/src/main.js
CMD ["node", "dist/apps/api/src/main.js"]
