# One image for the router and the demo subgraphs (the command picks which).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app /app
# The code stays root's (the process cannot rewrite it); only the state folder (SWITCHYARD_DATA_DIR's
# default, where the audit log spills while the database is down) belongs to the user the process runs as.
RUN mkdir -p /app/.switchyard && chown node:node /app/.switchyard
USER node
EXPOSE 4000
ENTRYPOINT ["node", "bin/switchyard.js"]
CMD ["serve"]
