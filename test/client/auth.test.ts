/**
 * The client's credentials against an Edgelink agent that requires them (bearer JWTs and
 * API keys): the API key goes where the card's scheme says, a refreshing token function
 * recovers from an expired token, and a caller without credentials gets a typed 401.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { answerOf, connect, UnauthenticatedError } from "../../src/client/index";
import { BASE } from "../support/helpers";
import { API_KEYS, authedAgent, signingKey, token } from "../worker/auth-support";

async function guarded() {
  const key = await signingKey();
  const worker = authedAgent(key);
  const seen: Request[] = [];
  const viaWorker: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    seen.push(request.clone());
    const ctx = createExecutionContext();
    const response = await worker.fetch(request, { ...env, AGENT_API_KEYS: API_KEYS }, ctx);
    void waitOnExecutionContext(ctx);
    return response;
  };
  return { key, fetch: viaWorker, seen };
}

describe.each(["JSONRPC", "HTTP+JSON"] as const)(
  "client auth against Edgelink over %s",
  (binding) => {
    it("an API key is sent in the header the card names", async () => {
      const agent = await guarded();
      const client = await connect(BASE, {
        fetch: agent.fetch,
        binding,
        auth: { apiKey: "alice-key-0123456789" },
      });
      const result = await client.send("with a key");
      expect(answerOf(result)).toBe("You said: with a key");
      expect(agent.seen.at(-1)?.headers.get("X-API-Key")).toBe("alice-key-0123456789");
    });

    it("no credentials: UnauthenticatedError (401)", async () => {
      const agent = await guarded();
      const client = await connect(BASE, { fetch: agent.fetch, binding });
      const error = await client.send("no key").catch((e) => e);
      expect(error).toBeInstanceOf(UnauthenticatedError);
      expect(error.httpStatus).toBe(401);
    });

    it("an expired bearer token is refreshed once through the token function", async () => {
      const agent = await guarded();
      const expired = await token(agent.key, { exp: Math.floor(Date.now() / 1000) - 3600 });
      const fresh = await token(agent.key);
      const asked: boolean[] = [];
      const client = await connect(BASE, {
        fetch: agent.fetch,
        binding,
        auth: {
          bearer: ({ refresh }) => {
            asked.push(refresh);
            return refresh ? fresh : expired;
          },
        },
      });
      const result = await client.send("with a token");
      expect(answerOf(result)).toBe("You said: with a token");
      // The card fetch, the refused call, the retried call.
      expect(asked).toEqual([false, false, true]);
      expect(agent.seen.at(-1)?.headers.get("Authorization")).toBe(`Bearer ${fresh}`);
    });
  },
);
