import type { MemoryClient } from "../client/index";
import type { JsonObject, JsonValue } from "../protocol/json";
import type { MemoryItem, MemoryKind } from "../protocol/memory";
import { agentOf } from "./agent";
import { flag, intOption, onlyOptions, option, UsageError } from "./args";
import { type Context, GLOBAL, need, print, printJson } from "./common";
import { EXIT } from "./events";
import { proc } from "./node";
import { table } from "./output";

const KINDS = ["fact", "entity", "goal", "strategy", "turn"] as const;
/** Options of every memory command: the operator's key and the scope it names. */
const OPERATOR = ["operator-key", "scope"];

/**
 * `edgelink memory list|search|add|correct|entity|delete|erase URL ...`: the caller's own memory
 * on an agent that serves it, or, with `--operator-key` (or EDGELINK_MEMORY_OPERATOR_KEY)
 * and `--scope`, any user's.
 */
export async function memory(ctx: Context): Promise<number> {
  const sub = ctx.args.positional[0];
  const rest = { ...ctx, args: { ...ctx.args, positional: ctx.args.positional.slice(1) } };
  const run = COMMANDS[sub ?? ""];
  if (!run) {
    throw new UsageError("memory needs list, search, add, correct, entity, delete or erase");
  }
  return run(rest);
}

async function memoryOf(ctx: Context): Promise<MemoryClient> {
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  const key = option(ctx.args, "operator-key") ?? proc.env.EDGELINK_MEMORY_OPERATOR_KEY;
  const scope = option(ctx.args, "scope");
  if (scope !== undefined && !key) {
    throw new UsageError(
      "--scope needs the operator's key (--operator-key or EDGELINK_MEMORY_OPERATOR_KEY)",
    );
  }
  if (key && scope === undefined && option(ctx.args, "operator-key") !== undefined) {
    throw new UsageError("--operator-key needs --scope (whose memory)");
  }
  return key && scope !== undefined ? agent.memory.asOperator(key, scope) : agent.memory;
}

function kindOf(ctx: Context): MemoryKind {
  const kind = option(ctx.args, "kind") ?? "fact";
  if (!(KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(`--kind must be one of ${KINDS.join(", ")}, got "${kind}"`);
  }
  return kind as MemoryKind;
}

/** One line of an item: its id and what it says. */
function row(item: MemoryItem): string[] {
  switch (item.kind) {
    case "fact":
      return [item.id, item.claim, item.supersededBy ? "(superseded)" : ""];
    case "entity":
      return [
        item.id,
        item.name + (item.type ? ` [${item.type}]` : ""),
        [
          item.aliases.join(", "),
          item.description ?? "",
          Object.keys(item.properties).length ? JSON.stringify(item.properties) : "",
        ]
          .filter(Boolean)
          .join(" · "),
      ];
    case "goal":
      return [item.id, item.title, `${item.status}, priority ${item.priority}`];
    case "strategy":
      return [
        item.id,
        item.toolSequence.join(" → "),
        `${item.successCount} ok, ${item.failureCount} failed`,
      ];
    default:
      return [item.id, `${item.timestamp.slice(0, 10)} ${item.role}`, item.content];
  }
}

async function list(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [
    ...GLOBAL,
    ...OPERATOR,
    "kind",
    "query",
    "page-size",
    "page-token",
    "superseded",
  ]);
  const memory = await memoryOf(ctx);
  const query = option(ctx.args, "query");
  const pageSize = intOption(ctx.args, "page-size");
  const pageToken = option(ctx.args, "page-token");
  const page = await memory.list({
    kind: kindOf(ctx),
    ...(query ? { query } : {}),
    ...(pageSize !== undefined ? { pageSize } : {}),
    ...(pageToken ? { pageToken } : {}),
    ...(flag(ctx.args, "superseded") ? { includeSuperseded: true } : {}),
  });
  if (ctx.json) printJson(page);
  else if (page.items.length === 0) print(ctx.style.dim("nothing remembered"));
  else print(table(page.items.map(row)));
  if (page.nextPageToken && !ctx.json)
    proc.stderr.write(ctx.errStyle.dim(`more: --page-token ${page.nextPageToken}\n`));
  return EXIT.ok;
}

