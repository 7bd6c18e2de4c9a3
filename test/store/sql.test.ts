import { argType, dateOf, numbered } from "../../src/store/sql.js";

test.each([
  ["2026-06-01T12:00:00.123+00:00", "2026-06-01T12:00:00.123Z"], // SQLite, as Prisma's adapter writes it
  ["2026-06-01 12:00:00.123", "2026-06-01T12:00:00.123Z"], // PostgreSQL timestamp(3), UTC without a zone
  ["2026-06-01 12:00:00", "2026-06-01T12:00:00.000Z"],
  ["2026-06-01T14:00:00+02:00", "2026-06-01T12:00:00.000Z"],
])("date-time text %s reads as %s", (text, iso) => {
  expect(dateOf(text)!.toISOString()).toBe(iso);
});

test("absent dates stay absent", () => {
  expect(dateOf(null)).toBeNull();
  expect(dateOf(undefined)).toBeNull();
});

test("placeholders are numbered for PostgreSQL in order", () => {
  expect(numbered(`UPDATE "T" SET "a" = ?, "b" = ? WHERE "id" = ?`)).toBe(
    `UPDATE "T" SET "a" = $1, "b" = $2 WHERE "id" = $3`,
  );
});

test.each([
  [1, "int"],
  [0.5, "float"],
  [2n, "bigint"],
  [true, "boolean"],
  [new Date(0), "datetime"],
  ["x", "string"],
  [null, "unknown"],
] as const)("%p binds as %s", (v, t) => {
  expect(argType(v).scalarType).toBe(t);
});
