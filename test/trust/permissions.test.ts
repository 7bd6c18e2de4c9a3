/** The permission cache: one lookup per person and repository per minute, and never more than `max` entries. */
import { PermissionCache } from "../../src/trust/permissions.js";
import type { Permission } from "../../src/github/port.js";

/** A GitHub port that counts its permission lookups. */
function github(answer: (login: string) => Promise<Permission> = () => Promise.resolve("write")) {
  const calls: string[] = [];
  return {
    calls,
    permission: (_repo: unknown, login: string) => {
      calls.push(login);
      return answer(login);
    },
  };
}

describe("PermissionCache", () => {
  // Each step asks for one login at a time (ms); the cache holds 3 entries for 60 s.
  test.each<[string, Array<[string, number]>, { calls: string[]; size: number }]>([
    [
      "a repeat within the minute is cached",
      [
        ["a", 0],
        ["a", 59_999],
      ],
      { calls: ["a"], size: 1 },
    ],
    [
      "a repeat after the minute asks again",
      [
        ["a", 0],
        ["a", 60_000],
      ],
      { calls: ["a", "a"], size: 1 },
    ],
    [
      "logins differing in case are one person",
      [
        ["Alice", 0],
        ["alice", 1],
      ],
      { calls: ["Alice"], size: 1 },
    ],
    [
      "a flood of distinct logins keeps 3 entries",
      Array.from({ length: 1000 }, (_, i): [string, number] => [`user${i}`, i]),
      { calls: Array.from({ length: 1000 }, (_, i) => `user${i}`), size: 3 },
    ],
    [
      "the oldest is evicted first when the cache is full",
      [
        ["a", 0],
        ["b", 1],
        ["c", 2],
        ["d", 3],
        ["b", 4],
        ["a", 5],
      ],
      { calls: ["a", "b", "c", "d", "a"], size: 3 },
    ],
    [
      "expired entries go before live ones",
      [
        ["a", 0],
        ["b", 30_000],
        ["c", 30_001],
        ["d", 60_000],
        ["b", 60_001],
        ["c", 60_002],
      ],
      { calls: ["a", "b", "c", "d"], size: 3 },
    ],
    [
      "expired entries are all dropped when the cache is full",
      [
        ["a", 0],
        ["b", 1],
        ["c", 2],
        ["d", 70_000],
      ],
      { calls: ["a", "b", "c", "d"], size: 1 },
    ],
  ])("%s", async (_name, steps, want) => {
    const cache = new PermissionCache(60_000, 3);
    const gh = github();
    for (const [login, at] of steps) expect(await cache.of(gh, "acme/app", login, at)).toBe("write");
    expect(gh.calls).toEqual(want.calls);
    expect(cache.size).toBe(want.size);
  });

  test("a failed lookup is not cached: the next ask goes to GitHub again", async () => {
    const cache = new PermissionCache(60_000, 3);
    let fail = true;
    const gh = github(() => (fail ? Promise.reject(new Error("502 from GitHub")) : Promise.resolve("admin")));
    await expect(cache.of(gh, "acme/app", "a", 0)).rejects.toThrow("502 from GitHub");
    expect(cache.size).toBe(0);
    fail = false;
    expect(await cache.of(gh, "acme/app", "a", 1)).toBe("admin");
    expect(gh.calls).toEqual(["a", "a"]);
  });
});
