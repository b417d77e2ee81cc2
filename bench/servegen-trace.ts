/**
 * Writes one day of any ServeGen model as a trace file in the plain format (`arrival_seconds,
 * prompt_tokens,output_tokens`), drawn as the benchmark draws `servegen-m-large-day` (per client and
 * window, gaps from the window's fit, the day compressed 24 × into an hour, token lengths from the Azure
 * conversation trace), with the client rates scaled so the day replays at the mean request rate of
 * m-large's day 1 sample: traces the benchmark never ran, for a user's try of the docs' steps.
 * `--compression 1 --from-hour H --hours N` writes N hours of the day from hour H in real time instead
 * (each 600 s window lasting 600 s), at the same request rate.
 *
 *   npm run bench:servegen-trace -- --model language/m-mid --day 1 [--seed 1] -o m-mid-day1.csv
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  defaultTracesDir,
  readServeGenModel,
  readTraceFile,
  serveGenArrivals,
  serveGenDaySample,
  serveGenWindowSeconds,
} from "../src/sim/quality/traces.js";

const { values } = parseArgs({
  options: {
    model: { type: "string" },
    day: { type: "string", default: "1" },
    seed: { type: "string", default: "1" },
    compression: { type: "string", default: String(serveGenDaySample.compression) },
    "from-hour": { type: "string", default: "0" },
    hours: { type: "string", default: "24" },
    output: { type: "string", short: "o" },
  },
});
const model = values.model;
const output = values.output;
if (model === undefined || output === undefined) throw new Error("give --model (e.g. language/m-mid) and -o FILE");
const day = Number(values.day);
const seed = Number(values.seed);
if (!Number.isInteger(day) || day < 1) throw new Error(`--day: ${JSON.stringify(values.day)} is not a day ≥ 1`);
if (!Number.isInteger(seed)) throw new Error(`--seed: ${JSON.stringify(values.seed)} is not an integer`);
const compression = Number(values.compression);
const fromHour = Number(values["from-hour"]);
const hours = Number(values.hours);
if (!(compression >= 1)) throw new Error(`--compression: ${JSON.stringify(values.compression)} is not a number ≥ 1`);
if (!Number.isInteger(fromHour) || fromHour < 0 || !Number.isInteger(hours) || hours < 1 || fromHour + hours > 24)
  throw new Error(`--from-hour ${values["from-hour"]} --hours ${values.hours}: not whole hours inside one day`);

const dir = defaultTracesDir();
const windowsPerDay = (24 * 3600) / serveGenWindowSeconds;

/** The mean of a day's windows with traffic, from the model's aggregate rate file. */
function meanRateRps(modelName: string, dayIndex: number): number {
  const file = join(dir, "servegen", `aggregate_rate_${modelName.split("/").at(-1) ?? modelName}.csv`);
  const rates = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => line.split(",").map(Number))
    .filter(([start]) => Math.floor((start ?? -1) / serveGenWindowSeconds / windowsPerDay) === dayIndex)
    .map(([, rate]) => rate ?? 0)
    .filter((rate) => rate > 0);
  if (rates.length === 0) throw new Error(`${file}: day ${dayIndex + 1} has no window with traffic`);
  return rates.reduce((a, b) => a + b, 0) / rates.length;
}

// The same replayed request rate at any compression: the replay runs `compression` trace seconds a second.
const rateScale =
  (serveGenDaySample.rateScale *
    meanRateRps(serveGenDaySample.model, 0) *
    (serveGenDaySample.compression / compression)) /
  meanRateRps(model, day - 1);
const windowsPerHour = 3600 / serveGenWindowSeconds;
const requests = serveGenArrivals(readServeGenModel(join(dir, "servegen", model)), {
  seed,
  firstWindow: (day - 1) * windowsPerDay + fromHour * windowsPerHour,
  windowCount: hours * windowsPerHour,
  rateScale,
  compression,
  lengths: readTraceFile(join(dir, "azure_llm_2023/AzureLLMInferenceTrace_conv.csv")).requests,
});
writeFileSync(
  output,
  ["arrival_seconds,prompt_tokens,output_tokens"]
    .concat(requests.map((r) => `${r.arrivalSeconds},${r.promptTokens},${r.outputTokens}`))
    .join("\n") + "\n",
);
const span = requests.at(-1)?.arrivalSeconds ?? 0;
console.log(
  `${output}: ${model} day ${day} hours ${fromHour}–${fromHour + hours} compressed ${compression}×, ${requests.length} requests over ${(span / 60).toFixed(1)} min (${(requests.length / Math.max(1, span)).toFixed(2)} req/s), client rates × ${rateScale.toPrecision(3)}`,
);
