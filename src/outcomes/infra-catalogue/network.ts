/**
 * The network between the runner and the services every job talks to: npm,
 * yarn and curl losing their connection, git's transport breaking, DNS failing
 * for a moment, a registry or git host answering 5xx, rate limits. Registries
 * of other ecosystems have files of their own (registries*.ts, os-packages.ts).
 */
import { CURL, type InfraFamily } from "./family.js";

export const NETWORK_FAMILIES: readonly InfraFamily[] = [
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
    counterparts: [
      "  ✕ retries the registry after ECONNRESET (12 ms)",
      // A test that spawned npm and printed its error: the report around it is what counts.
      "FAIL test/install.test.ts\n  ● install › retries the registry\n\n    npm ERR! code ECONNRESET",
      "Error: read ECONNRESET\n    at TLSWrap.onStreamRead (node:internal/stream_base_commons:218:20)",
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
    counterparts: [
      // git's own words for a repository or ref that is not there: the workflow names the wrong one.
      "remote: Repository not found.\nfatal: repository 'https://github.com/example/missing.git/' not found",
      "fatal: couldn't find remote ref refs/heads/no-such-branch",
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
    counterparts: [
      // https://github.com/kingparks/jetbra-activate/issues/5: a mistyped host, curl (6).
      "curl: (6) Could not resolve host: lin",
      "npm ERR! code ENOTFOUND",
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
      /^(?:buildx (?:call )?failed with: )?(?:error: |ERROR: )?failed to solve: .*?\bunexpected status: 5\d\d\b/,
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
    counterparts: [
      // https://github.com/InternationalColorConsortium/iccDEV/issues/2232: git refused, 403.
      "error: RPC failed; HTTP 403 curl 22 The requested URL returned error: 403\n" +
        "fatal: expected flush after ref listing",
      "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/left-pad-typo - Not found",
      "FAIL src/registry.test.ts\n  ✕ handles 503 from registry (8 ms)",
      "got 503 from the mock server",
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
    counterparts: [
      // A token without the permission: a rerun gets the same answer.
      "Error: Resource not accessible by integration",
      "npm ERR! code E403",
      "  ✕ backs off when the API rate limit exceeded for installation (3 ms)",
    ],
  },
];
