import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { REMEMBERED_ROUTES, RememberingRouter } from "../../src/worker/router";

/** One app per router, with Edgelink-like routes (an optional tenant, regex params). */
function appWith(router?: RememberingRouter<never>) {
  const app = router ? new Hono({ router: router as never }) : new Hono();
  app.use("*", async (c, next) => {
    await next();
    c.header("X-Seen", c.req.path);
  });
  for (const prefix of ["", "/:tenant"]) {
    app.get(`${prefix}/tasks/:id{[^/]+}`, (c) =>
      c.json({ op: "get", id: c.req.param("id"), tenant: c.req.param("tenant") ?? null }),
    );
    app.post(`${prefix}/tasks/:idVerb{[^/]+:cancel}`, (c) =>
      c.json({ op: "cancel", idVerb: c.req.param("idVerb") }),
    );
  }
  app.post("/", (c) => c.json({ op: "rpc" }));
  return app;
}

async function answer(app: Hono, method: string, path: string) {
  const response = await app.request(path, { method });
  return {
    status: response.status,
    seen: response.headers.get("X-Seen"),
    body: await response.text(),
  };
}

describe("the remembering router (issue 10: a JSON-RPC call walks no route tree)", () => {
  it("answers every request as Hono's default router does, also once its memory is full", async () => {
    const remembering = new RememberingRouter<never>();
    const mine = appWith(remembering);
    const plain = appWith();
    const paths: [string, string][] = [];
    for (let i = 0; i < REMEMBERED_ROUTES + 40; i++) {
      paths.push(["GET", `/tasks/t${i}`], ["GET", `/tenant${i % 3}/tasks/t${i}`]);
      paths.push(["POST", `/tasks/t${i}:cancel`], ["POST", "/"], ["GET", "/"]);
    }
    paths.push(["GET", `/tasks/${"x".repeat(300)}`], ["GET", `/tasks/${"x".repeat(300)}`]);
    // Each path twice, far apart: the second answer may come from memory.
    for (const [method, path] of [...paths, ...paths.reverse()]) {
      expect(await answer(mine, method, path), `${method} ${path}`).toEqual(
        await answer(plain, method, path),
      );
    }
    // Bounded: at most REMEMBERED_ROUTES paths are kept.
    expect((remembering as unknown as { matches: Map<string, unknown> }).matches.size).toBe(
      REMEMBERED_ROUTES,
    );
  });
});
