/**
 * What a pass tells the person running the controller that is not a failure: under the `native` plan,
 * roles whose native histogram sums Prometheus did not answer (read from their classic buckets instead, at
 * more queries a pass than the `roles` plan), and Prometheus' info annotations. Logged once per change, not
 * per pass.
 */
import type { Logger } from "../telemetry/logger.js";
import type { SamplingPass } from "./source.js";

/** Roles named in one log line; the count says how many there were. */
const rolesNamed = 10;

/** Distinct info texts remembered, so a Prometheus that varies them cannot grow the set without bound. */
const infosRemembered = 1_000;

export class PassNotes {
  /** Consecutive passes with roles missing their native sums; 0 while every role has them. */
  private missingPasses = 0;
  private readonly infosLogged = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Reads one pass: a warning when roles start missing their native sums, an info line when none does again. */
  read(pass: Pick<SamplingPass, "nativeSumsMissing" | "infos">): void {
    const missing = pass.nativeSumsMissing;
    if (missing.length > 0) {
      if (this.missingPasses === 0)
        this.logger.warn(
          "native plan: Prometheus answered no native histogram sum for some roles, so their classic buckets " +
            "were read instead (more queries a pass than the roles plan); have it convert the engines' histograms " +
            "(convert_classic_histograms_to_nhcb, the chart's podMonitor.convertClassicHistogramsToNHCB) or run " +
            "--prometheus-queries=roles; logged again when every role has its sums",
          { roles: missing.slice(0, rolesNamed), rolesMissing: missing.length },
        );
      this.missingPasses += 1;
    } else if (this.missingPasses > 0) {
      this.logger.info("native plan: every role's native histogram sums answered again", {
        passesMissing: this.missingPasses,
      });
      this.missingPasses = 0;
    }
    for (const info of pass.infos) {
      if (this.infosLogged.has(info) || this.infosLogged.size >= infosRemembered) continue;
      this.infosLogged.add(info);
      this.logger.info("Prometheus info on a sampling query (logged once per text)", { info });
    }
  }
}
