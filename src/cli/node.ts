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

/** Node's `process`. */
export const proc = (globalThis as unknown as { process: NodeProcess }).process;

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
