/**
 * `GET /meta`: what the host says of itself. A GitHub Enterprise Server
 * answers its `installed_version`; api.github.com and GitHub Enterprise Cloud
 * answer none (their description has no such field). GitHub answers it
 * without authentication too.
 */
import { ok, type RouteTable } from "../http.js";

export const metaRoutes: RouteTable = {
  "GET /meta": (ctx) => {
    const { installedVersion } = ctx.state.host;
    if (installedVersion === null)
      return ok({ verifiable_password_authentication: false, hooks: [], web: [], api: [], git: [], actions: [] });
    return ok({
      verifiable_password_authentication: false,
      packages: [],
      domains: { website: [ctx.url.host], packages: [] },
      installed_version: installedVersion,
    });
  },
};
