// The swaps of effects performed together go out as one request, once every member has asked or finished.
import { GitHubError, type LabelSwap, type SwapAnswer } from "../../src/github/port.js";
import { SwapBatch } from "../../src/effects/swap-batch.js";

const swap = (n: number): LabelSwap => ({ issueId: `I_${n}`, add: [`LA_in`], remove: [`LA_q`] });

/** A batch whose requests are recorded and answered with each swap's issue id as its one label. */
function recorded(members: number, fail?: Error) {
  const requests: LabelSwap[][] = [];
  const batch = new SwapBatch(members, (swaps) => {
    requests.push(swaps);
    if (fail) return Promise.reject(fail);
    return Promise.resolve(swaps.map((s): SwapAnswer => [{ name: s.issueId, nodeId: s.issueId }]));
  });
  return { batch, requests };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

test("three members' swaps are one request, sent when the last one asks", async () => {
  const { batch, requests } = recorded(3);
  const [a, b, c] = [batch.member(), batch.member(), batch.member()];
  const answers = [a.swap(swap(1)), b.swap(swap(2))];
  await settled();
  expect(requests).toEqual([]);
  answers.push(c.swap(swap(3)));
  expect(await Promise.all(answers)).toEqual([1, 2, 3].map((n) => [{ name: `I_${n}`, nodeId: `I_${n}` }]));
  expect(requests).toEqual([[swap(1), swap(2), swap(3)]]);
});

test("a member that finishes without a swap lets the others go", async () => {
  const { batch, requests } = recorded(3);
  const [a, b, c] = [batch.member(), batch.member(), batch.member()];
  const answer = a.swap(swap(1));
  b.done();
  await settled();
  expect(requests).toEqual([]);
  c.done();
  c.done(); // harmless
  expect(await answer).toEqual([{ name: "I_1", nodeId: "I_1" }]);
  expect(requests).toEqual([[swap(1)]]);
});

test("no swap at all sends nothing", async () => {
  const { batch, requests } = recorded(2);
  const [a, b] = [batch.member(), batch.member()];
  a.done();
  b.done();
  await settled();
  expect(requests).toEqual([]);
});

test("a request GitHub did not answer fails every member's swap with GitHub's error", async () => {
  const outage = new GitHubError("swap labels", 502, "Bad Gateway", true, { mayHaveSent: true });
  const { batch } = recorded(2, outage);
  const [a, b] = [batch.member(), batch.member()];
  const answers = [a.swap(swap(1)), b.swap(swap(2))].map((p) => p.catch((e: unknown) => e));
  expect(await Promise.all(answers)).toEqual([outage, outage]);
});

test("a member's second swap, or one after the batch went out, is a request of its own", async () => {
  const { batch, requests } = recorded(2);
  const [a, b] = [batch.member(), batch.member()];
  const first = a.swap(swap(1));
  b.done();
  await first;
  await a.swap(swap(2));
  await b.swap(swap(3));
  expect(requests).toEqual([[swap(1)], [swap(2)], [swap(3)]]);
});
