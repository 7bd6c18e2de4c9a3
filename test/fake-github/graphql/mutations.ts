/**
 * The mutations the fake serves, over the same state as its REST routes: adding labels to an issue or pull
 * request and removing them, named by their node ids as GitHub's GraphQL names them (the `node_id` of REST and
 * webhooks). A node the caller cannot see, or that is not there, is GitHub's NOT_FOUND beside `data`: the
 * document's other mutations still run, as on GitHub.
 */
import { nodeId } from "../json.js";
import type { Issue, Label, Repo } from "../state.js";
import { GraphQLFieldError, served } from "./execute.js";
import { issueNode, pullNode, type GraphQLContext } from "./github.js";

type Node = Record<string, unknown>;

type LabelsInput = {
  input: { labelableId: string; labelIds: string[]; clientMutationId?: string | null };
};

const notFound = (id: string) =>
  new GraphQLFieldError("NOT_FOUND", `Could not resolve to a node with the global id of '${id}'`);

/** The issue or pull request a node id names, in a repository the calling installation sees. */
function labelable(ctx: GraphQLContext, id: string): { repo: Repo; issue: Issue } {
  for (const repo of ctx.state.repos.values()) {
    if (ctx.installationId !== null && repo.installationId !== ctx.installationId) continue;
    for (const issue of repo.issues.values()) {
      const pr = repo.pulls.get(issue.number);
      const ids = [nodeId(issue.isPull ? "PR" : "I", issue.id), ...(pr ? [nodeId("PR", pr.id)] : [])];
      if (ids.includes(id)) return { repo, issue };
    }
  }
  throw notFound(id);
}

/** The repository's labels the ids name, every one of them or NOT_FOUND for the first that names none. */
function labelsOf(repo: Repo, ids: string[]): Label[] {
  return ids.map((id) => {
    const label = [...repo.labels.values()].find((l) => nodeId("LA", l.id) === id);
    if (!label) throw notFound(id);
    return label;
  });
}

function payload(ctx: GraphQLContext, repo: Repo, issue: Issue, input: LabelsInput["input"]): Node {
  const pr = repo.pulls.get(issue.number);
  return {
    clientMutationId: input.clientMutationId ?? null,
    labelable: pr ? pullNode(ctx, repo, pr) : issueNode(ctx, repo, issue),
  };
}

/** The mutation root: every mutation without a handler of its own is answered from it. */
export function mutationRoot(ctx: GraphQLContext): Node {
  return {
    __typename: "Mutation",
    addLabelsToLabelable: served(["input"], ({ input }: LabelsInput) => {
      const { repo, issue } = labelable(ctx, input.labelableId);
      const labels = labelsOf(repo, input.labelIds);
      ctx.state.applyLabels(
        repo,
        issue,
        labels.map((l) => l.name),
        false,
      );
      return payload(ctx, repo, issue, input);
    }),
    removeLabelsFromLabelable: served(["input"], ({ input }: LabelsInput) => {
      const { repo, issue } = labelable(ctx, input.labelableId);
      const gone = new Set(labelsOf(repo, input.labelIds).map((l) => l.name.toLowerCase()));
      issue.labels = issue.labels.filter((l) => !gone.has(l.toLowerCase()));
      issue.updatedAt = ctx.state.now();
      return payload(ctx, repo, issue, input);
    }),
  };
}
