import { describe, expect, it } from "vitest";
import { reserveExtractionCall } from "../../../src/memory/object/extraction-window";
import { inObject, storeMemory } from "../../harness/memory/helpers";

const HOUR = 3_600_000;

describe("the hourly window of extraction calls", () => {
  it("K8 counts the calls of one UTC hour up to the limit, and starts again the next hour", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "add_fact", claim: "Made the schema" }]);
    const start = 500 * HOUR + 10;
    const taken = await inObject(memory, (sql) => [
      reserveExtractionCall(sql, 2, start),
      reserveExtractionCall(sql, 2, start + 1_000),
      reserveExtractionCall(sql, 2, start + HOUR - 11),
      reserveExtractionCall(sql, 2, start + HOUR),
      reserveExtractionCall(sql, 0, start + 2 * HOUR),
    ]);
    expect(taken).toEqual([true, true, false, true, false]);
    // A refused call is not written: the next hour's count is the one reservation.
    const row = await inObject(memory, (sql) =>
      sql.exec("SELECT hour, calls FROM extraction_window").toArray(),
    );
    expect(row).toEqual([{ hour: 501, calls: 1 }]);
  });
});
