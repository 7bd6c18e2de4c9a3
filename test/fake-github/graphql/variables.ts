/**
 * Variable values checked against the operation's declarations the way
 * GitHub reports them:
 *
 *   { message: "Variable $number of type Int! was provided invalid value",
 *     locations: [...],
 *     extensions: { value: "7", problems: [{ path: [], explanation: "Could not coerce value \"7\" to Int" }] } }
 *
 * graphql-js does the coercion; only the wording is GitHub's.
 */
import type { GraphQLInputType, GraphQLSchema, OperationDefinitionNode } from "graphql";
import type { GraphQLModule } from "./schema.js";
import { location, type GitHubGraphQLError } from "./validation.js";

interface Problem {
  path: (string | number)[];
  explanation: string;
}

export function variableErrors(
  gql: GraphQLModule,
  schema: GraphQLSchema,
  op: OperationDefinitionNode,
  variables: Record<string, unknown>,
): GitHubGraphQLError[] {
  const errors: GitHubGraphQLError[] = [];
  for (const def of op.variableDefinitions ?? []) {
    const name = def.variable.name.value;
    const type = gql.typeFromAST(schema, def.type) as GraphQLInputType | undefined;
    if (!type) continue; // an unknown type is a validation error already
    const value = variables[name];
    const problems: Problem[] = [];
    if (value === undefined || value === null) {
      if (gql.isNonNullType(type) && !(value === undefined && def.defaultValue)) {
        problems.push({ path: [], explanation: "Expected value to not be null" });
      }
    } else {
      gql.coerceInputValue(value, type, (path, invalid, error) => {
        const at = [...path];
        const explanation = explain(gql, type, at, invalid, error.message);
        problems.push({ path: at, explanation });
      });
    }
    if (!problems.length) continue;
    const nested = problems.filter((p) => p.path.length).map((p) => `${p.path.join(".")} (${p.explanation})`);
    errors.push({
      message: `Variable $${name} of type ${gql.print(def.type)} was provided invalid value${nested.length ? ` for ${nested.join(", ")}` : ""}`,
      locations: location(def),
      extensions: { value: value ?? null, problems },
    });
  }
  return errors;
}

/** graphql-ruby's explanation of one coercion problem at `path` inside the variable's value. */
function explain(
  gql: GraphQLModule,
  root: GraphQLInputType,
  path: (string | number)[],
  invalid: unknown,
  message: string,
): string {
  if (/not to be null|was not provided/.test(message)) {
    if (/was not provided/.test(message)) path.push(/Field "(?:[^".]*\.)?([^"]+)"/.exec(message)?.[1] ?? "");
    return "Expected value to not be null";
  }
  const undefinedField = /Field "([^"]+)" is not defined by type "([^"]+)"/.exec(message);
  if (undefinedField) {
    path.push(undefinedField[1]!);
    return `Field is not defined on ${undefinedField[2]}`;
  }
  let type: GraphQLInputType | undefined = root;
  for (const step of path) {
    type = type && gql.getNullableType(type);
    if (gql.isListType(type)) type = type.ofType;
    else if (gql.isInputObjectType(type)) type = type.getFields()[String(step)]?.type;
    else type = undefined;
  }
  const named = type && gql.getNamedType(type);
  if (gql.isEnumType(named)) {
    return `Expected ${JSON.stringify(invalid)} to be one of: ${named
      .getValues()
      .map((v) => v.name)
      .join(", ")}`;
  }
  if (named) return `Could not coerce value ${JSON.stringify(invalid)} to ${named.name}`;
  return message;
}
