/**
 * What the demo's repository holds, the issues queued on it, and the
 * stand-in agent that works on them: a shell script, no model. Each issue is
 * written for one turn of the story.
 */
export const REPO = "acme/greeter";
export const INSTALLATION = 1;
/** The trusted person who queues the issues and merges the first PR. */
export const MAINTAINER = "alice";

export const FILES: Record<string, string> = {
  "README.md": "# greeter\n\nSays hello.\n",
  "greet.js": 'export const greet = () => "Hello, world!";\n',
};

export interface DemoIssue {
  number: number;
  title: string;
  body: string;
  /** What happens to it in the story. */
  turn: string;
  /** Its PR's first CI run loses its runner (then Orchestra must rerun it, and the maintainer merges it). */
  runnerLost?: true;
}

export const ISSUES: DemoIssue[] = [
  {
    number: 1,
    title: "Greet people by name",
    body: "`greet(name)` should say hello to `name`, and to the world when no name is given.",
    turn: "a PR whose CI loses its runner: rerun as infrastructure, green, merged, done",
    runnerLost: true,
  },
  {
    number: 2,
    title: "Document greet() in the README",
    body: "The README should show how to call `greet`.",
    turn: "the agent's first run changes nothing: a phantom, queued again; the next run opens a PR",
  },
  {
    number: 3,
    title: "Start a changelog",
    body: "Add CHANGELOG.md with an entry for the first release.",
    turn: "a PR with green CI, left for review",
  },
];

/**
 * The stand-in agent, run by the worker in each run's worktree as `sh agent.sh <memory dir>`. On #2 its first run
 * only looks and exits 0 (what Orchestra must call a phantom, not a success); the directory outside the worktree is
 * how its second run knows it has been there.
 */
export const AGENT = `#!/bin/sh
set -e
memory="$1"
case "$ORCHESTRA_ISSUE" in
  1)
    printf '%s\\n' 'export const greet = (name = "world") => \`Hello, \${name}!\`;' > greet.js
    git add greet.js
    git commit -qm "Greet people by name"
    ;;
  2)
    if [ ! -e "$memory/looked-at-2" ]; then
      touch "$memory/looked-at-2"
      echo "Read the README. Looks fine to me."
      exit 0
    fi
    printf '\\n## Usage\\n\\n    import { greet } from "./greet.js";\\n    greet("Ada"); // Hello, Ada!\\n' >> README.md
    git add README.md
    git commit -qm "Document greet() in the README"
    ;;
  3)
    printf '# Changelog\\n\\n## 1.0.0\\n\\n- greet() says hello.\\n' > CHANGELOG.md
    git add CHANGELOG.md
    git commit -qm "Start a changelog"
    ;;
esac
`;
