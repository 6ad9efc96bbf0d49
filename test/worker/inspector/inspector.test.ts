import { createExecutionContext, env } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import demo from "../../../examples/demo-agent";
import { resolveAgent } from "../../../src/agent/definition";
import { DECISION_KIND, REQUEST_KIND } from "../../../src/protocol/approval";
import { LIMITS } from "../../../src/protocol/limits";
import { inspectorEnabled } from "../../../src/worker/inspector/inspector";
import { ALICE, authedAgent, call, signingKey } from "../auth-support";

const get = (url: string, vars: Record<string, string> = {}) =>
  demo.app.request(url, {}, { ...env, ...vars });

describe("the inspector page (issue 13)", () => {
  it("is served under wrangler dev (localhost), with its script and a strict CSP", async () => {
    const page = await get("http://localhost:8787/inspector");
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toContain("text/html");
    expect(page.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<script src="inspector/app.js"></script>');
    expect(html).not.toMatch(/https?:\/\//); // nothing fetched from elsewhere
    const script = await get("http://127.0.0.1:8787/inspector/app.js");
    expect(script.headers.get("Content-Type")).toContain("text/javascript");
    expect(await script.text()).toContain("/message:stream");
  });

  it("is off when deployed unless EDGELINK_INSPECTOR says so; the option wins over both", async () => {
    const off = await get("https://agent.example.com/inspector");
    expect(off.status).toBe(404);
    expect(JSON.stringify(await off.json())).toContain("EDGELINK_INSPECTOR");
    expect(
      (await get("https://agent.example.com/inspector", { EDGELINK_INSPECTOR: "true" })).status,
    ).toBe(200);
    expect((await get("http://localhost/inspector", { EDGELINK_INSPECTOR: "false" })).status).toBe(
      404,
    );

    const card = { name: "x", description: "" };
    const forced = resolveAgent({ card, inspector: true });
    expect(inspectorEnabled(forced, { EDGELINK_INSPECTOR: "false" }, "https://a.example")).toBe(
      true,
    );
    const never = resolveAgent({ card, inspector: false });
    expect(inspectorEnabled(never, {}, "http://localhost/")).toBe(false);
  });

  it("its steps route refuses a task id that could not have been issued, naming it", async () => {
    for (const id of ["a%0Ab", "t".repeat(LIMITS.taskIdLength + 1)]) {
      const steps = await get(`http://localhost/inspector/tasks/${id}/steps`);
      expect(steps.status).toBe(400);
      expect(JSON.stringify(await steps.json())).toContain('"field":"id"');
    }
  });

  it("mounted under /agent, the page and its script are under /agent", async () => {
    const app = new Hono();
    app.route("/agent", demo.app);
    const page = await app.request("http://localhost/agent/inspector", {}, env);
    expect(page.status).toBe(200);
    // The page loads its script relative to itself: /agent/inspector/app.js.
    expect(new URL("inspector/app.js", "http://localhost/agent/inspector").pathname).toBe(
      "/agent/inspector/app.js",
    );
    expect((await app.request("http://localhost/agent/inspector/app.js", {}, env)).status).toBe(
      200,
    );
  });
});

describe("the inspector page's features and safety (issue 24)", () => {
  it("has the credential field, the cancel button and the parts-as-JSON switch, each labelled", async () => {
    const html = await (await get("http://localhost/inspector")).text();
    expect(html).toMatch(/<label for="credential">Credential<\/label>/);
    expect(html).toMatch(/<input id="credential" type="password" autocomplete="off"/);
    expect(html).toContain('<select id="auth-scheme" aria-label="Credential kind">');
    expect(html).toContain('<button type="button" id="cancel" disabled>Cancel task</button>');
    expect(html).toMatch(/<input type="checkbox" id="as-json"> Parts as JSON<\/label>/);
    // Two- and three-digit list numbers fit in the lists' margin.
    expect(html).toMatch(/ol \{ padding-left: 3em; \}/);
  });

  it("the script writes agent data as text only, keeps the credential in the tab, sends it as a header", async () => {
    const script = await (await get("http://localhost/inspector/app.js")).text();
    for (const sink of [
      "innerHTML",
      "outerHTML",
      "insertAdjacentHTML",
      "document.write",
      "eval(",
    ]) {
      expect(script).not.toContain(sink);
    }
    expect(script).not.toContain("localStorage");
    expect(script).not.toContain("EventSource"); // it cannot send headers: streams use fetch
    expect(script).toContain('sessionStorage.setItem("edgelink-auth"');
    expect(script).toContain(":cancel");
  });

  it("K1: the script reads held calls and answers them with the protocol's own kinds, as text", async () => {
    const script = await (await get("http://localhost/inspector/app.js")).text();
    // The page's held-call panel finds the request and sends decisions in the wire shapes.
    expect(script).toContain(`d.kind === "${REQUEST_KIND}"`);
    expect(script).toContain(`kind: "${DECISION_KIND}"`);
    expect(script).toContain('api("/message:send"');
    // Edited arguments are refused in the page unless they are a JSON object.
    expect(script).toContain("Edited arguments must be a JSON object.");
    // The held-call panel is in the one script function, drawn on every status it sees.
    expect(script.match(/showHeld\(held, task, /g)).toHaveLength(2);
  });

  it("page and script carry the strict CSP: own script only, requests to the agent only", async () => {
    for (const path of ["/inspector", "/inspector/app.js"]) {
      const response = await get(`http://localhost${path}`);
      const csp = response.headers.get("Content-Security-Policy") ?? "";
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("connect-src 'self';");
      expect(csp).not.toContain("unsafe-eval");
      expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(response.headers.get("Referrer-Policy")).toBe("no-referrer");
      expect(response.headers.get("Cache-Control")).toBe("no-store");
    }
  });

  it("A5: behind auth, the page needs no credential; the card names the header the field offers", async () => {
    const worker = authedAgent(await signingKey(), { inspector: true });
    const page = await call(worker, "GET", "/inspector");
    expect(page.status).toBe(200);
    expect((await call(worker, "GET", "/tasks")).status).toBe(401);
    expect((await call(worker, "GET", "/tasks", { headers: ALICE })).status).toBe(200);
    // What the script reads to fill the credential kinds: the v1 card's scheme wrappers.
    const card = (await (await call(worker, "GET", "/.well-known/agent-card.json")).json()) as {
      securitySchemes: Record<string, Record<string, Record<string, unknown>>>;
    };
    expect(card.securitySchemes.apiKey?.apiKeySecurityScheme).toMatchObject({
      location: "header",
      name: "X-API-Key",
    });
    expect(card.securitySchemes.bearer?.httpAuthSecurityScheme).toMatchObject({ scheme: "bearer" });
    const script = await (await call(worker, "GET", "/inspector/app.js")).text();
    expect(script).toContain("apiKeySecurityScheme");
    expect(script).toContain('key.location === "header"');
  });

  it("the inspector option false refuses the page even on localhost", async () => {
    const worker = authedAgent(await signingKey(), { inspector: false });
    const request = new Request("http://localhost/inspector");
    const vars: Record<string, unknown> = { ...env };
    const response = await worker.fetch(request, vars, createExecutionContext());
    expect(response.status).toBe(404);
  });
});
