import { defineConfig } from "vitest/config";
import { otlpCollector } from "./test/harness/agents/node/otlp-collector.mjs";
import { providerFixtures } from "./test/providers/fixture-plugin.mjs";
import { noDependencySourceMaps } from "./test/support/no-dependency-source-maps.mjs";
import { withoutWebSocketDeflate } from "./test/support/no-websocket-deflate.mjs";
import LongestFirst from "./test/support/run-order.mjs";
import { countsAsFailure } from "./test/support/teardown-race.mjs";

// Before the plugin loads Miniflare (a dynamic import, so it runs after this line): the
// modules sent to the workerd runners cross a loopback WebSocket, uncompressed.
withoutWebSocketDeflate();
const { cloudflareTest } = await import("@cloudflare/vitest-plugin");

/**
 * The workerd tests have no network: every fetch a test makes goes to a fake it hands in.
 * But objects keep living after a test, and their alarms deliver the webhooks the test
 * registered (https://hooks.example.com/...) with the real `fetch`; without this, each such
 * delivery waits on a DNS lookup that fails and workerd prints it as an internal error.
 */
/** Miniflare's name for the Worker a binding is declared in (a service binding to itself). */
const kCurrentWorker = Symbol.for("miniflare.kCurrentWorker");

const noNetwork = {
  outboundService: (request: Request) =>
    new Response(`no network in the workers tests (${new URL(request.url).host})`, {
      status: 503,
    }),
};

/**
 * Every workerd project runs its files one after another in one workerd, keeping its module
 * cache (`isolate: false`). Isolated, each file started its own workerd and imported the
 * whole framework again (the `workers` project: 530 s, 211 s of it imports, against 238 s
 * and 58 s shared, on a loaded 2-core machine). So test files share Durable Object storage
 * and module state: every test names its own contexts, tenants and objects.
 */
const shareOneWorkerd = {
  isolate: false,
  // Each project has its own Vite server, so the same src module was transformed once per
  // project. Transforms are cached on disk by content (and config), shared by the projects
  // and by the next run; `temp/` is not committed.
  experimental: { fsModuleCache: true, fsModuleCachePath: "temp/vitest-modules" },
} as const;

/**
 * Packages whose published ES modules workerd loads itself (Miniflare's module rules): Vite
 * neither transforms them nor sends them over the runner's WebSocket, which cost more CPU
 * than the tests of a small project (zod alone is 327 modules; every runner imported them
 * all). Not for a package whose ESM imports omit the file extension (@opentelemetry/*),
 * which only Vite's resolver accepts, nor one in CommonJS.
 */
const NATIVE_PACKAGES = [
  "zod",
  "zod-to-json-schema",
  "jose",
  "hono",
  "@cfworker/json-schema",
  "eventsource-parser",
  "fast-check",
  "pure-rand",
  "@modelcontextprotocol/sdk",
];
const nativePackages = {
  modulesRules: [
    {
      type: "ESModule" as const,
      include: NATIVE_PACKAGES.map((name) => `**/node_modules/${name}/**/*.js`),
    },
  ],
};

/** Task ids are signed (EDGELINK_ID_KEY); the tests get a key as a deployment gets its secret. */
const testSecrets = {
  bindings: {
    EDGELINK_ID_KEY: "test-only-key-for-signing-task-ids-0123456789",
    // The shell's settings for the property tests: workerd has no process.env of its own.
    FUZZ_RUNS: process.env.FUZZ_RUNS ?? "",
    FUZZ_SEED: process.env.FUZZ_SEED ?? "",
  },
};

/**
 * Rate Limiting bindings for the rate limit tests, as wrangler.toml's `[[ratelimits]]`
 * declares them. Not the conventional EDGELINK_* names: those would limit every test agent.
 */
const testRateLimits = {
  ratelimits: {
    TEST_CALLER_LIMIT: { namespace_id: "1001", simple: { limit: 3, period: 10 as const } },
    TEST_TENANT_LIMIT: { namespace_id: "1002", simple: { limit: 4, period: 10 as const } },
  },
};

