import type { Auth } from "../client/index";
import { type Args, option, UsageError } from "./args";
import { proc } from "./node";
import type { Style } from "./output";

/** What every command gets: its arguments, styles for stdout and stderr, `--json`. */
export interface Context {
  args: Args;
  style: Style;
  errStyle: Style;
  json: boolean;
}

/** The options every command takes. */
export const GLOBAL = [
  "json",
  "token",
  "api-key",
  "header",
  "trust-origin",
  "binding",
  "no-color",
  "help",
  "verify-card",
  "card-jwks",
];

export function need(args: Args, index: number, name: string): string {
  const value = args.positional[index];
  if (value === undefined || value === "") throw new UsageError(`missing ${name}`);
  return value;
}

/** `--header` values, and `--token` (or EDGELINK_TOKEN) or `--api-key` as the auth. */
export function credentials(args: Args): { headers: Headers; auth: Auth | undefined } {
  const headers = new Headers();
  for (const h of args.options.get("header") ?? []) {
    const colon = h.indexOf(":");
    if (colon <= 0) throw new UsageError(`--header must be "Name: value", got "${h}"`);
    headers.append(h.slice(0, colon).trim(), h.slice(colon + 1).trim());
  }
  const token = option(args, "token") ?? proc.env.EDGELINK_TOKEN;
  const apiKey = option(args, "api-key");
  const auth: Auth | undefined = token ? { bearer: token } : apiKey ? { apiKey } : undefined;
  return { headers, auth };
}

export function print(text: string): void {
  proc.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

export const printJson = (value: unknown) => print(JSON.stringify(value, null, 2));
