/**
 * What the fake checks about a REST request before its handler runs: the
 * parameters and body against GitHub's REST description, the credentials
 * (the App's JWT or an installation token, as GitHub wants them), and the
 * installation's permissions. Findings become violations; what GitHub would
 * refuse becomes the refusal GitHub would send.
 */
import type { KeyObject } from "node:crypto";
import { checkAppJwt, JWT_ERRORS, parseAuthorization } from "./auth.js";
import { docsFor, errorBody, HttpError, notFound, type AuthInfo, type RecordedRequest, type Reply } from "./http.js";
import { formatAjvErrors, type OpenApiIndex, type OperationSpec } from "./openapi.js";
import type { FakeState } from "./state.js";

/** Endpoints that take the App's JWT rather than an installation token (cf. @octokit/auth-app). */
const JWT_PATHS =
  /^\/(app(\/|$)|repos\/\{owner\}\/\{repo\}\/installation$|orgs\/\{org\}\/installation$|users\/\{username\}\/installation$)/;

/** The installation permission an endpoint needs; writes need "write". */
function requiredPermission(op: OperationSpec): [string, "read" | "write"] | null {
  const p = op.path;
  const level = op.method === "get" ? "read" : "write";
  if (/\/pulls\/\{pull_number\}\/(merge|update-branch)$/.test(p) && level === "write") return ["contents", "write"];
  if (p.includes("/actions/")) return ["actions", level];
  if (/\/check-(runs|suites)/.test(p)) return ["checks", level];
  if (p.includes("/pulls")) return ["pull_requests", level];
  if (/\/(issues|labels)(\/|$)/.test(p)) return ["issues", level];
  if (/\/(git|contents|branches|commits|compare)(\/|$)/.test(p)) return ["contents", level];
  if (p.includes("/collaborators")) return ["metadata", "read"];
  return null;
}

export interface ChecksOptions {
  state: FakeState;
  openapi: OpenApiIndex;
  publicKey: KeyObject;
  /** where findings go (the server's list, shared) */
  violations: string[];
}

export class Checks {
  constructor(private readonly opts: ChecksOptions) {}

  /** Records violations; returns a 422 message when the JSON body fails its schema. */
  validate(
    op: OperationSpec,
    params: Record<string, string>,
    query: URLSearchParams,
    body: unknown,
    hasBody: boolean,
    rec: RecordedRequest,
  ): string | null {
    const violations = this.opts.violations;
    const where = `${op.operationId} ${rec.method} ${rec.path}`;
    for (const p of op.params) {
      if (p.in === "path") {
        const v = params[p.name];
        if (v === undefined || v === "") violations.push(`${where}: missing path parameter ${p.name}`);
        else {
          const problem = checkScalar(v, p.schema);
          if (problem) {
            violations.push(`${where}: path parameter ${p.name} ${problem}`);
            // GitHub routes a non-numeric number nowhere
            throw notFound({ op });
          }
        }
      } else if (p.in === "query") {
        const v = query.get(p.name);
        if (v === null) {
          if (p.required) violations.push(`${where}: missing required query parameter ${p.name}`);
          continue;
        }
        const problem = checkScalar(v, p.schema);
        if (problem) violations.push(`${where}: query parameter ${p.name} ${problem}`);
      }
    }
    const knownQuery = new Set(op.params.filter((p) => p.in === "query").map((p) => p.name));
    for (const k of new Set(query.keys())) {
      // GitHub ignores unknown parameters silently, which hides typos in filters
      if (!knownQuery.has(k)) violations.push(`${where}: unknown query parameter ${k} (GitHub ignores it)`);
    }

    if (!op.body) {
      if (hasBody && rec.method !== "GET" && !(body && typeof body === "object" && !Object.keys(body).length)) {
        violations.push(`${where}: sends a body but the operation takes none`);
      }
      return null;
    }
    if (!hasBody || body === undefined) {
      if (op.body.required) {
        violations.push(`${where}: request body is required`);
        return "Request body is required";
      }
      return null;
    }
    const validator = this.opts.openapi.bodyValidator(op);
    if (validator && !validator(body)) {
      const msg = formatAjvErrors(validator.errors);
      violations.push(
        `${where}: request body does not match the schema: ${msg} — body ${truncate(JSON.stringify(body))}`,
      );
      return msg;
    }
    const known = this.opts.openapi.knownBodyKeys(op);
    if (known && body && typeof body === "object" && !Array.isArray(body)) {
      const unknown = Object.keys(body).filter((k) => !known.has(k));
      if (unknown.length) {
        violations.push(`${where}: unknown body field(s) ${unknown.join(", ")} (GitHub ignores them)`);
      }
    }
    return null;
  }

