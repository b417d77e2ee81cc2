/**
 * The flags of `mds-scaler calibrate` and how their times and durations read: its own, then the controller's
 * Prometheus flags (src/app/config.ts), so a scaler calibrated here reads its series as the controller will.
 */
import { prometheusSettingFlags } from "../../app/config.js";
import { defaultLatencyGuardReading, latencyGuardReadings } from "../../core/algorithms/ttft-reading.js";
import { keepFleetAboveSwing } from "../../core/calibrate/demand-swing.js";
import { minHeadroomSwing } from "../../core/calibrate/swing-headroom.js";
import { settings as controllerSettings, type CommandFlag } from "../../app/settings.js";
import { flagLines, UsageError } from "../flags.js";

/** calibrate's own flags; the Prometheus flags are the controller's (src/app/config.ts), appended below. */
const ownFlags: readonly CommandFlag[] = [
  {
    flag: "--from-simulation",
    value: "FILE",
    multiple: true,
    help: "a `simulate -o json` run; repeat to pool runs (say, static fleets of several sizes)",
  },
  {
    flag: "--trace",
    value: "NAME|FILE",
    help: "load-test in the simulator: serve the trace's first --duration seconds with static fleets, from twice its peak need down by a third at a time, until the targets break (up by half at a time, at most 4 times, while even the first breaks in its lowest band) (a trace name or file, as simulate takes it; needs -f)",
  },
  {
    flag: "--duration",
    value: "SECONDS",
    default: "900",
    help: "with --trace: the slice of the trace the load test serves",
  },
  { flag: "--fleet", value: "FILE", help: "with --trace: simulate's fleet settings (preset, capacity, routing, ...)" },
  { flag: "--copies", value: "K", default: "1", help: "with --trace: overlay K copies of the trace, as simulate does" },
  { flag: "--speedup", value: "N", default: "1", help: "with --trace: replay N times faster, as simulate does" },
  {
    flag: "--load-test-fill",
    value: "on|off",
    default: "off",
    help: "with --trace: once the targets break, also serve the fleets the last step passed over (at most 3, evenly spaced), so the bands between the figure and the break are judged on their own minutes",
  },
  {
    flag: "--slice-check",
    value: "on|off",
    default: "off",
    help: 'with --trace: replay the slice with the calibrated scaler from maxReplicas ready replicas (the fleet it replaces) and lower the figure by 10 % at a time, at most 4 times, while it breaks a minute that fleet keeps (off by default: docs/calibrate.md, "The slice check")',
  },
  {
    flag: "--swing-headroom",
    value: "SWING",
    help: `lower each role's figure to at most its capacity (where the targets broke) ÷ SWING, so a minute carrying SWING × the three before it stays below that load while new replicas start (the docs' steps for replacing a fleet: ${keepFleetAboveSwing}; at least ${minHeadroomSwing})`,
  },
  {
    flag: "--filename",
    short: "f",
    value: "FILE",
    help: "the ModelDeploymentScaler: its targets judge the minutes and the scaler output is this file with the figures written in (with --from-simulation: default the run's scaler)",
  },
  { flag: "--scaler", value: "NAMESPACE/NAME", help: "the ModelDeploymentScaler, read from the cluster" },
  {
    flag: "--target",
    short: "t",
    value: "FILE",
    help: "its ModelDeployment from a file (no cluster needed); without it the target is read from the cluster",
  },
  { flag: "--kubeconfig", value: "FILE", help: "the cluster (default: $KUBECONFIG, ~/.kube/config, or in-cluster)" },
  {
    flag: controllerSettings.kubeTimeoutMs.flag,
    value: "MS",
    default: "10000",
    help: `${controllerSettings.kubeTimeoutMs.help} (the controller's flag)`,
  },
  {
    flag: controllerSettings.targetApiVersion.flag,
    value: "VERSION",
    default: "v1",
    help: `${controllerSettings.targetApiVersion.help} read from the cluster (the controller's flag)`,
  },
  { flag: "--start", value: "TIME", help: "start of the period: RFC 3339 or Unix seconds" },
  { flag: "--end", value: "TIME", help: "end of the period: RFC 3339 or Unix seconds (default now)" },
  { flag: "--last", value: "DURATION", help: "the period ending at --end: 15m, 2h, 900s (instead of --start)" },
  {
    flag: "--output",
    short: "o",
    value: "FORMAT",
    default: "table",
    help: "table, json, or scaler (the scaler with the calibrated targets)",
  },
  {
    flag: "--latency-guard-reading",
    value: "READING",
    default: defaultLatencyGuardReading,
    help: `how a minute's TTFT is judged, as the controller's latency guard with this reading judges it: ${latencyGuardReadings.join(" or ")} (queueing: a TTFT above target breaks a minute only when waiting is a material part of it)`,
  },
  {
    flag: "--hourly-floors-from",
    value: "FILE|prometheus",
    help: "also write each calibrated role's floorReplicasByUtcHour: at each UTC hour, the replicas its figure gives the busiest minute of that hour ± 30 min of the day before, at most maxReplicas; read from a `simulate -o json` run of that whole day (FILE, its second 0 at 00:00), or with --prometheus-url from the 24 hours before the period (prometheus); a role without a figure is held at its maxReplicas (minReplicas = maxReplicas: the fleet, as the whole-day steps keep it); the scaler written is dated, in the annotation worker.gpustack.ai/floors-calibrated-at that the MdsScalerFloorsStale alert reads, by the end of the 24 hours read (with FILE, by the time calibrate ran)",
  },
  {
    flag: "--swing-from",
    value: "FILE|prometheus",
    help: `the docs' step for replacing a fixed fleet, in the scaler written: the same hours of the day before, served by that fleet, from a \`simulate -o json\` run of them (FILE), or with --prometheus-url from the --swing-period that starts 24 hours before the period (prometheus); each role whose demand swung above ${keepFleetAboveSwing} there (or where no swing was measured, or calibrate gave no figure) is held at its maxReplicas (minReplicas = maxReplicas: the fleet), the others written as calibrated, capped at maxReplicas`,
  },
  {
    flag: "--swing-period",
    value: "DURATION",
    default: "2h",
    help: "with --swing-from prometheus: the hours the scaler will replace the fleet for, read the day before from the period's start (15m, 2h, 900s; at most 24h; 2h: the two-hour replays the step was measured on)",
  },
  {
    flag: "--keep-targets",
    value: "",
    help: "keep each role's per-replica target as the scaler writes it, and size the steps (--hourly-floors-from, --swing-from) by it instead of the figure measured: the daily refresh of the floors once the scaler runs, whose own minutes do not give back the figure the first run measured (not with --swing-headroom)",
  },
  { flag: "--write-scaler", value: "FILE", help: "also write the scaler with the calibrated targets to FILE" },
  {
    flag: "--apply",
    value: "",
    help: "also write that scaler's spec (and the floors' date annotation) back to the cluster, to the scaler read with --scaler, only if its spec has not changed since calibrate read it (a daily job's last step: docs/calibrate.md, \"A whole day\")",
  },
  { flag: "--report", value: "FILE", help: "write a self-contained HTML page with the minutes plotted by load" },
  { flag: "--help", short: "h", value: "", help: "this help" },
];

