/**
 * The whole answer of `mds-scaler calibrate`: per role the banding (the pure
 * rule in src/core/calibrate/bands.ts), the minutes skipped and why, and what
 * it can print: a table, JSON, or the scaler with the calibrated targets.
 */
import { stringify } from "yaml";
import {
  calibrateRole,
  minMinutesPerBand,
  requiredShare,
  type LatencyTargets,
  type RoleCalibration,
} from "../../core/calibrate/bands.js";
import { minAdjacentPairs } from "../../core/calibrate/demand-noise.js";
import { floorsCalibratedAnnotation } from "../../core/api/floors-calibrated.js";
import {
  stepReplacesFleet,
  keepFleetAboveSwing,
  minSwingWindows,
  precedingMinutes,
  type DemandSwing,
} from "../../core/calibrate/demand-swing.js";
import type { CalibrationMinute, RoleMinutes, SkipReason } from "../../core/calibrate/minute.js";
import type { RoleKind } from "../../core/api/model-deployment.js";
import { quantityValue } from "../../core/api/quantity.js";
import type { ScalerSpec, TokenThroughputParams } from "../../core/api/scaler.js";
import { materialQueueFractionOfTtftTarget, type LatencyGuardReading } from "../../core/algorithms/ttft-reading.js";
import { tokenThroughputBlockOf } from "../../core/algorithms/windows.js";
import { describeSliceCheck, type SliceCheck } from "./slice-check.js";
import type { FleetSteps } from "./fleet-step.js";

export interface CalibrationResult {
  /** Where the minutes came from, in words. */
  readonly source: string;
  readonly targets: LatencyTargets;
  /** How TTFT was judged: as the latency guard with this reading judges it (bands.ts). */
  readonly reading: LatencyGuardReading;
  readonly rules: { readonly minuteSeconds: 60; readonly minMinutesPerBand: number; readonly requiredShare: number };
  readonly roles: readonly (RoleCalibration & {
    readonly role: string;
    readonly skipped: Readonly<Partial<Record<SkipReason, number>>>;
    readonly points: readonly CalibrationMinute[];
  })[];
  readonly warnings: readonly string[];
  /** `calibrate --trace`'s check of the figure on the slice (slice-check.ts), for the role it checked. */
  readonly sliceCheck?: SliceCheck & { readonly role: string };
  /** `--hourly-floors-from`: each calibrated role's floors by the UTC hour, read from the day before (hourly-floors.ts). */
  readonly hourlyFloors?: HourlyFloors;
  /** `--swing-from`: the docs' step for replacing a fleet, per role (fleet-step.ts). */
  readonly fleetSteps?: FleetSteps;
  /**
   * `--keep-targets`: the per-replica targets the scaler already writes, which the floors and the fleet step read in
   * place of the figures measured, and which the scaler written keeps as they are.
   */
  readonly keptTargets?: readonly KeptTarget[];
}

export interface KeptTarget {
  readonly role: string;
  readonly tokensPerSecondPerReplica: number;
}

export interface HourlyFloors {
  /** Where the day before's minutes came from, in words. */
  readonly source: string;
  /**
   * As of when the floors stand (RFC 3339): the end of the day before read from Prometheus, or when calibrate ran where
   * that day is a `simulate -o json` run, which has no date. The scaler written carries it as `floorsCalibratedAnnotation`.
   */
  readonly calibratedAt: string;
  readonly roles: readonly { readonly role: string; readonly floorReplicasByUtcHour: readonly number[] }[];
  /** The roles without a figure, which the whole-day steps keep at their fleet. */
  readonly held: readonly HeldRole[];
}

/** A role the scaler written holds at its fleet (`minReplicas` = `maxReplicas`), and why. */
export interface HeldRole {
  readonly role: string;
  readonly fleetReplicas: number;
  readonly why: string;
}