/**
 * Tests live beside the source they test (test/<path of the file under src>), whatever
 * harness runs them. The tests that need a harness Worker of their own (test/harness/<name>:
 * its wrangler.toml, worker and helpers) are listed here by file; every other unit test runs
 * in the `workers` project. A new file that needs a harness goes in its list.
 */
const harnessTests = {
  llm: [
    "test/agent/approval/approval.test.ts",
    "test/cli/approvals.test.ts",
    "test/conversation/approver-desk.test.ts",
    "test/conversation/runs/held-desk.push.test.ts",
    "test/agent/model/model-execution.stream.test.ts",
    "test/agent/model/model-execution.answer-record.test.ts",
    "test/agent/model/model-round.providers.test.ts",
    "test/agent/model/round-history.test.ts",
    "test/agent/model/turn-history.stored.test.ts",
    "test/agent/agent-result.test.ts",
    "test/providers/retry.rounds.test.ts",
    "test/telemetry/log.model.test.ts",
    "test/testing/fake-model.test.ts",
    "test/worker/a2a/chat-decision.test.ts",
  ],
  agents: [
    "test/telemetry/finished-spans.same-worker.test.ts",
    "test/agent/approval/relay.test.ts",
    "test/agent/delegation.test.ts",
    "test/agent/tools/agent-tools.test.ts",
    "test/mcp/connection.test.ts",
    "test/mcp/servers.test.ts",
  ],
  memory: [
    "test/memory/agent/record-turns.agent.test.ts",
    "test/memory/agent/record-turns.test.ts",
    "test/memory/api/api-guards.test.ts",
    "test/memory/api/route-table.test.ts",
    "test/cli/memory.test.ts",
    "test/client/memory.test.ts",
    "test/memory/agent/agent-memory.test.ts",
    "test/memory/agent/handler-memory.test.ts",
    "test/memory/agent/recall-turn.test.ts",
    "test/memory/api/memory-api.test.ts",
    "test/memory/object/memory-object.test.ts",
    "test/memory/object/recall/memory-reader.test.ts",
    "test/memory/object/rows/memory-terms.test.ts",
    "test/memory/object/rows/memory-fact-rows.test.ts",
    "test/memory/object/memory-removal.test.ts",
    "test/memory/object/recall/fact-ranker.test.ts",
    "test/memory/object/item-counts.test.ts",
    "test/memory/object/extraction-window.test.ts",
    "test/memory/base/options.test.ts",
    "test/memory/base/rank.test.ts",
    "test/memory/base/scope.test.ts",
  ],
  registry: [
    "test/registry/registry-routes.test.ts",
    "test/client/registry.test.ts",
    "test/registry/registry-object.test.ts",
    "test/registry/registry-verify.test.ts",
  ],
};

