/**
 * The shared shape of every mds-scaler dashboard: panels are declared as plain
 * specs (title, the question it answers, PromQL) and built with Grafana's typed
 * builders from @grafana/grafana-foundation-sdk, so the JSON Grafana imports is
 * the schema Grafana maintains. `npm run generate` writes dashboards/*.json and
 * a test fails when the committed files differ.
 */
import * as common from "@grafana/grafana-foundation-sdk/common";
import {
  AnnotationQueryBuilder,
  DashboardBuilder,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  MappingType,
  VariableSort,
  type Dashboard,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { DataqueryBuilder, PromQueryFormat } from "@grafana/grafana-foundation-sdk/prometheus";
import { PanelBuilder as StatPanel } from "@grafana/grafana-foundation-sdk/stat";
import { PanelBuilder as StateTimelinePanel } from "@grafana/grafana-foundation-sdk/statetimeline";
import { PanelBuilder as TablePanel } from "@grafana/grafana-foundation-sdk/table";
import { PanelBuilder as TimeseriesPanel } from "@grafana/grafana-foundation-sdk/timeseries";

/** Every panel and query reads the data source the user picks in the `datasource` variable. */
export const datasource = { type: "prometheus", uid: "${datasource}" } as const;

export interface Target {
  readonly expr: string;
  readonly legend?: string;
}

/** A table's columns: label (or value field) to header, in display order. Every other field is hidden. */
export type Columns = readonly (readonly [label: string, header: string])[];

interface PanelBase {
  readonly title: string;
  /** The question the panel answers; Grafana shows it as the panel's description. */
  readonly question: string;
  readonly targets: readonly Target[];
  readonly unit?: string;
  readonly width?: number;
  readonly height?: number;
  /** Text (and colour) shown instead of a value, e.g. 1 → "Leader". */
  readonly valueText?: Readonly<Record<string, { readonly text: string; readonly color: string }>>;
}

/**
 * A table of scalers, one row each: mode, binding term and, where they write floors by the hour, their age: hours
 * since the day they were read from ended (the Fleet and Scalers dashboards; `MdsScalerFloorsStale` fires past 26).
 */
export function scalerStateTable(selector: string): { targets: readonly Target[]; columns: Columns } {
  return {
    targets: [
      { expr: `max by (namespace, scaler, target, mode) (mds_scaler_mode{${selector}} == 1)` },
      { expr: `max by (namespace, scaler, target) (mds_scaler_binding_term{${selector}})` },
      {
        expr: `max by (namespace, scaler, target) ((time() - mds_scaler_floors_calibrated_timestamp_seconds{${selector}}) / 3600)`,
      },
    ],
    columns: [
      ["namespace", "Namespace"],
      ["scaler", "Scaler"],
      ["target", "Target"],
      ["mode", "Mode"],
      ["Value #B", "Binding term"],
      ["Value #C", "Floors' age (h)"],
    ],
  };
}

/** The counters of what the controller wrote and how it held, one target each, for `perGroup` to aggregate. */
export function writeCounterTargets(perGroup: (counter: string) => string, legendGroup: string): readonly Target[] {
  return (
    [
      ["mds_commits_total", "commits"],
      ["mds_commit_conflicts_total", "conflicts"],
      ["mds_commit_failures_total", "failed commits"],
      ["mds_rollbacks_total", "rollbacks"],
      ["mds_aborted_scale_downs_total", "aborted scale-downs"],
      ["mds_rebalance_steps_total", "rebalance steps"],
    ] as const
  ).map(([counter, what]) => ({ expr: perGroup(counter), legend: `${legendGroup} ${what}` }));
}

export type PanelSpec =
  | (PanelBase & { readonly type: "timeseries" })
  | (PanelBase & { readonly type: "state-timeline" })
  | (PanelBase & { readonly type: "stat" })
  | (PanelBase & { readonly type: "table"; readonly columns: Columns });

export interface RowSpec {
  readonly title: string;
  readonly panels: readonly PanelSpec[];
}

export interface VariableSpec {
  readonly name: string;
  readonly label: string;
  readonly query: string;
}

export interface AnnotationSpec {
  readonly name: string;
  readonly expr: string;
  readonly title: string;
  readonly text: string;
  readonly color: string;
}

export interface DashboardSpec {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  readonly variables: readonly VariableSpec[];
  readonly annotations?: readonly AnnotationSpec[];
  readonly rows: readonly RowSpec[];
}

function query(target: Target, index: number, instant: boolean): DataqueryBuilder {
  const q = new DataqueryBuilder()
    .datasource(datasource)
    .refId(String.fromCharCode(65 + index))
    .expr(target.expr);
  if (target.legend !== undefined) q.legendFormat(target.legend);
  if (instant) q.instant().format(PromQueryFormat.Table);
  return q;
}

function legend(): common.VizLegendOptionsBuilder {
  return new common.VizLegendOptionsBuilder()
    .displayMode(common.LegendDisplayMode.List)
    .placement(common.LegendPlacement.Bottom)
    .showLegend(true);
}

/**
 * Readable table columns: several instant queries are merged into one row per
 * shared label set; the Time column and every value not listed are hidden; the
 * listed labels and values are renamed and put in order.
 */
function tableTransformations(columns: Columns, queries: number): { id: string; options: Record<string, unknown> }[] {
  const listed = new Set(columns.map(([field]) => field));
  const values = queries === 1 ? ["Value"] : Array.from({ length: queries }, (_, i) => `Value #${String.fromCharCode(65 + i)}`);
  const organize = {
    id: "organize",
    options: {
      excludeByName: Object.fromEntries(["Time", ...values].filter((f) => !listed.has(f)).map((f) => [f, true])),
      renameByName: Object.fromEntries(columns),
      indexByName: Object.fromEntries(columns.map(([field], i) => [field, i])),
    },
  };
  return queries === 1 ? [organize] : [{ id: "merge", options: {} }, organize];
}

function panel(spec: PanelSpec, id: number): TimeseriesPanel | StateTimelinePanel | StatPanel | TablePanel {
  const instant = spec.type === "table" || spec.type === "stat";
  const base = <
    P extends {
      id(id: number): P;
      title(t: string): P;
      description(d: string): P;
      datasource(d: typeof datasource): P;
      span(w: number): P;
      height(h: number): P;
      unit(u: string): P;
      withTarget(t: DataqueryBuilder): P;
      mappings(m: { type: MappingType.ValueToText; options: Record<string, { text: string; color: string }> }[]): P;
    },
  >(
    p: P,
  ): P => {
    p.id(id)
      .title(spec.title)
      .description(spec.question)
      .datasource(datasource)
      .span(spec.width ?? 12)
      .height(spec.height ?? 8)
      .unit(spec.unit ?? "short");
    spec.targets.forEach((t, i) => p.withTarget(query(t, i, instant)));
    if (spec.valueText !== undefined)
      p.mappings([
        {
          type: MappingType.ValueToText,
          options: Object.fromEntries(
            Object.entries(spec.valueText).map(([value, { text, color }]) => [value, { text, color }]),
          ),
        },
      ]);
    return p;
  };
  switch (spec.type) {
    case "timeseries":
      return base(new TimeseriesPanel()).legend(legend());
    case "state-timeline":
      return base(new StateTimelinePanel()).legend(legend()).mergeValues(true);
    case "stat":
      return base(new StatPanel())
        .graphMode(common.BigValueGraphMode.None)
        .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(["lastNotNull"]).values(false));
    case "table":
      return base(new TablePanel()).transformations(tableTransformations(spec.columns, spec.targets.length));
  }
}

