export * from "./client.js";
export * from "./config.js";
export * from "./queries.js";
export * from "./source.js";
