import type { Logger } from "pino";
import type { ClaimedDelivery } from "./store.js";

/** Wraps the inbox's dispatch so that every delivery it finishes gets its one `info` line. */
export function logEachDelivery<R>(
  dispatch: (d: ClaimedDelivery) => Promise<R>,
  log: Pick<Logger, "info">,
): (d: ClaimedDelivery) => Promise<R> {
  return async (d) => {
    const started = Date.now();
    const result = await dispatch(d);
    log.info(
      {
        delivery: d.deliveryId,
        event: d.action ? `${d.event}.${d.action}` : d.event,
        taskKey: d.taskKey,
        attempt: d.attempts,
        result,
        ms: Date.now() - started,
      },
      "delivery processed",
    );
    return result;
  };
}
