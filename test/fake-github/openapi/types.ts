/**
 * The shapes of the reduced index: an operation with its parameters and JSON
 * request-body schema, the file cached on disk, and a matched operation.
 */
/** Bump when the shape of the cached index changes. */
export const INDEX_FORMAT = 3;

export interface ParamSpec {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: JsonSchema;
}

export interface OperationSpec {
  method: string; // lower case, as in the description
  path: string; // template, e.g. /repos/{owner}/{repo}/issues/{issue_number}
  operationId: string;
  docs: string | null;
  params: ParamSpec[];
  body: { required: boolean; schema: JsonSchema | null; contentTypes: string[] } | null;
}

export type JsonSchema = Record<string, any>;

export interface IndexFile {
  format: number;
  source: string;
  operations: OperationSpec[];
  schemas: Record<string, JsonSchema>;
}

export interface OperationMatch {
  op: OperationSpec;
  /** decoded path parameter values */
  params: Record<string, string>;
}

export type Spec = any;
