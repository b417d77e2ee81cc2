/** Writes dashboards/*.json from src/dashboards. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { dashboards } from "../src/dashboards/index.js";

const dir = join(import.meta.dirname, "..", "dashboards");
for (const [file, build] of Object.entries(dashboards)) {
  writeFileSync(join(dir, file), JSON.stringify(build(), null, 2) + "\n");
  process.stdout.write(`wrote dashboards/${file}\n`);
}
