/**
 * The CLI's commands behind one function: `main(argv)` answers the exit code and writes
 * through `proc` (./node.ts). The `edgelink` command runs it from ./main.ts; the end-to-end
 * tests also run it in their own process with `proc` swapped for captured output.
 */
import {
  A2AConnectionError,
  A2ARemoteError,
  CardSignatureError,
  MisconfiguredError,
  UnauthenticatedError,
} from "../client/index";
import { PushVerificationError } from "../push/receiver";
import { approvals, approve, reject } from "./approvals";
import { flag, parseArgs, UsageError } from "./args";
import * as commands from "./commands";
import { doctor } from "./doctor";
import { EXIT } from "./events";
import { init } from "./init";
import { memory } from "./memory";
import { proc } from "./node";
import { styleFor } from "./output";

const HELP = `edgelink — make A2A agents, and talk to them from the terminal

usage: edgelink <command> [arguments] [options]

commands:
  init [DIR]                   a new agent project (--template echo|model; refuses a
                               non-empty DIR unless --force, and never overwrites a file)
  doctor [DIR]                 check a project's wrangler.toml and .dev.vars (bindings,
                               migration, compatibility date, id key, provider keys)
  card URL                     the agent's card
  send URL TEXT                send a message, print the answer
                               (--task ID, --context ID, --no-wait)
  stream URL TEXT              send and stream the answer as it comes (--task, --context)
  tasks URL                    list tasks (--context ID, --state S, --page-size N, --page-token T)
  get URL TASK                 one task (--history N)
  cancel URL TASK              cancel a task
  watch URL TASK               follow a running task; resumes after dropped connections
                               (--last-event-id ID)
  approvals URL                calls waiting for a decision, of your tasks or of one
                               (--task ID: a task id, or an approver's approverTaskId)
  approve URL --task ID --call ID   approve a waiting call (--call repeatable,
                               --reason R, --args JSON: edited arguments of one call)
  reject URL --task ID --call ID    reject it; the model is told (--reason R)
  history URL CONTEXT          a conversation's history (--page-size N, --page-token T, --all)
  push add URL TASK WEBHOOK    register a webhook (--notification-token T,
                               --auth-scheme S --auth-credentials C, --id ID)
  push list URL TASK           a task's webhooks
  push delete URL TASK ID      remove one
  push listen URL              receive and verify webhooks locally
                               (--port 8788, --host, --path /, --audience URL,
                               --notification-token T, --count N)
  registry list REGISTRY       agents in an agent registry (--name N, --role R,
                               --tag T, repeatable, --page-size N, --page-token T)
  registry add REGISTRY AGENT  register AGENT's card (its base URL or card URL; --ttl S;
                               a signed card: --prove --subject S [--tenant T] with the
                               key in EDGELINK_CARD_SIGNING_KEYS, or --proof JWT)
  registry heartbeat REGISTRY ID   renew an entry
  registry remove REGISTRY ID  remove an entry
  memory list URL              what the agent remembers about you (--kind fact|entity|
                               goal|strategy|turn, --query Q, --page-size N, --page-token T,
                               --superseded)
  memory search URL TEXT       what it would recall for TEXT (--budget TOKENS)
  memory add URL CLAIM         tell it a fact about you
  memory correct URL ID CLAIM  correct a fact (the old one is never recalled again)
  memory entity URL NAME       name or describe an entity (--type T --description D
                               --alias A --property key=value, repeatable)
  memory delete URL ID         delete one item (--kind, default fact)
  memory erase URL --yes       delete everything it remembers about you
                               (memory commands: --operator-key K (or
                               EDGELINK_MEMORY_OPERATOR_KEY) --scope S for a user's memory)

options:
  --json                       machine-readable output (JSON; NDJSON for streams)
  --token T                    bearer token (or EDGELINK_TOKEN)
  --api-key K                  API key (header named by the card, else X-API-Key)
  --header "Name: value"       extra header, repeatable
  --trust-origin URL           another origin that may get the token, key and headers
                               (a card naming an endpoint elsewhere), repeatable
  --binding jsonrpc|rest       force a protocol binding
  --verify-card                refuse an agent whose card's signatures do not verify
                               (keys from the jku on the card's own origin)
  --card-jwks URL              the same, with the keys from this JWKS
  --no-color                   no colours (also NO_COLOR=1; colours only on a terminal)

exit codes: 0 ok/completed, 1 error, 2 usage, 3 task failed or rejected,
            4 canceled, 5 input or auth required
`;

