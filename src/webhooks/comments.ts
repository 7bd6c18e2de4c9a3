/**
 * `issue_comment` webhooks: human input. A comment counts only if its author
 * is trusted (the collaborator permission, cached briefly, or the allowlist —
 * never `author_association`); Orchestra's own comments and other bots are
 * ignored unless allowlisted, and everything ignored is recorded in the audit
 * log. A command on the first line (`orchestra verify|retry|resume|hold|
 * cancel|status|help`) is raised as a command; any other trusted comment on a
 * managed issue or its PR answers the question its task waits on (blocked on
 * it, or asked by the live run), or else is a correction (rows/corrections.ts
 * says what acts on it). One comment is one decision: a comment delivered
 * again is recorded already and does nothing more. An edited command never
 * runs again; an edited correction that no run has been handed yet replaces
 * the original.
 */
import type { Tasks } from "../apply/tasks.js";
import type { ConfigResult } from "../config/repo.js";
import { repoRef, type GitHub } from "../github/port.js";
import type { EventContext } from "../events/router.js";
import type { CommandName } from "../machine/events.js";
import type { Task } from "../store/generated/sqlite/client.js";
import { judge, type Actor } from "../trust/trust.js";
import type { PermissionCache } from "../trust/permissions.js";
import { actorOf } from "./issues.js";
import { helpText, parseComment, type Parsed } from "../human/parse.js";
import type { Audit } from "../human/audit.js";
import type { Counters } from "../ignored/counters.js";
import type { WebhookQueries } from "./queries.js";

type CommentPayload = Pick<EventContext<"issue_comment.created">["payload"], "repository" | "issue">;

export interface CommentDeps {
  queries: Pick<
    WebhookQueries,
    "taskOnPr" | "taskOfIssue" | "corrections" | "deliveryCount" | "openQuestion" | "recorded"
  >;
  tasks: Tasks;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  permissions: PermissionCache;
  audit: Audit;
  counters: Counters;
  isSelf(actor: Actor): Promise<boolean>;
}

const excerpt = (p: Parsed, body: string) =>
  p.kind === "text" ? body.split("\n")[0]!.slice(0, 120) : body.trim().split("\n")[0]!.slice(0, 120);

export class CommentHandlers {
  constructor(readonly deps: CommentDeps) {}

