/** The memory tests' Worker: it serves nothing; the tests call its objects. */
export { StoreTestMemory } from "./store-worker";

export default {
  fetch: () => new Response("memory tests", { status: 404 }),
};
