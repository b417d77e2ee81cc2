/**
 * The demo scaler's per-replica targets, calibrated as docs/calibrate.md tells
 * a user to: `mds-scaler simulate -o json` on a training slice served by fixed
 * fleets, then `mds-scaler calibrate --from-simulation` on the pooled runs.
 * Both commands run in this process through the CLI's own entry (`runCli`),
 * with their files in memory.
 *
 * The world is the demo's, as `simulate` models it: the same engine load model
 * (src/sim/engines) with the demo's capacities, routing by fewest requests in
 * flight as the demo's fleet routes, the demo's cold start, the demo's speed-up.
 * The training slice is what `npm start -- --duration 60` does not replay: the
 * trace after its first `replayedSeconds` of sped-up replay.
 *
 * The fixed fleets are a load test: pairs of N prefill and N decode replicas
 * (as docs/examples/simulate-pd-scaler.yaml's). It starts at the smallest pair,
 * doubling from one, that keeps the scaler's TTFT target for 99 % of the
 * slice's first tokens, and steps down by the benchmark's load-test step
 * (`loadTestStep`, src/sim/quality/user-figures.ts) towards one pair, pooling
 * the runs, until calibrate gives the prefill role an answer other than "not
 * enough evidence". On this slice the answer moves with the pairs pooled
 * (docs/demo.md says how far); this rule fixes which.
 *
 * The bounds come from the same load test (`demoBounds`): the pair it started
 * from is the static fleet a user replaces, so the target starts there and
 * each role's `maxReplicas` is that pair: the scaler never spends more than it.
 */
import { parse, stringify } from "yaml";
import { runCli } from "../src/cli/commands.js";
import { formatProblem } from "../src/core/api/problem.js";
import { quantityValue } from "../src/core/api/quantity.js";
import { validateScaler } from "../src/core/api/validation.js";
import type { CliIo } from "../src/cli/io.js";
import { defaultCapacity } from "../src/sim/engines/model.js";
import { loadTestStep } from "../src/sim/quality/user-figures.js";
import { defaultSpeedup } from "./options.js";

/** Seconds of sped-up replay `npm start -- --duration 60` covers: the training slice starts after them. */
export const replayedSeconds = 60;

/** The trace `npm start` replays by default, as `simulate` names it. */
export const demoTraceName = "azure-code";

/** Share of first tokens within the TTFT target that marks the pair a load test starts from. */
export const startingAttainment = 0.99;

/** The largest pair the load test doubles to before it gives up: four times the demo's prefill maxReplicas (8). */
export const maxPairReplicas = 32;

/** The settings of the demo's world that `simulate`'s fleet file models. */
export interface DemoWorldModel {
  readonly prefillTokensPerSecond: number;
  readonly coldStartSeconds: number;
}

/** One fixed pair's run over the training slice. */
export interface LoadTestRun {
  readonly replicasPerRole: number;
  /** Share of the slice's first tokens within the TTFT target. */
  readonly ttftAttainment: number;
  /** Whether calibrate pooled the run (a doubling run below the starting pair only if the load test stepped down to it). */
  readonly pooled: boolean;
}

export interface RoleAnswer {
  readonly role: string;
  readonly kind: "calibrated" | "not enough evidence" | "targets never held";
  /** calibrate's figure; undefined unless calibrated. */
  readonly tokensPerSecondPerReplica?: number;
  /** When every judged band held: the throughput they held up to, a lower bound. */
  readonly heldUpToTokensPerSecondPerReplica?: number;
  readonly why: string;
}

export interface DemoCalibration {
  /** Every run, in the order it ran. */
  readonly runs: readonly LoadTestRun[];
  /** The pairs calibrate pooled, in the order they were added. */
  readonly pooledReplicas: readonly number[];
  readonly roles: readonly RoleAnswer[];
  /** calibrate's table of the pooled runs, as it prints it. */
  readonly table: string;
  /** The shell commands a user would type for the same runs. */
  readonly commands: readonly string[];
}

/** What a user replacing the load test's starting fleet writes as the target's replicas and each role's bounds. */
export interface DemoBounds {
  /** The target's `spec.roles[].replicas` when the scaler takes it over: the static fleet it replaces. */
  readonly startingReplicasPerRole: number;
  /** Each role's `maxReplicas`: never more than that static fleet. */
  readonly maxReplicasPerRole: number;
}

