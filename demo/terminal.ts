/** The demo's terminal output: a compact table of decisions, a progress line, the summary. */
import type { Commit, RoleView, Snapshot, Summary } from "./observer.js";

const pad = (text: string, width: number): string => text.padEnd(width);
const lpad = (text: string, width: number): string => text.padStart(width);

export function formatTokens(perSecond: number | undefined): string {
  if (perSecond === undefined || !Number.isFinite(perSecond)) return "-";
  if (perSecond >= 1000) return `${(perSecond / 1000).toFixed(1)}k`;
  return perSecond.toFixed(0);
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

export const tableHeader = `${lpad("time", 7)}  ${pad("role", 8)} ${lpad("committed", 9)} ${lpad("ready", 5)} ${lpad("recommended", 11)} ${lpad("demand tok/s", 12)}  reason`;

/** One row per role; `commit` marks the rows of a new commit with its change. */
export function tableRows(snapshot: Snapshot, commit: Commit | undefined): string[] {
  return snapshot.roles.map((r: RoleView) => {
    const change = commit?.changes.find((c) => c.role === r.name);
    const committed = change === undefined ? String(r.committed ?? "-") : `${change.from}→${change.to}`;
    return `${lpad(`${snapshot.atSeconds.toFixed(1)}s`, 7)}  ${pad(r.name, 8)} ${lpad(committed, 9)} ${lpad(String(r.ready ?? "-"), 5)} ${lpad(String(r.constrained ?? r.recommended ?? "-"), 11)} ${lpad(formatTokens(r.demandTokensPerSecond), 12)}  ${r.reason || r.signalState || "-"}`;
  });
}

/** What makes a row worth printing: a commit, or a change of reason or signal state. */
export function decisionKey(snapshot: Snapshot): string {
  return JSON.stringify(snapshot.roles.map((r) => [r.name, r.committed, r.reason, r.signalState]));
}

export function progressLine(opts: {
  elapsedSeconds: number;
  durationSeconds: number | undefined;
  speedup: number;
  traceSpanSeconds: number;
  requests: number;
  commits: number;
}): string {
  const traceAt = Math.min(opts.elapsedSeconds * opts.speedup, opts.traceSpanSeconds);
  const fraction = opts.traceSpanSeconds > 0 ? traceAt / opts.traceSpanSeconds : 0;
  const width = 20;
  const filled = Math.round(fraction * width);
  const bar = `[${"#".repeat(filled)}${".".repeat(width - filled)}]`;
  const runFor =
    opts.durationSeconds === undefined
      ? `${formatDuration(opts.elapsedSeconds)} (Ctrl-C stops)`
      : `${formatDuration(opts.elapsedSeconds)}/${formatDuration(opts.durationSeconds)}`;
  return `${bar} trace ${formatDuration(traceAt)}/${formatDuration(opts.traceSpanSeconds)} at ${opts.speedup}x · ${opts.requests} requests · ${opts.commits} commits · ${runFor}`;
}

const percent = (f: number | undefined): string =>
  f === undefined ? "unknown (no requests)" : `${(f * 100).toFixed(1)} %`;

/** The share of requests the demo's SLO asks to be within its targets. */
export const sloGoal = 0.99;

/**
 * The summary's last lines: whether the run kept the SLO for 99 % of first tokens and inter-token gaps, and
 * below that, the late first tokens (one per request) by the rule that kept the fleet below their need when
 * they arrived (`ruleAt`), largest share first.
 */
export function verdictLines(s: Summary): string[] {
  const goal = `${(100 * sloGoal).toFixed(0)} %`;
  if (s.ttftAttainment === undefined || s.itlAttainment === undefined)
    return [`  SLO                 unknown: no first token or inter-token gap was observed`];
  const ttftMet = s.ttftAttainment >= sloGoal;
  const itlMet = s.itlAttainment >= sloGoal;
  if (ttftMet && itlMet)
    return [
      `  SLO                 met: TTFT and ITL within their targets for at least ${goal} of first tokens and gaps`,
    ];
  const missed = [
    ...(ttftMet ? [] : [`TTFT ${percent(s.ttftAttainment)}`]),
    ...(itlMet ? [] : [`ITL ${percent(s.itlAttainment)}`]),
  ];
  const entries = Object.entries(s.lateFirstTokensByRule).sort((a, b) => b[1] - a[1]);
  const late = entries.reduce((n, [, count]) => n + count, 0);
  return [
    `  SLO                 missed: ${missed.join(", ")}, below ${goal}`,
    ...(ttftMet || late === 0
      ? []
      : [
          `  what kept it below  ${late} late first tokens, by the rule that kept the fleet below their need when they arrived:`,
          ...entries.map(([rule, count]) => `    ${lpad(`${((100 * count) / late).toFixed(0)} %`, 5)}  ${rule}`),
        ]),
  ];
}

/** The summary; `notes` (the controller log's) come before the verdict, which ends it. */
export function formatSummary(s: Summary, notes: readonly string[] = []): string {
  const lines = [
    "",
    "summary",
    `  replayed            ${formatDuration(s.replaySeconds)} of wall time = ${formatDuration(s.traceSeconds)} of trace`,
    `  requests            ${s.requestsOffered} offered, ${s.requestsServed} served (last token out)`,
    `  TTFT attainment     ${percent(s.ttftAttainment)} of first tokens within ${s.ttftBoundMs ?? s.ttftTargetMs} ms (target ${s.ttftTargetMs} ms)`,
    `  ITL attainment      ${percent(s.itlAttainment)} of inter-token gaps within ${s.itlBoundMs ?? s.itlTargetMs} ms (target ${s.itlTargetMs} ms)`,
    `  replica-seconds     ${Object.entries(s.replicaSecondsByRole)
      .map(([role, seconds]) => `${role} ${seconds.toFixed(0)}`)
      .join(", ")}`,
    `  commits             ${s.commits.length} (${s.commitsUp} scaling a role up, ${s.commitsDown} scaling a role down)`,
    ...s.commits.map(
      (c) =>
        `    ${lpad(`${c.atSeconds.toFixed(1)}s`, 7)}  ${c.changes.map((x) => `${x.role} ${x.from}→${x.to}`).join(", ") || "(no change)"}`,
    ),
    ...notes,
    ...verdictLines(s),
  ];
  return lines.join("\n") + "\n";
}
