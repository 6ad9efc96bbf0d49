/**
 * Readers for the two files `edgelink doctor` checks: wrangler.toml (the part of TOML that
 * wrangler configurations use: tables, arrays of tables, strings, booleans, numbers and
 * arrays of strings) and .dev.vars (dotenv lines).
 */

export type TomlValue = string | number | boolean | string[];
export type TomlTable = Record<string, TomlValue>;

/** A parsed wrangler.toml: top-level keys, `[name]` tables, `[[name]]` arrays of tables. */
export interface WranglerConfig {
  top: TomlTable;
  tables: Record<string, TomlTable>;
  arrays: Record<string, TomlTable[]>;
}

/** Strips a `#` comment that is not inside a string. */
function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#") return line.slice(0, i);
  }
  return line;
}

function parseString(raw: string): string | null {
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(raw) ?? /^'([^']*)'$/.exec(raw);
  if (!m) return null;
  return raw.startsWith('"') ? (JSON.parse(`"${m[1]}"`) as string) : (m[1] ?? "");
}

function parseValue(raw: string, line: number): TomlValue {
  const value = raw.trim();
  const s = parseString(value);
  if (s !== null) return s;
  if (value === "true" || value === "false") return value === "true";
  if (/^[+-]?\d[\d_]*(\.\d+)?$/.test(value)) return Number(value.replaceAll("_", ""));
  if (value.startsWith("[") && value.endsWith("]")) {
    const inner = value.slice(1, -1).trim();
    if (inner === "") return [];
    const items = inner.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/).map((i) => i.trim());
    return items
      .filter((i) => i !== "")
      .map((i) => {
        const item = parseString(i);
        if (item === null) throw new Error(`line ${line}: only arrays of strings are read here`);
        return item;
      });
  }
  throw new Error(`line ${line}: cannot read the value ${value}`);
}

/** Parses the TOML of a wrangler configuration; throws naming the line it cannot read. */
export function parseWranglerToml(text: string): WranglerConfig {
  const config: WranglerConfig = { top: {}, tables: {}, arrays: {} };
  let current: TomlTable = config.top;
  // A multi-line array: its opening line, kept until the closing bracket.
  let pending: { key: string; text: string; line: number } | null = null;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = stripComment(lines[i] ?? "").trim();
    if (pending) {
      pending.text += ` ${line}`;
      if (line.endsWith("]")) {
        current[pending.key] = parseValue(pending.text.replace(/,\s*]$/, "]"), pending.line);
        pending = null;
      }
      continue;
    }
    if (line === "") continue;
    const array = /^\[\[\s*([\w.-]+)\s*\]\]$/.exec(line);
    if (array?.[1]) {
      current = {};
      config.arrays[array[1]] = [...(config.arrays[array[1]] ?? []), current];
      continue;
    }
    const table = /^\[\s*([\w.-]+)\s*\]$/.exec(line);
    if (table?.[1]) {
      current = config.tables[table[1]] ?? {};
      config.tables[table[1]] = current;
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`line ${i + 1}: expected key = value, got "${line}"`);
    const key = line.slice(0, eq).trim().replace(/^"|"$/g, "");
    const value = line.slice(eq + 1).trim();
    if (value.startsWith("[") && !value.endsWith("]")) {
      pending = { key, text: value, line: i + 1 };
      continue;
    }
    // Inline tables (`{ ... }`) are kept as text: nothing the doctor checks is written so.
    current[key] = value.startsWith("{") ? value : parseValue(value, i + 1);
  }
  if (pending) throw new Error(`line ${pending.line}: an array that is never closed`);
  return config;
}

/** Parses .dev.vars (`NAME=value` lines, `#` comments, optionally quoted values). */
export function parseDevVars(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    let value = line.slice(eq + 1).trim();
    if (/^"(.*)"$/.test(value) || /^'(.*)'$/.test(value)) value = value.slice(1, -1);
    vars.set(line.slice(0, eq).trim(), value);
  }
  return vars;
}