async function search(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, ...OPERATOR, "budget"]);
  const memory = await memoryOf(ctx);
  const budget = intOption(ctx.args, "budget");
  const bundle = await memory.search(
    need(ctx.args, 1, "text"),
    budget ? { tokenBudget: budget } : {},
  );
  if (ctx.json) printJson(bundle);
  else {
    const rows = [
      ...bundle.facts.map((f) => [f.id, f.claim, f.score.toFixed(2)]),
      ...bundle.goals.map((g) => [g.id, g.title, "goal"]),
      ...bundle.turns.map((t) => [t.id, t.content, `${t.role}, ${t.timestamp.slice(0, 10)}`]),
    ];
    print(rows.length ? table(rows) : ctx.style.dim("nothing recalled"));
  }
  return EXIT.ok;
}

async function add(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, ...OPERATOR]);
  const memory = await memoryOf(ctx);
  const result = await memory.add({ claim: need(ctx.args, 1, "claim") });
  if (ctx.json) printJson(result);
  else print(result.results.map((r) => `${r.status} ${r.id ?? ""}`.trim()).join("\n"));
  return EXIT.ok;
}

async function correct(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, ...OPERATOR]);
  const memory = await memoryOf(ctx);
  const result = await memory.correct(need(ctx.args, 1, "fact id"), {
    claim: need(ctx.args, 2, "claim"),
  });
  if (ctx.json) printJson(result);
  else print(result.results.map((r) => `${r.status} ${r.id ?? ""}`.trim()).join("\n"));
  return EXIT.ok;
}

/** `--property key=value` (repeatable): a value that reads as JSON is kept as that JSON. */
function propertiesOf(ctx: Context): JsonObject | undefined {
  const given = ctx.args.options.get("property") ?? [];
  if (given.length === 0) return undefined;
  const out: JsonObject = Object.create(null);
  for (const pair of given) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--property must be key=value, got "${pair}"`);
    const raw = pair.slice(eq + 1);
    let value: JsonValue = raw;
    try {
      value = JSON.parse(raw) as JsonValue;
    } catch {
      // Not JSON: kept as the text it is.
    }
    out[pair.slice(0, eq)] = value;
  }
  return out;
}

async function entity(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, ...OPERATOR, "type", "description", "alias", "property"]);
  const memory = await memoryOf(ctx);
  const type = option(ctx.args, "type");
  const description = option(ctx.args, "description");
  const aliases = ctx.args.options.get("alias");
  const properties = propertiesOf(ctx);
  const result = await memory.upsertEntity({
    name: need(ctx.args, 1, "entity name"),
    ...(type ? { type } : {}),
    ...(description ? { description } : {}),
    ...(aliases?.length ? { aliases } : {}),
    ...(properties ? { properties } : {}),
  });
  if (ctx.json) printJson(result);
  else print(result.results.map((r) => `${r.status} ${r.id ?? r.reason ?? ""}`.trim()).join("\n"));
  return EXIT.ok;
}

async function remove(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, ...OPERATOR, "kind"]);
  const memory = await memoryOf(ctx);
  await memory.delete(kindOf(ctx), need(ctx.args, 1, "item id"));
  if (ctx.json) printJson({ deleted: true });
  else print("deleted");
  return EXIT.ok;
}

async function erase(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, ...OPERATOR, "yes"]);
  // Erasure cannot be undone: it is asked for explicitly.
  if (!flag(ctx.args, "yes"))
    throw new UsageError("memory erase deletes everything remembered; add --yes");
  const memory = await memoryOf(ctx);
  const erased = await memory.erase();
  if (ctx.json) printJson({ erased });
  else print(`erased ${erased} item${erased === 1 ? "" : "s"}`);
  return EXIT.ok;
}

const COMMANDS: Record<string, (ctx: Context) => Promise<number>> = {
  list,
  search,
  add,
  correct,
  entity,
  delete: remove,
  erase,
};
