/**
 * Label matchers every engine selector carries besides the scaler's own namespace, deployment and role
 * (`--prometheus-matchers`). A central store (Thanos, VictoriaMetrics, Mimir) that holds several
 * clusters tells them apart by a label such as `cluster`; without a matcher on it, the same namespace,
 * deployment and role in two clusters read as one role with both clusters' pods in it.
 *
 * The text is PromQL's own matcher syntax, comma-separated: `cluster="prod-eu",region=~"eu-.*"`.
 * Parsing is strict because the matchers go into every query verbatim: a name must be a label name,
 * the operator one of PromQL's four, the value a double-quoted string with PromQL's escapes.
 */
import { labelNameProblem } from "./config.js";

export type MatchOperator = "=" | "!=" | "=~" | "!~";

export interface LabelMatcher {
  readonly name: string;
  readonly operator: MatchOperator;
  /** The value as written between the quotes, escapes kept: it goes back into PromQL unchanged. */
  readonly quotedValue: string;
}

export type MatchersParse =
  { readonly ok: true; readonly matchers: readonly LabelMatcher[] } | { readonly ok: false; readonly problem: string };

/** One matcher at the start of the text: name, operator, a double-quoted value (escapes allowed). */
const matcherAtStart = /^\s*([^\s=!~,"]+)\s*(=~|!~|!=|=)\s*"((?:[^"\\\n]|\\.)*)"\s*/;

/**
 * Example: `cluster="prod-eu", region=~"eu-.*"` gives two matchers; `cluster=prod` is refused with
 * "cluster=prod: the value must be double-quoted".
 */
export function parseLabelMatchers(text: string): MatchersParse {
  const matchers: LabelMatcher[] = [];
  let rest = text.trim();
  while (rest !== "") {
    const found = matcherAtStart.exec(rest);
    if (found === null) return { ok: false, problem: `${firstItem(rest)}: ${shapeProblem(firstItem(rest))}` };
    const [whole, name, operator, quotedValue] = found as unknown as [string, string, MatchOperator, string];
    const nameProblem = labelNameProblem(name);
    if (nameProblem !== undefined) return { ok: false, problem: `${name}: ${nameProblem}` };
    if (matchers.some((m) => m.name === name))
      return { ok: false, problem: `${name}: named twice; give one matcher per label` };
    matchers.push({ name, operator, quotedValue });
    rest = rest.slice(whole.length);
    if (rest.startsWith(",")) rest = rest.slice(1).trimStart();
    else if (rest !== "") return { ok: false, problem: `${firstItem(rest)}: matchers must be separated by commas` };
  }
  return { ok: true, matchers };
}

/** A matcher as PromQL reads it. */
export function matcherText(m: LabelMatcher): string {
  return `${m.name}${m.operator}"${m.quotedValue}"`;
}

function firstItem(text: string): string {
  return text.split(",")[0]?.trim() ?? text;
}

function shapeProblem(item: string): string {
  if (!/(=~|!~|!=|=)/.test(item)) return 'must be name="value" (operators =, !=, =~, !~)';
  if (!/"/.test(item)) return "the value must be double-quoted";
  return 'must be name="value" with a closed double-quoted value';
}
