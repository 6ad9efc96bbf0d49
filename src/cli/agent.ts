import { type A2AClient, type Binding, connect } from "../client/index";
import { flag, option, UsageError } from "./args";
import { type Context, credentials } from "./common";

/** The connection every agent command makes, from the global options. */
export async function agentOf(
  ctx: Context,
  url: string,
  extra: { onRetry?: (n: number) => void } = {},
): Promise<A2AClient> {
  const { headers, auth } = credentials(ctx.args);
  const raw = option(ctx.args, "binding")?.toLowerCase();
  const binding: Binding | undefined =
    raw === undefined
      ? undefined
      : raw === "jsonrpc"
        ? "JSONRPC"
        : raw === "rest" || raw === "http+json"
          ? "HTTP+JSON"
          : (() => {
              throw new UsageError(`--binding must be jsonrpc or rest, got "${raw}"`);
            })();
  const trusted = ctx.args.options.get("trust-origin");
  const jwksUrl = option(ctx.args, "card-jwks");
  // Asked for, the card's signatures must verify before anything is sent to the agent.
  const verifyCard = jwksUrl ? { jwksUrl } : flag(ctx.args, "verify-card") ? true : undefined;
  return connect(url, {
    headers,
    ...(auth ? { auth } : {}),
    ...(trusted ? { trustedOrigins: trusted } : {}),
    ...(binding ? { binding } : {}),
    ...(verifyCard ? { verifyCard } : {}),
    resume: { ...(extra.onRetry ? { onRetry: extra.onRetry } : {}) },
  });
}
