/**
 * A write refused or aborted because this replica does not lead (any more).
 * Not a failure of the write: the replica that leads now makes it.
 */
export class NotLeaderError extends Error {
  override readonly name = "NotLeaderError";
}
