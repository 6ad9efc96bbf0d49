/**
 * Not an entry point: the one JavaScript module behind `edgelink`, `edgelink/providers`,
 * `edgelink/history` and `edgelink/testing`. The build writes each of those as a list of re-exports
 * from this module (see tsup.config.ts), so their code is one module as before the split,
 * not chunks cut between them, which cost the demo Worker 1.5 KiB gzipped. Their types
 * come from their own files.
 */
export * from "./history/index";
export * from "./index";
export * from "./providers/index";
export * from "./testing/index";