  /** The task a comment is about: its issue's, or its PR's. */
  async #taskOf(p: CommentPayload): Promise<Task | null> {
    const repo = p.repository.full_name;
    if (p.issue.pull_request) return this.deps.queries.taskOnPr(repo, p.issue.number);
    return this.deps.queries.taskOfIssue(repo, p.issue.number);
  }

  /**
   * Whether the comment's author (or, for an edit, its editor) counts; when
   * not, why (recorded in the audit log).
   */
  async #trusted(
    ctx: EventContext<"issue_comment.created" | "issue_comment.edited">,
    parsed: Parsed,
    who: { actor: Actor; as: "author" | "editor" } = { actor: actorOf(ctx.payload.comment.user), as: "author" },
  ): Promise<{ ok: true; github: Pick<GitHub, "permission" | "getBranch">; minPermission: string } | { ok: false }> {
    const p = ctx.payload;
    const repo = p.repository.full_name;
    const { actor } = who;
    const input = `${who.as === "editor" ? "edit of " : ""}comment ${p.comment.id}: ${excerpt(parsed, p.comment.body)}`;
    const ignore = async (why: string) => {
      await this.deps.audit.ignored({ installationId: ctx.installationId, repo, actor: actor.login, input, why });
      await this.deps.counters.bump(parsed.kind === "text" ? "ignored.untrusted-comment" : "ignored.untrusted-command");
      return { ok: false as const };
    };
    if (ctx.installationId === null)
      return this.deps.counters.bump("ignored.unmanaged").then(() => ({ ok: false as const }));
    if (await this.deps.isSelf(actor))
      return parsed.kind === "text"
        ? this.deps.counters.bump("ignored.own-echo").then(() => ({ ok: false as const }))
        : ignore("Orchestra's own comment");
    const cfg = await this.deps.configs.get(ctx.installationId, repo);
    if (!cfg.ok) return this.deps.counters.bump("ignored.irrelevant").then(() => ({ ok: false as const }));
    const github: Pick<GitHub, "permission" | "getBranch"> = await ctx.github();
    const verdict = await judge(actor, cfg.config, () => this.deps.permissions.of(github, repo, actor.login));
    if (!verdict.trusted) return ignore(verdict.why);
    return { ok: true, github, minPermission: cfg.config.trust.minPermission };
  }

  async created(ctx: EventContext<"issue_comment.created">): Promise<void> {
    const p = ctx.payload;
    const parsed = parseComment(p.comment.body ?? "");
    const task = await this.#taskOf(p);
    // Prose on an issue Orchestra does not manage is none of its business.
    if (parsed.kind === "text" && (!task || parsed.isEmpty)) return this.deps.counters.bump("ignored.irrelevant");
    const trust = await this.#trusted(ctx, parsed);
    if (!trust.ok) return;
    const author = p.comment.user?.login ?? "someone";
    const commentId = p.comment.id;
    const ref = task
      ? { taskId: task.id }
      : { subject: { installationId: ctx.installationId!, repo: p.repository.full_name, issue: p.issue.number } };
    if (parsed.kind === "text") {
      const on = p.issue.pull_request ? "pull" : "issue";
      const recorded = await this.deps.queries.recorded(commentId);
      // A question waits only while its task does; otherwise the comment would vanish into one nobody reads.
      const waits = task?.state === "blocked" || task?.state === "claimed";
      const question = task && waits && !recorded ? await this.#openQuestion(task.id, null) : null;
      if (question)
        await this.deps.tasks.raise(ref, {
          kind: "question-answered",
          decisionId: question,
          author,
          answer: parsed.body,
          commentId,
          on,
        });
      else
        await this.deps.tasks.raise(ref, {
          kind: "correction",
          author,
          commentId,
          body: parsed.body,
          on,
          ...(recorded ? { recorded: true } : {}),
        });
      return;
    }
    if (parsed.kind !== "command") {
      const command: CommandName = parsed.kind === "malformed" && isCommand(parsed.command) ? parsed.command : "help";
      await this.deps.tasks.raise(ref, { kind: "command", command, author, commentId, problem: parsed.message });
      return;
    }
    const headSha = parsed.command === "verify" && task ? await this.#head(task, trust.github) : null;
    await this.deps.tasks.raise(ref, {
      kind: "command",
      command: parsed.command,
      author,
      commentId,
      ...(parsed.phase ? { phase: parsed.phase } : {}),
      ...(parsed.command === "verify" ? { headSha } : {}),
      ...(parsed.command === "help" ? { help: helpText(trust.minPermission) } : {}),
    });
    // A worker that asked for this sign-off gets it as the answer.
    if (parsed.command === "verify" && task) {
      const asked = await this.#openQuestion(task.id, `verify:${parsed.phase}`);
      if (asked)
        await this.deps.tasks.raise(ref, {
          kind: "question-answered",
          decisionId: asked,
          author,
          answer: `orchestra verify ${parsed.phase}${headSha ? ` at ${headSha}` : ""}`,
        });
    }
  }

  /** An edited command does not run again; an edited correction not handed to any run yet replaces the original. */
  async edited(ctx: EventContext<"issue_comment.edited">): Promise<void> {
    const p = ctx.payload;
    const parsed = parseComment(p.comment.body ?? "");
    const before = parseComment((p.changes as { body?: { from?: string } } | undefined)?.body?.from ?? "");
    if (parsed.kind !== "text" || before.kind !== "text" || parsed.isEmpty) return;
    const task = await this.#taskOf(p);
    if (!task) return;
    const recorded = await this.deps.queries.corrections(task.id, p.comment.id);
    const mine = recorded.filter(
      (d) => d.source === `comment:${p.comment.id}` || d.source?.startsWith(`comment:${p.comment.id}:`),
    );
    if (mine.length === 0) return;
    const handed = await this.deps.queries.deliveryCount(mine.map((d) => d.id));
    if (handed > 0) return; // a run already has it; the edit would not reach it as a change
    if (!(await this.#trusted(ctx, parsed)).ok) return;
    // Who edited counts too: someone below minPermission who may edit a trusted person's comment (a bot, an app)
    // must not hand the agent their own words under the trusted name.
    const editor = actorOf(p.sender);
    const author = p.comment.user?.login ?? "";
    if (editor.login.toLowerCase() !== author.toLowerCase()) {
      if (!(await this.#trusted(ctx, parsed, { actor: editor, as: "editor" })).ok) return;
    }
    await this.deps.tasks.raise(
      { taskId: task.id },
      {
        kind: "correction",
        author: p.comment.user?.login ?? "someone",
        commentId: p.comment.id,
        body: parsed.body,
        edited: true,
        on: p.issue.pull_request ? "pull" : "issue",
      },
    );
  }

  /** An unanswered question of the task: a sign-off request for `subject`, or (null) a plain question. */
  async #openQuestion(taskId: string, subject: string | null): Promise<string | null> {
    const q = await this.deps.queries.openQuestion(taskId, subject);
    return q?.id ?? null;
  }

  /** The head a sign-off binds: the PR head Orchestra follows, else the task branch's head on GitHub. */
  async #head(task: Task, github: Pick<GitHub, "getBranch">): Promise<string | null> {
    if (task.headSha) return task.headSha;
    return (await github.getBranch(repoRef(task.repo), task.branch))?.sha ?? null;
  }
}

function isCommand(word: string): word is CommandName {
  return ["verify", "retry", "resume", "hold", "cancel", "status", "help"].includes(word);
}
