# syntax=docker/dockerfile:1
# One image for every role: `docverify api | operator | prepare | check | agent | standalone | submit ...`.
#   docker build -t docverify:0.1.0 .
# Stages: build (all dependencies, TypeScript -> dist/), deps (production dependencies only), runtime.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# `npm install`, not `npm ci`: optional platform packages of bullmq are missing on some registries.
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY core ./core
COPY api ./api
COPY operator ./operator
COPY prepare ./prepare
COPY document ./document
COPY checks ./checks
COPY agent ./agent
COPY platform ./platform
COPY bin ./bin
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund \
  && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
  HOME=/tmp
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
# Step Pods run `docverify <step>` (platform/kube/step-pod.ts), so the command is on PATH too.
RUN chmod 0755 /app/dist/bin/docverify.js \
  && ln -s /app/dist/bin/docverify.js /usr/local/bin/docverify
# The same numeric user as the chart's securityContext; nothing in the image is writable by it.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["node", "/app/dist/bin/docverify.js"]
CMD ["--help"]