export default defineConfig({
  plugins: [noDependencySourceMaps()],
  test: {
    // Vitest's default on 2 cores is one file at a time. The e2e files mostly wait (on
    // workerd, on npm, on the demo's one-number-a-second count), so the longest of them run
    // from the start while more files keep both cores busy (test/support/run-order.mjs).
    // With three, the e2e files held the slots for most of the run and the cores were idle
    // a third of it; a fourth lets the workerd projects start while the init test still waits.
    maxWorkers: 4,
    sequence: { sequencer: LongestFirst },
    // A module load of an object that outlived its file, cut off as the next file ended:
    // printed, not counted (test/support/teardown-race.mjs).
    onUnhandledError: countsAsFailure,
    projects: [
      {
        plugins: [
          noDependencySourceMaps(),
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: { ...noNetwork, ...nativePackages, ...testSecrets, ...testRateLimits },
          }),
          providerFixtures(),
        ],
        test: {
          name: "workers",
          ...shareOneWorkerd,
          // The property tests replay whole recorded streams hundreds of times: seconds of
          // CPU each on a loaded 2-core machine. A hang still fails, just later.
          testTimeout: 20_000,
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**", ...Object.values(harnessTests).flat()],
        },
      },
      {
        plugins: [
          noDependencySourceMaps(),
          cloudflareTest({
            wrangler: { configPath: "./test/harness/llm/wrangler.toml" },
            miniflare: { ...noNetwork, ...nativePackages, ...testSecrets },
          }),
          providerFixtures(),
        ],
        test: {
          name: "llm",
          ...shareOneWorkerd,
          include: harnessTests.llm,
          // A file ends after the agent's background work it started (index windows, runs).
          setupFiles: ["./test/harness/llm/settle.ts"],
          testTimeout: 20_000,
        },
      },
      {
        // Long-term memory: an agent with memory on (test/harness/memory/worker.ts) and the store's
        // objects, configured test by test (test/harness/memory/store-worker.ts).
        plugins: [
          noDependencySourceMaps(),
          cloudflareTest({
            wrangler: { configPath: "./test/harness/memory/wrangler.toml" },
            miniflare: { ...noNetwork, ...nativePackages, ...testSecrets },
          }),
          providerFixtures(),
        ],
        test: {
          name: "memory",
          ...shareOneWorkerd,
          include: harnessTests.memory,
          testTimeout: 20_000,
        },
      },
      {
        // Agents calling out: MCP servers (started by the global setup) and other agents.
        plugins: [
          noDependencySourceMaps(),
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./test/harness/agents/wrangler.toml" },
            miniflare: {
              ...nativePackages,
              bindings: {
                ...testSecrets.bindings,
                MCP_URL: inject("mcpUrl"),
                MCP_DOWN_URL: inject("mcpDownUrl"),
              },
              // The demo agent as a second Worker, reached through a service binding; the
              // traced agent as a third, exporting its spans to a fake OTLP collector; this
              // Worker again as the relay agent's child, a second agent of the harness.
              serviceBindings: {
                DEMO: "demo",
                TRACED: "traced",
                COLLECTOR: otlpCollector,
                CHILD: kCurrentWorker,
              },
              workers: [
                {
                  name: "demo",
                  modules: true,
                  scriptPath: String(inject("demoBundle")),
                  compatibilityDate: "2026-11-01",
                  compatibilityFlags: ["nodejs_compat"],
                  durableObjects: {
                    EDGELINK_CONTEXT: { className: "EdgelinkContext", useSQLite: true },
                    EDGELINK_INDEX: { className: "EdgelinkIndex", useSQLite: true },
                  },
                  bindings: { ...testSecrets.bindings, DEMO_CHUNK_DELAY_MS: "150" },
                },
                {
                  name: "traced",
                  modules: true,
                  scriptPath: String(inject("tracedBundle")),
                  compatibilityDate: "2026-11-01",
                  compatibilityFlags: ["nodejs_compat"],
                  durableObjects: {
                    EDGELINK_CONTEXT: { className: "EdgelinkContext", useSQLite: true },
                    EDGELINK_INDEX: { className: "EdgelinkIndex", useSQLite: true },
                  },
                  bindings: {
                    ...testSecrets.bindings,
                    OTLP_URL: "http://collector.test/v1/traces",
                  },
                  // A binding to itself: delegation nests an invocation in the caller's.
                  serviceBindings: { PEER: "traced" },
                  outboundService: otlpCollector,
                },
              ],
            },
          })),
          providerFixtures(),
        ],
        test: {
          name: "agents",
          ...shareOneWorkerd,
          include: harnessTests.agents,
          globalSetup: ["./test/harness/agents/node/global-setup.ts"],
          // The first MCP test loads the SDK through vite, which takes seconds.
          testTimeout: 20_000,
        },
      },
      {
        // The agent registry (A9), its own Worker: `edgelink/registry` is not in an agent's.
        plugins: [
          noDependencySourceMaps(),
          cloudflareTest({
            wrangler: { configPath: "./test/harness/registry/wrangler.toml" },
            miniflare: {
              ...noNetwork,
              ...nativePackages,
              bindings: {
                REGISTRY_KEYS: JSON.stringify({
                  "key-alice": { subject: "alice" },
                  "key-bob": { subject: "bob" },
                  "key-carol": { subject: "carol", tenant: "t2" },
                }),
              },
            },
          }),
        ],
        test: {
          name: "registry",
          ...shareOneWorkerd,
          include: harnessTests.registry,
        },
      },
      {
        test: {
          name: "e2e",
          // One Node process for the files, which imports wrangler (seconds) once.
          isolate: false,
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          // The package packed once per run, for the files that install it.
          globalSetup: ["./test/e2e/support/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