/** Every role held at its fleet: by the fleet step (`--swing-from`), or without a figure under the whole-day steps. */
function heldRoles(result: CalibrationResult): HeldRole[] {
  const held = new Map<string, HeldRole>();
  for (const h of result.hourlyFloors?.held ?? []) held.set(h.role, h);
  for (const f of result.fleetSteps?.roles ?? [])
    if (f.step.kind === "keep the fleet")
      held.set(f.role, { role: f.role, fleetReplicas: f.fleetReplicas, why: `by the docs' step: ${f.step.why}` });
  return [...held.values()];
}

/**
 * The per-replica target a role will run at, which the floors and the fleet step size it by: the scaler's own where
 * `--keep-targets` keeps it, otherwise calibrate's figure; undefined where there is neither.
 */
export function runningFigureOf(result: CalibrationResult, role: string): number | undefined {
  if (result.keptTargets !== undefined)
    return result.keptTargets.find((k) => k.role === role)?.tokensPerSecondPerReplica;
  const answer = result.roles.find((r) => r.role === role)?.answer;
  return answer?.kind === "calibrated" ? answer.tokensPerSecondPerReplica : undefined;
}

/**
 * `--keep-targets`: each role's per-replica target as the scaler writes it (TokenThroughput's block, or Predictive's
 * fallback block). Once the scaler runs, the minutes calibrate reads are a fleet the scaler sized, not fleets a load
 * test stepped down, and they do not give back the first run's figure (a whole day served by the scaler read less
 * than half its target: docs/calibrate.md, "A whole day"); so the daily refresh of the floors sizes them by the
 * target the scaler runs at. An error names a role whose kind has no target written.
 */
export function withKeptTargets(result: CalibrationResult, spec: ScalerSpec): CalibrationResult {
  const tt = tokenThroughputOf(spec);
  const keptTargets = result.roles.map((r) => {
    const field = targetField[r.kind];
    const written = field === undefined ? undefined : tt[field];
    if (field === undefined || written === undefined)
      throw new Error(
        `--keep-targets: role ${r.role} (${r.kind}): the scaler writes no ${field ?? "per-replica target for this kind"}`,
      );
    return { role: r.role, tokensPerSecondPerReplica: quantityValue(written) };
  });
  return { ...result, keptTargets };
}

/** The TokenThroughput parameters a scaler spec carries (its own block, or Predictive's fallback). */
function tokenThroughputOf(spec: ScalerSpec): TokenThroughputParams {
  const tt = tokenThroughputBlockOf(spec).params;
  if (tt === undefined)
    throw new Error(
      `spec.algorithm: calibrate writes TokenThroughput's per-replica targets; this scaler is ${spec.algorithm.type}, which has none`,
    );
  return tt;
}

export function latencyTargetsOf(spec: ScalerSpec): LatencyTargets {
  const tt = tokenThroughputOf(spec);
  return {
    ttftMilliseconds: quantityValue(tt.ttftTargetMilliseconds),
    itlMilliseconds: quantityValue(tt.itlTargetMilliseconds),
  };
}

export function calibrate(
  source: string,
  spec: ScalerSpec,
  roles: readonly RoleMinutes[],
  warnings: readonly string[],
  reading: LatencyGuardReading,
): CalibrationResult {
  const targets = latencyTargetsOf(spec);
  const queueTarget = tokenThroughputOf(spec).queueTimeTargetMilliseconds;
  return {
    source,
    targets,
    reading,
    rules: { minuteSeconds: 60, minMinutesPerBand, requiredShare },
    roles: roles.map((r) => ({
      role: r.role,
      skipped: r.skipped,
      ...calibrateRole(r.kind, r.minutes, targets, reading),
      points: r.minutes,
    })),
    warnings:
      queueTarget === undefined
        ? warnings
        : [
            ...warnings,
            `queueTimeTargetMilliseconds ${queueTarget}: not judged here (minutes keep their targets on TTFT and ITL); the scaler written carries it as it is`,
          ],
  };
}

