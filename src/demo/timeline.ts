/**
 * How the demo page draws a state-timeline panel, as Grafana would with the
 * panel's value mappings. One lane per query series. Without mappings a
 * series is present while its state holds (`... == 1`), and draws as a bar.
 * With mappings each value draws in its own colour with the mapping's text
 * in the legend; a value of 0 is the resting state (Panic mode's "Stable")
 * and draws as a thin neutral line, so a steady run does not read as a bar of
 * the alarming state.
 *
 * The page runs this very function: `page.ts` serves its source as
 * `/assets/timeline.js`, so it must stay self-contained (no imports, no
 * helpers outside its body).
 */

export interface ValueMapping {
  readonly text: string;
  /** A Grafana colour name (green, orange, red, ...) or a CSS colour. */
  readonly color: string;
}

export interface TimelineInput {
  readonly label: string;
  /** One value per x; null where the series has no point. */
  readonly values: readonly (number | null)[];
}

export interface DrawnSeries {
  readonly label: string;
  /** 1-based lane on the y axis. */
  readonly lane: number;
  readonly colour: string;
  readonly width: number;
  /** The lane where this series is drawn, null elsewhere. */
  readonly ys: readonly (number | null)[];
}

export function timelineSeries(
  series: readonly TimelineInput[],
  mappings: Readonly<Record<string, ValueMapping>> | undefined,
  palette: readonly string[],
): DrawnSeries[] {
  // Grafana's named colours, as its default theme draws them.
  const named: Readonly<Record<string, string>> = {
    green: "#73bf69",
    orange: "#ff9830",
    red: "#f2495c",
    yellow: "#fade2a",
    blue: "#5794f2",
    purple: "#b877d9",
  };
  const neutral = "#b4bac1";
  const out: DrawnSeries[] = [];
  series.forEach((s, i) => {
    const lane = i + 1;
    if (mappings === undefined) {
      out.push({
        label: s.label,
        lane,
        colour: palette[i % palette.length] ?? neutral,
        width: 8,
        ys: s.values.map((v) => (v === null ? null : lane)),
      });
      return;
    }
    const values = [...new Set(s.values.filter((v): v is number => v !== null))].sort((a, b) => a - b);
    for (const value of values) {
      const mapping = mappings[String(value)];
      const resting = value === 0;
      out.push({
        label: `${s.label}: ${mapping?.text ?? String(value)}`,
        lane,
        colour: resting
          ? neutral
          : (named[mapping?.color ?? ""] ?? mapping?.color ?? palette[i % palette.length] ?? neutral),
        width: resting ? 3 : 8,
        ys: s.values.map((v) => (v === value ? lane : null)),
      });
    }
  });
  return out;
}
