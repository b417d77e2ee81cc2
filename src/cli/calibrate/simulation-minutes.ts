/**
 * Calibration minutes from `mds-scaler simulate -o json` runs: each run's
 * `minutes` (per role, every simulated minute as the core reads it) and the
 * scaler it ran. Several runs (say, static fleets of different sizes on the
 * same training slice) pool their minutes per role; their roles must agree.
 */
import { z } from "zod";
import type { CalibrationMinute, RoleMinutes, SkipReason } from "../../core/calibrate/minute.js";
import type { RoleKind } from "../../core/api/model-deployment.js";

const MinuteSchema = z.object({
  endSeconds: z.number(),
  readyReplicas: z.number().int().positive(),
  tokensPerSecondPerReplica: z.number().nonnegative(),
  ttftP95Milliseconds: z.number().nonnegative().optional(),
  itlP95Milliseconds: z.number().nonnegative().optional(),
  queueP95Milliseconds: z.number().nonnegative().optional(),
});

const RunSchema = z.object({
  trace: z.string(),
  policy: z.string(),
  maxReplicas: z.number().optional(),
  scaler: z.unknown(),
  minutes: z.array(
    z.object({
      role: z.string(),
      kind: z.enum(["Server", "Prefill", "Decode"]),
      minutes: z.array(MinuteSchema),
      skipped: z.record(z.string(), z.number()),
    }),
  ),
});

export interface SimulationMinutes {
  readonly roles: readonly RoleMinutes[];
  /** The scaler document of the first run. */
  readonly scaler: unknown;
  /** `trace (policy, at most N replicas)` of each run, in order. */
  readonly runs: readonly string[];
}

/** Pools the runs' minutes per role; errors name the flag (`--from-simulation` unless given), the file and the field. */
export function minutesFromSimulations(
  files: readonly { path: string; text: string }[],
  flag = "--from-simulation",
): SimulationMinutes {
  const roles = new Map<
    string,
    { kind: RoleKind; minutes: CalibrationMinute[]; skipped: Partial<Record<SkipReason, number>> }
  >();
  const runs: string[] = [];
  let scaler: unknown;
  for (const [i, { path, text }] of files.entries()) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new Error(`${flag} ${path}: not JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    const parsed = RunSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `${flag} ${path}: not a \`mds-scaler simulate -o json\` run with per-minute figures: ${issue?.path.join(".") || "(document)"}: ${issue?.message ?? "invalid"}`,
      );
    }
    const run = parsed.data;
    if (i === 0) scaler = run.scaler;
    runs.push(
      `${run.trace} (${run.policy}${run.maxReplicas === undefined ? "" : `, at most ${run.maxReplicas} replica${run.maxReplicas === 1 ? "" : "s"}`})`,
    );
    const names = run.minutes.map((r) => r.role).join(", ");
    if (i > 0 && names !== [...roles.keys()].join(", "))
      throw new Error(
        `${flag} ${path}: minutes: roles ${names} differ from the first run's ${[...roles.keys()].join(", ")}`,
      );
    for (const r of run.minutes) {
      const pooled = roles.get(r.role) ?? { kind: r.kind, minutes: [], skipped: {} };
      if (pooled.kind !== r.kind)
        throw new Error(
          `${flag} ${path}: minutes: role ${r.role} is ${r.kind} here and ${pooled.kind} in the first run`,
        );
      pooled.minutes.push(
        ...r.minutes.map(
          (m) =>
            Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as unknown as CalibrationMinute,
        ),
      );
      for (const [reason, n] of Object.entries(r.skipped)) {
        const key = reason as SkipReason;
        pooled.skipped[key] = (pooled.skipped[key] ?? 0) + n;
      }
      roles.set(r.role, pooled);
    }
  }
  return { roles: [...roles.entries()].map(([role, r]) => ({ role, ...r })), scaler, runs };
}
