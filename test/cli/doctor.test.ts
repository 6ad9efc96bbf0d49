import { describe, expect, it } from "vitest";
import { parseDevVars, parseWranglerToml } from "../../src/cli/config-files";
import { diagnose } from "../../src/cli/doctor";
import { devVarsIgnored, ensureDevVarsIgnored } from "../../src/cli/gitignore";
import type { FsModule } from "../../src/cli/node";
import { newIdKey, projectFiles, type Versions, workerName } from "../../src/cli/templates";

const VERSIONS: Versions = {
  edgelink: "0.1.0",
  wrangler: "^4.164.0",
  vitest: "^4.1.12",
  vitestPlugin: "^1.5.0",
  workersTypes: "^5.20261117.1",
  typescript: "^6.0.3",
  node: "^22.12.0",
  hono: "^4.13.19",
  zod: "^4.6.7",
};
const KEY = "k".repeat(64);

/** A project's files in memory, as `edgelink init` writes them, for the doctor to read. */
function memoryFs(files: Record<string, string>): FsModule {
  const enoent = (path: string) => Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" });
  return {
    readFile: async (path) => {
      const text = files[path.replace(/^\/p\//, "")];
      if (text === undefined) throw enoent(path);
      return text;
    },
    writeFile: async () => {},
    mkdir: async () => undefined,
    readdir: async () => Object.keys(files),
    stat: async () => ({ isDirectory: () => true }),
  };
}

function project(
  template: "echo" | "model",
  change: (files: Record<string, string>) => void = () => {},
) {
  const files = Object.fromEntries(
    projectFiles("p", template, VERSIONS, KEY).map((f) => [f.path, f.content]),
  );
  change(files);
  return diagnose(memoryFs(files), (...p) => p.join("/"), "/p");
}

const edit = (files: Record<string, string>, path: string, f: (t: string) => string) => {
  files[path] = f(files[path] ?? "");
};

describe("edgelink doctor: a project's configuration, checked without running it", () => {
  it("a new echo project has no problem", async () => {
    expect((await project("echo")).problems).toEqual([]);
  });

  it("a new model project names only the empty OPENAI_API_KEY", async () => {
    const { problems } = await project("model");
    expect(problems).toEqual([
      expect.stringContaining("openai(...) needs OPENAI_API_KEY, which .dev.vars does not set"),
    ]);
    const keyed = await project("model", (f) =>
      edit(f, ".dev.vars", (t) => t.replace("OPENAI_API_KEY=", "OPENAI_API_KEY=sk-1")),
    );
    expect(keyed.problems).toEqual([]);
  });

  it("names a missing binding, a missing or key-value migration, an old date, a short or absent id key, a base URL without /v1", async () => {
    const noIndex = await project("echo", (f) =>
      edit(f, "wrangler.toml", (t) => t.replace('name = "EDGELINK_INDEX"', 'name = "OTHER"')),
    );
    expect(noIndex.problems).toEqual([expect.stringContaining("EDGELINK_INDEX is not bound")]);

    const kv = await project("echo", (f) =>
      edit(f, "wrangler.toml", (t) => t.replace("new_sqlite_classes", "new_classes")),
    );
    expect(kv.problems).toHaveLength(2);
    expect(kv.problems[0]).toContain(
      "EdgelinkContext (bound as EDGELINK_CONTEXT) is in a new_classes migration",
    );

    const noMigration = await project("echo", (f) =>
      edit(f, "wrangler.toml", (t) => t.slice(0, t.indexOf("[[migrations]]"))),
    );
    expect(noMigration.problems[1]).toContain(
      'EdgelinkIndex (bound as EDGELINK_INDEX) is in no migration: add a [[migrations]] entry with new_sqlite_classes = ["EdgelinkIndex"]',
    );

    const old = await project("echo", (f) =>
      edit(f, "wrangler.toml", (t) =>
        t.replace(/compatibility_date = "[\d-]+"/, 'compatibility_date = "2025-01-01"'),
      ),
    );
    expect(old.problems).toEqual([
      expect.stringContaining("compatibility_date 2025-01-01 is older than 2026-11-01"),
    ]);

    const short = await project("echo", (f) => {
      f[".dev.vars"] = "EDGELINK_ID_KEY=short\n";
    });
    expect(short.problems).toEqual([
      expect.stringContaining("EDGELINK_ID_KEY in .dev.vars has 5 characters"),
    ]);
    const none = await project("echo", (f) => {
      delete f[".dev.vars"];
    });
    expect(none.problems).toEqual([expect.stringContaining("there is no .dev.vars")]);
    const inVars = await project("echo", (f) =>
      edit(f, "wrangler.toml", (t) => `${t}\n[vars]\nEDGELINK_ID_KEY = "${KEY}"\n`),
    );
    expect(inVars.problems).toEqual([
      expect.stringContaining("EDGELINK_ID_KEY is in wrangler.toml's [vars]"),
    ]);

    const base = await project("model", (f) => {
      f[".dev.vars"] =
        `EDGELINK_ID_KEY=${KEY}\nOPENAI_API_KEY=sk-1\nOPENAI_BASE_URL=https://gateway.example.com/openai\n`;
    });
    expect(base.problems).toEqual([
      expect.stringContaining("did you mean https://gateway.example.com/openai/v1?"),
    ]);
  });

  it("without wrangler.toml, or with one it cannot read, says so", async () => {
    const missing = await project("echo", (f) => {
      delete f["wrangler.toml"];
    });
    expect(missing.problems).toEqual([expect.stringContaining("there is no wrangler.toml in /p")]);
    const broken = await project("echo", (f) => {
      f["wrangler.toml"] = 'name = "x"\nmain = \n';
    });
    expect(broken.problems).toEqual([expect.stringContaining("wrangler.toml: line 2")]);
  });
});

describe("the readers and the templates", () => {
  it("parseWranglerToml reads tables, arrays of tables, multi-line arrays and comments", () => {
    const config = parseWranglerToml(
      [
        'name = "a" # the name',
        'flags = ["x", "y#z"]',
        "[[migrations]]",
        'tag = "v1"',
        "new_sqlite_classes = [",
        '  "A",',
        '  "B",',
        "]",
        "[vars]",
        "N = 3",
      ].join("\n"),
    );
    expect(config.top).toEqual({ name: "a", flags: ["x", "y#z"] });
    expect(config.arrays.migrations).toEqual([{ tag: "v1", new_sqlite_classes: ["A", "B"] }]);
    expect(config.tables.vars).toEqual({ N: 3 });
  });

  it("parseDevVars reads NAME=value lines, quoted or not, and skips comments", () => {
    expect([...parseDevVars('# c\nA=1\nB="two words"\n\nC=\n').entries()]).toEqual([
      ["A", "1"],
      ["B", "two words"],
      ["C", ""],
    ]);
  });

  it("a worker name is what wrangler accepts, and each project gets its own id key", () => {
    expect(workerName("My Agent_2")).toBe("my-agent-2");
    expect(workerName("___")).toBe("my-agent");
    const [a, b] = [newIdKey(), newIdKey()];
    expect(a).toMatch(/^[A-Za-z0-9+/]{64}$/);
    expect(a).not.toBe(b);
  });
});

describe("edgelink doctor: long-term memory", () => {
  const withMemory = (f: Record<string, string>) =>
    edit(
      f,
      "src/agent.ts",
      (t) =>
        `import { memory } from "edgelink/memory";\n${t.replace("defineAgent({", "defineAgent({ memory: memory(),")}`,
    );

  it("K8: a main module that turns memory on needs the EDGELINK_MEMORY binding and its SQLite migration", async () => {
    const missing = await project("echo", withMemory);
    expect(missing.problems).toEqual([
      expect.stringContaining(
        'EDGELINK_MEMORY is not bound: add [[durable_objects.bindings]] name = "EDGELINK_MEMORY" class_name = "EdgelinkMemory"',
      ),
    ]);
    const bound = await project("echo", (f) => {
      withMemory(f);
      edit(f, "wrangler.toml", (t) =>
        t
          .replace(
            "[[migrations]]",
            '[[durable_objects.bindings]]\nname = "EDGELINK_MEMORY"\nclass_name = "EdgelinkMemory"\n\n[[migrations]]',
          )
          .replace(
            /new_sqlite_classes = \[([^\]]*)\]/,
            'new_sqlite_classes = [$1, "EdgelinkMemory"]',
          ),
      );
    });
    expect(bound.problems).toEqual([]);
    // Without memory, no memory binding is asked for.
    expect((await project("echo")).problems).toEqual([]);
  });
});

/** A memory fs that also records what is written (appended with flag "a"). */
function writableFs(files: Record<string, string>): FsModule {
  const base = memoryFs(files);
  return {
    ...base,
    writeFile: async (path, data, options) => {
      const key = path.replace(/^\/p\//, "");
      files[key] = options?.flag === "a" ? (files[key] ?? "") + data : data;
    },
  };
}

describe("edgelink doctor and init: .dev.vars is never committed", () => {
  it("a .dev.vars holding a secret that .gitignore does not cover is a problem", async () => {
    const missing = await project("echo", (f) => {
      f[".gitignore"] = "node_modules/\n.wrangler/\n";
    });
    expect(missing.problems).toEqual([
      expect.stringContaining(".dev.vars holds secrets and git does not ignore it"),
    ]);
    // No .gitignore at all is the same problem.
    const none = await project("echo", (f) => {
      delete f[".gitignore"];
    });
    expect(none.problems).toEqual([expect.stringContaining("git does not ignore it")]);
    // A later negation takes it back out of the ignored files.
    const negated = await project("echo", (f) => {
      f[".gitignore"] = ".dev.vars\n!.dev.vars\n";
    });
    expect(negated.problems).toEqual([expect.stringContaining("git does not ignore it")]);
  });

  it("patterns git reads the same way all cover it", async () => {
    for (const rules of [
      ".dev.vars",
      "/.dev.vars",
      ".dev.*",
      "*.vars",
      ".dev.var[s]",
      "**/.dev.vars",
    ]) {
      const { problems } = await project("echo", (f) => {
        f[".gitignore"] = `# secrets\n${rules}\n`;
      });
      expect(`${rules}: ${problems.join("; ")}`).toBe(`${rules}: `);
    }
    for (const rules of [".dev.vars/", "sub/.dev.vars", "dev.vars", "#.dev.vars"]) {
      const { problems } = await project("echo", (f) => {
        f[".gitignore"] = `${rules}\n`;
      });
      expect(problems).toEqual([expect.stringContaining("git does not ignore it")]);
    }
  });

  it("init appends .dev.vars to an existing .gitignore that lacks it, once", async () => {
    const files: Record<string, string> = { ".gitignore": "node_modules/" };
    const fs = writableFs(files);
    const join = (...p: string[]) => p.join("/");
    expect(await ensureDevVarsIgnored(fs, join, "/p")).toBe(true);
    expect(files[".gitignore"]).toMatch(/^node_modules\/\n.*\n\.dev\.vars\n/s);
    expect(await devVarsIgnored(fs, join, "/p")).toBe(true);
    expect(await ensureDevVarsIgnored(fs, join, "/p")).toBe(false);
    expect(files[".gitignore"]?.match(/^\.dev\.vars$/gm)).toHaveLength(1);
  });
});
