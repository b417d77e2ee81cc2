/**
 * The one YAML reader of the CLI's input files. A hostile document (an
 * alias bomb, broken syntax, nesting deep enough to exhaust the stack) comes
 * back as a message naming the file, never as an exception.
 */
import { parseAllDocuments } from "yaml";

/**
 * Aliases one document may resolve. A scaler or a snapshot uses none or a few;
 * "billion laughs" needs thousands, and without a cap its expansion takes the
 * process's memory. The library's default is the same number, set here so a
 * change of default cannot lift it.
 */
export const maxYamlAliases = 100;

/** The non-empty documents of a YAML text, or why it is refused (each line names `path`). */
export function parseYamlDocuments(text: string, path: string): unknown[] | string {
  try {
    const docs = parseAllDocuments(text);
    const list = Array.isArray(docs) ? docs : [docs];
    const errors = list.flatMap((d) => d.errors.map((e) => `${path}: ${e.message}`));
    if (errors.length > 0) return errors.join("\n");
    return list
      .map((d) => d.toJS({ maxAliasCount: maxYamlAliases }) as unknown)
      .filter((d) => d !== null && d !== undefined);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (/alias count/i.test(reason))
      return `${path}: not read: ${reason} (the limit is ${maxYamlAliases} alias expansions per document)`;
    return `${path}: not read: ${reason}`;
  }
}
