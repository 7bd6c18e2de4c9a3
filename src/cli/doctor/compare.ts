/**
 * The pure part of `orchestra doctor`'s access checks: what app.yml asks for
 * (default_permissions, default_events) against what GitHub says the App and
 * each installation hold, and what an operator must do about a gap.
 *
 * GitHub keeps two copies: the App's own settings (`GET /app`), and what each
 * installation accepted (`GET /app/installations`). A permission added to the
 * App reaches an installation only once its owner accepts the request, so a
 * gap on an installation alone is fixed by accepting, a gap on the App too by
 * changing the App's settings first.
 */
import type { Check } from "./check.js";

/** GitHub's access levels, lowest first. */
export const LEVELS = ["read", "write", "admin"] as const;

const rank = (level: string | undefined): number =>
  level === undefined ? -1 : (LEVELS as readonly string[]).indexOf(level);

export interface Access {
  permissions: Record<string, string>;
  events: string[];
}

export interface Gap {
  /** Asked for, and not granted or granted at a lower level (`have` null: not at all). */
  missing: Array<{ permission: string; want: string; have: string | null }>;
  missingEvents: string[];
  /** Granted beyond what is asked: a permission not asked for, or a higher level. */
  extra: Array<{ permission: string; want: string | null; have: string }>;
  extraEvents: string[];
}

export function compareAccess(wanted: Access, granted: Access): Gap {
  const missing: Gap["missing"] = [];
  const extra: Gap["extra"] = [];
  for (const [permission, want] of Object.entries(wanted.permissions).sort(([a], [b]) => a.localeCompare(b))) {
    const have = granted.permissions[permission];
    // An unknown level satisfies nothing: it is not evidence of access.
    if (have === undefined || rank(have) < rank(want) || rank(have) === -1)
      missing.push({ permission, want, have: have ?? null });
    else if (rank(have) > rank(want)) extra.push({ permission, want, have });
  }
  for (const [permission, have] of Object.entries(granted.permissions).sort(([a], [b]) => a.localeCompare(b))) {
    if (!(permission in wanted.permissions)) extra.push({ permission, want: null, have });
  }
  const grantedEvents = new Set(granted.events);
  const wantedEvents = new Set(wanted.events);
  return {
    missing,
    missingEvents: [...wantedEvents].filter((e) => !grantedEvents.has(e)).sort(),
    extra,
    extraEvents: [...grantedEvents].filter((e) => !wantedEvents.has(e)).sort(),
  };
}

const isEmpty = (g: Gap, part: "missing" | "extra") =>
  (part === "missing" ? g.missing.length + g.missingEvents.length : g.extra.length + g.extraEvents.length) === 0;

/** `pull_requests: write (has read)`, `checks: write (not granted)`. */
function missingText(g: Gap): string[] {
  const parts: string[] = [];
  if (g.missing.length)
    parts.push(
      `missing permission${g.missing.length > 1 ? "s" : ""} ${g.missing
        .map((m) => `${m.permission}: ${m.want} (${m.have === null ? "not granted" : `has ${m.have}`})`)
        .join(", ")}`,
    );
  if (g.missingEvents.length)
    parts.push(`missing event${g.missingEvents.length > 1 ? "s" : ""} ${g.missingEvents.join(", ")}`);
  return parts;
}

function extraText(g: Gap): string[] {
  const parts: string[] = [];
  if (g.extra.length)
    parts.push(
      `more than app.yml asks: ` +
        `${g.extra.map((e) => `${e.permission}: ${e.have}${e.want ? ` (needs ${e.want})` : ""}`).join(", ")}`,
    );
  if (g.extraEvents.length) parts.push(`events app.yml does not list: ${g.extraEvents.join(", ")}`);
  return parts;
}

const asked = (wanted: Access) =>
  `${Object.keys(wanted.permissions).length} permissions, ${wanted.events.length} events`;

