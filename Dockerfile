# For people who build images with Docker. NOT built or tested here: the project's image is made by
# `npm run image` (tools/image/build.sh, no daemon, no base image, reproducible); see docs/install.md.
# This file makes an equivalent image from Debian and the same pinned Node 24 npm package.
FROM debian:trixie-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates npm && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN node_modules/.bin/tsc -p tsconfig.json --outDir /out \
  && mkdir -p /app/dist && cp -r /out/src /app/dist/src && cp package.json package-lock.json /app/ \
  && cd /app && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && cp /src/node_modules/node/bin/node /usr/local/bin/node-24

FROM debian:trixie-slim
COPY --from=build /usr/local/bin/node-24 /usr/local/bin/node
COPY --from=build /app /app
RUN groupadd --gid 65532 mds-scaler && useradd --uid 65532 --gid 65532 --no-create-home --shell /sbin/nologin mds-scaler
LABEL org.opencontainers.image.title="mds-scaler" org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production
WORKDIR /app
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/node", "/app/dist/src/cli/main.js"]
CMD ["controller"]
