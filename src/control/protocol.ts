// The control socket's wire format: one JSON request line, one JSON reply line, then the connection closes
// (except `watch`, which streams until the task ends: watch.ts).
export type ControlRequest =
  | { op: "steer"; sessionId: string; text: string }
  /** Answers the session's oldest open question (ask.ts); fails when none is open. */
  | { op: "answer"; sessionId: string; text: string }
  /** `by` names who stops it (`/subagents`): the run is recorded as "Stopped from <by>" instead of "Cancelled". */
  | { op: "cancel"; sessionId?: string; all?: boolean; by?: string }
  | { op: "ping" }
  /** Streams the session's window and event lines until it ends (see watch.ts). */
  | { op: "watch"; sessionId: string };

export type ControlReply =
  | { ok: true; delivered?: boolean; answered?: boolean; cancelled?: string[] }
  | { ok: false; reason: string };

/** A steer is a message to a model, not a file transfer. */
export const MAX_STEER_CHARS = 64 * 1024;