/**
 * The demo's bounds from its load test: the starting pair (the smallest, doubling from one, that kept the TTFT
 * target for 99 % of the slice's first tokens) is the static fleet a user replaces, the fleet the target starts
 * from and the ceiling of each role.
 */
export function demoBounds(calibration: Pick<DemoCalibration, "pooledReplicas">): DemoBounds {
  const starting = calibration.pooledReplicas[0];
  if (starting === undefined) throw new Error("the demo's load test pooled no run: it has no starting pair");
  return { startingReplicasPerRole: starting, maxReplicasPerRole: starting };
}

/** The fleet file of one fixed pair: the demo's engines as `simulate` models them. */
export function fleetFile(world: DemoWorldModel, replicasPerRole: number): string {
  return stringify({
    roles: [
      { name: "prefill", kind: "Prefill" },
      { name: "decode", kind: "Decode" },
    ],
    // One GPU per replica, as the demo's 8B model on one H100.
    preset: "llama-3.1-8b-1xh100",
    // The demo's engines: the load model's defaults, with the demo's prefill rate.
    capacity: { ...withoutSpeculation(defaultCapacity), prefillTokensPerSecond: world.prefillTokensPerSecond },
    // The demo's fleet routes to the replica with the fewest requests in flight.
    routing: "leastOutstandingRequests",
    // The demo hands a prompt's KV over in a fixed 50 ms whatever its length; a link this fast
    // never makes one handoff wait for another, so TTFT (taken when prefill ends) sees no link.
    kvLink: { bytesPerToken: 131_072, linkBytesPerSecond: 100e9 },
    initialReplicas: replicasPerRole,
    coldStartSeconds: { min: world.coldStartSeconds, max: world.coldStartSeconds },
  });
}

/** The fleet file has no field for speculative decoding: the demo's engines run without it. */
function withoutSpeculation(capacity: typeof defaultCapacity): Omit<typeof defaultCapacity, "acceptedTokensPerStep"> {
  const { acceptedTokensPerStep: _unused, ...rest } = capacity;
  return rest;
}

/** The demo's scaler held at `replicasPerRole` replicas in each role: minReplicas = maxReplicas. */
export function fixedScaler(scalerYaml: string, replicasPerRole: number): string {
  const scaler = parse(scalerYaml) as { spec: { roles: { minReplicas?: number; maxReplicas: number }[] } };
  for (const role of scaler.spec.roles) {
    role.minReplicas = replicasPerRole;
    role.maxReplicas = replicasPerRole;
  }
  return stringify(scaler);
}

/** The scaler's TTFT target in ms, as the schema defaults it when the file leaves it out. */
export function ttftTargetOf(scalerYaml: string): number {
  const checked = validateScaler(parse(scalerYaml));
  if (!checked.ok) throw new Error(`the demo scaler: ${checked.problems.map(formatProblem).join("; ")}`);
  const algorithm = checked.value.spec.algorithm;
  if (algorithm.type !== "TokenThroughput")
    throw new Error(`spec.algorithm.type: the demo calibrates TokenThroughput, got ${JSON.stringify(algorithm.type)}`);
  if (algorithm.tokenThroughput === undefined)
    throw new Error("spec.algorithm.tokenThroughput: the demo scaler has none");
  return quantityValue(algorithm.tokenThroughput.ttftTargetMilliseconds);
}

/** Runs one CLI command on in-memory files; its stdout, or an error naming the command and its stderr. */
async function cli(args: readonly string[], files: Map<string, string>): Promise<string> {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: (text) => void (out += text),
    stderr: (text) => void (err += text),
    readFile: (path) => {
      const text = files.get(path);
      if (text === undefined) throw new Error(`${path}: no such file`);
      return text;
    },
  };
  const code = await runCli(args, io);
  if (code !== 0) throw new Error(`mds-scaler ${args.join(" ")} exited ${code}: ${err.trim()}`);
  return out;
}

interface CalibrateJson {
  readonly roles: readonly {
    readonly role: string;
    readonly answer: {
      readonly kind: RoleAnswer["kind"];
      readonly tokensPerSecondPerReplica?: number;
      readonly heldUpToTokensPerSecondPerReplica?: number;
      readonly why: string;
    };
  }[];
}

