import { proc, type WritableLike } from "./node";

/** ANSI styles, applied only when writing to a terminal (and NO_COLOR is not set). */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const plain = (s: string) => s;
const ansi = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;

export function styleFor(stream: WritableLike, disabled: boolean): Style {
  const on = !disabled && stream.isTTY === true && !proc.env.NO_COLOR && proc.env.TERM !== "dumb";
  return on
    ? {
        bold: ansi(1, 22),
        dim: ansi(2, 22),
        red: ansi(31, 39),
        green: ansi(32, 39),
        yellow: ansi(33, 39),
        cyan: ansi(36, 39),
      }
    : { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain };
}

/** Colour of a task state. */
export function stateColor(style: Style, state: string): string {
  if (state === "completed") return style.green(state);
  if (state === "failed" || state === "rejected" || state === "canceled") return style.red(state);
  if (state === "input-required" || state === "auth-required") return style.yellow(state);
  return style.cyan(state);
}

const ESC = String.fromCharCode(27);
const ANSI = new RegExp(`${ESC}\\[\\d+m`, "g");

/** Text columns, padded to the widest cell (ANSI codes not counted). */
export function table(rows: string[][]): string {
  const width = (s: string) => s.replace(ANSI, "").length;
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, width(cell));
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - width(cell)),
        )
        .join("  "),
    )
    .join("\n");
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * A status line on stderr: rewritten in place on a terminal (a spinner), one line per
 * update otherwise, so logs stay readable.
 */
export class ProgressLine {
  private frame = 0;
  private shown = false;
  constructor(
    private readonly stream: WritableLike,
    private readonly style: Style,
  ) {}

  update(text: string): void {
    if (this.stream.isTTY) {
      const spinner = FRAMES[this.frame++ % FRAMES.length] ?? "";
      const max = Math.max(10, (this.stream.columns ?? 80) - 3);
      this.stream.write(
        `\r\x1b[2K${this.style.cyan(spinner)} ${this.style.dim(text.slice(0, max))}`,
      );
      this.shown = true;
    } else {
      this.stream.write(`${text}\n`);
    }
  }

  /** Removes the line (before other output, and at the end). */
  clear(): void {
    if (this.shown) this.stream.write("\r\x1b[2K");
    this.shown = false;
  }
}
