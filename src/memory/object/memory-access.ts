import type { MemoryBundle } from "../../protocol/memory";
import { logEvent } from "../../telemetry/log";

/**
 * How long recalls' access counts wait in memory before they are written. Writing them
 * while answering would hold the answer until the write is durable (the output gate);
 * written a moment later, the answer leaves at once and the counts of a burst of recalls
 * go in one write.
 */
export const ACCESS_FLUSH_MS = 250;

/**
 * Access counts and last-access times of recalled facts and entities. Counted in the
 * answer at once, written shortly after (or before any other read or write of the memory,
 * so those see them). Lost only if the object stops within that moment: they rank
 * memories, they are not memories.
 */
export class AccessLog {
  private readonly facts = new Map<string, number>();
  private readonly entities = new Map<string, number>();
  private at = "";
  private timer: ReturnType<typeof setTimeout> | null = null;

  /** `factsWritten` hears each write of facts' counts (id → recalls, at), after it succeeds. */
  constructor(
    private readonly sql: SqlStorage,
    private readonly factsWritten: (
      counts: ReadonlyMap<string, number>,
      at: string,
    ) => void = () => {},
  ) {}

  /**
   * Counts a recall of the bundle's facts and entities; with `inBundle` (the bundle is
   * answered) their counts in it too. Without, the bundle's items are left as they are
   * (they may be the object's kept facts, which change only as counts are written).
   */
  record(bundle: MemoryBundle, now: string, inBundle = true): void {
    for (const f of bundle.facts) {
      const n = (this.facts.get(f.id) ?? 0) + 1;
      this.facts.set(f.id, n);
      if (!inBundle) continue;
      f.accessCount += n;
      f.lastAccessedAt = now;
    }
    for (const e of bundle.entities) {
      const n = (this.entities.get(e.id) ?? 0) + 1;
      this.entities.set(e.id, n);
      if (!inBundle) continue;
      e.accessCount += n;
      e.lastAccessedAt = now;
    }
    this.at = now;
    this.timer ??= setTimeout(() => {
      this.timer = null;
      try {
        this.flush();
      } catch (error) {
        logEvent("error", "edgelink: could not write memory access counts", { error });
      }
    }, ACCESS_FLUSH_MS);
  }

  /** Writes the counts waiting, if any. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.facts.size === 0 && this.entities.size === 0) return;
    for (const [table, counts] of [
      ["facts", this.facts],
      ["entities", this.entities],
    ] as const) {
      if (counts.size === 0) continue;
      // One statement per table, the counts as a JSON object of id -> recalls.
      this.sql.exec(
        `UPDATE ${table} SET access_count = access_count + c.value, last_accessed_at = ?2
         FROM json_each(?1) AS c WHERE ${table}.id = c.key`,
        JSON.stringify(Object.fromEntries(counts)),
        this.at,
      );
      if (table === "facts") this.factsWritten(counts, this.at);
      counts.clear();
    }
  }

  /** Forgets the counts waiting (the memory was erased). */
  drop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.facts.clear();
    this.entities.clear();
  }
}
