import { deliveriesText, type DeliveriesAnswer } from "../../src/cli/deliveries.js";

const base = {
  event: "issues",
  action: "labeled",
  nextAttemptAt: "2026-03-01T16:05:00.000Z",
  firstFailedAt: null,
  errors: [],
};

describe("orchestra deliveries", () => {
  test("counts every state, retrying apart; a retrying one says since when and when next; a parked one how to replay it", () => {
    const body: DeliveriesAnswer = {
      summary: { pending: 0, retrying: 1, processing: 0, done: 3, ignored: 0, parked: 1 },
      deliveries: [
        {
          ...base,
          deliveryId: "d-retry",
          state: "retrying",
          attempts: 40,
          firstFailedAt: "2026-03-01T10:00:00.000Z",
          errors: [{ class: "github-502", message: "read config: 502 Bad Gateway" }],
        },
        {
          ...base,
          deliveryId: "d-parked",
          state: "parked",
          attempts: 5,
          firstFailedAt: "2026-03-01T09:00:00.000Z",
          errors: [
            { class: "github-404", message: "get collaborator permission: 404 Not Found" },
            {
              class: "parked",
              message:
                "parked after a failure that retrying does not fix: 5 attempts over 30 s. Fix the cause, then run: orchestra replay d-parked",
            },
          ],
        },
        { ...base, deliveryId: "d-done", action: null, event: "push", state: "done", attempts: 1 },
      ],
    };
    expect(deliveriesText(body).split("\n")).toEqual([
      "deliveries: pending=0 retrying=1 processing=0 done=3 ignored=0 parked=1",
      "d-retry  issues.labeled  retrying  attempts=40  failing since 2026-03-01T10:00:00.000Z  next attempt 2026-03-01T16:05:00.000Z  last error: read config: 502 Bad Gateway",
      "d-parked  issues.labeled  parked  attempts=5  failing since 2026-03-01T09:00:00.000Z  last error: get collaborator permission: 404 Not Found",
      "  parked after a failure that retrying does not fix: 5 attempts over 30 s. Fix the cause, then run: orchestra replay d-parked",
      "d-done  push  done  attempts=1",
      "",
    ]);
  });
});

test("an ignored or collapsed delivery says why", () => {
  const body: DeliveriesAnswer = {
    summary: { pending: 0, retrying: 0, processing: 0, done: 1, ignored: 2, parked: 0 },
    deliveries: [
      {
        ...base,
        deliveryId: "d-new",
        event: "check_run",
        action: "completed",
        state: "done",
        attempts: 1,
        note: null,
      },
      {
        ...base,
        deliveryId: "d-old",
        event: "check_run",
        action: "completed",
        state: "ignored",
        attempts: 0,
        note: "collapsed into d-new: a later delivery on this key says the same and is processed",
      },
      {
        ...base,
        deliveryId: "d-gone",
        state: "ignored",
        attempts: 0,
        note: "unmanaged: installation 7: the App was uninstalled",
      },
    ],
  };
  expect(deliveriesText(body).split("\n")).toEqual([
    "deliveries: pending=0 retrying=0 processing=0 done=1 ignored=2 parked=0",
    "d-new  check_run.completed  done  attempts=1",
    "d-old  check_run.completed  ignored  attempts=0  " +
      "collapsed into d-new: a later delivery on this key says the same and is processed",
    "d-gone  issues.labeled  ignored  attempts=0  unmanaged: installation 7: the App was uninstalled",
    "",
  ]);
});
