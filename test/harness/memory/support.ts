import { BASE, rest, rpc, sleep, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;

/** Who calls: a user name (X-User) and a tenant (X-Tenant). */
export interface Caller {
  user: string;
  tenant?: string;
}

let run = 0;
/** A caller no other test uses (tests share one workerd and its objects). */
export function newCaller(name: string, tenant?: string): Caller {
  run++;
  return { user: `${name}-${Date.now().toString(36)}-${run}`, ...(tenant ? { tenant } : {}) };
}

export function headersOf(caller: Caller): Record<string, string> {
  return { "X-User": caller.user, ...(caller.tenant ? { "X-Tenant": caller.tenant } : {}) };
}

/** A blocking SendMessage as `caller`; returns the task (in a new conversation unless given). */
export async function ask(caller: Caller, text: string, contextId?: string): Promise<Json> {
  const { body } = await rpc(
    "SendMessage",
    { message: userMessage(text, contextId ? { contextId } : {}) },
    { headers: headersOf(caller) },
  );
  if (!body.result) throw new Error(`SendMessage failed: ${JSON.stringify(body.error)}`);
  return (body.result as { task: Json }).task;
}

/** A memory route as `caller` (`operator`: the operator's key header instead of none). */
export function memoryApi(
  caller: Caller | null,
  method: string,
  path: string,
  body?: unknown,
  extra: Record<string, string> = {},
) {
  return rest(method, path, body, { ...(caller ? headersOf(caller) : {}), ...extra });
}

/** The caller's live facts' claims. */
export async function claims(caller: Caller): Promise<string[]> {
  const { status, body } = await memoryApi(caller, "GET", "/memory?kind=fact");
  if (status !== 200) throw new Error(`GET /memory: ${status} ${JSON.stringify(body)}`);
  return ((body.items as Json[]) ?? []).map((f) => String(f.claim));
}

/** Polls until `done` holds (background work such as extraction), or fails after a while. */
export async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: never happened (last: ${JSON.stringify(value)})`);
    await sleep(25);
  }
}

/** The answer text of a completed task. */
export function answerOf(task: Json): string {
  const artifacts = (task.artifacts as Json[]) ?? [];
  return artifacts.flatMap((a) => (a.parts as Json[]).map((p) => String(p.text ?? ""))).join("");
}

export { BASE };
