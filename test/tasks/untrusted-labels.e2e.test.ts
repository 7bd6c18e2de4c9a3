/**
 * No storms, no untrusted effects, end to end: signed webhooks into the real
 * App, the fake GitHub behind it. A bot re-adding the queue label is undone
 * every time but mentioned once a day; someone without write permission
 * cannot cancel queued work by removing its label, nor change the other
 * agent:* labels; every ignored input is counted on the operator API.
 */
import { childEnv } from "../support/cli.js";
import { randomUUID } from "node:crypto";
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { INSTALLATION, REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { fakeWebhookPayload, sendWebhook } from "../support/webhooks.js";
import { providers } from "../support/databases.js";

const DAY = 86_400_000;
const bin = join(import.meta.dirname, "..", "..", "bin", "orchestra.js");

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  /** The `orchestra` command against the running App (from an empty directory: no .env is read). */
  const cli = (...args: string[]) =>
    promisify(execFile)(process.execPath, [bin, ...args], {
      cwd: tmpdir(),
      env: childEnv({ ORCHESTRA_URL: rig.app.url, ORCHESTRA_ADMIN_TOKEN: rig.app.adminToken }),
    });

  const counters = async (): Promise<Record<string, number>> => {
    const res = await rig.app.admin("/api/v1/ignored");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { counters: Array<{ name: string; value: number }> };
    return Object.fromEntries(body.counters.map((c) => [c.name, c.value]));
  };

  /** `sender` adds `label` on GitHub, and GitHub delivers the webhook. */
  async function add(issue: number, label: string, sender: string): Promise<void> {
    // Each change is a moment later, as on GitHub, whose bodies then differ (the issue's updated_at).
    rig.clock.advance(1000);
    rig.fake.state.labelIssue(REPO, issue, label, sender);
    await rig.deliver("issues", "labeled", { issue, label, sender });
  }

  /** `sender` removes `label` on GitHub, and GitHub delivers the webhook. */
  async function remove(issue: number, label: string, sender: string): Promise<void> {
    const i = rig.fake.state.issue(REPO, issue);
    i.labels = i.labels.filter((l) => l !== label);
    await rig.deliver("issues", "unlabeled", { issue, label, sender });
  }

  test("a bot re-adding the queue label five times in a day: removed every time, one reply; the next day one more", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addIssue(REPO, { number: 1, title: "Bump deps", labels: [], user: "alice" });
    const from = rig.fake.requests.length;
    for (let i = 0; i < 5; i++) {
      await add(1, "agent:queued", "renovate[bot]");
      expect(rig.labels(1)).toEqual([]);
    }
    // On GitHub: five label removals and one comment, nothing else.
    const writes = rig
      .writesSince(from)
      .map((w) => w.method)
      .sort();
    expect(writes).toEqual(["DELETE", "DELETE", "DELETE", "DELETE", "DELETE", "POST"]);
    const replies = rig.fake.state.commentsOn(REPO, 1);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.body).toContain("@renovate[bot] the `agent:queued` label was removed");
    expect(replies[0]!.body).toContain("without another reply");
    expect(await rig.task(1)).toBeNull();
    expect((await counters())["ignored.untrusted-label"]).toBe(5);

    rig.clock.advance(DAY);
    await add(1, "agent:queued", "renovate[bot]");
    await add(1, "agent:queued", "renovate[bot]");
    expect(rig.labels(1)).toEqual([]);
    expect(rig.fake.state.commentsOn(REPO, 1)).toHaveLength(2);
    expect((await counters())["ignored.untrusted-label"]).toBe(7);
    // Each is in the audit log too, with who and why.
    const audit = (await (await rig.app.admin(`/api/v1/audit?repo=${encodeURIComponent(REPO)}`)).json()) as {
      ignored: Array<{ actor: string; why: string }>;
    };
    expect(audit.ignored.filter((a) => a.actor === "renovate[bot]")).toHaveLength(7);
  });

  test("someone without write permission removing the queue label: it comes back, the task stays queued and is claimed", async () => {
    rig = await startRig({ provider });
    await rig.queue(2);
    await remove(2, "agent:queued", "eve");
    expect(rig.labels(2)).toEqual(["agent:queued"]);
    expect((await rig.task(2)).task.state).toBe("queued");
    await remove(2, "agent:queued", "eve");
    expect(rig.labels(2)).toEqual(["agent:queued"]);
    const replies = rig.fake.state.commentsOn(REPO, 2);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.body).toContain("@eve the `agent:queued` label was put back");
    expect(replies[0]!.body).toContain("eve has read permission; write or higher is needed");
    expect((await counters())["ignored.untrusted-label"]).toBe(2);

    const w = await rig.worker();
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    expect(claim.body.task).toMatchObject({ repo: REPO, issue: 2 });
    expect(rig.labels(2)).toEqual(["agent:in-progress"]);
  });

  test("a trusted person removing the queue label cancels the task, and nothing is counted as ignored", async () => {
    rig = await startRig({ provider });
    await rig.queue(3);
    await remove(3, "agent:queued", "alice");
    expect((await rig.task(3)).task.state).toBe("cancelled");
    expect(rig.labels(3)).toEqual([]);
    expect(rig.fake.state.commentsOn(REPO, 3)).toHaveLength(0);
    expect((await counters())["ignored.untrusted-label"]).toBe(0);
    expect((await (await rig.worker()).claim()).status).toBe(204);
  });

  test("the interlock and the other state labels: untrusted changes are undone and the run goes on", async () => {
    rig = await startRig({ provider });
    await rig.queue(4);
    const w = await rig.worker();
    const { run } = (await w.claim()).body;
    expect(rig.labels(4)).toEqual(["agent:in-progress"]);

    await remove(4, "agent:in-progress", "eve");
    expect(rig.labels(4)).toEqual(["agent:in-progress"]);
    await add(4, "agent:failed", "eve");
    expect(rig.labels(4)).toEqual(["agent:in-progress"]);
    // On an issue with no task, no agent label belongs: it goes.
    rig.fake.state.addIssue(REPO, { number: 5, labels: [], user: "eve" });
    await add(5, "agent:review", "eve");
    expect(rig.labels(5)).toEqual([]);

    expect((await rig.task(4)).task).toMatchObject({ state: "claimed" });
    expect((await w.heartbeat(run.id, run.leaseEpoch)).status).toBe(200);
    // One reply per issue for the day, however many changes.
    expect(rig.fake.state.commentsOn(REPO, 4)).toHaveLength(1);
    expect(rig.fake.state.commentsOn(REPO, 4)[0]!.body).toContain("@eve the `agent:in-progress` label was put back");
    expect(rig.fake.state.commentsOn(REPO, 5)).toHaveLength(1);
    expect((await counters())["ignored.untrusted-label"]).toBe(3);
  });

  test("every kind of ignored input moves its counter", async () => {
    rig = await startRig({ provider });
    const before = await counters();
    expect(Object.values(before).every((v) => v === 0)).toBe(true);
    await rig.queue(6);
    const comment = async (user: string, body: string) => {
      const c = rig.fake.state.addComment(REPO, 6, { body, user });
      await rig.deliverPayload(
        "issue_comment",
        fakeWebhookPayload(rig.fake, "issue_comment", "created", { repo: REPO, issue: 6, comment: c.id, sender: user }),
      );
    };
    await comment("eve", "orchestra cancel");
    await comment("eve", "please use the v2 API");
    await comment("renovate[bot]", "orchestra retry");
    await add(6, "bug", "alice");
    // Orchestra's own label change, delivered back to it.
    await rig.deliver("issues", "labeled", { issue: 6, label: "agent:queued", sender: "orchestra-test[bot]" });
    const star = fakeWebhookPayload(rig.fake, "star", "created", { repo: REPO, sender: "eve" });
    await rig.deliverPayload("star", star, randomUUID());
    // The same signed body again under a fresh delivery id: a replay, counted and not stored.
    const replay = await sendWebhook(rig.app.url + "/api/github/webhooks", {
      event: "star",
      payload: star,
      secret: rig.app.secret,
      deliveryId: randomUUID(),
    });
    expect(await replay.json()).toMatchObject({ replay: true });

    const after = await counters();
    expect(after).toMatchObject({
      "ignored.untrusted-command": 2,
      "ignored.untrusted-comment": 1,
      "ignored.irrelevant": 1,
      "ignored.own-echo": 1,
      "ignored.unhandled-event": 1,
      "ignored.replayed-body": 1,
      "ignored.untrusted-label": 0,
    });
    expect((await rig.task(6)).task.state).toBe("queued");
    // Operators only; the CLI reads the same.
    expect((await fetch(rig.app.url + "/api/v1/ignored")).status).toBe(401);
    const { stdout } = await cli("ignored");
    expect(stdout).toMatch(/^ignored\.untrusted-command +2 {2}last \S+Z {2}/m);
    expect(stdout).toMatch(/^ignored\.untrusted-label +0 {2}never {2}/m);
    expect(JSON.parse((await cli("ignored", "--json")).stdout)).toEqual(
      await (await rig.app.admin("/api/v1/ignored")).json(),
    );
  });

  test("after the App is uninstalled, a late delivery for its installation is ignored and counted, not retried into a parked one", async () => {
    rig = await startRig({ provider });
    await rig.deliverPayload(
      "installation",
      fakeWebhookPayload(rig.fake, "installation", "deleted", { repo: REPO, sender: "alice" }, { action: "deleted" }),
    );
    rig.fake.state.addIssue(REPO, { number: 7, labels: ["agent:queued"], user: "alice" });
    const id = await rig.deliver("issues", "labeled", { issue: 7, label: "agent:queued", sender: "alice" });
    const row = await rig.app.database.db.delivery.findUnique({ where: { deliveryId: id } });
    // Ignored when it was stored, never attempted: no error, no retry, and the reason on the row.
    expect(row).toMatchObject({
      state: "ignored",
      attempts: 0,
      errors: "[]",
      note: `unmanaged: installation ${INSTALLATION}: the App was uninstalled`,
    });
    expect(await rig.task(7)).toBeNull();
    expect((await counters())["ignored.unmanaged"]).toBe(1);
  });
});
