/**
 * The `edgelink` command's entry (bundled to dist/cli.js; the launcher imports this module
 * for its side effect): runs the CLI on the process's arguments.
 */
import { proc } from "./node";
import { main } from "./run";

// Exit once the output is flushed: fetch keeps idle keep-alive sockets that would hold the
// process open for seconds after the command is done.
main(proc.argv.slice(2)).then((code) => {
  proc.exitCode = code;
  proc.stdout.write("", () => proc.stderr.write("", () => proc.exit(code)));
});
