/**
 * Runs a Grafana dashboard's Prometheus queries the way Grafana would, without
 * Grafana: template variables resolved from the dashboard's own variable
 * queries (in order, each seeing the ones before), multi-value variables
 * formatted as Grafana formats them for Prometheus (regex-escaped, `(a|b)`),
 * and the built-in interval variables computed from the time range and the
 * data source's scrape interval.
 */

interface DashboardVariable {
  name: string;
  type: string;
  query?: string | { query?: string };
  includeAll?: boolean;
  allValue?: string | null;
  multi?: boolean;
  options?: { value: string }[];
  current?: { value?: string | string[] };
}

interface DashboardTarget {
  expr?: string;
  refId?: string;
  instant?: boolean;
  hide?: boolean;
}

interface DashboardPanel {
  title?: string;
  type?: string;
  targets?: DashboardTarget[];
  panels?: DashboardPanel[];
}

export interface Dashboard {
  title?: string;
  uid?: string;
  panels?: DashboardPanel[];
  templating?: { list?: DashboardVariable[] };
}

export interface PanelQuery {
  readonly panel: string;
  readonly refId: string;
  readonly expr: string;
  readonly instant: boolean;
}

/** Every query of every panel, rows and collapsed rows included; hidden queries are left out as Grafana does. */
export function panelQueries(dashboard: Dashboard): PanelQuery[] {
  const out: PanelQuery[] = [];
  const walk = (panels: readonly DashboardPanel[]): void => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        if (target.expr === undefined || target.expr.trim() === "" || target.hide === true) continue;
        out.push({
          panel: panel.title ?? "(untitled)",
          refId: target.refId ?? "A",
          expr: target.expr,
          instant: target.instant === true,
        });
      }
      walk(panel.panels ?? []);
    }
  };
  walk(dashboard.panels ?? []);
  return out;
}

/** Prometheus regex escaping as Grafana applies it to variable values. */
function escapeRegex(value: string): string {
  return value.replace(/[\\^$*+?.()|[\]{}]/g, "\\$&");
}

function formatValues(values: readonly string[]): string {
  if (values.length === 1) return escapeRegex(values[0] ?? "");
  return `(${values.map(escapeRegex).join("|")})`;
}

/** Grafana's built-in interval variables for one time range. */
export interface Timing {
  readonly rangeSeconds: number;
  /** The data source's scrape interval (Grafana's default is 15 s; set it to the real one). */
  readonly scrapeIntervalSeconds: number;
  readonly maxDataPoints: number;
}

export function builtInVariables(timing: Timing): Map<string, string> {
  // $__interval: range over data points, never below the scrape interval.
  const intervalSeconds = Math.max(timing.scrapeIntervalSeconds, Math.ceil(timing.rangeSeconds / timing.maxDataPoints));
  // $__rate_interval: max($__interval + scrape interval, 4 * scrape interval).
  const rateSeconds = Math.max(intervalSeconds + timing.scrapeIntervalSeconds, 4 * timing.scrapeIntervalSeconds);
  return new Map([
    ["__rate_interval", `${rateSeconds}s`],
    ["__interval", `${intervalSeconds}s`],
    ["__interval_ms", `${intervalSeconds * 1000}`],
    ["__range", `${timing.rangeSeconds}s`],
    ["__range_s", `${timing.rangeSeconds}`],
    ["__range_ms", `${timing.rangeSeconds * 1000}`],
  ]);
}

/** Replaces `$name`, `${name}` and `[[name]]`; an unknown variable is an error, not an empty string. */
export function interpolate(expr: string, variables: ReadonlyMap<string, string>): string {
  return expr.replace(/\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]/g, (whole, a?: string, b?: string, c?: string) => {
    const name = a ?? b ?? c ?? "";
    const value = variables.get(name);
    if (value === undefined) throw new Error(`dashboard query ${JSON.stringify(expr)}: no value for variable ${whole}`);
    return value;
  });
}

/** Label values for a `label_values(...)` variable query, from the Prometheus API. */
export type LabelValuesLookup = (label: string, match: string | undefined) => Promise<string[]>;

/**
 * Resolves the dashboard's variables in order. `choose` picks the values of a
 * query variable from the ones its query returned (e.g. the workload
 * namespace); returning undefined takes them all, as "All" does.
 */
export async function resolveVariables(
  dashboard: Dashboard,
  builtIns: ReadonlyMap<string, string>,
  labelValues: LabelValuesLookup,
  choose: (name: string, values: readonly string[]) => readonly string[] | undefined,
): Promise<{ values: Map<string, string>; options: Map<string, string[]> }> {
  const values = new Map(builtIns);
  const options = new Map<string, string[]>();
  for (const variable of dashboard.templating?.list ?? []) {
    switch (variable.type) {
      case "datasource":
        values.set(variable.name, "prometheus");
        break;
      case "query": {
        const raw = typeof variable.query === "string" ? variable.query : (variable.query?.query ?? "");
        const query = interpolate(raw.trim(), values);
        const m = /^label_values\((?:(.*),\s*)?([a-zA-Z_]\w*)\s*\)$/s.exec(query);
        if (!m) throw new Error(`variable ${variable.name}: unsupported query ${JSON.stringify(raw)}`);
        const found = (await labelValues(m[2] ?? "", m[1]?.trim() || undefined)).sort();
        options.set(variable.name, found);
        const chosen = choose(variable.name, found);
        if (chosen === undefined && variable.includeAll === true && variable.allValue)
          values.set(variable.name, variable.allValue);
        else values.set(variable.name, formatValues(chosen ?? found));
        break;
      }
      case "custom":
      case "interval": {
        const first = variable.options?.[0]?.value;
        const current = variable.current?.value;
        values.set(variable.name, String(Array.isArray(current) ? current[0] : (current ?? first ?? "")));
        break;
      }
      case "constant":
      case "textbox":
        values.set(
          variable.name,
          typeof variable.query === "string" ? variable.query : String(variable.current?.value ?? ""),
        );
        break;
      case "adhoc":
        break;
      default:
        throw new Error(`variable ${variable.name}: unsupported type ${variable.type}`);
    }
  }
  return { values, options };
}
