/**
 * Reads the generated Grafana dashboards (dashboards/*.json) the way Grafana
 * would: every panel's `targets[].expr`, with the dashboard's template
 * variables substituted, so the demo's page runs the very queries users get.
 * Only the Grafana JSON model is assumed; new panels and dashboards appear by themselves.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ValueMapping } from "./timeline.js";

export interface PagePanel {
  readonly id: string;
  readonly dashboard: string;
  /** The row heading the panel sits under, "" before the first row. */
  readonly row: string;
  readonly title: string;
  /** Grafana panel type: timeseries, state-timeline, table, stat, ... */
  readonly type: string;
  readonly unit: string | undefined;
  /** The panel's value-to-text mappings (`fieldConfig.defaults.mappings` of type `value`), by value. */
  readonly valueMappings?: Readonly<Record<string, ValueMapping>>;
  readonly queries: readonly { readonly expr: string; readonly legend: string; readonly instant: boolean }[];
}

interface GrafanaTarget {
  expr?: unknown;
  legendFormat?: unknown;
  instant?: unknown;
  format?: unknown;
  hide?: unknown;
}

interface GrafanaPanel {
  id?: unknown;
  type?: unknown;
  title?: unknown;
  targets?: GrafanaTarget[];
  panels?: GrafanaPanel[];
  fieldConfig?: { defaults?: { unit?: unknown; mappings?: unknown } };
}

interface GrafanaVariable {
  name?: unknown;
  type?: unknown;
  includeAll?: unknown;
  multi?: unknown;
}

/** Values for the dashboards' variables: known names get exact values, every other "All" variable matches all. */
export interface VariableValues {
  readonly values: Readonly<Record<string, string>>;
  /** Grafana's `$__rate_interval` and `$__interval`. */
  readonly rateInterval: string;
  readonly interval: string;
}

/** Substitutes `$name`, `${name}`, `${name:opt}` and `[[name]]` in a Grafana query. */
export function substitute(expr: string, variables: readonly GrafanaVariable[], known: VariableValues): string {
  const valueOf = (name: string): string | undefined => {
    if (name === "__rate_interval") return known.rateInterval;
    if (name === "__interval") return known.interval;
    const given = known.values[name];
    if (given !== undefined) return given;
    const variable = variables.find((v) => v.name === name);
    if (variable === undefined) return undefined;
    // "All" as Grafana sends it to Prometheus for a regex matcher.
    return ".*";
  };
  const replace = (whole: string, name: string): string => valueOf(name) ?? whole;
  return expr
    .replace(/\$\{(\w+)(?::[^}]*)?\}/g, replace)
    .replace(/\[\[(\w+)\]\]/g, replace)
    .replace(/\$(\w+)/g, replace);
}

/** A panel's value mappings by value; undefined when it has none. */
export function valueMappingsOf(mappings: unknown): Record<string, ValueMapping> | undefined {
  if (!Array.isArray(mappings)) return undefined;
  const out: Record<string, ValueMapping> = {};
  for (const m of mappings as { type?: unknown; options?: unknown }[]) {
    if (m.type !== "value" || typeof m.options !== "object" || m.options === null) continue;
    for (const [value, o] of Object.entries(m.options as Record<string, { text?: unknown; color?: unknown }>)) {
      out[value] = {
        text: typeof o.text === "string" ? o.text : value,
        color: typeof o.color === "string" ? o.color : "",
      };
    }
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Every panel with queries in every dashboard of `dir`, in dashboard order. */
export function readPanels(dir: string, known: VariableValues): PagePanel[] {
  // The shortest name first: the main dashboard (mds-scaler.json) before its companions.
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort((a, b) => a.length - b.length || a.localeCompare(b));
  const out: PagePanel[] = [];
  for (const file of files) {
    const path = join(dir, file);
    let dashboard: { title?: unknown; panels?: GrafanaPanel[]; templating?: { list?: GrafanaVariable[] } };
    try {
      dashboard = JSON.parse(readFileSync(path, "utf8")) as typeof dashboard;
    } catch (error) {
      throw new Error(`read dashboard ${path}`, { cause: error });
    }
    const title = typeof dashboard.title === "string" ? dashboard.title : file;
    const variables = dashboard.templating?.list ?? [];
    let row = "";
    const visit = (panels: readonly GrafanaPanel[]): void => {
      for (const panel of panels) {
        const type = typeof panel.type === "string" ? panel.type : "";
        if (type === "row") {
          row = typeof panel.title === "string" ? panel.title : "";
          // A collapsed row keeps its panels inside it.
          visit(panel.panels ?? []);
          continue;
        }
        const queries = (panel.targets ?? [])
          .filter((t) => typeof t.expr === "string" && t.expr !== "" && t.hide !== true)
          .map((t) => ({
            expr: substitute(t.expr as string, variables, known),
            legend: typeof t.legendFormat === "string" ? t.legendFormat : "",
            instant: t.instant === true || t.format === "table",
          }));
        if (queries.length === 0) continue;
        const unit = panel.fieldConfig?.defaults?.unit;
        const valueMappings = valueMappingsOf(panel.fieldConfig?.defaults?.mappings);
        out.push({
          id: `${file.replace(/\.json$/, "")}-${out.length}`,
          dashboard: title,
          row,
          title: typeof panel.title === "string" ? panel.title : `panel ${String(panel.id ?? out.length)}`,
          type,
          unit: typeof unit === "string" ? unit : undefined,
          ...(valueMappings === undefined ? {} : { valueMappings }),
          queries,
        });
        visit(panel.panels ?? []);
      }
    };
    visit(dashboard.panels ?? []);
  }
  return out;
}
