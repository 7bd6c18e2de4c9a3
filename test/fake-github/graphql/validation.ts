/**
 * Validation of a query against GitHub's schema by graphql-js, reported the
 * way GitHub (graphql-ruby) reports it: HTTP 200 with `{ errors: [...] }` and
 * no `data`, each error with GitHub's wording, `locations`, a `path` such as
 * `["query Name", "repository", "foo"]` and `extensions.code`.
 *
 * graphql-js words its errors differently, so each failing rule is run on its
 * own to know which one objected, and the error is rebuilt from the AST.
 */
import type {
  ArgumentNode,
  ASTNode,
  DocumentNode,
  FieldNode,
  GraphQLError as JsGraphQLError,
  GraphQLSchema,
  VariableDefinitionNode,
} from "graphql";
import type { GraphQLModule } from "./schema.js";

export interface GitHubGraphQLError {
  message: string;
  type?: string;
  path?: (string | number)[];
  locations?: { line: number; column: number }[];
  extensions?: Record<string, unknown>;
}

/** Where a node sits: GitHub's `path` to it and the AST around it. */
interface Site {
  path: (string | number)[];
  ancestors: ASTNode[];
  /** the declared type of each enclosing argument, e.g. "Int!" */
  argTypes: Map<ASTNode, string>;
}

export function location(node: ASTNode | undefined): { line: number; column: number }[] | undefined {
  const t = node?.loc?.startToken;
  return t ? [{ line: t.line, column: t.column }] : undefined;
}

/** GitHub's validation errors for the document, or [] when it is valid. */
export function validationErrors(gql: GraphQLModule, schema: GraphQLSchema, doc: DocumentNode): GitHubGraphQLError[] {
  if (gql.validate(schema, doc).length === 0) return [];
  const found: { rule: string; error: JsGraphQLError }[] = [];
  for (const rule of gql.specifiedRules) {
    for (const error of gql.validate(schema, doc, [rule])) found.push({ rule: rule.name, error });
  }
  const sites = locate(gql, schema, doc, new Set(found.flatMap((f) => f.error.nodes ?? [])));
  const out: GitHubGraphQLError[] = [];
  const seen = new Set<string>();
  for (const { rule, error } of found) {
    const e = rewrite(gql, schema, rule, error, sites);
    const key = JSON.stringify(e);
    if (!seen.has(key)) out.push(e);
    seen.add(key);
  }
  return out;
}

function locate(
  gql: GraphQLModule,
  schema: GraphQLSchema,
  doc: DocumentNode,
  targets: Set<ASTNode>,
): Map<ASTNode, Site> {
  const sites = new Map<ASTNode, Site>();
  const argTypes = new Map<ASTNode, string>();
  const typeInfo = new gql.TypeInfo(schema);
  gql.visit(
    doc,
    gql.visitWithTypeInfo(typeInfo, {
      enter(node, _key, parent, _path, ancestors) {
        if (node.kind === gql.Kind.ARGUMENT) {
          const def = typeInfo.getArgument();
          if (def) argTypes.set(node, String(def.type));
        }
        if (!targets.has(node)) return;
        // graphql-js's ancestors stop short of the parent
        const chain = [...ancestors, parent, node].filter((a): a is ASTNode => !!a && !Array.isArray(a));
        const path: (string | number)[] = [];
        for (const n of chain) {
          if (n.kind === gql.Kind.OPERATION_DEFINITION)
            path.push(n.name ? `${n.operation} ${n.name.value}` : n.operation);
          else if (n.kind === gql.Kind.FRAGMENT_DEFINITION) path.push(`fragment ${n.name.value}`);
          else if (n.kind === gql.Kind.INLINE_FRAGMENT)
            path.push(n.typeCondition ? `... on ${n.typeCondition.name.value}` : "...");
          else if (n.kind === gql.Kind.FRAGMENT_SPREAD) path.push(`... ${n.name.value}`);
          else if (n.kind === gql.Kind.FIELD) path.push(n.alias?.value ?? n.name.value);
          else if (n.kind === gql.Kind.ARGUMENT) path.push(n.name.value);
        }
        sites.set(node, { path, ancestors: chain.slice(0, -1), argTypes });
      },
    }),
  );
  return sites;
}

