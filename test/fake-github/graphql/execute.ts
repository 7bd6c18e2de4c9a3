/**
 * Runs a validated operation with graphql-js over a plain object graph (see
 * github.ts): a field is answered by the property of its name, and a function
 * property is called with the field's coerced arguments. GitHub's schema
 * types every answer, so a wrong enum value or a missing non-null field in
 * the fake shows up as an error instead of passing silently.
 *
 * A field the graph has no property for is not served by the fake: the
 * query is valid on GitHub, but answering null would hide that the fake
 * made something up, so it is an error naming the field and a violation.
 */
import type {
  DocumentNode,
  FieldNode,
  FragmentSpreadNode,
  GraphQLFieldResolver,
  GraphQLResolveInfo,
  InlineFragmentNode,
  SelectionSetNode,
} from "graphql";
import type { LoadedSchema } from "./schema.js";
import { location, type GitHubGraphQLError } from "./validation.js";

/** A resolver failure that GitHub reports per field (`type: NOT_FOUND` etc.). */
export class GraphQLFieldError extends Error {
  constructor(
    readonly type: string,
    message: string,
    /** the caller's mistake (not a state of the world): also a violation */
    readonly misuse = false,
  ) {
    super(message);
  }
}

/**
 * The query is valid on GitHub but asks for something the fake does not model
 * (a resolver may throw it for an argument value it does not serve).
 */
export class NotServed extends Error {}

type Resolver = ((args: Record<string, unknown>) => unknown) & { servedArgs?: readonly string[] };

/**
 * A field answered by `fn`, which honours exactly the arguments listed; any
 * other argument given in the query is not served (GitHub would act on it).
 */
export function served<A extends Record<string, unknown>, R>(
  args: readonly (keyof A & string)[],
  fn: (a: A) => R,
): (a: A) => R {
  return Object.assign(fn, { servedArgs: args });
}

export interface RunResult {
  data: unknown;
  errors: GitHubGraphQLError[];
  violations: string[];
}

export async function runOperation(
  { graphql: gql, schema }: LoadedSchema,
  document: DocumentNode,
  operationName: string | undefined,
  rootValue: unknown,
  variableValues: Record<string, unknown>,
  label: string,
): Promise<RunResult> {
  const result = await gql.execute({
    schema,
    document,
    operationName,
    rootValue,
    variableValues,
    fieldResolver: resolveField,
  });
  const errors: GitHubGraphQLError[] = [];
  const violations: string[] = [];
  for (const e of result.errors ?? []) {
    const base = { path: e.path ? [...e.path] : undefined, locations: location(e.nodes?.[0]), message: e.message };
    const original = e.originalError;
    if (original instanceof GraphQLFieldError) {
      errors.push({ type: original.type, ...base });
      if (original.misuse) violations.push(`graphql ${label}: ${original.message} (at ${e.path?.join(".")})`);
    } else if (original instanceof NotServed) {
      errors.push(base);
      violations.push(
        `graphql ${label}: ${original.message} (at ${e.path?.join(".")}; extend test/fake-github/graphql/github.ts)`,
      );
    } else {
      // the fake's own answer does not fit GitHub's schema (or a resolver crashed)
      errors.push(base);
      violations.push(`graphql ${label}: the fake GitHub answered wrongly at ${e.path?.join(".")}: ${e.message}`);
    }
  }
  return { data: result.data ?? null, errors, violations };
}

const resolveField: GraphQLFieldResolver<unknown, unknown> = (source, args, _ctx, info) => {
  const where = `${info.parentType.name}.${info.fieldName}`;
  if (source === null || typeof source !== "object" || !(info.fieldName in source)) {
    throw new NotServed(`the fake GitHub does not serve ${where}`);
  }
  const value = (source as Record<string, unknown>)[info.fieldName];
  // a plain value honours no argument; a function those it lists, if it lists them
  const honoured = typeof value === "function" ? (value as Resolver).servedArgs : [];
  for (const a of honoured ? (info.fieldNodes[0]?.arguments ?? []) : []) {
    if (!honoured!.includes(a.name.value)) {
      throw new NotServed(`the fake GitHub does not serve the argument ${a.name.value} of ${where}`);
    }
  }
  checkPagination(args, info);
  if (typeof value !== "function") return value;
  const fn = value as Resolver;
  return fn.call(source, args);
};

/**
 * GitHub's resolvers refuse a connection read without `first` or `last` (when
 * it selects nodes or edges) or with more than 100 of them.
 */
function checkPagination(args: Record<string, unknown>, info: GraphQLResolveInfo): void {
  const type = info.returnType.toString().replace(/[!\]]/g, "");
  if (!type.endsWith("Connection")) return;
  const field = info.fieldName;
  for (const bound of ["first", "last"] as const) {
    const n = args[bound];
    if (typeof n === "number" && n > 100) {
      throw new GraphQLFieldError(
        "EXCESSIVE_PAGINATION",
        `Requesting ${n} records on the \`${field}\` connection exceeds the \`${bound}\` limit of 100 records.`,
        true,
      );
    }
  }
  if (args.first == null && args.last == null && selects(info, info.fieldNodes[0]?.selectionSet, ["nodes", "edges"])) {
    throw new GraphQLFieldError(
      "MISSING_PAGINATION_BOUNDARIES",
      `You must provide a \`first\` or \`last\` value to properly paginate the \`${field}\` connection.`,
      true,
    );
  }
}

function selects(info: GraphQLResolveInfo, set: SelectionSetNode | undefined, names: string[]): boolean {
  for (const s of set?.selections ?? []) {
    const kind = s.kind as string;
    if (kind === "Field" && names.includes((s as FieldNode).name.value)) return true;
    if (kind === "InlineFragment" && selects(info, (s as InlineFragmentNode).selectionSet, names)) return true;
    if (
      kind === "FragmentSpread" &&
      selects(info, info.fragments[(s as FragmentSpreadNode).name.value]?.selectionSet, names)
    )
      return true;
  }
  return false;
}
