/** A failure of a call to GitHub, saying what it means for a retry (errors.ts maps octokit's into it). */
export interface GitHubErrorDetail {
  /** A rate limit (primary or secondary): nothing more for this installation for this long after the answer. */
  retryAfterMs?: number;
  /** GitHub would not mint the installation's token (uninstalled, suspended, wrong App). */
  tokenFailure?: boolean;
  /** The request may have reached GitHub and taken effect although no answer came (5xx, timeout, reset). */
  mayHaveSent?: boolean;
  /**
   * GitHub answered a GraphQL query with errors (a field this host lacks, a
   * query it does not accept): their messages. A defect or a version gap,
   * never an outage.
   */
  graphqlErrors?: string[];
}

export class GitHubError extends Error {
  override readonly name = "GitHubError";
  readonly retryAfterMs: number | undefined;
  readonly tokenFailure: boolean;
  readonly mayHaveSent: boolean;
  readonly graphqlErrors: string[] | undefined;
  constructor(
    readonly operation: string,
    readonly status: number | undefined,
    message: string,
    /** Worth trying again later: 5xx, timeouts, rate limits, network errors. */
    readonly retryable: boolean,
    detail: GitHubErrorDetail = {},
  ) {
    super(`${operation}: ${status === undefined ? "" : `${status} `}${message}`);
    this.retryAfterMs = detail.retryAfterMs;
    this.tokenFailure = detail.tokenFailure ?? false;
    this.mayHaveSent = detail.mayHaveSent ?? false;
    this.graphqlErrors = detail.graphqlErrors;
  }
}
