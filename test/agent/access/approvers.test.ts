import { describe, expect, it } from "vitest";
import { checkApprovers, mayApprove } from "../../../src/agent/access/approvers";
import { ANONYMOUS, type Principal } from "../../../src/agent/access/auth";
import { defineAgent } from "../../../src/index";

const task = { tenant: "", owner: '["custom","","alice"]' };
const bearer = (claims: Record<string, unknown>): Principal => ({
  subject: "u1",
  issuer: "https://login.example.com/",
  tenant: "",
  scheme: "bearer",
  claims,
});
const apiKey = (subject: string): Principal => ({ subject, tenant: "", scheme: "apiKey" });

describe("the approvers rule", () => {
  it("M9: names approvers by token scope, claim value (lists too), API key subject or a function; anything else is refused", async () => {
    const rule = {
      scopes: ["refunds:approve"],
      claims: { role: ["approver"] },
      apiKeys: ["ops-desk"],
    };
    expect(await mayApprove(rule, bearer({ scope: "read refunds:approve" }), task)).toBe(true);
    expect(await mayApprove(rule, bearer({ scp: ["refunds:approve"] }), task)).toBe(true);
    expect(await mayApprove(rule, bearer({ scope: "refunds:approved" }), task)).toBe(false);
    expect(await mayApprove(rule, bearer({ role: "approver" }), task)).toBe(true);
    expect(await mayApprove(rule, bearer({ role: ["viewer", "approver"] }), task)).toBe(true);
    expect(await mayApprove(rule, bearer({ role: "viewer" }), task)).toBe(false);
    expect(await mayApprove(rule, apiKey("ops-desk"), task)).toBe(true);
    expect(await mayApprove(rule, apiKey("other"), task)).toBe(false);
    // A custom principal whose subject is spelled like the key's is not that key.
    const custom: Principal = { subject: "ops-desk", tenant: "", scheme: "custom" };
    expect(await mayApprove(rule, custom, task)).toBe(false);
    // A scope claim of a custom principal is not a token's scope.
    const scoped: Principal = { ...custom, claims: { scope: "refunds:approve" } };
    expect(await mayApprove(rule, scoped, task)).toBe(false);
    expect(await mayApprove(rule, ANONYMOUS, task)).toBe(false);
  });

  it("M9: a function rule sees the approver and the task's owner; one that throws refuses", async () => {
    const seen: unknown[] = [];
    const allow = (p: Principal, t: { owner: string }) => {
      seen.push(t.owner);
      return p.subject === "boss";
    };
    const boss: Principal = { subject: "boss", tenant: "", scheme: "custom" };
    expect(await mayApprove({ allow }, boss, task)).toBe(true);
    expect(await mayApprove({ allow }, { ...boss, subject: "intern" }, task)).toBe(false);
    expect(seen).toEqual([task.owner, task.owner]);
    const throws = () => {
      throw new Error("directory down");
    };
    expect(await mayApprove({ allow: throws }, boss, task)).toBe(false);
    expect(
      await mayApprove({ allow: async () => Promise.reject(new Error("x")) }, boss, task),
    ).toBe(false);
  });

  it("M9: a bad rule, or one without auth, is refused when the agent is defined, naming the field", () => {
    expect(() => checkApprovers({})).toThrow(/scopes, claims, apiKeys or allow/);
    expect(() => checkApprovers({ scopes: [] })).toThrow(/scopes/);
    expect(() => checkApprovers({ claims: { role: [] } })).toThrow(/claims\.role/);
    expect(() => checkApprovers({ apiKeys: [""] })).toThrow(/apiKeys/);
    const card = { name: "a", description: "d" };
    expect(() =>
      defineAgent({ card, approvals: { approvers: { claims: { role: ["approver"] } } } }),
    ).toThrow(/configure auth/);
    expect(() =>
      defineAgent({
        card,
        auth: { authenticate: () => null },
        approvals: { approvers: { claims: { role: ["approver"] } } },
      }),
    ).not.toThrow();
  });
});
