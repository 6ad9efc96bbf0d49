/**
 * The worker bench/loop.mjs measures: the benchmark's echo agent (echo-worker.ts), plus
 * `POST /bench/loop {contextId, count}`, which sends `count` blocking SendMessage
 * requests to that conversation one after another from inside the isolate (no HTTP, no
 * load generator) and checks every answer. Requests carry Content-Length, as every HTTP
 * request does.
 */
import echo from "./echo-worker";

export { EdgelinkContext, EdgelinkIndex } from "./echo-worker";

interface LoopBody {
  contextId: string;
  count: number;
}

async function loop(body: LoopBody, env: unknown, ctx: ExecutionContext): Promise<number> {
  let completed = 0;
  for (let i = 0; i < body.count; i++) {
    const text = `loop ${i}`;
    const json = `{"jsonrpc":"2.0","id":${i},"method":"SendMessage","params":{"message":{"messageId":"${crypto.randomUUID()}","role":"ROLE_USER","contextId":"${body.contextId}","parts":[{"text":"${text}"}]}}}`;
    const request = new Request("http://127.0.0.1/", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Content-Length": String(json.length),
        "A2A-Version": "1.0",
      },
      body: json,
    });
    const answer = await (await echo.fetch(request, env as object, ctx)).text();
    if (answer.includes("TASK_STATE_COMPLETED") && answer.includes(`"echo: ${text}"`)) completed++;
  }
  return completed;
}

export default {
  async fetch(request: Request, env: unknown, ctx: ExecutionContext): Promise<Response> {
    if (new URL(request.url).pathname !== "/bench/loop")
      return echo.fetch(request, env as object, ctx);
    const completed = await loop((await request.json()) as LoopBody, env, ctx);
    return Response.json({ completed });
  },
};
