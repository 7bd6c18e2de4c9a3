/**
 * Fields a host's schema lacks (an older GitHub Enterprise Server): a query
 * that selects one is refused the way GitHub refuses an unknown field —
 * HTTP 200, `{ errors }` without `data`, "Field 'x' doesn't exist on type
 * 'T'" with `extensions.code: "undefinedField"` — although the published
 * schema has it. Not a violation: the App asked for a field that exists on
 * api.github.com; what it does with the refusal is what a test looks at.
 */
import type { ASTNode, DocumentNode, GraphQLSchema } from "graphql";
import type { GraphQLModule } from "./schema.js";
import { location, type GitHubGraphQLError } from "./validation.js";

/** GitHub's errors for the withheld fields (`Type.field`) the document selects, or []. */
export function withheldFieldErrors(
  gql: GraphQLModule,
  schema: GraphQLSchema,
  doc: DocumentNode,
  withheld: ReadonlySet<string>,
): GitHubGraphQLError[] {
  if (withheld.size === 0) return [];
  const out: GitHubGraphQLError[] = [];
  const typeInfo = new gql.TypeInfo(schema);
  gql.visit(
    doc,
    gql.visitWithTypeInfo(typeInfo, {
      Field(node, _key, parent, _path, ancestors) {
        const typeName = typeInfo.getParentType()?.name;
        const fieldName = node.name.value;
        if (!typeName || !withheld.has(`${typeName}.${fieldName}`)) return;
        const chain = [...ancestors, parent, node].filter((a): a is ASTNode => !!a && !Array.isArray(a));
        out.push({
          message: `Field '${fieldName}' doesn't exist on type '${typeName}'`,
          locations: location(node),
          path: chain.flatMap((n) => pathPart(gql, n)),
          extensions: { code: "undefinedField", typeName, fieldName },
        });
      },
    }),
  );
  return out;
}

/** A node's part of GitHub's `path` (as validation.ts builds it). */
function pathPart(gql: GraphQLModule, n: ASTNode): string[] {
  const K = gql.Kind;
  if (n.kind === K.OPERATION_DEFINITION) return [n.name ? `${n.operation} ${n.name.value}` : n.operation];
  if (n.kind === K.INLINE_FRAGMENT) return [n.typeCondition ? `... on ${n.typeCondition.name.value}` : "..."];
  if (n.kind === K.FIELD) return [n.alias?.value ?? n.name.value];
  return [];
}
