/**
 * The few Node APIs the CLI uses, typed here: the repository type-checks against the
 * Workers runtime (no @types/node), and the rest of src/ must not see Node's globals.
 */

export interface WritableLike {
  write(chunk: string, callback?: () => void): boolean;
  isTTY?: boolean;
  columns?: number;
}

export interface NodeProcess {
  argv: string[];
  env: Record<string, string | undefined>;
  stdout: WritableLike;
  stderr: WritableLike;
  exitCode: number | undefined;
  version: string;
  on(event: "SIGINT" | "SIGTERM", listener: () => void): void;
  exit(code: number): never;
}

/**
 * Node's `process`, read by every command when it runs. `useProcess` swaps it for a
 * stand-in (captured output, its own env) so that a test runs the CLI without a process of
 * its own; one such run at a time.
 */
export let proc = (globalThis as unknown as { process: NodeProcess }).process;

/** Makes `process` the CLI's process; answers the one it replaces. */
export function useProcess(process: NodeProcess): NodeProcess {
  const previous = proc;
  proc = process;
  return previous;
}

export interface IncomingMessageLike extends AsyncIterable<Uint8Array> {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
}
export interface ServerResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): void;
  end(body?: string): void;
}
export interface HttpServerLike {
  listen(port: number, host: string, callback: () => void): void;
  address(): { port: number } | string | null;
  close(callback?: () => void): void;
  once(event: "error", listener: (error: Error) => void): void;
}
interface HttpModule {
  createServer(
    handler: (req: IncomingMessageLike, res: ServerResponseLike) => void,
  ): HttpServerLike;
}

/** `node:http`, loaded only by the command that needs it. */
export async function nodeHttp(): Promise<HttpModule> {
  const specifier = "node:http";
  return (await import(specifier)) as HttpModule;
}

export interface DirentLike {
  name: string;
}
/** The part of `node:fs/promises` that `init` and `doctor` use. */
export interface FsModule {
  readFile(path: string, encoding: "utf8"): Promise<string>;
  writeFile(path: string, data: string, options?: { flag?: string; mode?: number }): Promise<void>;
  mkdir(path: string, options: { recursive: true }): Promise<string | undefined>;
  readdir(path: string): Promise<string[]>;
  stat(path: string): Promise<{ isDirectory(): boolean }>;
}
/** The part of `node:path` they use. */
export interface PathModule {
  resolve(...paths: string[]): string;
  join(...paths: string[]): string;
  basename(path: string): string;
  dirname(path: string): string;
  relative(from: string, to: string): string;
}

/** `node:fs/promises`, `node:path` and `fileURLToPath`, loaded only by the commands that use files. */
export async function nodeFiles(): Promise<{
  fs: FsModule;
  path: PathModule;
  fileURLToPath: (url: URL) => string;
}> {
  const [fs, path, url] = ["node:fs/promises", "node:path", "node:url"];
  return {
    fs: (await import(fs)) as FsModule,
    path: (await import(path)) as PathModule,
    fileURLToPath: ((await import(url)) as { fileURLToPath: (url: URL) => string }).fileURLToPath,
  };
}

/** Node's error code (`ENOENT`, `EEXIST`, ...) of a thrown file-system error. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
