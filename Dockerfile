# syntax=docker/dockerfile:1
# BuildKit (the default builder since Docker 23) is needed for the npm cache
# mount below.

# ---- build: install everything, generate both Prisma clients, compile -------
FROM node:20-bookworm-slim AS build

# better-sqlite3 downloads a prebuilt binary when one matches this platform
# and Node ABI, and compiles itself with node-gyp when none does.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# The whole context goes in before `npm ci` because its lifecycle scripts need
# it: postinstall runs `prisma generate` from prisma/*/prisma.config.ts into
# src/store/generated/, and prepare runs tsc over src/, test/, bench/ and
# scripts/. .dockerignore keeps local builds, databases and secrets out.
COPY . .
RUN --mount=type=cache,target=/root/.npm npm ci

# Production dependencies only. prisma itself stays: it is a dependency, not a
# devDependency. --ignore-scripts so that pruning never re-runs prepare, whose
# tsc was just pruned away.
RUN npm prune --omit=dev --ignore-scripts

# ---- runtime ----------------------------------------------------------------
FROM node:20-bookworm-slim AS runtime

# tini as PID 1. The kernel drops SIGTERM sent to a PID 1 that has no handler
# for it; the service installs one only once it is serving, so a stop during
# start-up (a migration waiting on a PostgreSQL lock) or on the setup page
# would wait out `docker stop` and end in SIGKILL.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

# A numeric uid of its own: Kubernetes runAsNonRoot can only verify a numeric
# USER, and 10001 matches no account on a typical host (the image's node user
# is 1000, usually the first human user there).
RUN groupadd --system --gid 10001 orchestra \
 && useradd --system --uid 10001 --gid orchestra --create-home \
      --home-dir /home/orchestra --shell /usr/sbin/nologin orchestra

WORKDIR /app

# NODE_ENV=production also stops Probot from entering its setup mode when
# credentials are missing: the service fails at start-up naming the missing
# setting instead of serving a registration page to whoever reaches the port
# (register the App from a checkout; see docs/github-app.md).
# HOST: the service listens on localhost unless told otherwise, and nothing
# outside the container (a published port, a Kubernetes Service) reaches that.
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0

# Owned by root and not writable by the service user: the running service
# cannot rewrite its own code or migrations.
# - package.json: packageRoot() finds the install by its name field.
# - dist/src only: the compiled tests and benchmarks are not shipped.
# - prisma/: the service applies prisma/<provider>/migrations/*/migration.sql
#   itself at start-up.
# - bin/: the `orchestra` CLI (status, tasks, replay, migrate, ...).
# - app.yml: read by the setup page, and by `orchestra doctor` to compare the
#   App's and each installation's permissions and events with it.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/bin ./bin
COPY --from=build /app/app.yml ./app.yml

# The embedded SQLite database (no DATABASE_URL) lives in ./data/. The
# directory is created and handed to the service user before VOLUME, because
# a new named volume copies this ownership and later changes to a VOLUME path
# are discarded. A bind-mounted host directory keeps its own ownership: make it
# writable by uid 10001. One container per SQLite volume; replicas need
# DATABASE_URL=postgres://...
RUN mkdir -p /app/data && chown orchestra:orchestra /app/data
VOLUME /app/data

USER 10001:10001

EXPOSE 3000

# Liveness only: /health answers while the process serves HTTP. Readiness is
# /ready, for orchestrators that probe the two separately.
# Exec form, so PORT is read by node rather than expanded by a shell; slim
# images have no curl or wget.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
# The service applies pending migrations itself at start-up (under a
# PostgreSQL advisory lock, so replicas starting together apply each once).
# To run them as a separate step instead, e.g. from an init container, use
# `npx orchestra migrate` (or `node bin/orchestra.js migrate`) in this image.
# Not `npm start`: its prestart compares src/ with dist/ and compiles when
# they differ, and neither the sources nor the compiler are shipped. The
# Node.js options are npm start's (src/app/node-flags.ts: less memory resident).
CMD ["node", "--max-semi-space-size=4", "--liftoff-only", "dist/src/main.js"]
