import type { BindingScaler } from "../../../src/core/binding/binding.js";

/** An Active scaler `llm` (uid `uid-a`) with no status yet; `over` changes what a case is about. */
export const scaler = (over: Partial<BindingScaler> = {}): BindingScaler => ({
  name: "llm",
  uid: "uid-a",
  generation: 1,
  mode: "Active",
  suspend: false,
  deleting: false,
  status: undefined,
  ...over,
});
