/**
 * The instant echo agent as the official A2A JavaScript SDK (@a2a-js/sdk) serves it: its
 * executor and card, shared by scenario (d) (bench/sdk-server.mjs, Express on Node) and
 * scenario (e) (bench/sdk-do-worker.ts, inside a Durable Object). The executor publishes
 * what Edgelink's echo records: the task (submitted, with the user message in its
 * history), working, one `result` artifact, completed. A message starting with
 * `STREAM_PREFIX` (the streaming scenarios) gets that artifact in `STREAM_CHUNKS` chunks
 * (bench/stream-chunks.mjs), as Edgelink's echo streams it.
 */
import { AgentEvent } from "@a2a-js/sdk/server";
import { STREAM_PREFIX, streamChunks } from "./stream-chunks.mjs";

// Numeric values of the SDK's TaskState / Role enums (proto numbering; see
// node_modules/@a2a-js/sdk/dist/a2a-*.d.ts): SUBMITTED 1, WORKING 2, COMPLETED 3.
const SUBMITTED = 1;
const WORKING = 2;
const COMPLETED = 3;

const textPart = (value) => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});

const status = (state) => ({ state, message: undefined, timestamp: new Date().toISOString() });

/** The instant echo: the text of the message back as a `result` artifact. */
export const echoExecutor = {
  async execute(requestContext, eventBus) {
    const { taskId, contextId, userMessage } = requestContext;
    const text = userMessage.parts
      .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
      .join("");
    if (!requestContext.task) {
      eventBus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(SUBMITTED),
          artifacts: [],
          history: [userMessage],
          metadata: undefined,
        }),
      );
    }
    eventBus.publish(
      AgentEvent.statusUpdate({ taskId, contextId, status: status(WORKING), metadata: undefined }),
    );
    const artifactId = crypto.randomUUID();
    const chunks = text.startsWith(STREAM_PREFIX) ? streamChunks(text) : [`echo: ${text}`];
    chunks.forEach((chunk, i) => {
      eventBus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId,
            name: "result",
            description: "",
            parts: [textPart(chunk)],
            metadata: undefined,
            extensions: [],
          },
          append: i > 0,
          lastChunk: i === chunks.length - 1,
          metadata: undefined,
        }),
      );
    });
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(COMPLETED),
        metadata: undefined,
      }),
    );
    eventBus.finished();
  },
  async cancelTask() {},
};

export const agentCard = {
  name: "SDK bench echo",
  description: "Echoes the text of each message back as a result artifact, instantly.",
  supportedInterfaces: [
    { url: "http://127.0.0.1/", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
  ],
  provider: undefined,
  version: "0.0.0",
  capabilities: {
    streaming: true,
    pushNotifications: false,
    extensions: [],
    extendedAgentCard: false,
  },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
  signatures: [],
};
