/**
 * The infrastructure failure catalogue: one entry per family of message that
 * a runner, the kernel, git, a package index or its client, a container
 * registry, a compiler or Docker prints when the machine or the network failed
 * rather than the code. How lines are matched: family.ts; when a match counts:
 * infraMatch (infra-patterns.ts).
 *
 * Every sample is a line as the tool printed it, copied from the issue or the
 * source cited above it; every counterpart is a genuine failure that uses the
 * same words. The table test in test/outcomes/infra-patterns.test.ts runs them
 * all: each sample must match its own family, no counterpart may be classified
 * as infrastructure.
 *
 * The data, one file per group: runner.ts (the Actions runner and service),
 * memory.ts, disk.ts, network.ts (npm, yarn, curl, git, DNS, 5xx, rate limits),
 * registries.ts (PyPI, crates.io, the Go proxy, RubyGems), registries-jvm-dotnet.ts
 * (Maven, Gradle, NuGet), os-packages.ts (apt, dnf, apk), containers.ts (Docker).
 */
import { CONTAINER_FAMILIES } from "./containers.js";
import { DISK_FAMILIES } from "./disk.js";
import type { InfraFamily } from "./family.js";
import { MEMORY_FAMILIES } from "./memory.js";
import { NETWORK_FAMILIES } from "./network.js";
import { OS_PACKAGE_FAMILIES } from "./os-packages.js";
import { JVM_DOTNET_FAMILIES } from "./registries-jvm-dotnet.js";
import { REGISTRY_FAMILIES } from "./registries.js";
import { RUNNER_FAMILIES } from "./runner.js";

export type { InfraFamily };

/** In the order lines are tried against them: the runner's own reports first. */
export const INFRA_FAMILIES: readonly InfraFamily[] = [
  ...RUNNER_FAMILIES,
  ...MEMORY_FAMILIES,
  ...DISK_FAMILIES,
  ...NETWORK_FAMILIES,
  ...REGISTRY_FAMILIES,
  ...JVM_DOTNET_FAMILIES,
  ...OS_PACKAGE_FAMILIES,
  ...CONTAINER_FAMILIES,
];
