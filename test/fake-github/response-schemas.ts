/**
 * Checks the fake's own responses against the response schemas in GitHub's
 * description. Too slow for every request (it needs the full 13 MB document),
 * so the fake's tests use it to keep the hand-written shapes honest.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { convertSchema, formatAjvErrors, type JsonSchema } from "./openapi.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Spec = any;

export class ResponseSchemas {
  private readonly spec: Spec;
  private readonly ajv: Ajv;
  private readonly cache = new Map<string, ValidateFunction | null>();
  private readonly byId = new Map<string, Spec>();

  constructor() {
    const require = createRequire(import.meta.url);
    this.spec = JSON.parse(fs.readFileSync(require.resolve("@octokit/openapi/generated/api.github.com.json"), "utf8"));
    for (const item of Object.values<Spec>(this.spec.paths)) {
      for (const op of Object.values<Spec>(item)) if (op?.operationId) this.byId.set(op.operationId, op);
    }
    this.ajv = new Ajv({
      strict: false,
      allErrors: true,
      logger: false,
      validateSchema: false,
      formats: { int32: true, int64: true, double: true, "repo.nwo": true, binary: true },
    });
    const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
    (addFormats as unknown as (a: Ajv) => void)(this.ajv);
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
          ? this.ajv.compile(convertSchema(schema, (ref) => `gh#/definitions/${ref.replace(/^#\/components\/schemas\//, "")}`))
          : null,
      );
    }
    const v = this.cache.get(key);
    if (!v || v(body)) return null;
    return formatAjvErrors(v.errors);
  }
}