const COMMANDS: Record<string, (ctx: commands.Context) => Promise<number>> = {
  init,
  doctor,
  card: commands.card,
  send: commands.send,
  stream: commands.stream,
  tasks: commands.tasks,
  get: commands.get,
  cancel: commands.cancel,
  watch: commands.watch,
  history: commands.history,
  push: commands.push,
  registry: commands.registry,
  memory,
  approvals,
  approve,
  reject,
};

/** Runs the CLI; answers the exit code. Never throws. */
export async function main(argv: readonly string[]): Promise<number> {
  let json = false;
  let commandName: string | undefined;
  const errStyle = styleFor(proc.stderr, argv.includes("--no-color"));
  try {
    const args = parseArgs(argv);
    json = flag(args, "json");
    const [name, ...positional] = args.positional;
    commandName = name;
    if (flag(args, "version")) {
      proc.stdout.write("edgelink 0.1.0\n");
      return EXIT.ok;
    }
    if (!name || flag(args, "help") || name === "help") {
      proc.stdout.write(HELP);
      return name || flag(args, "help") ? EXIT.ok : EXIT.usage;
    }
    const command = COMMANDS[name];
    if (!command) throw new UsageError(`unknown command "${name}"`);
    const style = styleFor(proc.stdout, flag(args, "no-color"));
    return await command({ args: { ...args, positional }, style, errStyle, json });
  } catch (error) {
    return report(error, json, errStyle, commandName);
  }
}

function report(
  error: unknown,
  json: boolean,
  s: ReturnType<typeof styleFor>,
  command?: string,
): number {
  const code = error instanceof UsageError ? EXIT.usage : EXIT.error;
  if (json) {
    const body =
      error instanceof A2ARemoteError
        ? {
            error: error.name,
            message: error.message,
            code: error.code,
            httpStatus: error.httpStatus,
            errorInfo: error.errorInfo ?? null,
            fieldViolations: error.fieldViolations,
          }
        : {
            error: (error as Error)?.name ?? "Error",
            message: String((error as Error)?.message ?? error),
          };
    proc.stderr.write(`${JSON.stringify(body)}\n`);
    return code;
  }
  let line = `${s.red("error:")} ${(error as Error)?.message ?? String(error)}`;
  if (error instanceof A2ARemoteError) {
    line += s.dim(` (${error.name}, code ${error.code}${error.reason ? `, ${error.reason}` : ""})`);
    for (const v of error.fieldViolations) line += `\n  ${v.field}: ${v.description}`;
    const fix = fixFor(error, command);
    if (fix) line += `\n${fix}`;
  } else if (error instanceof A2AConnectionError) {
    line += s.dim(" (is the agent running? check the URL)");
  } else if (error instanceof CardSignatureError) {
    line += s.dim(` (${error.problem})`);
  } else if (error instanceof PushVerificationError) {
    line += s.dim(` (${error.reason})`);
  } else if (error instanceof UsageError) {
    line += s.dim("\nrun edgelink --help for usage");
  }
  proc.stderr.write(`${line}\n`);
  return code;
}

/** What the user can do about an error the agent answered, when the CLI knows. */
function fixFor(error: A2ARemoteError, command: string | undefined): string | null {
  const deciding = command === "approve" || command === "reject" || command === "approvals";
  if (deciding && error.code === -32001) {
    return "no such task waits for your decision: check --task (an approver uses the approverTaskId the request or its webhook carries, and needs the agent's approver role); `edgelink approvals URL` lists your own";
  }
  if (deciding && error.code === -32602) {
    return "decide every waiting call in one command (repeat --call); `edgelink approvals URL --task ID` lists them, and --args must fit the tool's arguments";
  }
  if (error instanceof UnauthenticatedError || error.httpStatus === 401) {
    return "the agent wants credentials: pass --api-key K (or --token T, or EDGELINK_TOKEN), or check the one you passed";
  }
  if (
    error instanceof MisconfiguredError ||
    error.reason === "MISCONFIGURED" ||
    error.reason === "STORAGE_OUTDATED"
  ) {
    return "the agent's Worker is misconfigured (its message above says what to fix); run `edgelink doctor` in its project to check it";
  }
  return null;
}
