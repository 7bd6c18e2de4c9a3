/**
 * Stopping the service stops its GitHub calls: an octokit plugin that ties
 * every request (REST, GraphQL, token minting, the config plugin's reads) to
 * one signal. When it fires, each call in flight is rejected at once and its
 * connection aborted — also a read Probot's retry plugin is waiting to send
 * again — so a GitHub that accepts connections and never answers cannot hold
 * a shutdown for a timeout or a retry schedule. Whoever made the call leaves
 * its work as it was (a delivery or an effect stays pending), since the
 * service is going away, not GitHub failing.
 */
import type { ProbotOctokit } from "probot";

/** What the plugin uses of an octokit: its request hook. */
type Hookable = Pick<InstanceType<typeof ProbotOctokit>, "hook">;

/** What a call stopped by the shutdown rejects with. */
export class ServiceStopping extends Error {
  override readonly name = "ServiceStopping";
  constructor() {
    super("the service is stopping: the GitHub call was abandoned");
  }
}

/** The plugin (ProbotOctokit.plugin(stoppable(signal))): wraps every request, outermost. */
export function stoppable(signal: AbortSignal) {
  return (octokit: Hookable): void => {
    octokit.hook.wrap("request", (request, options) => {
      if (signal.aborted) return Promise.reject(new ServiceStopping());
      const own = options.request.signal;
      options.request = { ...options.request, signal: own ? AbortSignal.any([own, signal]) : signal };
      return new Promise((resolve, reject) => {
        const onStop = () => reject(new ServiceStopping());
        signal.addEventListener("abort", onStop, { once: true });
        void Promise.resolve(request(options))
          .then(resolve, reject)
          .finally(() => signal.removeEventListener("abort", onStop));
      });
    });
  };
}
