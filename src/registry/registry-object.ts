import { DurableObject } from "cloudflare:workers";
import {
  cardFacts,
  checkRegistration,
  type DiscoverPage,
  type DiscoverQuery,
  encodeRegistryToken,
  REGISTRY_LIMITS,
  type RegistryEntry,
  type RegistryLimits,
  registryEntryId,
} from "../protocol/card/registry";
import { A2AError } from "../protocol/errors";
import type { JsonObject } from "../protocol/json";
import { attempt, type Result } from "../storage/rpc-result";
import { REGISTRY_SCHEMA } from "../storage/schema";
import { createSchema, openSchema } from "../storage/schema-version";

/** Expired rows one statement deletes; the alarm comes back at once for the rest. */
export const REGISTRY_PRUNE_BATCH = 500;

interface AgentRow extends Record<string, SqlStorageValue> {
  id: string;
  owner: string;
  name: string;
  url: string;
  role: string;
  tags: string;
  card: string;
  registered_at: number;
  expires_at: number;
  ttl_ms: number;
}

/** The columns an `AgentRow` reads. */
const COLUMNS = "id, owner, name, url, role, tags, card, registered_at, expires_at, ttl_ms";

const iso = (ms: number) => new Date(ms).toISOString();

function toEntry(row: AgentRow): RegistryEntry {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    role: row.role as RegistryEntry["role"],
    tags: JSON.parse(row.tags) as string[],
    card: JSON.parse(row.card) as JsonObject,
    registeredAt: iso(row.registered_at),
    expiresAt: iso(row.expires_at),
    ttlSeconds: row.ttl_ms / 1000,
  };
}

const notFound = (id: string) =>
  new A2AError("AgentNotFound", `No live agent ${id} in this registry`, { id });

/**
 * One tenant's agent registry: agents register their card for a time-to-live, keep
 * it alive with heartbeats, and are found by name, role and tags. An entry that misses
 * its heartbeat is never listed again and its row goes with the next alarm. Only the
 * principal that registered a URL may renew, replace or remove its entry.
 */
export class RegistryObject<Env = unknown> extends DurableObject<Env> {
  /** The limits `defineRegistry` configured (its subclass answers them). */
  protected get limits(): RegistryLimits {
    return REGISTRY_LIMITS;
  }

  /** The clock entries expire by (a test's subclass moves it). */
  protected now(): number {
    return Date.now();
  }

  /** True until the first registration: a read creates no schema. */
  private empty: boolean;
  /** Why this registry's storage cannot be used (made by a development build or a later release), if so. */
  private readonly refused: A2AError | null;
  /**
   * True until the first registration. Every entry point asks this before touching
   * storage, so a refused storage answers its refusal there, read and written by no call.
   */
  private get vacant(): boolean {
    if (this.refused) throw this.refused;
    return this.empty;
  }
  /** The alarm as far as this object knows; undefined until read from storage. */
  private alarmAt: number | null | undefined = undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const opened = openSchema(ctx.storage, REGISTRY_SCHEMA);
    this.empty = opened.vacant;
    this.refused = opened.refused;
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /**
   * Registers `card` for `ttlSeconds` (the default when left out). Registering a URL this
   * owner already holds replaces its card and renews it; a URL another owner holds live is
   * refused, unless this registration proved it holds the card's signing key
   * (`keyProven`): the agent's own key outranks whoever registered it first. `created`
   * says whether the entry is new (to this owner).
   */
  register(
    owner: string,
    card: JsonObject,
    ttlSeconds?: number,
    keyProven = false,
  ): Promise<Result<{ entry: RegistryEntry; created: boolean }>> {
    return attempt("registry", async () => {
      const limits = this.limits;
      const { json, ttl } = checkRegistration(card, ttlSeconds, limits);
      const facts = cardFacts(card, limits);
      const id = await registryEntryId(facts.url);
      // From here on nothing is awaited until the row is written: one atomic step.
      if (this.vacant) {
        createSchema(this.ctx.storage, REGISTRY_SCHEMA);
        this.empty = false;
      }
      const now = this.now();
      const held = this.sql
        .exec<{ owner: string; registered_at: number; expires_at: number }>(
          "SELECT owner, registered_at, expires_at FROM agents WHERE id = ?",
          id,
        )
        .toArray()[0];
      const alive = held !== undefined && held.expires_at > now;
      if (alive && held.owner !== owner && !keyProven) {
        throw new A2AError(
          "PermissionDenied",
          `The agent at ${facts.url} is registered by another principal: only it may renew, replace or remove the entry (the agent's operator takes it back with a registration proof signed by its card key)`,
          { id, url: facts.url },
        );
      }
      // A proven takeover is a new entry for its new owner (in the place of the old one).
      const live = alive && held.owner === owner;
      if (!alive) {
        this.prune(now);
        const count = this.sql
          .exec<{ n: number }>("SELECT COUNT(*) AS n FROM agents WHERE expires_at > ?", now)
          .one().n;
        if (count >= limits.maxAgents) {
          throw new A2AError(
            "RegistryFull",
            `The registry holds ${limits.maxAgents} live agents, its limit (limits.maxAgents): try again when one expires or is removed`,
            { limit: String(limits.maxAgents) },
          );
        }
      }
      const row: AgentRow = {
        id,
        owner,
        name: facts.name,
        url: facts.url,
        role: facts.role,
        tags: JSON.stringify(facts.tags),
        card: json,
        registered_at: live ? held.registered_at : now,
        expires_at: now + ttl * 1000,
        ttl_ms: ttl * 1000,
      };
      this.sql.exec(
        `INSERT INTO agents (id, owner, name, name_key, url, role, tags, card, registered_at, expires_at, ttl_ms)
         VALUES (?1, ?2, ?3, lower(?3), ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, name = excluded.name,
           name_key = excluded.name_key, url = excluded.url, role = excluded.role,
           tags = excluded.tags, card = excluded.card, registered_at = excluded.registered_at,
           expires_at = excluded.expires_at, ttl_ms = excluded.ttl_ms`,
        row.id,
        row.owner,
        row.name,
        row.url,
        row.role,
        row.tags,
        row.card,
        row.registered_at,
        row.expires_at,
        row.ttl_ms,
      );
      await this.wakeBy(row.expires_at);
      return { entry: toEntry(row), created: !live };
    });
  }