/**
 * The docs' step on the swing, said where the swing is printed: it decides only over the same hours of the day
 * before served by the fleet being replaced; the training slice's own swing did not tell the replay's.
 */
function describeSwingStep(swing: DemandSwing): string {
  const keeps = !stepReplacesFleet(swing.largestRatio);
  const step = keeps
    ? "keep that fleet"
    : `replace it with the scaler capped at its size, calibrated with --swing-headroom ${keepFleetAboveSwing}`;
  return `${keeps ? "above" : "at most"} ${keepFleetAboveSwing}: where these minutes are the same hours of the day before, served by the fleet you would replace, the docs' steps ${step}`;
}

const fmt = (v: number | undefined): string =>
  v === undefined ? "-" : Number.isInteger(v) ? String(v) : v.toPrecision(4).replace(/\.?0+$/, "");

/** How a TTFT above its target is judged, in words for the table's header. */
function readingWords(reading: LatencyGuardReading, ttftTargetMilliseconds: number): string {
  return reading === "literal"
    ? "read literally, as the literal latency guard reads it"
    : `on queueing, as the latency guard reads it: a minute whose p95 queue time is known breaks on TTFT only when that waiting is above ${fmt(materialQueueFractionOfTtftTarget * ttftTargetMilliseconds)} ms`;
}

