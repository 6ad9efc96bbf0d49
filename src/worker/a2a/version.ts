import { A2AError } from "../../protocol/errors";
import type { ProtocolVersion } from "../../protocol/wire/requests";

export const SUPPORTED_VERSIONS: readonly ProtocolVersion[] = ["1.0", "0.3"];

/**
 * The protocol version a request asks for (§3.6): the `A2A-Version` header, else the
 * `A2A-Version` query parameter. Only Major.Minor counts; a patch number is ignored.
 * Returns null when the client named none (a v0.3 client, per §3.6.2).
 */
export function requestedVersion(request: Request, url: URL | string): ProtocolVersion | null {
  // The query is read only without the header: most requests need no URL parsed.
  const header = request.headers.get("A2A-Version");
  if (header === "1.0") return header;
  const raw = (
    header ??
    (typeof url === "string" ? new URL(url) : url).searchParams.get("A2A-Version") ??
    ""
  ).trim();
  if (raw === "") return null;
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(raw);
  const majorMinor = match ? `${Number(match[1])}.${Number(match[2])}` : raw;
  if (majorMinor === "1.0" || majorMinor === "0.3") return majorMinor;
  throw new A2AError(
    "VersionNotSupported",
    `A2A protocol version ${raw} is not supported; supported versions: ${SUPPORTED_VERSIONS.join(", ")}`,
    { requestedVersion: raw, supportedVersions: SUPPORTED_VERSIONS.join(",") },
  );
}
