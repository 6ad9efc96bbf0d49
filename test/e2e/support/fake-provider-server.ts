/**
 * A fake LLM provider on a real socket, for e2e tests of a running worker: each POST is
 * answered with the next scripted recorded body from test/fixtures/providers, with its
 * recorded status, written in random small chunks with pauses so the stream really
 * crosses the network piece by piece. Requests are kept for assertions.
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";

const ROOT = new URL("../../fixtures/providers/", import.meta.url);

export interface SeenRequest {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

export interface FakeProviderServer {
  /** e.g. `http://127.0.0.1:40123` */
  origin: string;
  requests: SeenRequest[];
  /**
   * Queues fixture paths (e.g. `openai-chat/text-with-usage.sse`) for the next calls.
   * Throws at once, naming it, when a fixture does not exist.
   */
  reply(...fixtures: string[]): void;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProviderServer> {
  const queue: string[] = [];
  const requests: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", async () => {
      requests.push({ url: req.url ?? "", headers: req.headers, body: raw ? JSON.parse(raw) : {} });
      const fixture = queue.shift();
      if (!fixture) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "fake provider: nothing scripted" } }));
        return;
      }
      let bytes: Uint8Array;
      let meta: { status: number };
      try {
        bytes = readFileSync(new URL(fixture, ROOT));
        meta = metaOf(fixture);
      } catch (error) {
        // Answer rather than leave the worker's request hanging to its time-out.
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `fake provider: ${String(error)}` } }));
        return;
      }
      res.writeHead(meta.status, {
        "content-type": fixture.endsWith(".sse")
          ? "text/event-stream; charset=utf-8"
          : "application/json",
        "x-request-id": `req_fake_${requests.length}`,
      });
      let at = 0;
      while (at < bytes.length) {
        const size = 1 + Math.floor(Math.random() * 48);
        res.write(bytes.subarray(at, at + size));
        at += size;
        await new Promise((r) => setTimeout(r, 1));
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return {
    origin: `http://127.0.0.1:${address.port}`,
    requests,
    reply: (...fixtures) => {
      // Checked here, in the test, so a bad name fails it at once instead of leaving the
      // worker waiting on a handler that cannot answer.
      for (const fixture of fixtures) {
        if (!existsSync(new URL(fixture, ROOT))) {
          throw new Error(`fake provider: no fixture "${fixture}" in test/fixtures/providers`);
        }
      }
      queue.push(...fixtures);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function metaOf(fixture: string): { status: number } {
  const path = new URL(fixture.replace(/\.(sse|json)$/, ".response-meta.json"), ROOT);
  if (!existsSync(path)) return { status: 200 };
  const meta = JSON.parse(readFileSync(path, "utf8")) as { status: { code: number } };
  return { status: meta.status.code };
}
