/**
 * A TCP proxy on 127.0.0.1 that can cut every open connection on demand: how the client
 * tests drop a stream for real (the client sees a reset socket, not a polite end).
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).
import { createServer, connect as tcpConnect } from "node:net";

export interface CutProxy {
  port: number;
  url: string;
  /** Destroys every connection open now (both sides). */
  cut(): void;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Points the proxy at another port (the server behind may start after the proxy). */
  target(port: number): void;
  stop(): Promise<void>;
}

export async function startCutProxy(targetPort = 0): Promise<CutProxy> {
  let port = targetPort;
  let accepted = 0;
  const open = new Set();
  const server = createServer((client) => {
    accepted++;
    const upstream = tcpConnect(port, "127.0.0.1");
    const pair = { client, upstream };
    open.add(pair);
    const close = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close);
    upstream.on("error", close);
    client.on("close", close);
    upstream.on("close", close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const own = server.address().port;
  return {
    port: own,
    url: `http://127.0.0.1:${own}`,
    get accepted() {
      return accepted;
    },
    target(p) {
      port = p;
    },
    cut() {
      for (const { client, upstream } of open) {
        client.resetAndDestroy?.() ?? client.destroy();
        upstream.destroy();
      }
      open.clear();
    },
    stop: () =>
      new Promise((resolve) => {
        for (const { client, upstream } of open) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