export const promFlags = prometheusSettingFlags();
export const flags: readonly CommandFlag[] = [
  ...ownFlags,
  ...promFlags.map((p) => ({
    flag: p.flag,
    value: "VALUE",
    help: `${p.help} (the controller's flag)`,
    ...(p.default === undefined ? {} : { default: p.default }),
  })),
];

export const calibrateUsage = `usage: mds-scaler calibrate --from-simulation run.json [--from-simulation run2.json ...] [-f scaler.yaml] [flags]
       mds-scaler calibrate --trace NAME|FILE -f scaler.yaml [--duration 900] [--fleet fleet.yaml] [flags]
       mds-scaler calibrate --prometheus-url URL (-f scaler.yaml | --scaler NS/NAME) [--target md.yaml] (--last 15m | --start T [--end T]) [flags]

${flagLines(flags)}
`;

/**
 * Longest period read from Prometheus: a week. Each minute is a sampling pass answered from range queries
 * over six hours at a time (prometheus-minutes.ts), so a week is 28 stretches of a few dozen queries each.
 */
export const maxMinutes = 7 * 24 * 60;

export function parseTime(flag: string, text: string): number {
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Date.parse(text) / 1000;
  if (!Number.isFinite(seconds))
    throw new UsageError(`--${flag}: ${JSON.stringify(text)} is not RFC 3339 or Unix seconds`);
  return seconds;
}

export function parseDuration(flag: string, text: string): number {
  const m = /^(\d+)(s|m|h)$/.exec(text);
  if (m === null || Number(m[1]) === 0)
    throw new UsageError(`--${flag}: ${JSON.stringify(text)} is not a duration such as 900s, 15m or 2h`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as "s" | "m" | "h"];
}
