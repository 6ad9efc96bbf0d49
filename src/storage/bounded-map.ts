/**
 * Sets `key` as the newest entry of `map` and, past `max` entries, drops the oldest: a
 * Map keeps insertion order, so an entry set again moves to the end and the first is the
 * one least recently set.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}
