/**
 * A refused field: where it is, what it held and why. Admission (the webhook)
 * and `mds-scaler validate` print the same problems.
 */

/** One step of a field path: an object key or a list index. */
export type PathSegment = string | number;

export interface Problem {
  /** The field, written like `spec.roles[1].maxReplicas`. */
  readonly path: string;
  /** The offending value as written (undefined when the field is missing). */
  readonly value: unknown;
  /** Why the value is refused, naming the limit it broke. */
  readonly reason: string;
  /** The rule that found it; docs/api.md lists each rule and the file that owns it. */
  readonly rule: string;
}

const identifier = /^[A-Za-z_$][\w$]*$/;

/** Formats a path as `spec.roles[1].maxReplicas`. */
export function formatPath(path: readonly PathSegment[]): string {
  let text = "";
  for (const segment of path) {
    // Stryker disable next-line ConditionalExpression: the last branch writes a number the same way; this one narrows the type
    if (typeof segment === "number") text += `[${segment}]`;
    else if (identifier.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

/** Reads the value at a path, or undefined when any step is missing. */
export function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let current = root;
  for (const segment of path) {
    if (typeof current !== "object" || current === null) return undefined;
    if (!Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<PathSegment, unknown>)[segment];
  }
  return current;
}

export function problem(rule: string, path: readonly PathSegment[], value: unknown, reason: string): Problem {
  return { rule, path: formatPath(path), value, reason };
}

const maxValueChars = 80;

/** A short rendering of a value for one-line messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "<missing>";
  let text: string;
  try {
    // JSON cannot write a bigint or a cycle: both land in the catch and read as String(value).
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > maxValueChars ? `${text.slice(0, maxValueChars - 3)}...` : text;
}

/** One line per problem: `spec.roles[1].maxReplicas = 2000: must be at most 1024`. */
export function formatProblem(p: Problem): string {
  return `${p.path === "" ? "<root>" : p.path} = ${describeValue(p.value)}: ${p.reason}`;
}
