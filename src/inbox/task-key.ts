/**
 * The ordering key of a delivery: installation/owner/repo#number, or a prefix
 * of it when the event is about a repository or an installation as a whole.
 * Deliveries with one key are processed one at a time in arrival order, so a
 * `labeled` is never applied after the `closed` that followed it.
 */
type Obj = Record<string, unknown>;

/** Events about an installation itself (its key is the installation's id): handled whatever its state. */
export const INSTALLATION_EVENTS: ReadonlySet<string> = new Set(["installation", "installation_repositories"]);

const obj = (v: unknown): Obj | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) ? v : undefined);

function firstPullNumber(container: Obj | undefined): number | undefined {
  const prs = container?.["pull_requests"];
  return Array.isArray(prs) ? num(obj(prs[0])?.["number"]) : undefined;
}

/** The issue or pull request a payload is about, if any. */
export function subjectNumber(payload: Obj): number | undefined {
  return (
    num(obj(payload["issue"])?.["number"]) ??
    num(obj(payload["pull_request"])?.["number"]) ??
    num(obj(payload["parent_issue"])?.["number"]) ??
    num(obj(payload["blocked_issue"])?.["number"]) ??
    firstPullNumber(obj(payload["check_run"])) ??
    firstPullNumber(obj(payload["check_suite"])) ??
    firstPullNumber(obj(payload["workflow_run"]))
  );
}

export function installationIdOf(payload: Obj): string | undefined {
  const id = num(obj(payload["installation"])?.["id"]);
  return id === undefined ? undefined : String(id);
}

/** The key of an issue or pull request (`number`), or of its repository as a whole. */
export function subjectKey(installationId: string, repo: string, number?: number): string {
  return number === undefined ? `${installationId}/${repo}` : `${installationId}/${repo}#${number}`;
}

export function taskKeyOf(payload: Obj): string {
  const inst = installationIdOf(payload) ?? "-";
  const repo = obj(payload["repository"])?.["full_name"];
  if (typeof repo !== "string") return inst;
  return subjectKey(inst, repo, subjectNumber(payload));
}
