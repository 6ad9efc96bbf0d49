import {
  A2AConnectionError,
  RegistryClient,
  type RegistryEntry,
  registrationProof,
} from "../client/index";
import { messageOf, readText } from "../client/transport";
import { type Args, flag, intOption, onlyOptions, option, UsageError } from "./args";
import { type Context, credentials, GLOBAL, need, print, printJson } from "./common";
import { EXIT } from "./events";
import { proc } from "./node";
import { table } from "./output";

const clientOf = (args: Args, url: string) => {
  const { headers, auth } = credentials(args);
  return new RegistryClient(url, { headers, ...(auth ? { auth } : {}) });
};

/** `edgelink registry list|add|heartbeat|remove`: an agent registry (edgelink/registry). */
export async function registry(ctx: Context): Promise<number> {
  const [sub, ...positional] = ctx.args.positional;
  const rest = { ...ctx, args: { ...ctx.args, positional } };
  if (sub === "list") return list(rest);
  if (sub === "add") return add(rest);
  if (sub === "heartbeat") return heartbeat(rest);
  if (sub === "remove") return remove(rest);
  throw new UsageError("registry needs list, add, heartbeat or remove");
}

async function list(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "name", "role", "tag", "page-size", "page-token"]);
  const client = clientOf(ctx.args, need(ctx.args, 0, "registry URL"));
  const name = option(ctx.args, "name");
  const role = option(ctx.args, "role");
  const pageSize = intOption(ctx.args, "page-size");
  const pageToken = option(ctx.args, "page-token");
  const page = await client.discover({
    ...(name ? { name } : {}),
    ...(role ? { role: role as RegistryEntry["role"] } : {}),
    tags: ctx.args.options.get("tag") ?? [],
    ...(pageSize ? { pageSize } : {}),
    ...(pageToken ? { pageToken } : {}),
  });
  if (ctx.json) {
    printJson(page);
    return EXIT.ok;
  }
  const s = ctx.style;
  if (page.agents.length === 0) print(s.dim("no agents"));
  else {
    print(
      table(
        page.agents.map((a) => [
          s.bold(a.name),
          a.role,
          a.url,
          a.tags.join(","),
          s.dim(`until ${a.expiresAt}`),
          s.dim(a.id),
        ]),
      ),
    );
  }
  if (page.nextPageToken) print(s.dim(`next page: --page-token ${page.nextPageToken}`));
  return EXIT.ok;
}

/** Reads an agent's card: AGENT is its card's URL (…json) or the agent's base URL. */
async function cardOf(agent: string): Promise<object> {
  const url = /\.json($|\?)/.test(agent)
    ? agent
    : `${agent.replace(/\/+$/, "")}/.well-known/agent-card.json`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { Accept: "application/json" } });
  } catch (error) {
    throw new A2AConnectionError(`could not reach ${url}: ${messageOf(error)}`, url, {
      cause: error,
    });
  }
  const text = await readText(response, url);
  // The agent's answer, not the command line, is wrong: an error (exit 1), not usage.
  if (!response.ok) throw new Error(`could not read the card at ${url}: HTTP ${response.status}`);
  try {
    const card: unknown = JSON.parse(text);
    if (card && typeof card === "object" && !Array.isArray(card)) return card;
  } catch {}
  throw new Error(`the card at ${url} is not a JSON object`);
}

/** The environment variable `registry add --prove` reads the card signing keys from. */
const KEYS_VARIABLE = "EDGELINK_CARD_SIGNING_KEYS";

/** The proof a signed card is registered with: given (`--proof`) or made (`--prove`). */
async function proofFor(
  args: Args,
  registryUrl: string,
  card: object,
): Promise<string | undefined> {
  const given = option(args, "proof");
  if (!flag(args, "prove")) {
    if (option(args, "subject") || option(args, "tenant")) {
      throw new UsageError("--subject and --tenant go with --prove");
    }
    return given;
  }
  if (given) throw new UsageError("give --proof or --prove, not both");
  const subject = option(args, "subject");
  if (!subject) throw new UsageError("--prove needs --subject (your principal in the registry)");
  const keys = proc.env[KEYS_VARIABLE];
  if (!keys) throw new UsageError(`--prove reads the card signing keys from ${KEYS_VARIABLE}`);
  const interfaces = (card as { supportedInterfaces?: { url?: unknown }[] }).supportedInterfaces;
  const url = interfaces?.[0]?.url ?? (card as { url?: unknown }).url;
  if (typeof url !== "string") throw new Error("the agent's card names no URL to prove");
  const tenant = option(args, "tenant");
  return registrationProof(keys, {
    registry: registryUrl,
    subject,
    url,
    ...(tenant ? { tenant } : {}),
  });
}

async function add(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "ttl", "prove", "proof", "subject", "tenant"]);
  const registryUrl = need(ctx.args, 0, "registry URL");
  const client = clientOf(ctx.args, registryUrl);
  const card = await cardOf(need(ctx.args, 1, "agent URL"));
  const ttlSeconds = intOption(ctx.args, "ttl");
  const proof = await proofFor(ctx.args, registryUrl, card);
  const entry = await client.register(card, {
    ...(ttlSeconds ? { ttlSeconds } : {}),
    ...(proof ? { proof } : {}),
  });
  if (ctx.json) printJson(entry);
  else print(`registered ${ctx.style.bold(entry.name)} as ${entry.id}, until ${entry.expiresAt}`);
  return EXIT.ok;
}

async function heartbeat(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, GLOBAL);
  const client = clientOf(ctx.args, need(ctx.args, 0, "registry URL"));
  const entry = await client.heartbeat(need(ctx.args, 1, "entry id"));
  if (ctx.json) printJson(entry);
  else print(`renewed ${entry.id} until ${entry.expiresAt}`);
  return EXIT.ok;
}

async function remove(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, GLOBAL);
  const client = clientOf(ctx.args, need(ctx.args, 0, "registry URL"));
  const id = need(ctx.args, 1, "entry id");
  await client.unregister(id);
  if (ctx.json) printJson({ removed: id });
  else print(`removed ${id}`);
  return EXIT.ok;
}
