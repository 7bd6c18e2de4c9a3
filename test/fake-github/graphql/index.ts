/**
 * GraphQL at `POST /api/graphql`, checked against GitHub's published schema
 * (@octokit/graphql-schema) by graphql-js and answered like GitHub:
 *
 * - a syntax error, a query that does not validate (a misspelled field or
 *   argument, a variable used in the wrong place…) or variables that do not
 *   fit their declared types: HTTP 200, `{ errors }` without `data`, in
 *   GitHub's wording — and a violation, so `assertNoViolations()` fails the
 *   test with the message;
 * - otherwise the operation runs over github.ts's object graph: a field the
 *   fake does not serve is an error naming it ("the fake GitHub does not
 *   serve Repository.foo") and a violation; NOT_FOUND and the like are field
 *   errors beside `data`, as on GitHub.
 *
 * Any operation is answered from the shared roots (queries from github.ts,
 * mutations from mutations.ts); a test can register a
 * handler for one operation name to answer it from its own object graph.
 */
import { OperationTypeNode, type DocumentNode, type OperationDefinitionNode } from "graphql";
import type { FakeState } from "../state.js";
import { runOperation } from "./execute.js";
import { githubRoot, type GraphQLContext } from "./github.js";
import { mutationRoot } from "./mutations.js";
import { githubSchema } from "./schema.js";
import { validationErrors, type GitHubGraphQLError } from "./validation.js";
import { variableErrors } from "./variables.js";
import { withheldFieldErrors } from "./withheld.js";

export { GraphQLFieldError, served } from "./execute.js";
export { connection, githubRoot, issueNode, pullNode, repoNode, type GraphQLContext } from "./github.js";
export { githubSchema } from "./schema.js";
export type { GitHubGraphQLError } from "./validation.js";

/**
 * Returns the root object the operation is answered from (see github.ts for
 * the conventions: properties, functions of the field's arguments).
 */
export type GraphQLHandler = (variables: Record<string, unknown>, state: FakeState, ctx: GraphQLContext) => unknown;

export interface GraphQLOutcome {
  body: { data?: unknown; errors?: GitHubGraphQLError[] };
  operationName: string | null;
  violations: string[];
}

const rootHandler: GraphQLHandler = (_v, _s, ctx) => githubRoot(ctx);
const mutationHandler: GraphQLHandler = (_v, _s, ctx) => mutationRoot(ctx);

export class GraphQLRegistry {
  private readonly handlers = new Map<string, GraphQLHandler>();
  private readonly withheld = new Set<string>();

  /** The handler every operation without one of its own is answered by. */
  readonly root: GraphQLHandler = rootHandler;

  /** Answers operations named `operationName` from `handler`'s graph instead of the shared root. */
  register(operationName: string, handler: GraphQLHandler): void {
    this.handlers.set(operationName, handler);
  }

  has(operationName: string): boolean {
    return this.handlers.has(operationName);
  }

  /**
   * This host lacks these fields (`Type.field`, e.g. an older GitHub
   * Enterprise Server's schema): a query selecting one is refused as GitHub
   * refuses an unknown field (see withheld.ts).
   */
  withhold(...fields: string[]): void {
    for (const f of fields) this.withheld.add(f);
  }

  async handle(body: unknown, ctx: GraphQLContext): Promise<GraphQLOutcome> {
    const req = (body ?? {}) as { query?: unknown; variables?: unknown; operationName?: unknown };
    const wanted = typeof req.operationName === "string" && req.operationName ? req.operationName : null;
    const refuse = (
      errors: GitHubGraphQLError[],
      opName: string | null,
      why: (e: GitHubGraphQLError) => string,
    ): GraphQLOutcome => ({
      body: { errors },
      operationName: opName,
      violations: errors.map(why),
    });
    if (typeof req.query !== "string" || !req.query.trim()) {
      return refuse(
        [{ message: "A query attribute must be specified and must be a string." }],
        wanted,
        () => "graphql: request has no query string",
      );
    }
    const variables = (req.variables ?? {}) as Record<string, unknown>;
    if (typeof variables !== "object" || Array.isArray(variables)) {
      return refuse(
        [{ message: "Variables must be an object" }],
        wanted,
        () => "graphql: variables is not a JSON object",
      );
    }

    const loaded = await githubSchema();
    const { graphql: gql, schema } = loaded;
    let doc: DocumentNode;
    try {
      doc = gql.parse(req.query);
    } catch (e) {
      if (!(e instanceof gql.GraphQLError)) throw e;
      const at = e.locations?.[0];
      const message = `${e.message.replace(/^Syntax Error: /, "").replace(/\.$/, "")}${at ? ` at [${at.line}, ${at.column}]` : ""}`;
      return refuse(
        [{ message, ...(at ? { locations: [at] } : {}) }],
        wanted,
        (x) => `graphql: syntax error: ${x.message}`,
      );
    }

    const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === gql.Kind.OPERATION_DEFINITION);
    const op = wanted ? ops.find((o) => o.name?.value === wanted) : ops.length === 1 ? ops[0] : undefined;
    if (!op) {
      const message = wanted ? `No operation named "${wanted}"` : "An operation name is required";
      return refuse([{ message }], wanted, (x) => `graphql: ${x.message}`);
    }
    const opName = op.name?.value ?? null;
    const label = opName ?? `anonymous ${op.operation}`;

    const invalid = validationErrors(gql, schema, doc);
    if (invalid.length) return refuse(invalid, opName, (x) => `graphql ${label}: ${x.message}`);
    const lacking = withheldFieldErrors(gql, schema, doc, this.withheld);
    if (lacking.length) return { body: { errors: lacking }, operationName: opName, violations: [] };
    const badVariables = variableErrors(gql, schema, op, variables);
    if (badVariables.length) {
      return refuse(
        badVariables,
        opName,
        (x) => `graphql ${label}: ${x.message} (${JSON.stringify(x.extensions?.problems)})`,
      );
    }

    // the shared roots serve queries, and the mutations of mutations.ts
    const handler =
      (opName ? this.handlers.get(opName) : undefined) ??
      (op.operation === OperationTypeNode.QUERY
        ? rootHandler
        : op.operation === OperationTypeNode.MUTATION
          ? mutationHandler
          : () => ({}));
    const root = await handler(variables, ctx.state, ctx);
    const result = await runOperation(loaded, doc, opName ?? undefined, root, variables, label);
    const out: GraphQLOutcome["body"] = { data: result.data };
    if (result.errors.length) out.errors = result.errors;
    return { body: out, operationName: opName, violations: result.violations };
  }
}