/**
 * The per-replica target a role gets from calibrate's answer, as the benchmark and the examples write it:
 * calibrate's figure, or when every judged band held, the throughput they held up to (a lower bound).
 */
export function targetOf(answer: RoleAnswer): number | undefined {
  return answer.kind === "calibrated" ? answer.tokensPerSecondPerReplica : answer.heldUpToTokensPerSecondPerReplica;
}

/** One line per role: the answer and the target it gives. */
export function describeAnswer(answer: RoleAnswer): string {
  const target = targetOf(answer);
  const figure =
    answer.kind === "calibrated"
      ? `${target} tok/s per ready replica`
      : target === undefined
        ? "no figure"
        : `held up to ${target} tok/s per ready replica (a lower bound)`;
  return `${answer.kind}: ${figure}`;
}

/** The load test on the training slice and calibrate's answer on its pooled runs. */
export async function calibrateDemo(scalerYaml: string, world: DemoWorldModel): Promise<DemoCalibration> {
  const files = new Map<string, string>([["scaler.yaml", scalerYaml]]);
  const ttftTargetMs = ttftTargetOf(scalerYaml);
  const runs: LoadTestRun[] = [];
  const commands: string[] = [];
  const attainments = new Map<number, number>();
  const simulate = async (n: number): Promise<number> => {
    files.set(`fixed-${n}.yaml`, fixedScaler(scalerYaml, n));
    files.set(`fleet-${n}.yaml`, fleetFile(world, n));
    const args = [
      "simulate",
      ...["--trace", demoTraceName, "--speedup", String(defaultSpeedup), "--from", String(replayedSeconds)],
      ...["--scaler", `fixed-${n}.yaml`, "--fleet", `fleet-${n}.yaml`, "-o", "json"],
    ];
    commands.push(`mds-scaler ${args.join(" ")} > run-${n}.json`);
    const text = await cli(args, files);
    files.set(`run-${n}.json`, text);
    // The scaler's own TTFT target, not simulate's SLO (which allows each request 1 s plus its prefill).
    const { requests } = JSON.parse(text) as { requests: { ttftSeconds: number | null }[] };
    const within = requests.filter((r) => r.ttftSeconds !== null && r.ttftSeconds * 1000 <= ttftTargetMs).length;
    const attainment = requests.length === 0 ? 0 : within / requests.length;
    attainments.set(n, attainment);
    return attainment;
  };

  let start = 1;
  while ((await simulate(start)) < startingAttainment) {
    if (start >= maxPairReplicas)
      throw new Error(`no fixed pair up to ${start} replicas kept the TTFT target on the training slice`);
    start *= 2;
  }
  const pooled: number[] = [];
  let answer: CalibrateJson = { roles: [] };
  let calibrateArgs: string[] = [];
  const pool = async (n: number): Promise<RoleAnswer["kind"] | undefined> => {
    if (!files.has(`run-${n}.json`)) await simulate(n);
    pooled.push(n);
    calibrateArgs = [
      "calibrate",
      ...pooled.flatMap((p) => ["--from-simulation", `run-${p}.json`]),
      "-f",
      "scaler.yaml",
    ];
    answer = JSON.parse(await cli([...calibrateArgs, "-o", "json"], files)) as CalibrateJson;
    return answer.roles.find((r) => r.role === "prefill")?.answer.kind;
  };
  // Down from the starting pair while the evidence is too thin.
  let n = start;
  let kind = await pool(n);
  while (kind === "not enough evidence" && n > 1) {
    n = Math.max(1, Math.min(n - 1, Math.floor(n * loadTestStep)));
    kind = await pool(n);
  }
  commands.push(`mds-scaler ${calibrateArgs.join(" ")}`);
  for (const [replicasPerRole, ttftAttainment] of attainments)
    runs.push({ replicasPerRole, ttftAttainment, pooled: pooled.includes(replicasPerRole) });
  return {
    runs,
    pooledReplicas: pooled,
    roles: answer.roles.map((r) => ({ role: r.role, ...r.answer })),
    table: await cli(calibrateArgs, files),
    commands,
  };
}