/** The change in the App's settings that closes `g`, in the words of its settings page. */
function settingsChange(g: Gap): string {
  const items = [
    ...g.missing.map(
      (m) => `${m.permission} to ${m.want === "read" ? "Read-only" : m.want === "write" ? "Read and write" : m.want}`,
    ),
    ...g.missingEvents.map((e) => `subscribe to ${e}`),
  ];
  return items.join(", ");
}

export interface AppFacts {
  slug: string;
  /** The App's "Permissions & events" settings page. */
  settingsUrl: string;
}

/** The App's own settings against app.yml. */
export function appAccessCheck(wanted: Access, app: Access, facts: AppFacts): Check {
  const g = compareAccess(wanted, app);
  const name = "app permissions";
  if (!isEmpty(g, "missing")) {
    return {
      name,
      status: "fail",
      detail: `the App ${facts.slug}: ${missingText(g).join("; ")}`,
      fix:
        `in the App's settings (${facts.settingsUrl}) set ${settingsChange(g)}; ` +
        `then the owner of each installation accepts the new permissions`,
    };
  }
  if (!isEmpty(g, "extra")) {
    return {
      name,
      status: "warn",
      detail: `the App ${facts.slug} holds what app.yml asks (${asked(wanted)}); ${extraText(g).join("; ")}`,
      fix:
        `Orchestra does not use these; remove them in the App's settings (${facts.settingsUrl}) ` +
        `to keep least privilege`,
    };
  }
  return { name, status: "ok", detail: `the App ${facts.slug} holds what app.yml asks: ${asked(wanted)}` };
}

export interface InstallationFacts {
  id: number;
  account: string;
  /** The installation's settings page, where its owner reviews a permissions request. */
  htmlUrl: string;
  suspended: boolean;
  access: Access;
}

/** One installation against app.yml, with the App's own gap deciding who must act. */
export function installationAccessCheck(wanted: Access, app: Access, inst: InstallationFacts, facts: AppFacts): Check {
  const name = `installation ${inst.account}`;
  const who = `installation ${inst.id} on ${inst.account}`;
  const g = compareAccess(wanted, inst.access);
  const appGap = compareAccess(wanted, app);
  if (!isEmpty(g, "missing")) {
    // Only what the App itself lacks needs its settings changed; the rest needs the owner's acceptance.
    const onApp: Gap = {
      missing: g.missing.filter((m) => appGap.missing.some((a) => a.permission === m.permission)),
      missingEvents: g.missingEvents.filter((e) => appGap.missingEvents.includes(e)),
      extra: [],
      extraEvents: [],
    };
    const fixes: string[] = [];
    if (!isEmpty(onApp, "missing"))
      fixes.push(`in the App's settings (${facts.settingsUrl}) set ${settingsChange(onApp)}`);
    fixes.push(
      `an owner of ${inst.account} accepts the App's requested permissions at ${inst.htmlUrl} (Review request)`,
    );
    return {
      name,
      status: "fail",
      detail: `${who}: ${missingText(g).join("; ")}${inst.suspended ? "; and it is suspended" : ""}`,
      fix: fixes.join("; then "),
    };
  }
  if (inst.suspended) {
    return {
      name,
      status: "warn",
      detail: `${who} is suspended: GitHub sends no events from it and refuses its tokens`,
      fix: `an owner of ${inst.account} unsuspends it at ${inst.htmlUrl}, if Orchestra should manage it`,
    };
  }
  if (!isEmpty(g, "extra")) {
    return {
      name,
      status: "warn",
      detail: `${who} holds what app.yml asks (${asked(wanted)}); ${extraText(g).join("; ")}`,
      fix:
        `Orchestra does not use these; remove them from the App's settings (${facts.settingsUrl}) ` +
        `to keep least privilege`,
    };
  }
  return { name, status: "ok", detail: `${who} holds what app.yml asks: ${asked(wanted)}` };
}
