// What every tool call needs from the extension: an engine for the call's cwd, what this pi call gives the call's
// preparation (its conversation to fork, consent, caps, the fan-out question), and the call runner started under
// this pi session — its owner endpoint, its caps, its dialogs — with each task mirrored into the parent session
// (pi.appendEntry; docs/pi-extension.md "Lifecycle") and told on pi.events.
import { fanoutRefusal } from "../core/call/confirm-fanout.ts";
import { projectProfileRefusals } from "../core/call/project-consent.ts";
import type { CallFront, PreparedCall } from "../core/call/prepare.ts";
import type { ToolFront } from "../core/call/tools/front.ts";
import type { Refusal } from "../core/call/request.ts";
import { startCall, type CallEvent, type RunningCall } from "../core/call/runner.ts";
import type { Profile } from "../core/profiles/profile.ts";
import type { Engine } from "../core/run/engine.ts";
import type { ForkEntry } from "../core/run/fork.ts";
import type { ParentPrompt } from "../core/run/launch/parent-prompt.ts";
import type { SessionStore } from "../core/store/store-types.ts";
import type { ActiveRuns } from "./active-runs.ts";
import { projectHooksConsent } from "./consent.ts";
import { dialogAsker, type DialogUI } from "./dialog-ask.ts";
import { ENTRY_TYPE, startEntry, toEntry } from "./persist.ts";
import type { PiServices } from "./services.ts";
import { SessionGuards, type StatusUi } from "./session-guard.ts";
import { PiSessions, type PiSession } from "./session-state.ts";

export type ToolContext = {
  cwd: string;
  hasUI: boolean;
  ui?: {
    confirm(title: string, message: string): Promise<boolean>;
    notify(message: string, type?: "info" | "warning" | "error"): void;
  } & StatusUi &
    Partial<DialogUI>;
  sessionManager?: { getSessionId?(): string; getBranch?(): unknown[] };
  /** pi ≥ 0.8x: whether the user trusted this project (its .pi settings, extensions, skills load). */
  isProjectTrusted?(): boolean;
  /** The parent's current model: what an agent file's `model: inherit` means. */
  model?: { provider?: string; id?: string };
  /** pi's system prompt for this run: what a cache-true fork repeats (core/run/fork.ts). */
  getSystemPrompt?(): string;
};

/** The parent pi's active tools' definitions, in order (pi.getAllTools filtered by pi.getActiveTools). */
export type ToolDefs = () => ParentPrompt["tools"] | undefined;

/** How a tool starts its prepared call. */
export type StartOptions = {
  /** The tool call's abort (Esc). A background call has its own, which only the pi session's end triggers. */
  signal?: AbortSignal;
  /** The tool returns before the tasks end: they outlive the tool call (not the pi session), and their children's
   *  questions also wait for an answer from elsewhere (get_subagent_output steer, `subagents answer`). */
  background?: boolean;
  onEvent?: (e: CallEvent) => void;
};

export type CallEnv = {
  /** The pi session this call belongs to (what the user allowed in it, background results it waits for). */
  session: PiSession;
  engine(): Promise<Engine>;
  profiles(): Map<string, Profile>;
  /** Project-local profiles that may not run (no consent, or projectAgents: "deny"), by name, with the reason. */
  refusedProfiles(names: (string | undefined)[]): Promise<Map<string, string>>;
  /** What this pi call gives the call's preparation (core/call/prepare.ts): its conversation to fork, the user to
   *  ask for consent and for a large fan-out, this pi session's caps. */
  front(engine: Engine): Promise<CallFront>;
  /** Starts a prepared call under this pi session (core/call/runner.ts), or says why the caps refuse it. */
  start(engine: Engine, call: PreparedCall, o?: StartOptions): Promise<RunningCall | { refusal: Refusal }>;
  /** This pi call as a tool flow's front (core/call/tools/): its folder, engine, preparation and the user to ask
   *  before a project workflow runs; `start` starts the prepared call the tool's way. */
  toolFront<R>(start: ToolFront<R>["start"]): ToolFront<R>;
  /** Whether a child's question is asked in a dialog here (pi has a UI that can ask). */
  dialogs: boolean;
  /** Tells the model something between its turns (a background task's end or question): best effort. */
  notify(text: string): void;
};

export type ToolEnv = {
  /** `toolCall`: the parent's tool call the call runs in (a traced call's spans hang under it). */
  begin(ctx: ToolContext, toolCall?: { name: string; id: string }): CallEnv;
  services(): Promise<PiServices>;
  guards: SessionGuards;
  sessions: PiSessions;
  /** Waits for the calls under way to end, their task hooks included (each bounded by subagents.hooks.timeout). */
  settleCalls(): Promise<void>;
};

/** What the extension gives every tool call. */
export type ToolEnvOptions = {
  /** What the extension runs on (started on first use). */
  services: () => Promise<PiServices>;
  /** pi.appendEntry: mirrors each task into the parent session. */
  appendEntry: (type: string, data: unknown) => void;
  /** The children running now (session_shutdown and `/subagents kill ID` stop them). */
  active?: ActiveRuns;
  /** The parent pi's active tools at call time: a profile's deny list subtracts from them (docs/agents.md,
   *  `excludeTools`), so a parent limited to read-only tools never hands a child write tools. */
  activeTools?: () => string[] | undefined;
  /** Tells the model between turns (pi.sendMessage). */
  notify?: (text: string) => void;
  toolDefs?: ToolDefs;
  /** pi.events.emit: other extensions hear of each task's start and end. */
  emit?: (channel: string, data: unknown) => void;
};

