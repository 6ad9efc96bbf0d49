/**
 * A task's artifacts as the task store changes them: adding one, replacing one, appending
 * parts to one, with the event announcing it. Runs in the store's transaction, as its
 * methods do; the rows themselves are written by artifact-rows.ts.
 */
import type { Artifact } from "../../protocol/artifact";
import { A2AError } from "../../protocol/errors";
import { checkRowBytes } from "../../storage/row-limit";
import { fitsTaskRow, inlineParts, moveOutOfTask, writeArtifact } from "./artifact-rows";
import type { LoggedEvent } from "./task-status";
import type { TaskStore } from "./task-store";

/**
 * Adds an artifact, replaces one, or appends parts to one (A2A append/lastChunk).
 * An append writes its parts and its event, nothing else: the task, the artifact and
 * its next part index are known in memory.
 */
export function putTaskArtifact(
  store: TaskStore,
  taskId: string,
  artifact: Artifact,
  chunk: { append: boolean; lastChunk: boolean },
): LoggedEvent {
  const task = store.cache.use(taskId);
  const known = task.artifacts.find((a) => a.artifactId === artifact.artifactId);
  if (chunk.append && !known) {
    throw new A2AError(
      "InvalidParams",
      `Cannot append to artifact ${artifact.artifactId}: it does not exist`,
    );
  }
  const bodies = artifact.parts.map((part) => JSON.stringify(part));
  for (const body of bodies) checkRowBytes("artifact part", body);
  const appending = chunk.append && known !== undefined;
  let headerJson = "";
  let inline: string | null = null;
  if (!appending) {
    const { parts: _parts, ...header } = artifact;
    headerJson = JSON.stringify(header);
    checkRowBytes("artifact header", headerJson);
    inline = inlineParts(headerJson, bodies);
  }
  const sizes = store.cache.artifactSizesOf(task);
  // As `readArtifacts` counts the stored rows: the header, then inline parts or part rows.
  const size =
    (appending ? (sizes.each.get(artifact.artifactId) ?? 0) : 0) +
    headerJson.length +
    (inline?.length ?? bodies.reduce((sum, body) => sum + body.length, 0));
  store.cache.checkArtifactChars(task, sizes, artifact.artifactId, size);
  const inTask = sizes.inTask === artifact.artifactId;
  // The task's first artifact, written whole and small, stays in the task's row.
  const toTask =
    !appending && (inTask || task.artifacts.length === 0) && fitsTaskRow(headerJson, inline);
  return store.atomic(() => {
    if (toTask) {
      store.writeTaskArtifact(taskId, headerJson, inline);
      sizes.inTask = artifact.artifactId;
    } else {
      if (inTask) {
        // Appended to, or grown past the row: it becomes the table's first row.
        if (!store.moveHeldArtifact(taskId, artifact.artifactId)) {
          moveOutOfTask(store.sql, taskId, artifact.artifactId);
          store.writeTaskArtifact(taskId, null, null);
        }
        sizes.inTask = null;
      }
      writeArtifact(
        store,
        store.partRows,
        taskId,
        artifact.artifactId,
        known,
        appending,
        bodies,
        headerJson,
        inline,
      );
    }
    // A replaced artifact is counted anew (an overestimate until the task is read again).
    store.cache.grew(
      task,
      bodies.reduce((sum, body) => sum + body.length, 0),
    );
    sizes.total += size - (sizes.each.get(artifact.artifactId) ?? 0);
    sizes.each.set(artifact.artifactId, size);
    if (chunk.append && known) {
      known.parts.push(...artifact.parts);
    } else {
      const copy = { ...artifact, parts: [...artifact.parts] };
      const at = known ? task.artifacts.indexOf(known) : -1;
      if (at >= 0) task.artifacts[at] = copy;
      else task.artifacts.push(copy);
    }
    return store.log(taskId, {
      kind: "artifact-update",
      taskId,
      contextId: task.contextId,
      artifact,
      append: chunk.append,
      lastChunk: chunk.lastChunk,
    });
  });
}
