/** The demo's flags (`npm start -- FLAGS`): what to replay, how fast, for how long, and where the page listens. */
import { join, resolve } from "node:path";

export const repoRoot = resolve(import.meta.dirname, "..");

export interface DemoOptions {
  /** Seconds of replay before the demo ends by itself; undefined runs until Ctrl-C. */
  readonly durationSeconds: number | undefined;
  /** An Azure LLM 2023 CSV or a Mooncake FAST'25 JSONL trace. */
  readonly tracePath: string;
  /** Trace seconds per wall-clock second. */
  readonly speedup: number;
  /** A file holding one ModelDeploymentScaler and, optionally, its ModelDeployment. */
  readonly scalerPath: string;
  /** The ModelDeployment the scaler targets. */
  readonly targetPath: string;
  /** The live page's port on 127.0.0.1 (0: any free port). */
  readonly pagePort: number;
}

/** The public traces beside the project; `tools/fetch-traces.sh` fills this folder. */
export function tracesDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(repoRoot, env["MDS_TRACES_DIR"] || join("..", "shared", "traces"));
}

export const defaultSpeedup = 10;

export const demoUsage = `usage: npm start -- [flags]

Starts a local API server and etcd, Prometheus, simulated vLLM engines and their
ModelDeployment reconciler, the admission webhooks and the controller in Active mode,
then replays a public request trace against them and shows what the scaler decides.

flags:
  --duration SECONDS   end after this many seconds of replay and print a summary (default: until Ctrl-C)
  --trace FILE         Azure LLM 2023 CSV or Mooncake FAST'25 JSONL trace
                       (default: azure_llm_2023/AzureLLMInferenceTrace_code.csv in $MDS_TRACES_DIR or ../shared/traces)
  --speedup N          trace seconds per second of replay (default: ${defaultSpeedup})
  --scaler FILE        the ModelDeploymentScaler to run (default: docs/examples/demo/scaler.yaml)
  --target FILE        its ModelDeployment (default: docs/examples/demo/target.yaml)
  --port N             port of the live page on 127.0.0.1 (default: any free port)
`;

/** Parsed flags, or the message that says which flag and value is wrong ("" for --help). */
export function parseDemoArgs(args: readonly string[], env: NodeJS.ProcessEnv = process.env): DemoOptions | string {
  let durationSeconds: number | undefined;
  let tracePath = join(tracesDir(env), "azure_llm_2023", "AzureLLMInferenceTrace_code.csv");
  let speedup = defaultSpeedup;
  let scalerPath = join(repoRoot, "docs", "examples", "demo", "scaler.yaml");
  let targetPath = join(repoRoot, "docs", "examples", "demo", "target.yaml");
  let pagePort = 0;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "-h" || arg === "--help") return "";
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith("--") && eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = inline ?? args[i + 1];
    const known = ["--duration", "--trace", "--speedup", "--scaler", "--target", "--port"];
    if (!known.includes(flag)) return `unknown argument ${JSON.stringify(arg)}`;
    if (value === undefined || value === "") return `${flag} needs a value`;
    if (inline === undefined) i++;
    const number = Number(value);
    switch (flag) {
      case "--duration":
        if (!(Number.isFinite(number) && number > 0))
          return `--duration: ${JSON.stringify(value)} is not a positive number of seconds`;
        durationSeconds = number;
        break;
      case "--speedup":
        if (!(Number.isFinite(number) && number > 0 && number <= 1000))
          return `--speedup: ${JSON.stringify(value)} is not a number above 0 and at most 1000`;
        speedup = number;
        break;
      case "--port":
        if (!(Number.isInteger(number) && number >= 0 && number < 65536))
          return `--port: ${JSON.stringify(value)} is not a port number`;
        pagePort = number;
        break;
      case "--trace":
        tracePath = resolve(value);
        break;
      case "--scaler":
        scalerPath = resolve(value);
        break;
      case "--target":
        targetPath = resolve(value);
        break;
    }
  }
  return { durationSeconds, tracePath, speedup, scalerPath, targetPath, pagePort };
}
