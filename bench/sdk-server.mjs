/**
 * Scenario (d): the official A2A JavaScript SDK (@a2a-js/sdk) serving the same instant
 * echo agent over v1 JSON-RPC on Express 5, with the SDK's InMemoryTaskStore.
 *
 * bench/run.mjs forks this file as its own Node process (so the server does not share
 * an event loop with the load generator), waits for {port}, and kills it afterwards.
 * The executor and card: bench/sdk-echo.mjs.
 */
import { DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";
import { agentCard, echoExecutor } from "./sdk-echo.mjs";

const handler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), echoExecutor);
const app = express();
app.use(
  "/",
  jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
);

const server = app.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  if (process.send) process.send({ port });
  else console.log(`SDK echo agent on http://127.0.0.1:${port}/`);
});
server.keepAliveTimeout = 30_000;

const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("disconnect", stop);
