import { factsSchema } from "../../src/outcomes/facts.js";

/** Problems with a facts document as the schema reports them, each naming its field; empty when valid. */
export function factsProblems(doc: unknown): string[] {
  const r = factsSchema.safeParse(doc);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(document)"}: ${i.message}`);
}
