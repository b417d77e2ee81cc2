import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { validateScaler } from "./src/core/api/validation.js";
import { defaultPresetName, replicaPresets } from "./src/sim/quality/presets.js";
import { mdsPolicy } from "./src/sim/quality/policies/mds.js";
import { sightedPolicy } from "./src/sim/quality/policies/sighted.js";
import { defaultSlo, meetsItl, meetsTtft, runPolicy } from "./src/sim/quality/run.js";
import { loadTrace, overlay } from "./src/sim/quality/traces.js";
import { splitTraining } from "./src/sim/quality/user-figures.js";
const [file, copies, fleet, yamlPath, h] = process.argv.slice(2);
const capacity = replicaPresets[defaultPresetName].capacity;
const { evaluated } = splitTraining(overlay(loadTrace(file!, { seed: 1 }), Number(copies), 1));
const doc = parse(readFileSync(yamlPath!, "utf8"));
doc.spec.roles[0].maxReplicas = Number(fleet);
const v = validateScaler(doc);
if (!v.ok) throw new Error(JSON.stringify(v.problems));
const opts = { seed: 1, fleet: { capacity } };
const mds = runPolicy(evaluated, mdsPolicy({ spec: v.value.spec, initialReplicas: Number(fleet), label: "h" }), opts);
const sig = runPolicy(evaluated, sightedPolicy(evaluated, capacity, { headroom: Number(h), measureSeconds: 15, holdSeconds: 300, initialReplicas: Number(fleet), maxReplicas: Number(fleet) }), opts);
console.log("mds", mds.attainment.both, mds.gpuHours, "sighted", sig.attainment.both, sig.gpuHours);
const missesByMinute = (records: typeof mds.records) => {
  const m = new Map<number, number>();
  for (const r of records) if (!(meetsTtft(r, defaultSlo, capacity.prefillTokensPerSecond) && meetsItl(r, defaultSlo))) m.set(Math.floor(r.arrivalSeconds / 60), (m.get(Math.floor(r.arrivalSeconds / 60)) ?? 0) + 1);
  return m;
};
const a = missesByMinute(mds.records), b = missesByMinute(sig.records);
const arrivals = new Map<number, number>();
for (const r of evaluated.requests) arrivals.set(Math.floor(r.arrivalSeconds / 60), (arrivals.get(Math.floor(r.arrivalSeconds / 60)) ?? 0) + 1);
const readyAt = (series: typeof mds.series, minute: number) => { const pts = series.filter((p) => p.atSeconds >= minute * 60 && p.atSeconds < minute * 60 + 60); return pts.length ? [Math.min(...pts.map((p) => p.readyReplicas)), Math.max(...pts.map((p) => p.desiredReplicas))] : []; };
const minutes = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => x - y);
let totalA = 0, totalB = 0;
for (const k of minutes) { totalA += a.get(k) ?? 0; totalB += b.get(k) ?? 0; }
console.log("missed requests", totalA, totalB, "of", evaluated.requests.length);
// minutes with the largest difference
const rows = minutes.map((k) => ({ k, d: (a.get(k) ?? 0) - (b.get(k) ?? 0) })).sort((x, y) => y.d - x.d).slice(0, 25);
for (const { k } of rows.sort((x, y) => x.k - y.k)) {
  const arr3 = [1,2,3].map((i) => arrivals.get(k - i) ?? 0); const mean3 = arr3.reduce((s, x) => s + x, 0) / 3;
  console.log(`min ${k} (${(15 + k) / 60 | 0}:${String((15 + k) % 60).padStart(2, "0")}) arrivals ${arrivals.get(k) ?? 0} (×${(((arrivals.get(k) ?? 0) / Math.max(1, mean3))).toFixed(2)} of 3 before) missed mds ${a.get(k) ?? 0} sighted ${b.get(k) ?? 0}  mds ready/desired ${readyAt(mds.series, k)} sighted ${readyAt(sig.series, k)}`);
}
