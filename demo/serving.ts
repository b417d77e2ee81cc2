/**
 * When the replay may begin: the fleet the scaler replaces serves before traffic
 * is switched to it. Every role of the target has its committed replicas ready,
 * and the scaler reads each role (`Fresh` or `Idle`), so the trace's first
 * requests meet a serving fleet whose demand the scaler sees, not pods still
 * loading or a scaler still waiting for its first samples.
 */

/** The target's roles as the API server returns them. */
interface TargetRoles {
  readonly spec?: { readonly roles?: readonly { readonly name: string; readonly replicas?: number }[] };
  readonly status?: { readonly roles?: readonly { readonly name: string; readonly ready?: number }[] };
}

/** The scaler's per-role signal states as the API server returns them. */
interface ScalerRoles {
  readonly status?: { readonly roles?: readonly { readonly name: string; readonly signalState?: string }[] };
}

/** Signal states that mean the scaler reads the role: work observed, or a measured zero. */
const readStates: ReadonlySet<string> = new Set(["Fresh", "Idle"]);

/** What still keeps the replay from starting, one phrase per role; empty once every role serves and is read. */
export function notServingYet(target: TargetRoles, scaler: ScalerRoles): string[] {
  const roles = target.spec?.roles ?? [];
  if (roles.length === 0) return ["the target has no roles yet"];
  return roles.flatMap((role) => {
    const ready = target.status?.roles?.find((r) => r.name === role.name)?.ready ?? 0;
    const state = scaler.status?.roles?.find((r) => r.name === role.name)?.signalState;
    const waiting: string[] = [];
    if (role.replicas === undefined || ready < role.replicas)
      waiting.push(`${role.name}: ${ready} of ${role.replicas ?? "?"} replicas ready`);
    if (state === undefined || !readStates.has(state))
      waiting.push(`${role.name}: the scaler's signal state is ${state ?? "not reported yet"}`);
    return waiting;
  });
}