  /** Renews a live entry of `owner` for its time-to-live again. */
  heartbeat(owner: string, id: string): Promise<Result<RegistryEntry>> {
    return attempt("registry", () => {
      if (this.vacant) throw notFound(id);
      const now = this.now();
      const row = this.sql
        .exec<AgentRow>(
          `UPDATE agents SET expires_at = ?1 + ttl_ms WHERE id = ?2 AND owner = ?3 AND expires_at > ?1
           RETURNING ${COLUMNS}`,
          now,
          id,
          owner,
        )
        .toArray()[0];
      if (!row) throw notFound(id);
      return toEntry(row);
    });
  }

  /** Removes a live entry of `owner`. */
  unregister(owner: string, id: string): Promise<Result<null>> {
    return attempt("registry", () => {
      if (this.vacant) throw notFound(id);
      const removed = this.sql.exec(
        "DELETE FROM agents WHERE id = ? AND owner = ? AND expires_at > ?",
        id,
        owner,
        this.now(),
      ).rowsWritten;
      if (removed === 0) throw notFound(id);
      return null;
    });
  }

  /** One live entry, whoever registered it. */
  get(id: string): Promise<Result<RegistryEntry>> {
    return attempt("registry", () => {
      if (this.vacant) throw notFound(id);
      const row = this.sql
        .exec<AgentRow>(
          `SELECT ${COLUMNS}
           FROM agents WHERE id = ? AND expires_at > ?`,
          id,
          this.now(),
        )
        .toArray()[0];
      if (!row) throw notFound(id);
      return toEntry(row);
    });
  }

  /** A page of live entries matching every filter of `q`, by name then id. */
  discover(q: DiscoverQuery): Promise<Result<DiscoverPage>> {
    return attempt("registry", () => {
      if (this.vacant) return { agents: [], nextPageToken: "" };
      const rows = this.sql
        .exec<AgentRow>(
          `SELECT ${COLUMNS}
           FROM agents
           WHERE expires_at > ?1 AND (?2 IS NULL OR name_key = ?2) AND (?3 IS NULL OR role = ?3)
             AND (name_key, id) > (?4, ?5)
             AND (SELECT COUNT(*) FROM json_each(agents.tags) WHERE value IN (SELECT value FROM json_each(?6))) = ?7
           ORDER BY name_key, id LIMIT ?8`,
          this.now(),
          q.name ?? null,
          q.role ?? null,
          q.after?.name ?? "",
          q.after?.id ?? "",
          JSON.stringify(q.tags),
          q.tags.length,
          q.pageSize + 1,
        )
        .toArray();
      const more = rows.length > q.pageSize;
      const page = more ? rows.slice(0, q.pageSize) : rows;
      const last = page.at(-1);
      return {
        agents: page.map(toEntry),
        nextPageToken:
          more && last ? encodeRegistryToken({ name: last.name.toLowerCase(), id: last.id }) : "",
      };
    });
  }

  /** Deletes expired rows; the next alarm is set for the earliest expiry left. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    if (this.empty || this.refused) return;
    const now = this.now();
    const full = this.prune(now) === REGISTRY_PRUNE_BATCH;
    const next = full
      ? now
      : this.sql.exec<{ at: number | null }>("SELECT MIN(expires_at) AS at FROM agents").one().at;
    if (next !== null) await this.wakeBy(next);
  }

  /** Deletes up to a batch of expired rows; answers how many went. */
  private prune(now: number): number {
    // Counted by the rows returned: `rowsWritten` counts index entries too.
    return this.sql
      .exec(
        `DELETE FROM agents WHERE id IN
           (SELECT id FROM agents WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)
         RETURNING 1`,
        now,
        REGISTRY_PRUNE_BATCH,
      )
      .toArray().length;
  }

  /** Makes sure the alarm fires by `at` (it is only ever moved earlier here). */
  private async wakeBy(at: number): Promise<void> {
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }
}
