// Tracing by the OpenTelemetry API: what providers, the agent, the objects and the server
// use. Web APIs and @opentelemetry/api only; nothing above models.
export * from "./attributes";
export * from "./carrier";
export {
  activeContext,
  getSpan,
  inContext,
  ROOT_CONTEXT,
  STATUS_ERROR,
  setSpan,
} from "./otel";
export * from "./spans";
export * from "./tracer";
