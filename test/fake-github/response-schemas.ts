/**
 * Checks the fake's own responses against the response schemas in GitHub's
 * description. Too slow for every request (it needs the full 13 MB document),
 * so the fake's tests use it to keep the hand-written shapes honest.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import type { Ajv, ValidateFunction } from "ajv";
import { convertSchema, createAjv, formatAjvErrors, type Description, type JsonSchema } from "./openapi.js";

type Spec = any;

/**
 * Places where the description contradicts what GitHub sends: there the
 * errors under a path are ignored. `GET /app/installations` inlines the
 * account as allOf(user, enterprise), though it is one or the other.
 */
const KNOWN_INACCURACIES: Record<string, RegExp> = {
  "apps/list-installations": /^\/\d+\/account(\/|$)/,
};

export class ResponseSchemas {
  private readonly spec: Spec;
  private readonly ajv: Ajv;
  private readonly cache = new Map<string, ValidateFunction | null>();
  private readonly byId = new Map<string, Spec>();

  /** Against api.github.com's description, or another host's. */
  constructor(description: Description = "api.github.com") {
    const require = createRequire(import.meta.url);
    this.spec = JSON.parse(fs.readFileSync(require.resolve(`@octokit/openapi/generated/${description}.json`), "utf8"));
    for (const item of Object.values<Spec>(this.spec.paths)) {
      for (const op of Object.values<Spec>(item)) if (op?.operationId) this.byId.set(op.operationId, op);
    }
    this.ajv = createAjv();
    // every component, converted once; ajv compiles only what a response reaches
    const defs: Record<string, JsonSchema> = {};
    for (const [name, s] of Object.entries<Spec>(this.spec.components.schemas)) {
      defs[name] = convertSchema(s, (ref) => `gh#/definitions/${ref.replace(/^#\/components\/schemas\//, "")}`);
    }
    this.ajv.addSchema({ $id: "gh", definitions: defs });
  }

  /** null when the body fits (or there is no JSON schema for it), else the errors. */
  check(operationId: string, status: number, body: unknown): string | null {
    const key = `${operationId} ${status}`;
    if (!this.cache.has(key)) {
      const op = this.byId.get(operationId);
      let resp = op?.responses?.[String(status)];
      if (resp?.$ref) resp = this.spec.components.responses[resp.$ref.split("/").pop()];
      const schema = resp?.content?.["application/json"]?.schema;
      this.cache.set(
        key,
        schema
          ? this.ajv.compile(
              convertSchema(schema, (ref) => `gh#/definitions/${ref.replace(/^#\/components\/schemas\//, "")}`),
            )
          : null,
      );
    }
    return this.run(operationId, this.cache.get(key), body);
  }

  /**
   * null when `value` fits a schema of the description's components, else
   * the errors: webhook payloads (`webhook-issue-dependencies-blocked-by-added`)
   * are described there too.
   */
  checkComponent(name: string, value: unknown): string | null {
    const key = `component ${name}`;
    if (!this.cache.has(key)) {
      const v = this.spec.components.schemas[name] ? this.ajv.getSchema(`gh#/definitions/${name}`) : undefined;
      if (!v) throw new Error(`no schema ${name} in GitHub's description`);
      this.cache.set(key, v);
    }
    return this.run(name, this.cache.get(key), value);
  }

  private run(operationId: string, v: ValidateFunction | null | undefined, body: unknown): string | null {
    if (!v || v(body)) return null;
    const skip = KNOWN_INACCURACIES[operationId];
    const errors = (v.errors ?? []).filter((e) => !(skip && skip.test(e.instancePath)));
    // an ignored branch failing still fails its parent anyOf; drop those echoes too
    const real = errors.filter((e) => e.keyword !== "anyOf" || !skip || !skip.test(e.instancePath));
    return real.length ? formatAjvErrors(real) : null;
  }
}
