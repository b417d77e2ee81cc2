export * from "./buckets.js";
export * from "./exposition.js";
export * from "./engine-fleet.js";
export * from "./model.js";
export * from "./random.js";
export * from "./server.js";
export * from "./traces.js";
export * from "./workload.js";
