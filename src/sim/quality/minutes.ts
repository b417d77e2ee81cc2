/**
 * What `mds-scaler calibrate` reads from a simulated run: at the end of every
 * simulated minute, each role's observation over that minute (both windows
 * 60 s, built from the scraped series by the core's own `observeRole`), turned
 * into a calibration minute by the core, queue time included (the quality
 * fleet scrapes it as vLLM exports it).
 */
import { tokenFieldsRead } from "../../core/algorithms/capacity.js";
import { minuteOf, type CalibrationMinute, type RoleMinutes, type SkipReason } from "../../core/calibrate/minute.js";
import type { FleetRoleKind, QualityFleet } from "./cluster.js";
import { buildObservation, type ScrapeHistory } from "./observations.js";

/** The length of a calibration minute. */
export const minuteSeconds = 60;

export class MinuteRecorder {
  private readonly roles: {
    role: string;
    kind: FleetRoleKind;
    minutes: CalibrationMinute[];
    skipped: Partial<Record<SkipReason, number>>;
  }[];

  constructor(
    fleet: QualityFleet,
    private readonly scrapeIntervalSeconds: number,
    /** The trace's origin (`Trace.originSeconds`): a minute's end is written in the source trace's seconds. */
    private readonly originSeconds = 0,
  ) {
    this.roles = fleet.roles.map((r) => ({ role: r.name, kind: r.kind, minutes: [], skipped: {} }));
  }

  /** Records the minute ending at `nowSeconds` for every role. */
  record(fleet: QualityFleet, scrapes: ReadonlyMap<string, ScrapeHistory>, epochMs: number, nowSeconds: number): void {
    for (const role of this.roles) {
      const ready = fleet.replicas.filter((r) => r.phase === "Ready" && r.role === role.role);
      const observation = buildObservation({
        kind: role.kind,
        pods: ready.flatMap((r) => {
          const history = scrapes.get(r.name);
          return history === undefined ? [] : [{ pod: r.name, history }];
        }),
        readyReplicas: ready.length,
        nowSeconds,
        epochMs,
        stableWindowSeconds: minuteSeconds,
        panicWindowSeconds: minuteSeconds,
        samplingIntervalSeconds: this.scrapeIntervalSeconds,
        reads: tokenFieldsRead(role.kind),
      });
      const reading = minuteOf({ kind: role.kind, observation, endSeconds: this.originSeconds + nowSeconds });
      if (reading.kind === "minute") role.minutes.push(reading.minute);
      else role.skipped[reading.reason] = (role.skipped[reading.reason] ?? 0) + 1;
    }
  }

  result(): RoleMinutes[] {
    return this.roles.map((r) => ({ ...r, minutes: [...r.minutes], skipped: { ...r.skipped } }));
  }
}
