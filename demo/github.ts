/**
 * The simulated GitHub: the project's stateful fake (test/fake-github), with
 * one installation and one repository served over real git, GitHub's own
 * webhooks for what is pushed, opened and merged through it, signed with the
 * App's secret and posted to the service, and CI on every pull request
 * (ci.ts). Everything it serves is on 127.0.0.1.
 */
import { startFakeGitHub, type FakeGitHub } from "../test/fake-github/index.js";
import { autoWebhooks } from "../test/support/github-events.js";
import { fakeWebhookPayload } from "../test/support/webhooks.js";
import { Ci } from "./ci.js";
import { FILES, INSTALLATION, ISSUES, MAINTAINER, REPO } from "./story-text.js";
import type { Say } from "./story.js";

export interface SimulatedGitHub {
  fake: FakeGitHub;
  ci: Ci;
  /** Points GitHub's webhooks at the service, as an App's webhook URL and secret are set on GitHub. */
  connect(webhookUrl: string, secret: string): void;
  /** The maintainer labels every issue `agent:queued`; GitHub delivers each `issues.labeled`. */
  queueIssues(): Promise<void>;
  close(): Promise<void>;
}

const PULL_OPENED = /^\/repos\/[^/]+\/[^/]+\/pulls$/;
const RERUN = /^\/repos\/[^/]+\/[^/]+\/actions\/runs\/(\d+)\/rerun-failed-jobs$/;

export async function startGitHub(say: Say): Promise<SimulatedGitHub> {
  const fake = await startFakeGitHub({ appSlug: "orchestra-demo" });
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, { installationId: INSTALLATION, git: { files: FILES } });
  fake.state.setPermission(REPO, MAINTAINER, "write");
  const ci = new Ci(fake, REPO, say);
  // The maintainer merges the PR whose rerun passed; GitHub closes its issue and delivers both closes.
  ci.onRerunPassed = async (pr) => {
    say(MAINTAINER, `merged PR #${pr}`, "merged");
    fake.state.mergePull(REPO, pr, { by: MAINTAINER });
    const closed = fakeWebhookPayload(fake, "pull_request", "closed", { repo: REPO, pull: pr, sender: MAINTAINER });
    await fake.state.hookDeliveries.send("pull_request", closed);
    for (const issue of fake.state.closingIssues(fake.state.repo(REPO), fake.state.pull(REPO, pr))) {
      const payload = fakeWebhookPayload(
        fake,
        "issues",
        undefined,
        { repo: REPO, issue, sender: MAINTAINER },
        {
          action: "closed",
        },
      );
      await fake.state.hookDeliveries.send("issues", payload);
    }
  };

  return {
    fake,
    ci,
    connect(webhookUrl, secret) {
      fake.setWebhookTarget(webhookUrl, secret);
      autoWebhooks(fake, (rec, reply) => {
        if (rec.method === "POST" && PULL_OPENED.test(rec.path) && reply.status === 201) {
          const pr = reply.body as { number: number; head: { ref: string } };
          say("worker", `opened PR #${pr.number} from ${pr.head.ref}`, "pr-opened");
          ci.opened(pr.number);
        }
        const rerun = rec.method === "POST" && reply.status === 201 ? RERUN.exec(rec.path) : null;
        if (rerun) {
          const repo = fake.state.repo(REPO);
          const run = repo.workflowRuns.get(Number(rerun[1]))!;
          const pull = [...repo.pulls.values()].find((p) => p.headRef === run.headBranch);
          const [issue] = pull ? fake.state.closingIssues(repo, pull) : [];
          say(
            "orchestra",
            `#${issue} the failure on PR #${pull?.number} is infrastructure: reran the failed jobs`,
            "rerun",
          );
          ci.rerunRequested(run.id);
        }
      });
    },
    async queueIssues() {
      for (const issue of ISSUES) {
        fake.state.addIssue(REPO, {
          number: issue.number,
          title: issue.title,
          body: issue.body,
          labels: ["agent:queued"],
          user: MAINTAINER,
        });
        const payload = fakeWebhookPayload(fake, "issues", "labeled", {
          repo: REPO,
          issue: issue.number,
          label: "agent:queued",
          sender: MAINTAINER,
        });
        await fake.state.hookDeliveries.send("issues", payload);
        say(MAINTAINER, `queued #${issue.number} "${issue.title}" (${issue.turn})`);
      }
    },
    async close() {
      ci.stop();
      await fake.close();
    },
  };
}
