/**
 * Rule `schema`: field types, required fields, unknown fields, enums, every
 * numeric range, list lengths, name syntax, quantity syntax and sign, the
 * tolerance maximum and `stepPolicy` (type Pods|Percent, nonnegative value).
 * The limits themselves are declared once in `../scaler.ts`; this file turns
 * zod's issues into problems that name the field and the value.
 */
import type { z } from "zod";
import { problem, valueAt, type PathSegment, type Problem } from "../problem.js";

const expectedNames: Readonly<Record<string, string>> = {
  int: "an integer",
  number: "a number",
  string: "a string",
  boolean: "true or false",
  object: "an object",
  array: "a list",
};

function sizeReason(issue: { origin: string; inclusive?: boolean }, bound: unknown, side: "most" | "least"): string {
  const exclusive = issue.inclusive === false;
  if (issue.origin === "array") return `must have at ${side} ${String(bound)} ${bound === 1 ? "entry" : "entries"}`;
  if (issue.origin === "string") return `must be at ${side} ${String(bound)} characters long`;
  if (exclusive) return side === "most" ? `must be below ${String(bound)}` : `must be above ${String(bound)}`;
  return `must be at ${side} ${String(bound)}`;
}

function reasonFor(issue: z.core.$ZodIssue, value: unknown): string {
  switch (issue.code) {
    case "invalid_type":
      return value === undefined ? "is required" : `must be ${expectedNames[issue.expected] ?? issue.expected}`;
    case "too_big":
      return sizeReason(issue, issue.maximum, "most");
    case "too_small":
      return sizeReason(issue, issue.minimum, "least");
    case "invalid_value":
      return `${value === undefined ? "is required; " : ""}must be one of ${issue.values.map((v) => String(v)).join(", ")}`;
    default:
      return issue.message;
  }
}

/** Converts zod issues on `root` into problems, one per unknown key. */
export function schemaProblems(
  issues: readonly z.core.$ZodIssue[],
  root: unknown,
  prefix: readonly PathSegment[] = [],
): Problem[] {
  const problems: Problem[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...(issue.path as PathSegment[])];
    const inRoot = issue.path as PathSegment[];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        problems.push(
          problem("schema", [...path, key], valueAt(root, [...inRoot, key]), "is not a field of this object"),
        );
      }
      continue;
    }
    const value = valueAt(root, inRoot);
    problems.push(problem("schema", path, value, reasonFor(issue, value)));
  }
  return problems;
}
