/** Writes the CRD and docs/reference.md from the schema: `npm run generate`. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { crdPath, referencePath, renderCrd, renderReference } from "./crd.js";

for (const [path, text] of [
  [crdPath, renderCrd()],
  [referencePath, renderReference()],
] as const) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  process.stdout.write(`wrote ${path}\n`);
}
