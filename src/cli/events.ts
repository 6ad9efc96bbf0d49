import { type AgentEvent, isKnownPart, type Part } from "../client/index";
import type { WritableLike } from "./node";
import { ProgressLine, type Style, stateColor } from "./output";

/** How the CLI shows a stream of task events: tokens on stdout, progress on stderr. */
export class EventPrinter {
  /** The last state seen (the exit code follows it). */
  state = "unknown";
  taskId: string | undefined;
  private lineOpen = false;
  private readonly progress: ProgressLine;

  constructor(
    private readonly out: WritableLike,
    private readonly err: WritableLike,
    private readonly style: Style,
    private readonly json: boolean,
  ) {
    this.progress = new ProgressLine(err, style);
  }

  /** A note on stderr (reconnections, the task id). */
  note(text: string): void {
    if (this.json) return;
    this.breakLine();
    this.progress.clear();
    this.err.write(`${this.style.dim(text)}\n`);
  }

  handle(event: AgentEvent): void {
    if (event.kind === "task") {
      this.taskId = event.task.id;
      this.state = event.task.status.state;
    } else if (event.kind === "status-update") {
      this.state = event.status.state;
    } else if (event.kind === "message") {
      this.state = "completed";
    }
    if (this.json) {
      this.out.write(`${JSON.stringify(event)}\n`);
      return;
    }
    switch (event.kind) {
      case "task":
        this.progress.update(`${event.task.status.state} · task ${event.task.id}`);
        return;
      case "status-update": {
        const parts = event.status.message?.parts ?? [];
        const text = this.textOf(parts);
        this.tools(parts);
        if (event.final) {
          this.progress.clear();
          this.breakLine();
          const label = stateColor(this.style, event.status.state);
          this.err.write(`${label}${text ? `: ${text}` : ""}\n`);
        } else {
          this.progress.update(`${event.status.state}${text ? ` · ${text}` : ""}`);
        }
        return;
      }
      case "artifact-update":
        for (const part of event.artifact.parts) this.part(part);
        return;
      case "message":
        for (const part of event.message.parts) this.part(part);
        this.breakLine();
        return;
    }
  }

  /** Ends the output cleanly (a final newline after streamed text). */
  finish(): void {
    this.progress.clear();
    this.breakLine();
  }

  private part(part: Part): void {
    if (!isKnownPart(part)) {
      this.breakLine();
      this.out.write(`${this.style.dim(`[${part.type}]`)} ${JSON.stringify(part.content)}\n`);
      return;
    }
    if (part.type === "text") {
      this.progress.clear();
      this.out.write(part.content);
      this.lineOpen = !part.content.endsWith("\n");
      return;
    }
    if (this.tools([part])) return;
    this.breakLine();
    this.progress.clear();
    if (part.type === "data") this.out.write(`${JSON.stringify(part.content)}\n`);
    else if (part.type === "file") {
      const f = part.content;
      this.out.write(
        `[file ${f.filename ?? ""} ${f.mediaType ?? ""} ${f.url ?? `${(f.bytes ?? "").length} base64 chars`}]\n`,
      );
    } else this.out.write(`${this.style.dim(`[${part.type}]`)} ${JSON.stringify(part.content)}\n`);
  }

  /** Shows tool calls and their results on stderr; answers whether there were any. */
  private tools(parts: readonly Part[]): boolean {
    let shown = false;
    for (const part of parts) {
      if (!isKnownPart(part)) continue;
      if (part.type === "tool_call") {
        this.note(`→ ${part.content.toolName}(${JSON.stringify(part.content.args)})`);
        shown = true;
      } else if (part.type === "tool_output") {
        const { error, result } = part.content;
        this.note(`← ${error ? `error: ${error}` : JSON.stringify(result)}`);
        shown = true;
      }
    }
    return shown;
  }

  private textOf(parts: readonly Part[]): string {
    return parts
      .filter((p) => p.type === "text")
      .map((p) => p.content as string)
      .join("");
  }

  private breakLine(): void {
    if (this.lineOpen) this.out.write("\n");
    this.lineOpen = false;
  }
}

/** Exit codes by final task state (documented in docs/reference/cli.md). */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  failed: 3,
  canceled: 4,
  needsInput: 5,
} as const;

export function exitCodeOf(state: string): number {
  switch (state) {
    case "failed":
    case "rejected":
      return EXIT.failed;
    case "canceled":
      return EXIT.canceled;
    case "input-required":
    case "auth-required":
      return EXIT.needsInput;
    default:
      return EXIT.ok;
  }
}
