import { SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { RegistryEntry } from "../../src/protocol/card/registry";
import { registryRoutes } from "../../src/registry/registry-routes";
import { checkRoute } from "../../src/worker/route-table";
import { resetRegistry, serveCard } from "../harness/registry/helpers";
import { TEST_LIMITS } from "../harness/registry/worker";

/**
 * The registry's route table, walked with the same hostile requests as the agent's
 * (test/worker/route-table.test.ts), chosen by what each route declares: no or a wrong
 * key, a wrong media type, an oversize registration, another owner's entry, another
 * tenant's caller. Each gets its 4xx, and the entry reads the same afterwards.
 */

const ORIGIN = "https://registry.example.com";
const KEYS = { alice: "key-alice", bob: "key-bob", carol: "key-carol" } as const;
const TABLE = registryRoutes({}, { ...TEST_LIMITS } as never);

function call(headers: Record<string, string>, method: string, path: string, body?: string) {
  return SELF.fetch(`${ORIGIN}${path}`, { method, headers, body });
}
const as = (who: keyof typeof KEYS, extra: Record<string, string> = {}) => ({
  "X-API-Key": KEYS[who],
  "Content-Type": "application/json",
  ...extra,
});

beforeEach(resetRegistry);

describe("the registry's route table", () => {
  it("A9: every registry route answers the hostile set with its 4xx and changes nothing", async () => {
    for (const entry of TABLE) expect(() => checkRoute(entry as never)).not.toThrow();
    const card = await serveCard({
      name: "Walked",
      description: "Walked agent",
      url: "https://walked.example/",
    });
    const registered = await call(as("alice"), "POST", "/agents", JSON.stringify({ card }));
    expect(registered.status).toBe(201);
    const entry = (await registered.json()) as RegistryEntry;
    const state = async () =>
      JSON.stringify(await (await call(as("alice"), "GET", `/agents/${entry.id}`)).json());
    const before = await state();

    for (const route of TABLE) {
      const g = route.guards;
      const method = route.methods[0] as string;
      const path = (route.paths[0] as string).replace(":id", entry.id);
      const body = g.body === "none" ? undefined : JSON.stringify({ card });
      expect(g.auth, route.id).toBe("caller");
      for (const headers of <Record<string, string>[]>[
        { "Content-Type": "application/json" },
        { "X-API-Key": "key-mallory", "Content-Type": "application/json" },
      ]) {
        const refused = await call(headers, method, path, body);
        expect(refused.status, `${route.id} credentials`).toBe(401);
      }
      if (g.body !== "none") {
        for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
          const refused = await call(as("alice", { "Content-Type": type }), method, path, body);
          expect(refused.status, `${route.id} ${type}`).toBe(415);
        }
        const huge = JSON.stringify({
          card: { ...card, description: "x".repeat(TEST_LIMITS.maxCardChars * 4) },
        });
        const oversize = await call(as("alice"), method, path, huge);
        expect(oversize.status, `${route.id} oversize`).toBe(413);
      }
      if (path.includes(entry.id)) {
        // Another tenant's caller never sees it; another owner may read it (discovery is
        // the tenant's) but never renews or removes it.
        const other = await call(as("carol"), method, path, body);
        expect(other.status, `${route.id} another tenant`).toBe(404);
        if (g.scoping === "owner") {
          const bob = await call(as("bob"), method, path, body);
          expect(bob.status, `${route.id} another owner`).toBe(404);
        }
      }
    }
    expect(await state()).toBe(before);
  });
});
