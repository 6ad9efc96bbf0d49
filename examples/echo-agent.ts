export class EdgelinkContext {}
export class EdgelinkIndex {}
export default {
  fetch() {
    return new Response("hi");
  },
};
