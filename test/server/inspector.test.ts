import { env } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import demo from "../../examples/demo-agent";
import { resolveAgent } from "../../src/agent/definition";
import { inspectorEnabled } from "../../src/server/inspector";

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
