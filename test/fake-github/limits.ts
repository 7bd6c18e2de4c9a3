/**
 * GitHub's size limits on text, as GitHub answers them: a comment body over
 * 65,536 characters and a check run summary or text over 65,535 are refused
 * with a 422. GitHub counts characters, not UTF-16 code units.
 */
import { fail, validationFailed, type RouteContext } from "./http.js";

export const COMMENT_LIMIT = 65_536;
export const CHECK_OUTPUT_LIMIT = 65_535;

const characters = (s: string) => [...s].length;

export function checkCommentBody(
  ctx: RouteContext,
  resource: "IssueComment" | "Issue" | "PullRequest",
  body: string | undefined | null,
): void {
  if (typeof body === "string" && characters(body) > COMMENT_LIMIT) {
    throw validationFailed(ctx, [
      { resource, code: "custom", field: "body", message: `body is too long (maximum is ${COMMENT_LIMIT} characters)` },
    ]);
  }
}

export function checkCheckOutput(ctx: RouteContext, output: { summary?: string; text?: string } | undefined): void {
  for (const field of ["summary", "text"] as const) {
    const v = output?.[field];
    if (typeof v === "string" && characters(v) > CHECK_OUTPUT_LIMIT) {
      throw fail(
        ctx,
        422,
        `Invalid request.\n\nOnly ${CHECK_OUTPUT_LIMIT} characters are allowed; ${characters(v)} were supplied.`,
      );
    }
  }
}