/** What the parent sent with this call's request, for forked children to repeat; undefined when pi cannot say. */
function parentPrompt(ctx: ToolContext, toolDefs: ToolDefs | undefined): ParentPrompt | undefined {
  try {
    const systemPrompt = ctx.getSystemPrompt?.();
    const tools = toolDefs?.();
    return typeof systemPrompt === "string" && tools ? { cwd: ctx.cwd, systemPrompt, tools } : undefined;
  } catch {
    return undefined; // an older pi or a stale context: forks then get a child's own prompt
  }
}

/** What the extension tells pi (session entries, notices, events) is best effort: it never breaks a delegation. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // ignored on purpose
  }
}

export function makeToolEnv(o: ToolEnvOptions): ToolEnv {
  const sessions = new PiSessions();
  // Every call under way: the hooks their tasks started are waited for when the pi session ends.
  const calls = new Set<Promise<unknown>>();
  let store: SessionStore | undefined;
  const guards = new SessionGuards(() => store);
  // /subagents may ask before any tool call (after a /reload): the store is known as soon as the runtime is.
  void o.services().then(
    (rt) => (store = rt.store),
    () => {},
  );
  return {
    services: o.services,
    guards,
    sessions,
    async settleCalls() {
      await Promise.allSettled([...calls]);
    },
    begin(ctx, toolCall) {
      const session = sessions.for(ctx.sessionManager?.getSessionId?.());
      const guard = async () => {
        store = (await o.services()).store;
        return guards.for(ctx.sessionManager?.getSessionId?.(), ctx.ui);
      };
      let cached: { engine: Engine; profiles: Map<string, Profile> } | null = null;
      const load = async () => {
        if (cached) return cached;
        const rt = await o.services();
        const { settings } = rt.settingsFor(ctx.cwd);
        const { profiles, diagnostics } = rt.profilesFor(ctx.cwd);
        const engine = rt.engineFor(
          ctx.cwd,
          settings,
          { profiles, diagnostics },
          {
            parentSession: ctx.sessionManager?.getSessionId?.(),
            ...(typeof ctx.isProjectTrusted === "function"
              ? { projectTrust: { cwd: ctx.cwd, trusted: !!ctx.isProjectTrusted() } }
              : {}),
            ...(ctx.model?.id
              ? { parentModel: ctx.model.provider ? `${ctx.model.provider}/${ctx.model.id}` : ctx.model.id }
              : {}),
            parentTools: o.activeTools?.(),
            parentPrompt: parentPrompt(ctx, o.toolDefs),
            projectHooks: await projectHooksConsent(ctx, settings, session),
          },
        );
        cached = { engine, profiles };
        return cached;
      };
      // Children's questions become dialogs when pi has a UI; without one they are answered "no one can answer now"
      // (a background call's also wait for an answer from elsewhere).
      const dialogs = !!(ctx.hasUI && ctx.ui?.select && ctx.ui.input);
      // Each task is mirrored into the parent session as it starts and ends, and told on pi.events.
      const mirror = (prepared: PreparedCall, e: CallEvent) => {
        if (e.type === "taskStart") safely(() => o.appendEntry(ENTRY_TYPE, startEntry(e.task)));
        else if (e.type === "taskEnd")
          safely(() => o.appendEntry(ENTRY_TYPE, toEntry(e.outcome, prepared.tasks[e.index])));
        else if (e.type === "recorded")
          safely(() =>
            o.emit?.(e.payload.event === "taskStart" ? "subagents:task_start" : "subagents:task_end", e.payload),
          );
      };
      const env: CallEnv = {
        session,
        dialogs,
        engine: async () => (await load()).engine,
        profiles: () => cached?.profiles ?? new Map(),
        async refusedProfiles(names) {
          const { engine, profiles } = await load();
          const ui = ctx.hasUI ? ctx.ui : undefined;
          const confirm = ui && ((title: string, message: string) => ui.confirm(title, message));
          return projectProfileRefusals(engine.settings, profiles, names, session.allowedProfiles, confirm);
        },
        front: async (engine) => ({
          forkBranch: () => ctx.sessionManager?.getBranch?.() as ForkEntry[] | undefined,
          refusedProfiles: (names) => env.refusedProfiles(names),
          caps: await guard(),
          confirmFanout: (tasks) => fanoutRefusal(ctx, engine.settings, tasks, process.env),
        }),
        notify: (text) => safely(() => o.notify?.(text)),
        toolFront: (start) => ({
          cwd: ctx.cwd,
          engine: () => env.engine(),
          prepare: (engine) => env.front(engine),
          consent: { cwd: ctx.cwd, hasUI: ctx.hasUI, ui: ctx.ui, allowed: session.allowedWorkflows },
          start,
        }),
        async start(engine, prepared, so = {}) {
          const caps = await guard();
          const owner = await (await o.services()).owner();
          // A background call is stopped by the pi session's end (abortAll), not by the tool call's.
          const link = so.background ? (o.active?.link(undefined) ?? new AbortController()) : undefined;
          const running = startCall(engine, prepared, {
            caps,
            owner,
            signal: link?.signal ?? so.signal,
            ask: dialogs ? dialogAsker(ctx.ui as DialogUI) : undefined,
            questionsWait: so.background,
            track: o.active && ((id, signal) => o.active!.task(id, signal)),
            ...(toolCall ? { trace: { tool: { name: toolCall.name, callId: toolCall.id } } } : {}),
            onEvent: (e) => {
              mirror(prepared, e);
              so.onEvent?.(e);
            },
          });
          if ("refusal" in running) {
            if (link) o.active?.release(link);
            return running;
          }
          const settled = running.settled
            .catch(() => {})
            .finally(() => {
              calls.delete(settled);
              if (link) o.active?.release(link);
            });
          calls.add(settled);
          if (so.background) o.active?.track(running.outcomes);
          return running;
        },
      };
      return env;
    },
  };
}
