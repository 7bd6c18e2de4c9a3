/**
 * Docker on the runner: the daemon not running, and container registries
 * (Docker Hub, ghcr.io, the Actions cache behind BuildKit) timing out. Their
 * 5xx answers and Docker Hub's pull limit are in remote-5xx and rate-limit
 * (network.ts), next to the other registries'.
 */
import type { InfraFamily } from "./family.js";

/** Go's net/http and net errors for a connection that never completed. */
const GO_TIMEOUT =
  String.raw`(?:net/http: (?:request canceled(?: while waiting for connection)? ` +
  String.raw`\(Client\.Timeout exceeded while awaiting headers\)|TLS handshake timeout)` +
  String.raw`|dial tcp [^\s:]*:\d+: (?:i/o timeout|connect: connection timed out))`;

export const CONTAINER_FAMILIES: readonly InfraFamily[] = [
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
    counterparts: [
      'docker: Error response from daemon: Conflict. The container name "/db" is already in use by container ' +
        '"3f4e8c1a2b". You have to remove (or rename) that container to be able to reuse that name.',
      "  ✕ reports when it cannot connect to the Docker daemon (2 ms)",
    ],
  },
  // dockerd and BuildKit (Go) timing out on a registry: the Docker CLI's "Error response from daemon:",
  // the pull's "error pulling image configuration:", BuildKit's "failed to solve:".
  // https://github.com/moby/moby/issues/37532 · https://github.com/DeepVAC/TorchPod/issues/64
  // https://github.com/EnricoMi/publish-unit-test-result-action/issues/257
  // https://github.com/mitogen-hq/mitogen/issues/1517
  // https://github.com/docker/hub-feedback/issues/1195
  // https://github.com/docker-archive-public/docker.kitematic/issues/3743
  // https://github.com/docker/build-push-action/issues/975 (its reporter shortened the cache URL)
  {
    family: "container-registry",
    description: "a container registry or the BuildKit cache did not answer in time",
    scope: "tool",
    patterns: [
      new RegExp(
        String.raw`^(?:docker: )?Error response from daemon: (?:Head|Get) "?https?://[^"\s]+"?: ` +
          String.raw`(?:Get "?https?://[^"\s]+"?: )?${GO_TIMEOUT}\.?$`,
      ),
      new RegExp(
        String.raw`^error pulling image configuration: (?:download failed after attempts=\d+: )?` +
          String.raw`Get "?https?://[^"\s]+"?: ${GO_TIMEOUT}$`,
      ),
      new RegExp(String.raw`^(?:buildx failed with: )?(?:ERROR: )?failed to solve: .*: ${GO_TIMEOUT}$`),
    ],
    samples: [
      "Error response from daemon: Get https://registry-1.docker.io/v2/: net/http: request canceled while " +
        "waiting for connection (Client.Timeout exceeded while awaiting headers)",
      'Error response from daemon: Get "https://registry-1.docker.io/v2/": net/http: request canceled while ' +
        "waiting for connection (Client.Timeout exceeded while awaiting headers)",
      'Error response from daemon: Head "https://ghcr.io/v2/enricomi/publish-unit-test-result-action/manifests/' +
        'v1.33": ' +
        'Get "https://ghcr.io/token?scope=repository%3Aenricomi%2Fpublish-unit-test-result-action%3Apull' +
        '&service=ghcr.io": net/http: request canceled (Client.Timeout exceeded while awaiting headers)',
      'Error: Error response from daemon: Get "https://ghcr.io/v2/": net/http: request canceled ' +
        "(Client.Timeout exceeded while awaiting headers)",
      "docker: Error response from daemon: Get https://registry-1.docker.io/v2/library/ubuntu/manifests/latest: " +
        "net/http: TLS handshake timeout.",
      "error pulling image configuration: Get https://dseasb33srnrn.cloudfront.net/registry-v2/docker/registry/" +
        "v2/blobs/sha256/6c/6c0bdf761f3b2777c437ac9a0ab6201be66766558752079235dfc173d16b4026/data?" +
        "Expires=1523420912&Signature=XLAdTIDkOFT5c1G61Xpi-1Z4pMsaD51GbjZsuoiP6xc3FhblNg0HD0K9oIAv-EDcTaJ7uH39" +
        "eAR7J7~t3I53UA4OSIFJhMJ2cc1E5aHFXYZ7FZJml65p~air~z1e1NEwF-vqrPS091FyP~QYexDKJgYD0mzbvb88lKLP~O4kzcE_" +
        "&Key-Pair-Id=APKAJECH5M7VWIS5YZ6Q: net/http: TLS handshake timeout",
      'Error: buildx failed with: ERROR: failed to solve: Get "https://asdf.actions.githubusercontent.com/' +
        'qwer1234/_apis/artifactcache/cache?keys=buildkit-blob-1-sha256%qwer1234&version=1234": ' +
        "net/http: TLS handshake timeout",
    ],
    counterparts: [
      // A tag or image that does not exist, a private image without login, a mistyped registry host.
      "Error response from daemon: manifest for example/app:no-such-tag not found: manifest unknown: " +
        "manifest unknown",
      "Error response from daemon: pull access denied for example/private, repository does not exist or may " +
        "require 'docker login': denied: requested access to the resource is denied",
      'Error response from daemon: Get "https://registry.example.internal/v2/": dial tcp: lookup ' +
        "registry.example.internal on 127.0.0.53:53: no such host",
    ],
  },
];
