/**
 * The GitHub Actions runner and service reporting that the machine under the
 * job went away, was never provisioned, stopped the job, or could not fetch an
 * action. All `runner` scope: the results next to them cannot be trusted.
 */
import type { InfraFamily } from "./family.js";

export const RUNNER_FAMILIES: readonly InfraFamily[] = [
  // GitHub Actions runner (Runner.Listener) on SIGTERM/SIGINT: service stopped, VM reclaimed.
  // https://github.com/actions/runner/blob/main/src/Runner.Worker/JobRunner.cs (the message)
  // https://github.com/actions/runner/issues/2427 · https://github.com/int128/datadog-actions-metrics/pull/528
  {
    family: "runner-shutdown",
    description: "the Actions runner received a shutdown signal and abandoned the job",
    scope: "runner",
    patterns: [/^The runner has received a shutdown signal\b/],
    samples: [
      "2023-02-09T20:11:49.9484027Z ##[error]The runner has received a shutdown signal. " +
        "This can happen when the runner service is stopped, or a manually started runner is canceled.",
      "The runner has received a shutdown signal. This can happen when the " +
        "runner service is stopped, or a manually started runner is canceled.",
    ],
    counterparts: ["  ✕ stops the worker when the runner has received a shutdown signal (4 ms)"],
  },
  // GitHub Actions service, when a runner stops renewing its job: hosted VM starved or gone, self-hosted host down.
  // https://github.com/open-telemetry/opentelemetry-collector-contrib/issues/34000
  // https://github.com/fedimint/fedimint/issues/6021
  // https://github.com/meshery-extensions/meshery-extensions-packages/issues/465
  // https://github.com/actions/runner/issues/2040
  {
    family: "runner-lost",
    description: "the Actions service lost communication with the runner",
    scope: "runner",
    patterns: [/^The (?:self-hosted|hosted) runner(?::.*?)? lost communication with the server\b/],
    samples: [
      "The self-hosted runner: 04922ab0a5cde170c99dee4153a188a070226aa0 lost communication with the server. " +
        "Verify the machine is running and has a healthy network connection. " +
        "Anything in your workflow that terminates the runner process, starves it for CPU/Memory, " +
        "or blocks its network access can cause this error.",
      "The hosted runner: GitHub Actions 9 lost communication with the server. " +
        "Anything in your workflow that terminates the runner process, starves it for CPU/Memory, " +
        "or blocks its network access can cause this error.",
      "The hosted runner lost communication with the server. Anything in your workflow that terminates " +
        "the runner process, starves it for CPU/Memory, or blocks its network access can cause this error.",
      "The self-hosted runner: lost communication with the server. Verify the machine is running " +
        "and has a healthy network connection. Anything in your workflow that terminates the runner process, " +
        "starves it for CPU/Memory, or blocks its network access can cause this error.",
    ],
    counterparts: [
      "  ● agent › reconnects after the hosted runner lost communication with the server",
      'AssertionError: expected "The hosted runner lost communication with the server." to equal "ok"',
    ],
  },
  // Hosted runner provisioning (GitHub Actions and Azure Pipelines share it): the VM never came up or was taken away.
  // https://github.com/actions/runner-images/issues/3517 · https://github.com/actions/runner-images/issues/9812
  // https://github.com/actions/runner-images/issues/10401
  {
    family: "runner-provisioning",
    description: "the hosted runner could not be provisioned or was deprovisioned mid-job",
    scope: "runner",
    patterns: [
      /^An error occurred while provisioning resources \(Error Type: \w+\)\.?$/,
      /^The hosted runner encountered an error while running your job\. \(Error Type: \w+\)\.?$/,
      /^Received request to deprovision: The request was cancelled by the remote provider\.?$/,
    ],
    samples: [
      "An error occurred while provisioning resources (Error Type: Disconnect).",
      "##[error]The hosted runner encountered an error while running your job. (Error Type: Disconnect).",
      "Received request to deprovision: The request was cancelled by the remote provider.",
    ],
    counterparts: [
      "Error: terraform apply failed: An error occurred while provisioning resources (Error Type: Quota).",
    ],
  },
  // GitHub Actions runner when it stops a job: the execution time limit, or a cancellation.
  // https://github.com/lowlighter/metrics/issues/731 · https://github.com/actions/runner/issues/685
  // https://github.com/mandiant/VM-Packages/issues/1448 · https://github.com/actions/runner/issues/2427
  {
    family: "job-cancelled",
    description: "Actions stopped the job: execution time limit exceeded, or the operation was canceled",
    scope: "runner",
    patterns: [
      /^The job running on runner .+ has exceeded the maximum execution time of \d+(?: minutes)?\.?$/,
      /^The job has exceeded the maximum execution time of \d+h\d+m\d+s\.?$/,
      /^The operation was canceled\.$/,
    ],
    samples: [
      "The job running on runner GitHub Actions 3 has exceeded the maximum execution time of 360 minutes.",
      "The job running on runner ghrunner-yza3xr has exceeded the maximum execution time of 360. ",
      "The job has exceeded the maximum execution time of 6h0m0s",
      "2023-02-09T20:11:49.9966268Z ##[error]The operation was canceled.",
    ],
    counterparts: [
      // .NET's own cancellation, thrown by the code under test: the runner's line stands alone.
      "System.Threading.Tasks.TaskCanceledException: The operation was canceled.",
      "AbortError: The operation was aborted.",
    ],
  },
  // GitHub Actions runner downloading an action's tarball from api.github.com. A 404 means a bad
  // action reference (the workflow's fault) and is deliberately not matched.
  // https://github.com/actions/checkout/issues/814 · https://github.com/actions/checkout/issues/225
  {
    family: "action-download",
    description: "the Actions runner could not download an action: GitHub answered 5xx",
    scope: "runner",
    patterns: [
      /^Failed to download action '[^']+'\. Error:? Response status code does not indicate success: 5\d\d\b/,
      /^Response status code does not indicate success: 5\d\d \(/,
    ],
    samples: [
      "Warning: Failed to download action " +
        "'https://api.github.com/repos/actions/checkout/tarball/7884fcad6b5d53d10323aee724dc68d8b9096a2e'. " +
        "Error: Response status code does not indicate success: 503 (Service Unavailable).",
      "Error: Response status code does not indicate success: 503 (Service Unavailable).",
      "##[warning]Failed to download action 'https://api.github.com/repos/actions/checkout/tarball/v2'. Error " +
        "Response status code does not indicate success: 500 (Internal Server Error).",
      "##[error]Response status code does not indicate success: 500 (Internal Server Error).",
    ],
    counterparts: [
      // https://github.com/cirrus-actions/rebase/issues/27: a tag that does not exist.
      "##[warning]Failed to download action 'https://api.github.com/repos/cirrus-actions/rebase/tarball/v1.2.0'. " +
        "Error Response status code does not indicate success: 404 (Not Found).\n" +
        "##[error]Response status code does not indicate success: 404 (Not Found).",
    ],
  },
];
