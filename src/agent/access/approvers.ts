/**
 * Who may decide a held call besides the task's owner: the agent's `approvals.approvers`
 * rule, matched against the principal its `auth` verified.
 */
import type { ApprovalCaller } from "./approval-options";
import type { Principal } from "./auth";

/**
 * Principals who may approve or reject another principal's held calls (see
 * docs/guides/approvals.md). A principal is an approver when any listed test matches.
 * @example
 * defineAgent({
 *   card, model, tools: { refund }, auth,
 *   approvals: { approvers: { scopes: ["refunds:approve"], apiKeys: ["ops-desk"] } },
 * });
 */
export interface ApproversRule {
  /** Bearer tokens carrying any of these OAuth scopes (the `scope` claim or an `scp` list). */
  scopes?: string[];
  /**
   * Verified claims (a bearer token's payload, or the claims `authenticate` answered) with
   * one of these values, e.g. `{ role: ["approver"] }`; a list-valued claim matches when
   * one of its elements does.
   */
  claims?: Record<string, string[]>;
  /** API keys by their subject: the one configured in the keys secret, or `sha256:…`. */
  apiKeys?: string[];
  /** Any other test; a rule that throws (or rejects) refuses. */
  allow?: (approver: Principal, task: ApprovalCaller) => boolean | Promise<boolean>;
}

/** A token's scopes: the `scope` claim (space-separated, RFC 8693) or an `scp` list. */
export function scopesOf(claims: Record<string, unknown>): string[] {
  if (typeof claims.scope === "string") return claims.scope.split(" ");
  if (Array.isArray(claims.scp)) return claims.scp.filter((s) => typeof s === "string");
  return [];
}

const names = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((s) => typeof s === "string" && s);

/** Checks an `approvals.approvers` rule at definition time, naming the bad field. */
export function checkApprovers(rule: ApproversRule): ApproversRule {
  const fail = (why: string): never => {
    throw new TypeError(`Invalid approvals.approvers: ${why}`);
  };
  if (typeof rule !== "object" || rule === null) fail("expected an object");
  const { scopes, claims, apiKeys, allow } = rule;
  if (!scopes && !claims && !apiKeys && !allow) {
    fail("name approvers by scopes, claims, apiKeys or allow");
  }
  if (scopes !== undefined && !names(scopes)) fail("scopes must be a non-empty list of scopes");
  if (apiKeys !== undefined && !names(apiKeys)) {
    fail("apiKeys must be a non-empty list of API key subjects");
  }
  if (claims !== undefined) {
    if (typeof claims !== "object" || claims === null || Object.keys(claims).length === 0) {
      fail("claims must map claim names to the accepted values");
    }
    for (const [name, values] of Object.entries(claims)) {
      if (!names(values)) fail(`claims.${name} must be a non-empty list of strings`);
    }
  }
  if (allow !== undefined && typeof allow !== "function") fail("allow must be a function");
  return rule;
}

/** Whether `principal` may decide the held calls of `task`'s owner under `rule`. */
export async function mayApprove(
  rule: ApproversRule,
  principal: Principal,
  task: ApprovalCaller,
): Promise<boolean> {
  // Anyone who reaches an agent without auth is "anonymous": never an approver.
  if (principal.scheme === "anonymous") return false;
  const claims = principal.claims ?? {};
  if (principal.scheme === "bearer" && rule.scopes?.some((s) => scopesOf(claims).includes(s))) {
    return true;
  }
  if (principal.scheme === "apiKey" && rule.apiKeys?.includes(principal.subject)) return true;
  for (const [name, accepted] of Object.entries(rule.claims ?? {})) {
    const value = Object.hasOwn(claims, name) ? claims[name] : undefined;
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === "string" && accepted.includes(v))) return true;
  }
  if (!rule.allow) return false;
  try {
    return (await rule.allow(principal, task)) === true;
  } catch {
    return false;
  }
}
