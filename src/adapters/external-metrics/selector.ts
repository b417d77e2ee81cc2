/**
 * Kubernetes label selectors as they arrive in `?labelSelector=`: equality
 * (`a=b`, `a==b`, `a!=b`), sets (`a in (x,y)`, `a notin (x)`) and existence
 * (`a`, `!a`), joined by commas. A selector that does not parse is an error
 * naming the text, never "match everything".
 */

export type Requirement =
  | { readonly key: string; readonly op: "in" | "notin"; readonly values: readonly string[] }
  | { readonly key: string; readonly op: "exists" | "!exists" };

export type LabelSelector = readonly Requirement[];

export class SelectorError extends Error {
  override readonly name = "SelectorError";
}

const keyPattern =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const valuePattern = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** Splits on commas outside parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(") depth += 1;
    else if (c === ")") depth -= 1;
    else if (c === "," && depth === 0) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms.map((t) => t.trim());
}

function checkKey(key: string, term: string): string {
  if (!keyPattern.test(key) || key.length > 317)
    throw new SelectorError(`label selector term ${JSON.stringify(term)}: ${JSON.stringify(key)} is not a label key`);
  return key;
}

function checkValue(value: string, term: string): string {
  if (!valuePattern.test(value) || value.length > 63)
    throw new SelectorError(
      `label selector term ${JSON.stringify(term)}: ${JSON.stringify(value)} is not a label value`,
    );
  return value;
}

function parseTerm(term: string): Requirement {
  if (term === "") throw new SelectorError("label selector: empty term");
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(term);
  if (set !== null) {
    const values = (set[3] ?? "").split(",").map((v) => checkValue(v.trim(), term));
    return { key: checkKey(set[1] ?? "", term), op: set[2] as "in" | "notin", values };
  }
  const equality = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (equality !== null) {
    const value = checkValue(equality[3] ?? "", term);
    return { key: checkKey(equality[1] ?? "", term), op: equality[2] === "!=" ? "notin" : "in", values: [value] };
  }
  if (term.startsWith("!")) return { key: checkKey(term.slice(1).trim(), term), op: "!exists" };
  return { key: checkKey(term, term), op: "exists" };
}

/** Parses a selector; the empty string selects everything. */
export function parseLabelSelector(text: string): LabelSelector {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  return splitTerms(trimmed).map(parseTerm);
}

export function matchesSelector(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return selector.every((r) => {
    const value = labels[r.key];
    switch (r.op) {
      case "exists":
        return value !== undefined;
      case "!exists":
        return value === undefined;
      case "in":
        return value !== undefined && r.values.includes(value);
      case "notin":
        return value === undefined || !r.values.includes(value);
    }
  });
}