function variable(spec: VariableSpec): QueryVariableBuilder {
  return new QueryVariableBuilder(spec.name)
    .label(spec.label)
    .datasource(datasource)
    .query(spec.query)
    .definition(spec.query)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true)
    .current({ text: "All", value: "$__all" });
}

function annotation(spec: AnnotationSpec): AnnotationQueryBuilder {
  return new AnnotationQueryBuilder()
    .name(spec.name)
    .datasource(datasource)
    .enable(true)
    .iconColor(spec.color)
    .expr(spec.expr)
    .titleFormat(spec.title)
    .textFormat(spec.text)
    .step("1m");
}

/** Builds the dashboard JSON model from its spec. */
export function buildDashboard(spec: DashboardSpec): Dashboard {
  const d = new DashboardBuilder(spec.title)
    .uid(spec.uid)
    .description(spec.description)
    .tags(["mds-scaler", "llm", "autoscaling"])
    .editable()
    .time({ from: "now-3h", to: "now" })
    .refresh("30s")
    .withVariable(new DatasourceVariableBuilder("datasource").label("Data source").type("prometheus"));
  for (const v of spec.variables) d.withVariable(variable(v));
  for (const a of spec.annotations ?? []) d.annotation(annotation(a));
  let id = 1;
  for (const row of spec.rows) {
    d.withRow(new RowBuilder(row.title).id(id++));
    for (const p of row.panels) d.withPanel(panel(p, id++));
  }
  return d.build();
}
