/**
 * The port's check and Actions methods on Probot's octokit (the CI half of
 * octokit.ts): check runs and their suites, job logs, reruns and workflow
 * dispatches.
 */
import type { ProbotOctokit } from "probot";
import { GitHubError, type GitHub } from "./port.js";
import { call } from "./errors.js";
import { LOG_TAIL_MAX_BYTES, logTail, toCheckRun } from "./mappers.js";
import type { CallOptions } from "./octokit-issues.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

type ActionsMethods = Pick<
  GitHub,
  | "checkRunsForRef"
  | "jobLogTail"
  | "createCheckRun"
  | "updateCheckRun"
  | "rerequestCheckSuite"
  | "rerunFailedJobs"
  | "dispatchWorkflow"
  | "dispatchedRuns"
>;

export function actionsMethods(octokit: Octokit, read: () => CallOptions, write: () => CallOptions): ActionsMethods {
  const rest = octokit.rest;
  return {
    async checkRunsForRef(r, ref, opts) {
      // Every page: a red check on page two must not read as green.
      const filter = opts?.all ? "all" : "latest";
      const runs = await call("list check runs", () =>
        octokit.paginate(rest.checks.listForRef, { ...r, ref, filter, per_page: 100, ...read() }),
      );
      return runs.map(toCheckRun);
    },
    async jobLogTail(r, jobId, lines) {
      // GitHub answers 302 to a short-lived plain-text download, which fetch follows with the range:
      // only the log's last LOG_TAIL_MAX_BYTES bytes are asked for, and no more than that is kept.
      const res = await call("download job logs", () =>
        rest.actions.downloadJobLogsForWorkflowRun({
          ...r,
          job_id: jobId,
          headers: { range: `bytes=-${LOG_TAIL_MAX_BYTES}` },
          request: { ...read().request, parseSuccessResponseBody: false },
        }),
      ).catch((e: unknown) => {
        // 404: no such job, or no log (yet); 410: the log has expired; 416: the log is empty.
        if (e instanceof GitHubError && (e.status === 404 || e.status === 410 || e.status === 416)) return null;
        throw e;
      });
      if (!res) return null;
      const { bytes, cut } = await lastBytes(res.data, LOG_TAIL_MAX_BYTES);
      // A range that starts inside the log starts inside a line (and maybe inside a character): drop it.
      const ranged = (res.status as number) === 206 && !/^bytes 0-/.test(String(res.headers["content-range"] ?? ""));
      const text = new TextDecoder().decode(bytes);
      return logTail(ranged || cut ? text.slice(text.indexOf("\n") + 1) : text, lines);
    },
    async createCheckRun(r, run) {
      const res = await call("create check run", () =>
        rest.checks.create({
          ...r,
          name: run.name,
          head_sha: run.headSha,
          status: run.status,
          ...(run.conclusion ? { conclusion: run.conclusion } : {}),
          output: { title: run.title, summary: run.summary },
          ...write(),
        }),
      );
      return res.data.id;
    },
    async updateCheckRun(r, checkRunId, run) {
      await call("update check run", () =>
        rest.checks.update({
          ...r,
          check_run_id: checkRunId,
          status: run.status,
          ...(run.conclusion ? { conclusion: run.conclusion } : {}),
          output: { title: run.title, summary: run.summary },
          ...write(),
        }),
      );
    },
    async rerequestCheckSuite(r, checkSuiteId) {
      await call("rerequest check suite", () =>
        rest.checks.rerequestSuite({ ...r, check_suite_id: checkSuiteId, ...write() }),
      );
    },
    async rerunFailedJobs(r, workflowRunId) {
      await call("rerun failed jobs", () =>
        rest.actions.reRunWorkflowFailedJobs({ ...r, run_id: workflowRunId, ...write() }),
      );
    },
    async dispatchWorkflow(r, workflow, ref, inputs) {
      // return_run_details asks for the run id (200) instead of an empty 204.
      const res = await call("dispatch workflow", () =>
        octokit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
          ...r,
          workflow_id: workflow,
          ref,
          inputs,
          return_run_details: true,
          ...write(),
        } as never),
      );
      const data = (res as { data?: { workflow_run_id?: number } }).data;
      return { workflowRunId: typeof data?.workflow_run_id === "number" ? data.workflow_run_id : null };
    },
    async dispatchedRuns(r, workflow, since) {
      const { data } = await call("list workflow runs", () =>
        rest.actions.listWorkflowRuns({
          ...r,
          workflow_id: workflow,
          event: "workflow_dispatch",
          created: `>=${since.toISOString()}`,
          per_page: 100,
          ...read(),
        }),
      );
      return data.workflow_runs.map((w) => ({
        id: w.id,
        displayTitle: w.display_title ?? "",
        status: w.status ?? "",
        createdAt: w.created_at,
      }));
    },
  };
}

/**
 * The last `max` bytes of a response body (a web stream, or text when a
 * client parsed it anyway), never holding more than that plus one chunk;
 * `cut` when more came than was kept (a server that ignored the range).
 */
async function lastBytes(body: unknown, max: number): Promise<{ bytes: Uint8Array; cut: boolean }> {
  const keep = (all: Uint8Array) => ({ bytes: all.length > max ? all.slice(-max) : all, cut: all.length > max });
  if (typeof body === "string") return keep(new TextEncoder().encode(body));
  if (body instanceof ArrayBuffer) return keep(new Uint8Array(body));
  if (!(body instanceof ReadableStream))
    throw new GitHubError("download job logs", undefined, "the log is not a byte stream", false);
  const chunks: Uint8Array[] = [];
  let held = 0;
  let cut = false;
  for await (const chunk of body as ReadableStream<Uint8Array>) {
    chunks.push(chunk);
    held += chunk.length;
    while (chunks.length > 1 && held - chunks[0]!.length >= max) {
      held -= chunks.shift()!.length;
      cut = true;
    }
  }
  const all = new Uint8Array(held);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  const kept = keep(all);
  return { bytes: kept.bytes, cut: cut || kept.cut };
}
