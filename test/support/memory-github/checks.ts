/**
 * The memory port's checks and Actions: check runs on a ref, the App's own
 * created and updated, suites rerequested, a job's log, and workflows
 * dispatched, their runs listed and their failed jobs run again.
 */
import { logTail } from "../../../src/github/mappers.js";
import type { ChecksPort, WorkflowRunInfo } from "../../../src/github/port.js";
import { resolve } from "./context.js";
import { refusal } from "./failures.js";
import { FAILED } from "./records.js";
import { checkRunInfo } from "./views.js";
import type { Memory } from "./writes.js";

export function checksPort(m: Memory) {
  const { now, call, repo, newId } = m;
  return {
    checkRunsForRef: (r, ref, _opts?: { all?: boolean }) =>
      call("checkRunsForRef", [r, ref], () => {
        const rec = repo("checkRunsForRef", r);
        const sha = resolve(rec, ref);
        if (!sha) throw refusal("checkRunsForRef", 422, `No commit found for SHA: ${ref}`);
        return [...rec.checkRuns.values()].filter((c) => c.headSha === sha).map((c) => checkRunInfo(rec, c));
      }),
    jobLogTail: (r, jobId, lines) =>
      call("jobLogTail", [r, jobId, lines], () => {
        const log = repo("jobLogTail", r).logs.get(jobId);
        return log === undefined ? null : logTail(log, lines);
      }),
    createCheckRun: (r, run) =>
      call("createCheckRun", [r, run], () => {
        const rec = repo("createCheckRun", r);
        if (!rec.commits.has(run.headSha))
          throw refusal("createCheckRun", 422, `No commit found for SHA: ${run.headSha}`);
        let suite = rec.appSuites.get(run.headSha);
        if (suite === undefined) {
          suite = newId();
          rec.appSuites.set(run.headSha, suite);
          rec.suites.add(suite);
        }
        const id = newId();
        rec.checkRuns.set(id, {
          id,
          name: run.name,
          headSha: run.headSha,
          status: run.status,
          conclusion: run.conclusion ?? null,
          output: { title: run.title, summary: run.summary },
          checkSuiteId: suite,
          workflowRunId: null,
          by: "app",
        });
        return id;
      }),
    updateCheckRun: (r, checkRunId, run) =>
      call("updateCheckRun", [r, checkRunId, run], () => {
        const c = repo("updateCheckRun", r).checkRuns.get(checkRunId);
        if (!c) throw refusal("updateCheckRun", 404, "Not Found");
        if (c.by !== "app") throw refusal("updateCheckRun", 403, "Resource not accessible by integration");
        c.status = run.status;
        if (run.conclusion) c.conclusion = run.conclusion;
        c.output = { ...c.output, title: run.title, summary: run.summary };
      }),
    rerequestCheckSuite: (r, checkSuiteId) =>
      call("rerequestCheckSuite", [r, checkSuiteId], () => {
        const rec = repo("rerequestCheckSuite", r);
        if (!rec.suites.has(checkSuiteId)) throw refusal("rerequestCheckSuite", 404, "Not Found");
        rec.rerequested.push(checkSuiteId);
      }),
    rerunFailedJobs: (r, workflowRunId) =>
      call("rerunFailedJobs", [r, workflowRunId], () => {
        const rec = repo("rerunFailedJobs", r);
        const run = rec.workflowRuns.get(workflowRunId);
        if (!run) throw refusal("rerunFailedJobs", 404, "Not Found");
        if (run.status !== "completed") throw refusal("rerunFailedJobs", 403, "This workflow is already running");
        // The failed jobs are queued again (in place: the fake keeps one attempt of each job).
        for (const c of rec.checkRuns.values()) {
          if (c.workflowRunId !== workflowRunId || !c.conclusion || !FAILED.has(c.conclusion)) continue;
          c.status = "queued";
          c.conclusion = null;
        }
        run.status = "queued";
        run.conclusion = null;
        run.reruns++;
      }),
    dispatchWorkflow: (r, workflow, ref, inputs) =>
      call("dispatchWorkflow", [r, workflow, ref, inputs], () => {
        const rec = repo("dispatchWorkflow", r);
        const wf = rec.workflows.get(workflow);
        if (!wf) throw refusal("dispatchWorkflow", 404, "Not Found");
        if (!wf.dispatchable)
          throw refusal("dispatchWorkflow", 422, "Workflow does not have 'workflow_dispatch' trigger");
        const branch = ref.replace(/^refs\/heads\//, "");
        const headSha = rec.branches.get(branch);
        if (!headSha) throw refusal("dispatchWorkflow", 422, `No ref found for: ${ref}`);
        const id = newId();
        const suite = newId();
        rec.suites.add(suite);
        rec.workflowRuns.set(id, {
          id,
          workflow,
          displayTitle: wf.runName.replace(/\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g, (_m, k: string) => inputs[k] ?? ""),
          status: "queued",
          conclusion: null,
          createdAt: now().toISOString(),
          event: "workflow_dispatch",
          headSha,
          headBranch: branch,
          inputs: { ...inputs },
          checkSuiteId: suite,
          reruns: 0,
        });
        return { workflowRunId: wf.returnsRunId ? id : null };
      }),
    dispatchedRuns: (r, workflow, since) =>
      call("dispatchedRuns", [r, workflow, since], () => {
        const rec = repo("dispatchedRuns", r);
        if (!rec.workflows.has(workflow)) throw refusal("dispatchedRuns", 404, "Not Found");
        return [...rec.workflowRuns.values()]
          .filter((w) => w.workflow === workflow && w.event === "workflow_dispatch")
          .filter((w) => Date.parse(w.createdAt) >= since.getTime())
          .sort((a, b) => b.id - a.id)
          .map((w): WorkflowRunInfo => ({
            id: w.id,
            displayTitle: w.displayTitle,
            status: w.status,
            createdAt: w.createdAt,
          }));
      }),
  } satisfies ChecksPort;
}
