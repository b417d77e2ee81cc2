/** The planner: one pure pass from scaler, target, observations and time to status and commit. */
export { plan } from "./plan.js";
export type { Commit, CommitReason, Limit, PlanInput, PlanResult, PlanScaler } from "./types.js";
