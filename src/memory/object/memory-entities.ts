import type { JsonObject } from "../../protocol/json";
import { GLOBAL_CHANNEL, MEMORY_INPUT } from "../../protocol/memory";
import {
  type EntityRow,
  memoryId,
  type Op,
  type OpResult as Result,
  textBytes,
  type WriteContext,
} from "./rows/memory-rows";

/** Names (the name and its aliases) one entity keeps, merges included. */
export const MAX_ENTITY_NAMES = 64;

export function upsertEntity(w: WriteContext, op: Op<"upsert_entity">): Result {
  const names = distinctNames([op.name, ...(op.aliases ?? [])]);
  const owners = w.sql
    .exec<EntityRow>(
      `SELECT e.* FROM entities e WHERE e.id IN (
         SELECT entity_id FROM entity_names WHERE name IN (SELECT value FROM json_each(?)))
       ORDER BY e.rid`,
      JSON.stringify(names.map((n) => n.toLowerCase())),
    )
    .toArray();
  if (owners.length === 0) {
    w.makeRoom(1);
    const id = memoryId("me");
    const [name, ...aliases] = names as [string, ...string[]];
    const properties = JSON.stringify(op.properties ?? {});
    w.sql.exec(
      `INSERT INTO entities (id, name, type, aliases, names, description, properties, salience,
         channel, created_at, updated_at, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      name,
      op.type ?? null,
      JSON.stringify(aliases),
      names.join(" "),
      op.description ?? null,
      properties,
      op.salience ?? 0.5,
      op.channel ?? GLOBAL_CHANNEL,
      w.now,
      w.now,
      entityBytes(op.type ?? null, op.description ?? null, properties, names),
    );
    for (const n of names) {
      w.sql.exec("INSERT INTO entity_names (name, entity_id) VALUES (?, ?)", n.toLowerCase(), id);
    }
    return { op: op.op, status: "added", id };
  }
  // One entity per name: every entity holding one of these names becomes the oldest.
  const [keep, ...merged] = owners as [EntityRow, ...EntityRow[]];
  const all = distinctNames([
    keep.name,
    ...(JSON.parse(keep.aliases) as string[]),
    ...merged.flatMap((e) => [e.name, ...(JSON.parse(e.aliases) as string[])]),
    ...names,
  ]);
  if (all.length > MAX_ENTITY_NAMES) {
    return {
      op: op.op,
      status: "refused",
      id: keep.id,
      reason: `an entity keeps at most ${MAX_ENTITY_NAMES} names`,
    };
  }
  const aliases = all.slice(1);
  const salience = Math.max(op.salience ?? 0, keep.salience, ...merged.map((e) => e.salience));
  const salienceNow = op.salience ?? salience;
  const type = op.type ?? keep.type ?? merged.find((e) => e.type)?.type ?? null;
  const accessCount = keep.access_count + merged.reduce((n, e) => n + e.access_count, 0);
  // A description given now is the newest; merging entities keeps the longest of theirs.
  const description =
    op.description ??
    [keep, ...merged]
      .map((e) => e.description)
      .reduce<string | null>((a, b) => ((b?.length ?? 0) > (a?.length ?? 0) ? b : a), null);
  // Properties merge key by key: the oldest entity's first, each later one's over them.
  // No prototype: a "__proto__" key is a property like any other.
  const merging: JsonObject = Object.create(null);
  for (const e of [keep, ...merged]) Object.assign(merging, JSON.parse(e.properties));
  Object.assign(merging, op.properties ?? {});
  const properties = JSON.stringify(merging);
  if (textBytes(properties) > MEMORY_INPUT.jsonBytes) {
    return {
      op: op.op,
      status: "refused",
      id: keep.id,
      reason: `the entity's properties would pass ${MEMORY_INPUT.jsonBytes} bytes as JSON`,
    };
  }
  const changed =
    merged.length > 0 ||
    all.length !== 1 + (JSON.parse(keep.aliases) as string[]).length ||
    salienceNow !== keep.salience ||
    type !== keep.type ||
    description !== keep.description ||
    properties !== keep.properties;
  if (!changed) return { op: op.op, status: "unchanged", id: keep.id };
  const bytes = entityBytes(type, description, properties, all);
  if (bytes > w.limits.maxItemBytes) {
    return {
      op: op.op,
      status: "refused",
      id: keep.id,
      reason: "the entity would pass memory.limits.maxItemBytes",
    };
  }
  for (const other of merged) {
    w.sql.exec(
      `INSERT OR IGNORE INTO fact_entities (fact_id, entity_id)
       SELECT fact_id, ? FROM fact_entities WHERE entity_id = ?`,
      keep.id,
      other.id,
    );
    w.sql.exec("DELETE FROM fact_entities WHERE entity_id = ?", other.id);
    w.sql.exec("UPDATE entity_names SET entity_id = ? WHERE entity_id = ?", keep.id, other.id);
    w.sql.exec("DELETE FROM entities WHERE id = ?", other.id);
  }
  for (const n of all) {
    w.sql.exec(
      "INSERT INTO entity_names (name, entity_id) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
      n.toLowerCase(),
      keep.id,
    );
  }
  w.sql.exec(
    `UPDATE entities SET aliases = ?, names = ?, salience = ?, type = ?, description = ?,
       properties = ?, access_count = ?, updated_at = ?, bytes = ? WHERE id = ?`,
    JSON.stringify(aliases),
    all.join(" "),
    salienceNow,
    type,
    description,
    properties,
    accessCount,
    w.now,
    bytes,
    keep.id,
  );
  return { op: op.op, status: "updated", id: keep.id };
}

/** An entity's size as the item limit counts it (empty properties count nothing). */
function entityBytes(
  type: string | null,
  description: string | null,
  properties: string,
  names: readonly string[],
): number {
  return textBytes(
    type ?? undefined,
    description ?? undefined,
    properties === "{}" ? undefined : properties,
    ...names,
  );
}

/** Deletes an entity, its names and its links to facts. */
export function deleteEntity(sql: SqlStorage, id: string): boolean {
  const gone = sql.exec("DELETE FROM entities WHERE id = ?", id).rowsWritten > 0;
  sql.exec("DELETE FROM entity_names WHERE entity_id = ?", id);
  sql.exec("DELETE FROM fact_entities WHERE entity_id = ?", id);
  return gone;
}

/** Names without case-insensitive repeats, first spelling kept, in order. */
function distinctNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of names) {
    const name = raw.trim();
    const key = name.toLowerCase();
    if (name === "" || seen.has(key)) continue;
    seen.add(key);
    out.push(name);
  }
  return out;
}
