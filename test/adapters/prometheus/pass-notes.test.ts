/**
 * What a pass notes is logged once per change: a role missing its native sums on every pass of an hour is one
 * warning, not 240, and its return is one info line.
 */
import { describe, expect, it } from "vitest";
import { PassNotes } from "../../../src/adapters/prometheus/pass-notes.js";
import { createLogger } from "../../../src/adapters/telemetry/logger.js";

function notes(): { notes: PassNotes; lines: { level: string; msg: string; [k: string]: unknown }[] } {
  const lines: { level: string; msg: string }[] = [];
  const logger = createLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line) as never) });
  return { notes: new PassNotes(logger), lines };
}

const missing = (n: number): string[] => Array.from({ length: n }, (_, i) => `team-a/chat-${i} decode (ttftSeconds)`);

describe("a pass's notes in the log", () => {
  it("warns once when roles start missing their native sums, naming ten and counting all, and says once when none does", () => {
    const { notes: log, lines } = notes();
    log.read({ nativeSumsMissing: [], infos: [] });
    expect(lines).toEqual([]);
    for (let i = 0; i < 3; i++) log.read({ nativeSumsMissing: missing(12), infos: [] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", rolesMissing: 12, roles: missing(10) });
    expect(lines[0]?.msg).toMatch(/convert_classic_histograms_to_nhcb.*--prometheus-queries=roles/);
    log.read({ nativeSumsMissing: [], infos: [] });
    log.read({ nativeSumsMissing: [], infos: [] });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: "info", passesMissing: 3 });
    // Missing again: warned again.
    log.read({ nativeSumsMissing: missing(1), infos: [] });
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ level: "warn", rolesMissing: 1 });
  });

  it("logs each Prometheus info text once", () => {
    const { notes: log, lines } = notes();
    const info = 'ttft: PromQL info: metric might not be a counter, name does not end in _total: "x"';
    log.read({ nativeSumsMissing: [], infos: [info] });
    log.read({ nativeSumsMissing: [], infos: [info, "itl: another"] });
    expect(lines.map((l) => l["info"])).toEqual([info, "itl: another"]);
  });
});
