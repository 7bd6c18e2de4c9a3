/** GraphQL requests: recorded under their operation's name, then answered by the registry. */
import type { IncomingMessage } from "node:http";
import { DEFAULT_DOCS, errorBody, type RecordedRequest, type Reply } from "../http.js";
import type { OperationSpec } from "../openapi/types.js";
import { ServerCore } from "./core.js";

/** A GraphQL mutation as the fault rules see an operation. */
const mutationSpec = (name: string | null): OperationSpec => ({
  method: "post",
  path: "/graphql",
  operationId: `graphql:${name ?? "(anonymous)"}`,
  docs: "https://docs.github.com/graphql/reference/mutations",
  params: [],
  body: null,
});

export class GraphQLEndpoint extends ServerCore {
  protected async graphqlRequest(
    req: IncomingMessage,
    method: string,
    body: unknown,
    rec: RecordedRequest,
  ): Promise<Reply> {
    rec.path = "/graphql";
    if (method !== "POST") {
      this.violations.push(`unexpected route ${method} /api/graphql (GraphQL takes POST)`);
      return { status: 404, body: errorBody(404, "Not Found", DEFAULT_DOCS) };
    }
    const payload = (body ?? {}) as { query?: unknown; variables?: Record<string, unknown>; operationName?: string };
    const nameFromText =
      typeof payload.query === "string" ? /\b(?:query|mutation)\s+(\w+)/.exec(payload.query)?.[1] : undefined;
    const opName = payload.operationName ?? nameFromText ?? null;
    rec.graphql = { operationName: opName, variables: payload.variables ?? {} };
    rec.operationId = `graphql:${opName ?? "(anonymous)"}`;
    const held = this.holds.get(rec.operationId);
    if (held) {
      held.reached(rec);
      await held.gate;
    }
    // A mutation is a write: chaos may fail it as it fails REST writes.
    const mutation = typeof payload.query === "string" && /^\s*mutation\b/.test(payload.query);
    const injection =
      this.faults.take(method, "/graphql", null, opName) ??
      (mutation ? this.faults.takeChaos(method, mutationSpec(opName), true) : null);
    return this.faults.run(injection, rec, () => this.graphqlAnswer(req, body));
  }

  private async graphqlAnswer(req: IncomingMessage, body: unknown): Promise<Reply> {
    const installationId = this.checks.graphqlInstallation(req.headers.authorization);
    if (typeof installationId !== "number") return installationId;
    const outcome = await this.graphql.handle(body, { state: this.state, json: this.json, installationId });
    this.violations.push(...outcome.violations);
    return { status: 200, body: outcome.body };
  }
}
