import { describe, expect, it } from "vitest";
import { columnSet } from "@/lib/db/column-set";

const EVENTS = columnSet({ id: "uuid[]", from_status: "text[]", nodes: "int[]" });

describe("column sets for unnest", () => {
  it("writes each column's cast and name once, numbering parameters from where the caller says", () => {
    expect(EVENTS.sql()).toBe("unnest($1::uuid[], $2::text[], $3::int[]) AS x(id, from_status, nodes)");
    expect(EVENTS.sql(4)).toBe("unnest($4::uuid[], $5::text[], $6::int[]) AS x(id, from_status, nodes)");
    // the same string each time: named statements are planned once per connection by their text
    expect(EVENTS.sql(4)).toBe(EVENTS.sql(4));
  });

  it("names the row source and the ordinality column when asked", () => {
    const s = columnSet({ node_id: "uuid[]", gpus: "int[]" }, { alias: "w", ordinality: "ord" });
    expect(s.sql(3)).toBe("unnest($3::uuid[], $4::int[]) WITH ORDINALITY AS w(node_id, gpus, ord)");
  });

  it("picks one array per column from rows, in the fragment's order, whatever order the picks are written in", () => {
    const rows = [
      { id: "a", n: 1 },
      { id: "b", n: 2 },
    ];
    const bound = EVENTS.bindRows(rows, { nodes: (r) => r.n, id: (r) => r.id, from_status: (_, i) => (i === 0 ? "queued" : null) }, 2);
    expect(bound.sql).toBe(EVENTS.sql(2));
    expect(bound.values).toEqual([
      ["a", "b"],
      ["queued", null],
      [1, 2],
    ]);
  });

  it("binds arrays filled in one pass, and refuses columns of different lengths", () => {
    const cols = EVENTS.empty();
    cols.id.push("a");
    cols.nodes.push(3);
    cols.from_status.push("queued");
    expect(EVENTS.bind(cols).values).toEqual([["a"], ["queued"], [3]]);
    cols.nodes.push(4);
    expect(() => EVENTS.bind(cols)).toThrow(/nodes has 2 values, id has 1/);
  });

  it("binds no rows as empty arrays (the statement then matches nothing)", () => {
    expect(EVENTS.bindRows([], { id: () => "a", from_status: () => null, nodes: () => 1 }).values).toEqual([[], [], []]);
  });

  it("refuses names that would need quoting and parameters before $1", () => {
    expect(() => columnSet({ "Bad Name": "text[]" })).toThrow(/identifier/);
    expect(() => columnSet({ a: "text[]" }, { alias: "x; DROP" })).toThrow(/identifier/);
    expect(() => EVENTS.sql(0)).toThrow(/\$1/);
  });
});