  authenticate(op: OperationSpec, header: string | undefined, rec: RecordedRequest): AuthInfo {
    const { state, violations } = this.opts;
    const docs = docsFor({ op });
    const a = parseAuthorization(header);
    // GitHub answers what a host says of itself to anyone.
    if (!a && op.path === "/meta") return { kind: "none" };
    if (!a) violations.push(`${rec.method} ${rec.path}: no authorization header`);
    if (JWT_PATHS.test(op.path)) {
      if (!a) throw new HttpError(401, errorBody(401, "Requires authentication", docs));
      const problem =
        a.scheme === "bearer"
          ? checkAppJwt(a.credentials, this.opts.publicKey, state.app.id, Math.floor(Date.now() / 1000))
          : JWT_ERRORS.decode;
      if (problem) throw new HttpError(401, errorBody(401, problem, docs));
      return { kind: "app" };
    }
    if (!a) throw new HttpError(401, errorBody(401, "Requires authentication", docs));
    if (a.scheme !== "token" && a.scheme !== "bearer")
      throw new HttpError(401, errorBody(401, "Bad credentials", docs));
    const token = state.tokens.get(a.credentials);
    if (!token) {
      if (a.credentials.split(".").length === 3) {
        violations.push(
          `${rec.method} ${rec.path}: called with the App's JWT; this endpoint needs an installation token`,
        );
      }
      throw new HttpError(401, errorBody(401, "Bad credentials", docs));
    }
    if (token.validUntilMs <= Date.now() || token.revokedAt) {
      throw new HttpError(401, errorBody(401, "Bad credentials", docs));
    }
    // A suspended installation's tokens minted before it was suspended are refused as its new ones are.
    if (state.installations.get(token.installationId)?.suspendedAt)
      throw new HttpError(403, errorBody(403, "This installation has been suspended", docs));
    return {
      kind: "installation",
      installationId: token.installationId,
      token: token.token,
      repositories: token.repositories,
    };
  }

  /** GraphQL's authentication: the installation of a live installation token, or GraphQL's 401. */
  graphqlInstallation(header: string | undefined): number | Reply {
    const { state } = this.opts;
    const a = parseAuthorization(header);
    const token = a && (a.scheme === "token" || a.scheme === "bearer") ? state.tokens.get(a.credentials) : undefined;
    if (!token || token.validUntilMs <= Date.now() || token.revokedAt) {
      return {
        status: 401,
        body: {
          message: a ? "Bad credentials" : "This endpoint requires you to be authenticated.",
          documentation_url:
            "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql",
        },
      };
    }
    return token.installationId;
  }

  /** The installation must have the permission the endpoint needs, and so must the token (minted with fewer). */
  checkPermission(op: OperationSpec, installationId: number, token?: string): void {
    const need = requiredPermission(op);
    if (!need) return;
    const enough = (granted: string | undefined) =>
      Boolean(granted) && (need[1] === "read" || granted === "write" || granted === "admin");
    const held = token ? this.opts.state.tokens.get(token) : undefined;
    if (
      !enough(this.opts.state.installations.get(installationId)?.permissions[need[0]]) ||
      (held && !enough(held.permissions[need[0]]))
    ) {
      throw new HttpError(403, errorBody(403, "Resource not accessible by integration", docsFor({ op })));
    }
  }
}

function checkScalar(value: string, schema: Record<string, unknown>): string | null {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "integer" && !/^-?\d+$/.test(value)) return `must be an integer, got "${value}"`;
  if (type === "number" && Number.isNaN(Number(value))) return `must be a number, got "${value}"`;
  if (type === "boolean" && value !== "true" && value !== "false") return `must be true or false, got "${value}"`;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    return `must be one of ${schema.enum.filter((x) => x !== null).join(", ")}, got "${value}"`;
  }
  return null;
}

function truncate(s: string, n = 300): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
