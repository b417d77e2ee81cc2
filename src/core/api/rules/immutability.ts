/** Update rule: `targetRef.name` cannot change; retargeting needs a new scaler. */
import { problem } from "../problem.js";
import type { Rule } from "./rule.js";

export const targetRefImmutable: Rule = {
  id: "target-ref-immutable",
  summary: "`targetRef.name` cannot change on update.",
  check: ({ spec, old }) =>
    old?.targetRefName !== undefined && spec.targetRefName !== undefined && old.targetRefName !== spec.targetRefName
      ? [
          problem(
            "target-ref-immutable",
            ["spec", "targetRef", "name"],
            spec.targetRefName,
            `is immutable (was ${JSON.stringify(old.targetRefName)}); create a new scaler to retarget`,
          ),
        ]
      : [],
};
