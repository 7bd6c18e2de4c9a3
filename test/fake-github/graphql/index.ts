/**
 * GraphQL at `POST /api/graphql`, dispatched by operation name. The fake has
 * no schema, so each operation the App sends must be registered; an unknown
 * name is a GraphQL error and a violation, which keeps every query the App
 * depends on visible in the tests.
 */
import type { FakeState } from "../state.js";
import { execute, type GraphQLError } from "./execute.js";
import { githubRoot, type GraphQLContext } from "./github.js";
import { GraphQLSyntaxError, parseDocument, usedVariables, type Document, type Operation } from "./parse.js";

export { GraphQLFieldError } from "./execute.js";
export { connection, githubRoot, issueNode, pullNode, repoNode, type GraphQLContext } from "./github.js";

/**
 * Returns the operation's data — or a superset of it: the result is cut down
 * to the selected fields. Values may be functions of the field's arguments.
 */
export type GraphQLHandler = (
  variables: Record<string, unknown>,
  state: FakeState,
  ctx: GraphQLContext,
) => unknown | Promise<unknown>;

export interface GraphQLOutcome {
  body: { data?: unknown; errors?: GraphQLError[] };
  operationName: string | null;
  violations: string[];
}

/** Built-in handlers: both read the shared GitHub root, whatever their exact selection. */
const rootHandler: GraphQLHandler = (_v, _s, ctx) => githubRoot(ctx);

export class GraphQLRegistry {
  private readonly handlers = new Map<string, GraphQLHandler>([
    ["PullRequestMergeState", rootHandler],
    ["IssueClosingPullRequests", rootHandler],
  ]);

  /** A handler answering from the built-in schema slice (repository → pullRequest/issue …). */
  readonly root: GraphQLHandler = rootHandler;

  register(operationName: string, handler: GraphQLHandler): void {
    this.handlers.set(operationName, handler);
  }

  has(operationName: string): boolean {
    return this.handlers.has(operationName);
  }

  async handle(body: unknown, ctx: GraphQLContext): Promise<GraphQLOutcome> {
    const violations: string[] = [];
    const fail = (message: string, extra: Partial<GraphQLError> = {}, opName: string | null = null): GraphQLOutcome => ({
      body: { errors: [{ message, ...extra }] },
      operationName: opName,
      violations,
    });
    const req = (body ?? {}) as { query?: unknown; variables?: unknown; operationName?: unknown };
    if (typeof req.query !== "string") {
      violations.push("graphql: request has no query string");
      return fail("A query attribute must be specified and must be a string.");
    }
    let doc: Document;
    try {
      doc = parseDocument(req.query);
    } catch (e) {
      if (!(e instanceof GraphQLSyntaxError)) throw e;
      violations.push(`graphql: syntax error: ${e.message}`);
      return fail(`Parse error on ${e.message}`, { locations: [{ line: e.line, column: e.column }] });
    }
    const wanted = typeof req.operationName === "string" ? req.operationName : null;
    const op: Operation | undefined = wanted
      ? doc.operations.find((o) => o.name === wanted)
      : doc.operations.length === 1
        ? doc.operations[0]
        : undefined;
    if (!op) {
      violations.push(`graphql: cannot pick an operation (operationName ${wanted ?? "missing"})`);
      return fail(wanted ? `Unknown operation named "${wanted}".` : "An operation name is required");
    }
    if (!op.name) {
      violations.push("graphql: anonymous operation — name every query (`query Name(...)`) so the fake can answer it");
      return fail("fake GitHub: anonymous GraphQL operations are not supported");
    }
    const handler = this.handlers.get(op.name);
    if (!handler) {
      violations.push(`graphql: unexpected operation ${op.name} (register it with fake.graphql.register)`);
      return fail(`fake GitHub has no handler for GraphQL operation "${op.name}"`, {}, op.name);
    }

    const variables = { ...((req.variables ?? {}) as Record<string, unknown>) };
    const varErrors = checkVariables(doc, op, variables);
    if (varErrors.length) {
      violations.push(...varErrors.map((e) => `graphql ${op.name}: ${e.message}`));
      return { body: { errors: varErrors }, operationName: op.name, violations };
    }

    const root = await handler(variables, ctx.state, ctx);
    const result = execute(doc, op, root, variables);
    for (const f of result.missingFields) {
      violations.push(`graphql ${op.name}: field ${f} is not modelled by the fake (extend its handler)`);
    }
    const out: GraphQLOutcome["body"] = { data: result.data };
    if (result.errors.length) out.errors = result.errors;
    return { body: out, operationName: op.name, violations };
  }
}

/** Declared-but-missing required variables and used-but-undeclared ones, worded like GitHub. */
function checkVariables(doc: Document, op: Operation, variables: Record<string, unknown>): GraphQLError[] {
  const errors: GraphQLError[] = [];
  const declared = new Set(op.variables.map((v) => v.name));
  for (const def of op.variables) {
    let value = variables[def.name];
    if (value === undefined && def.defaultValue?.kind === "lit") {
      value = variables[def.name] = def.defaultValue.value;
    }
    const nonNull = def.type.endsWith("!");
    if (value === undefined || value === null) {
      if (nonNull) {
        errors.push({
          message: `Variable $${def.name} of type ${def.type} was provided invalid value`,
          locations: [{ line: def.line, column: def.column }],
          extensions: { value: null, problems: [{ path: [], explanation: "Expected value to not be null" }] },
        });
      }
      continue;
    }
    const base = def.type.replace(/!$/, "");
    const bad =
      (base === "Int" && !Number.isInteger(value)) ||
      (base === "Float" && typeof value !== "number") ||
      (base === "String" && typeof value !== "string") ||
      (base === "Boolean" && typeof value !== "boolean") ||
      (base === "ID" && typeof value !== "string" && typeof value !== "number") ||
      (base.startsWith("[") && !Array.isArray(value));
    if (bad) {
      errors.push({
        message: `Variable $${def.name} of type ${def.type} was provided invalid value`,
        locations: [{ line: def.line, column: def.column }],
        extensions: { value, problems: [{ path: [], explanation: `Could not coerce value ${JSON.stringify(value)} to ${base}` }] },
      });
    }
  }
  for (const used of usedVariables(doc, op.selections)) {
    if (!declared.has(used)) errors.push({ message: `Variable $${used} is used by ${op.name} but not declared` });
  }
  return errors;
}