const quoted = (message: string, n = 0): string => [...message.matchAll(/"([^"]*)"/g)][n]?.[1] ?? "";

function rewrite(
  gql: GraphQLModule,
  schema: GraphQLSchema,
  rule: string,
  error: JsGraphQLError,
  sites: Map<ASTNode, Site>,
): GitHubGraphQLError {
  const K = gql.Kind;
  const nodes = error.nodes ?? [];
  const node = nodes[0];
  const site = node ? sites.get(node) : undefined;
  const at = (n: ASTNode | undefined, s: Site | undefined = n ? sites.get(n) : undefined) => ({
    locations: location(n),
    ...(s ? { path: s.path } : {}),
  });
  const nearest = <T extends ASTNode>(s: Site | undefined, kinds: string[]): T | undefined =>
    s?.ancestors
      .slice()
      .reverse()
      .find((a) => kinds.includes(a.kind)) as T | undefined;
  const opName = (n: ASTNode | undefined) =>
    n?.kind === K.OPERATION_DEFINITION ? (n.name?.value ?? `anonymous ${n.operation}`) : "anonymous query";

  switch (rule) {
    case "FieldsOnCorrectTypeRule": {
      const field = node?.kind === K.FIELD ? node.name.value : quoted(error.message, 0);
      const typeName = quoted(error.message, 1);
      return {
        message: `Field '${field}' doesn't exist on type '${typeName}'`,
        ...at(node, site),
        extensions: { code: "undefinedField", typeName, fieldName: field },
      };
    }
    case "KnownArgumentNamesRule": {
      const arg = node?.kind === K.ARGUMENT ? node.name.value : quoted(error.message, 0);
      const parent = nearest(site, [K.FIELD, K.DIRECTIVE]);
      const kind = parent?.kind === K.DIRECTIVE ? "Directive" : "Field";
      const name =
        parent?.kind === K.FIELD
          ? (parent.alias?.value ?? parent.name.value)
          : parent?.kind === K.DIRECTIVE
            ? parent.name.value
            : "";
      return {
        message: `${kind} '${name}' doesn't accept argument '${arg}'`,
        ...at(node, site),
        extensions: { code: "argumentNotAccepted", name, typeName: kind, argumentName: arg },
      };
    }
    case "ProvidedRequiredArgumentsRule": {
      const kind = node?.kind === K.DIRECTIVE ? "Directive" : "Field";
      const name = node?.kind === K.FIELD || node?.kind === K.DIRECTIVE ? node.name.value : "";
      const missing = quoted(error.message, 1);
      return {
        message: `${kind} '${name}' is missing required arguments: ${missing}`,
        ...at(node, site),
        extensions: { code: "missingRequiredArguments", className: kind, name, arguments: missing },
      };
    }
    case "NoUndefinedVariablesRule": {
      const variableName = node?.kind === K.VARIABLE ? node.name.value : quoted(error.message).slice(1);
      return {
        message: `Variable $${variableName} is used by ${opName(nodes[1])} but not declared`,
        ...at(node, site),
        extensions: { code: "variableNotDefined", variableName },
      };
    }
    case "NoUnusedVariablesRule": {
      const variableName =
        node?.kind === K.VARIABLE_DEFINITION ? node.variable.name.value : quoted(error.message).slice(1);
      const op = nearest(site, [K.OPERATION_DEFINITION]);
      return {
        message: `Variable $${variableName} is declared by ${opName(op)} but not used`,
        locations: location(op),
        ...(site ? { path: site.path.slice(0, 1) } : {}),
        extensions: { code: "variableNotUsed", variableName },
      };
    }
    case "VariablesInAllowedPositionRule": {
      const usage = nodes[1];
      const usageSite = usage ? sites.get(usage) : undefined;
      const argument = nearest<ArgumentNode>(usageSite, [K.ARGUMENT]);
      const variableName = quoted(error.message).slice(1);
      const varType = quoted(error.message, 1);
      const argType = quoted(error.message, 2);
      const bare = (t: string) => t.replace(/!/g, "");
      const problem =
        bare(varType) === bare(argType)
          ? "Nullability mismatch"
          : bare(varType).replace(/\w/g, "") !== bare(argType).replace(/\w/g, "")
            ? "List dimension mismatch"
            : "Type mismatch";
      const argumentName = argument?.name.value ?? "";
      return {
        message: `${problem} on variable $${variableName} and argument ${argumentName} (${varType} / ${argType})`,
        ...at(argument, usageSite),
        extensions: { code: "variableMismatch", variableName, typeName: varType, argumentName, errorMessage: problem },
      };
    }
    case "ValuesOfCorrectTypeRule": {
      const argument = node?.kind === K.ARGUMENT ? node : nearest<ArgumentNode>(site, [K.ARGUMENT]);
      const parent = nearest(site, [K.FIELD, K.DIRECTIVE]);
      const kind = parent?.kind === K.DIRECTIVE ? "Directive" : "Field";
      const name =
        parent?.kind === K.FIELD
          ? (parent.alias?.value ?? parent.name.value)
          : parent?.kind === K.DIRECTIVE
            ? parent.name.value
            : "";
      const argumentName = argument?.name.value ?? "";
      return {
        message: `Argument '${argumentName}' on ${kind} '${name}' has an invalid value (${argument ? gql.print(argument.value) : ""}). Expected type '${argument ? (site?.argTypes.get(argument) ?? "") : ""}'.`,
        ...at(parent, site),
        extensions: { code: "argumentLiteralsIncompatible", typeName: kind, argumentName },
      };
    }
    case "ScalarLeafsRule": {
      // graphql-js points at the selection set of a leaf field, GitHub at the field
      const field = node?.kind === K.FIELD ? node : nearest<FieldNode>(site, [K.FIELD]);
      const name = field?.name.value ?? quoted(error.message);
      const typeName = quoted(error.message, 1).replace(/[[\]!]/g, "");
      if (/must not have a selection/.test(error.message)) {
        const kinds = gql.isEnumType(schema.getType(typeName)) ? "enums" : "scalars";
        const selected = (field?.selectionSet?.selections ?? []).map((s) =>
          s.kind === K.FIELD
            ? `"${s.name.value}"`
            : s.kind === K.INLINE_FRAGMENT
              ? `"... on ${s.typeCondition?.name.value ?? ""} { ... }"`
              : `"${s.name.value}"`,
        );
        return {
          message: `Selections can't be made on ${kinds} (field '${name}' returns ${typeName} but has selections [${selected.join(", ")}])`,
          ...at(field, site),
          extensions: { code: "selectionMismatch", nodeName: `field '${name}'`, typeName },
        };
      }
      return {
        message: `Field must have selections (field '${name}' returns ${typeName} but has no selections. Did you mean '${name} { ... }'?)`,
        ...at(node, site),
        extensions: { code: "selectionMismatch", nodeName: `field '${name}'`, typeName },
      };
    }
    case "KnownTypeNamesRule": {
      const typeName = quoted(error.message);
      const varDef = nearest<VariableDefinitionNode>(site, [K.VARIABLE_DEFINITION]);
      if (varDef) {
        return {
          message: `${typeName} isn't a defined input type (on $${varDef.variable.name.value})`,
          ...at(varDef, site),
          extensions: { code: "variableRequiresValidType", typeName, variableName: varDef.variable.name.value },
        };
      }
      return {
        message: `No such type ${typeName}, so it can't be a fragment condition`,
        ...at(node, site),
        extensions: { code: "undefinedType", typeName },
      };
    }
    default:
      return { message: error.message, ...at(node, site), extensions: { code: rule.replace(/Rule$/, "") } };
  }
}
