/** A bounded number from the environment, or the fallback; anything else stops the run. */
export function envNumber(name, fallback, min, max, { integer = false } = {}) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!(integer ? Number.isInteger(n) : Number.isFinite(n)) || n < min || n > max) {
    throw new Error(
      `${name} must be ${integer ? "an integer" : "a number"} between ${min} and ${max}, got ${raw}`,
    );
  }
  return n;
}
