/**
 * The HTTP headers sent with every PromQL query (`--prometheus-headers-file`): a
 * multi-tenant store behind a gateway wants its tenant in a header
 * (`X-Scope-OrgID` for Mimir, Cortex and Thanos' receive; an `Authorization`
 * token for a proxy). One `Name: value` per line; blank lines and lines
 * starting with `#` are skipped. The file is meant to be mounted from a
 * Secret: a value may be a credential, so no message, log line or error ever
 * shows one; problems name the file, the line and the header name.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "./settings.js";

/** RFC 9110 token characters: what a header name may hold. */
const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Set by the client itself; a file that sets them would break the query. */
const reserved = new Set(["content-type", "content-length", "host", "accept-encoding", "connection"]);

/** The headers of a file's text; problems name `origin`, the line and the header, never a value. */
export function parseHeaders(text: string, origin: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const seen = new Map<string, number>();
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    const where = `${origin}:${i + 1}`;
    if (line === "" || line.startsWith("#")) return;
    const colon = line.indexOf(":");
    if (colon <= 0) {
      problems.push(`${where}: expected "Name: value" (the line is not shown: it may hold a credential)`);
      return;
    }
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (!headerName.test(name)) {
      problems.push(`${where}: ${JSON.stringify(name)} is not a header name (letters, digits and !#$%&'*+-.^_\`|~)`);
      return;
    }
    const key = name.toLowerCase();
    if (reserved.has(key)) problems.push(`${where}: ${name} is set by the client and cannot be overridden`);
    else if (seen.has(key)) problems.push(`${where}: ${name} is already set on line ${seen.get(key)}`);
    else if (value === "" || /[\0\r\n]/.test(value)) problems.push(`${where}: ${name} has an empty or invalid value`);
    else {
      seen.set(key, i + 1);
      headers[name] = value;
    }
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return headers;
}

/** The headers `--prometheus-headers-file` names (none without it); an unreadable file is a configuration error. */
export function prometheusHeadersFrom(
  path: string,
  readFile: (path: string) => string = (p) => readFileSync(p, "utf8"),
): Record<string, string> {
  if (path === "") return {};
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigError([`--prometheus-headers-file = ${JSON.stringify(path)}: cannot be read (${code})`]);
  }
  return parseHeaders(text, `--prometheus-headers-file ${path}`);
}