export function table(result: CalibrationResult): string {
  const t = result.targets;
  const lines = [
    `calibrate: ${result.source}`,
    `targets: p95 TTFT ≤ ${fmt(t.ttftMilliseconds)} ms (${readingWords(result.reading, t.ttftMilliseconds)}), p95 ITL ≤ ${fmt(t.itlMilliseconds)} ms; a band of at least ${minMinutesPerBand} one-minute figures holds when ≥ ${100 * requiredShare} % of them kept every target of the role's kind`,
    ...result.warnings.map((w) => `warning: ${w}`),
  ];
  for (const r of result.roles) {
    const skipped = Object.entries(r.skipped).map(([why, n]) => `${n} ${why}`);
    const queue =
      r.queueTime === "read"
        ? "queue time read"
        : r.queueTime === "absent"
          ? "no queue-time series: TTFT read literally"
          : "queue time not judged (Decode)";
    lines.push(
      "",
      `ROLE ${r.role} (${r.kind}): ${r.minutes} minutes of evidence${skipped.length > 0 ? ` (skipped: ${skipped.join(", ")})` : ""}; ${queue}`,
    );
    const header = [
      "tok/s per replica",
      "minutes",
      "within targets",
      "p95 TTFT ms",
      "p95 queue ms",
      "p95 ITL ms",
      "band",
    ];
    const rows = r.bands.map((b) => [
      `${fmt(b.fromTokensPerSecond)}–${fmt(b.toTokensPerSecond)}`,
      String(b.minutes),
      `${(100 * b.shareWithinTargets).toFixed(1)} %`,
      fmt(b.ttftP95Milliseconds),
      fmt(b.queueP95Milliseconds),
      fmt(b.itlP95Milliseconds),
      b.verdict,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
    for (const row of [header, ...rows])
      lines.push(`  ${row.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ")}`.trimEnd());
    const a = r.answer;
    lines.push(
      a.kind === "calibrated"
        ? `  answer: ${fmt(a.tokensPerSecondPerReplica)} tok/s per ready replica (capacity, where the targets broke: ${fmt(a.capacityTokensPerSecondPerReplica)}): ${a.why}`
        : `  answer: ${a.kind}: ${a.why}`,
    );
    const kept = result.keptTargets?.find((k) => k.role === r.role);
    if (kept !== undefined)
      lines.push(
        `  kept: ${fmt(kept.tokensPerSecondPerReplica)} tok/s per ready replica, the scaler's own target (--keep-targets): the steps below read it, and the scaler written keeps it`,
      );
    lines.push(
      r.demandNoise === undefined
        ? `  demand noise: fewer than ${minAdjacentPairs} pairs of adjacent minutes, not measured`
        : `  demand noise: ${fmt(r.demandNoise.varianceTokensPerSecondSquared)} (tok/s)² from ${r.demandNoise.pairs} pairs of adjacent minutes (Predictive's measurementNoise)`,
      r.demandSwing === undefined
        ? `  demand swing: fewer than ${minSwingWindows} windows of ${precedingMinutes + 1} adjacent minutes, not measured`
        : `  demand swing: at most ${fmt(r.demandSwing.largestRatio)} × the mean of the ${precedingMinutes} minutes before, over ${r.demandSwing.windows} windows of ${precedingMinutes + 1} adjacent minutes (rises a replica's start-up must follow); ${describeSwingStep(r.demandSwing)} (docs/calibrate.md, "The demand swing")`,
    );
    lines.push(...stepLines(result, r.role));
  }
  return `${lines.join("\n")}\n`;
}

/** What the steps after the bands did with a role, one line each: the slice check, the floors, the fleet step. */
function stepLines(result: CalibrationResult, role: string): string[] {
  const out: string[] = [];
  if (result.sliceCheck?.role === role) out.push(`  ${describeSliceCheck(result.sliceCheck)}`);
  const floors = result.hourlyFloors?.roles.find((f) => f.role === role);
  if (floors !== undefined)
    out.push(
      `  floors by UTC hour 0–23 (floorReplicasByUtcHour, from ${result.hourlyFloors?.source}): ${floors.floorReplicasByUtcHour.join(", ")}`,
    );
  const unfloored = result.hourlyFloors?.held.find((h) => h.role === role);
  if (unfloored !== undefined)
    out.push(
      `  no floors: ${unfloored.why}; the scaler written holds it at ${unfloored.fleetReplicas} replicas (minReplicas = maxReplicas)`,
    );
  const fleet = result.fleetSteps?.roles.find((f) => f.role === role);
  if (fleet !== undefined)
    out.push(
      `  the day before (${result.fleetSteps?.source}): ${fleet.step.why}; ${
        fleet.step.kind === "keep the fleet"
          ? `the scaler written keeps the fleet: ${fleet.fleetReplicas} replicas (minReplicas = maxReplicas)`
          : `the scaler written replaces the fleet, capped at its ${fleet.fleetReplicas} replicas (maxReplicas)`
      }`,
    );
  return out;
}

type TargetField = "serverTargetTokensPerSecond" | "prefillTargetTokensPerSecond" | "decodeTargetTokensPerSecond";

const targetField: Readonly<Record<RoleKind, TargetField | undefined>> = {
  Server: "serverTargetTokensPerSecond",
  Prefill: "prefillTargetTokensPerSecond",
  Decode: "decodeTargetTokensPerSecond",
  Encode: undefined,
};

const capacityField: Readonly<Record<RoleKind, string | undefined>> = {
  Server: "serverTokenCapacityPerReplica",
  Prefill: "prefillTokenCapacityPerReplica",
  Decode: "decodeTokenCapacityPerReplica",
  Encode: undefined,
};

/**
 * Writes each calibrated role's figure into `algorithm` (TokenThroughput's block, or Predictive's fallback
 * block), and for Predictive each role's capacity (where the targets broke) as its forecast capacity and
 * the measured demand noise as `measurementNoise` (docs/calibrate.md, items 8 and 9).
 */
function writeTargets(result: CalibrationResult, spec: ScalerSpec, algorithm: Record<string, unknown>): void {
  // Kept targets stay as the scaler writes them, and so do the figures Predictive reads beside them.
  if (result.keptTargets !== undefined) return;
  const block = (
    spec.algorithm.type === "Predictive"
      ? (((algorithm["predictive"] ??= {}) as Record<string, unknown>)["tokenThroughput"] ??= {})
      : (algorithm["tokenThroughput"] ??= {})
  ) as Record<string, unknown>;
  const predictive =
    spec.algorithm.type === "Predictive" ? (algorithm["predictive"] as Record<string, unknown>) : undefined;
  for (const r of result.roles) {
    const field = targetField[r.kind];
    if (field === undefined || r.answer.kind !== "calibrated") continue;
    block[field] = fmt(r.answer.tokensPerSecondPerReplica);
    // Kept by the eighth calibrated run's rule, beside the measured noise (docs/quality.md).
    const capacity = capacityField[r.kind];
    if (predictive !== undefined && capacity !== undefined)
      predictive[capacity] = fmt(r.answer.capacityTokensPerSecondPerReplica);
  }
  const noise = measurementNoiseOf(result);
  if (spec.algorithm.type === "Predictive" && noise !== undefined)
    (algorithm["predictive"] as Record<string, unknown>)["measurementNoise"] = fmt(noise);
}

/**
 * Predictive's `measurementNoise` (one per scaler): the largest demand noise any role measured,
 * so no role's filter trusts a reading more than its own minutes justify; undefined when none did.
 */
function measurementNoiseOf(result: CalibrationResult): number | undefined {
  const measured = result.roles.flatMap((r) =>
    r.demandNoise === undefined ? [] : [r.demandNoise.varianceTokensPerSecondSquared],
  );
  return measured.length === 0 ? undefined : Math.max(...measured);
}

/**
 * The result with one role's figure replaced, and why appended to its answer's reasons: the slice check
 * writes the figure it settled on, and the file's header says where it came from.
 */
export function withRoleFigure(
  result: CalibrationResult,
  role: string,
  figure: number,
  why?: string,
): CalibrationResult {
  return {
    ...result,
    roles: result.roles.map((r) =>
      r.role !== role || r.answer.kind !== "calibrated"
        ? r
        : {
            ...r,
            answer: {
              ...r.answer,
              tokensPerSecondPerReplica: figure,
              ...(why === undefined ? {} : { why: `${r.answer.why}; ${why}` }),
            },
          },
    ),
  };
}

/** The YAML to paste under a scaler's `spec:` for the roles that have a figure; undefined when none has. */
export function algorithmSnippet(result: CalibrationResult, spec: ScalerSpec): string | undefined {
  if (result.keptTargets !== undefined || !result.roles.some((r) => r.answer.kind === "calibrated")) return undefined;
  const algorithm: Record<string, unknown> = {};
  writeTargets(result, spec, algorithm);
  return stringify({ algorithm }, { lineWidth: 0 });
}

/**
 * The scaler document with every calibrated role's per-replica target written
 * in, its floors, and the roles the fleet step keeps held at their fleet; an
 * error naming the role when a role has no figure and is not held, so a script
 * never writes half an answer. A scaler read from the cluster is printed as a
 * manifest to keep or apply: what the API server keeps of it (status, version,
 * uid, managed fields, the controller's finalizer) is left out.
 */
export function scalerSnippet(result: CalibrationResult, scalerDocument: unknown, spec: ScalerSpec): string {
  const { document, header } = calibratedScaler(result, scalerDocument, spec);
  return `# Per-replica targets from mds-scaler calibrate (${result.source})\n${header}\n${stringify(manifestOf(document), { lineWidth: 0 })}`;
}

/** The metadata a user writes; the rest of a stored object's metadata is the API server's. */
const writtenMetadata = ["name", "namespace", "labels", "annotations"] as const;
/** kubectl's record of its last apply: the tool's, not part of what a user writes. */
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration";

function manifestOf(document: { spec: Record<string, unknown> }): unknown {
  const { status: _status, metadata, apiVersion, kind, ...rest } = document as Record<string, unknown>;
  const stored = (typeof metadata === "object" && metadata !== null ? metadata : {}) as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const key of writtenMetadata) if (stored[key] !== undefined) kept[key] = stored[key];
  if (typeof kept["annotations"] === "object" && kept["annotations"] !== null) {
    const { [lastApplied]: _applied, ...annotations } = kept["annotations"] as Record<string, unknown>;
    if (Object.keys(annotations).length > 0) kept["annotations"] = annotations;
    else delete kept["annotations"];
  }
  return {
    ...(apiVersion === undefined ? {} : { apiVersion }),
    ...(kind === undefined ? {} : { kind }),
    ...(metadata === undefined ? {} : { metadata: kept }),
    ...rest,
  };
}

/**
 * The scaler document `scalerSnippet` prints, as an object (what `--apply` writes back), and its header's lines,
 * one per role: the figure and where it came from, or why the role is held.
 */
export function calibratedScaler(
  result: CalibrationResult,
  scalerDocument: unknown,
  spec: ScalerSpec,
): { readonly document: { spec: Record<string, unknown> }; readonly header: string } {
  const held = heldRoles(result);
  const missing = result.roles.filter(
    (r) => runningFigureOf(result, r.role) === undefined && !held.some((h) => h.role === r.role),
  );
  if (missing.length > 0)
    throw new Error(
      missing.map((r) => `role ${r.role}: no calibrated figure (${r.answer.kind}: ${r.answer.why})`).join("\n"),
    );
  const doc = structuredClone(scalerDocument) as {
    spec?: { algorithm?: Record<string, unknown>; roles?: Record<string, unknown>[] };
  };
  const algorithm = (doc.spec ??= {}).algorithm ?? {};
  doc.spec.algorithm = algorithm;
  writeTargets(result, spec, algorithm);
  for (const f of result.hourlyFloors?.roles ?? []) {
    const entry = doc.spec.roles?.find((r) => r["name"] === f.role);
    if (entry === undefined)
      throw new Error(`spec.roles: role ${f.role} is not in the scaler file, so its floors cannot be written`);
    entry["floorReplicasByUtcHour"] = [...f.floorReplicasByUtcHour];
  }
  const dated = floorsAnnotationsOf(result);
  if (dated !== undefined) {
    const metadata = ((doc as { metadata?: Record<string, unknown> }).metadata ??= {});
    metadata["annotations"] = { ...(metadata["annotations"] as Record<string, string> | undefined), ...dated };
  }
  for (const h of held) {
    const entry = doc.spec.roles?.find((r) => r["name"] === h.role);
    if (entry === undefined)
      throw new Error(`spec.roles: role ${h.role} is not in the scaler file, so it cannot be held at its fleet`);
    entry["minReplicas"] = h.fleetReplicas;
    entry["maxReplicas"] = h.fleetReplicas;
  }
  const header = result.roles
    .map((r) => {
      const heldRole = held.find((h) => h.role === r.role);
      if (heldRole !== undefined)
        return `# ${r.role}: held at its fleet of ${heldRole.fleetReplicas} replicas, ${heldRole.why}`;
      const target = result.keptTargets?.find((k) => k.role === r.role);
      if (target !== undefined)
        return `# ${r.role}: ${fmt(target.tokensPerSecondPerReplica)} tok/s per ready replica, the scaler's own target, kept (--keep-targets)`;
      return r.answer.kind === "calibrated"
        ? `# ${r.role}: ${fmt(r.answer.tokensPerSecondPerReplica)} tok/s per ready replica, ${r.answer.why}`
        : "";
    })
    .join("\n");
  return { document: doc as { spec: Record<string, unknown> }, header };
}

/**
 * The annotations the scaler written carries beside its floors: their date (src/core/api/floors-calibrated.ts), so
 * the controller can tell a refresh that stopped; undefined where no floors are written.
 */
export function floorsAnnotationsOf(result: CalibrationResult): Readonly<Record<string, string>> | undefined {
  const floors = result.hourlyFloors;
  return floors === undefined || floors.roles.length === 0
    ? undefined
    : { [floorsCalibratedAnnotation]: floors.calibratedAt };
}
