// What every tool call needs from the extension: an engine for the call's cwd, consent for project-local
// profiles, and mirroring of finished tasks into the parent session (pi.appendEntry; docs/pi-extension.md "Lifecycle").
import type { Profile } from "../core/profiles/profile.ts";
import { projectProfileRefusals } from "../core/call/project-consent.ts";
import { effectiveTimeout, runTask, type Engine, type TaskInput, type TaskOutcome } from "../core/run/task.ts";
import type { ActiveRuns } from "./active-runs.ts";
import type { PiServices } from "./services.ts";
import { ENTRY_TYPE, startEntry, toEntry } from "./persist.ts";
import { dialogAsker, type DialogUI } from "./dialog-ask.ts";
import type { AskRequest } from "../core/run/process/ask.ts";
import type { CapRefusal } from "../core/session-caps.ts";
import type { SessionStore } from "../core/store/store-types.ts";
import type { ParentPrompt } from "../core/run/task-shared.ts";
import { SessionGuards, type StatusUi } from "./session-guard.ts";
import { PiSessions, type PiSession } from "./session-state.ts";
import type { CallFront } from "../core/call/prepare.ts";
import type { CallTaskInput } from "../core/call/request.ts";
import type { ForkEntry } from "../core/run/fork.ts";
import { fanoutRefusal } from "../core/call/confirm-fanout.ts";
import { settleHooks } from "../core/run/task-hooks.ts";
import type { TaskEventPayload } from "../core/run/hooks/payload.ts";
import type { Settings } from "../core/settings.ts";

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

export type CallEnv = {
  /** The pi session this call belongs to (what the user allowed in it, background results it waits for). */
  session: PiSession;
  engine(): Promise<Engine>;
  profiles(): Map<string, Profile>;
  /** Project-local profiles that may not run (no consent, or projectAgents: "deny"), by name, with the reason. */
  refusedProfiles(names: (string | undefined)[]): Promise<Map<string, string>>;
  /** Mirrors a task into the parent session when it starts (status running) and when it ends. */
  persistStart(input: TaskInput): void;
  persist(outcome: TaskOutcome, input: TaskInput): void;
  /** Session caps (session-guard.ts): refuses a call that would pass them, else counts its tasks as coming. Every
   *  task given to run() must have been admitted. */
  admit(engine: Engine, call: { tasks: number; maxCost?: number }): Promise<CapRefusal | null>;
  /** The same check without counting anything (before asking the user). */
  check(engine: Engine, call: { tasks: number; maxCost?: number }): Promise<CapRefusal | null>;
  /** What this pi call gives the call module's checks (core/call/prepare.ts): its conversation to fork, the user to
   *  ask for consent and for a large fan-out, this pi session's caps. */
  front(engine: Engine): CallFront;
  /** Runs one task with a signal that `/subagents kill ID` can also trigger, steerable through the session's owner. */
  run(
    engine: Engine,
    input: TaskInput,
    hooks: Parameters<typeof runTask>[2] & { remoteAsk?: { notify?: (q: AskRequest) => void } },
  ): ReturnType<typeof runTask>;
  /** Lists a call's tasks (queued ones too) in this pi's owner record, so /subagents, `sessions --running`, steer
   *  and cancel find them before they start; the returned function forgets the ones that never started. */
  adopt(tasks: CallTaskInput[]): Promise<() => void>;
  /** For background tasks: a signal that outlives the tool call but not the pi session, and the notice channel. */
  background(
    tasks: CallTaskInput[],
  ): Promise<{ signal: AbortSignal; done(): void; notify(text: string): void; track(batch: Promise<unknown>): void }>;
};

export type ToolEnv = {
  begin(ctx: ToolContext): CallEnv;
  services(): Promise<PiServices>;
  guards: SessionGuards;
  sessions: PiSessions;
  /** Waits for the task hooks still running (each bounded by subagents.hooks.timeout). */
  settleHooks(): Promise<void>;
};

/**
 * Whether this call may run the project's hooks (settings subagents.hooks in the project's .pi/settings.json):
 * the user's subagents.projectAgents decides as it does for project agents, and "ask" asks once per pi session
 * when there is a UI. Unset: the engine's own rule (core/run/task-hooks.ts) refuses them with why.
 */
async function projectHooksConsent(
  ctx: ToolContext,
  settings: Settings,
  session: PiSession,
): Promise<string | undefined> {
  const project = settings.hooks.commands.filter((h) => h.source === "project");
  if (!project.length || settings.hooks.projectConsent !== "ask") return undefined;
  const key = project.map((h) => `${h.file}\0${h.event}\0${h.command}`).join("\n");
  if (session.allowedHooks.has(key)) return "allowed";
  if (!ctx.hasUI || !ctx.ui) return undefined;
  const list = project.map((h) => `${h.event}: ${h.command}`).join("\n");
  if (
    await ctx.ui.confirm(
      "Run this project's sub-agent hooks?",
      `${project[0].file} runs these shell commands on this machine when a sub-agent task starts or ends:\n${list}\nRun them?`,
    )
  ) {
    session.allowedHooks.add(key);
    return "allowed";
  }
  return "a project's hooks were not approved";
}

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

/** Spec 000: persistence is best effort and never breaks delegation. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // ignored on purpose
  }
}

/**
 * `activeTools` reads the parent pi's active tools at call time: a profile's deny list subtracts from them
 * (docs/agents.md, `excludeTools`), so a parent limited to read-only tools never hands a child write tools.
 */
export function makeToolEnv(
  getServices: () => Promise<PiServices>,
  appendEntry: (type: string, data: unknown) => void,
  active?: ActiveRuns,
  activeTools?: () => string[] | undefined,
  notify?: (text: string) => void,
  toolDefs?: ToolDefs,
  emit?: (channel: string, data: unknown) => void,
): ToolEnv {
  const sessions = new PiSessions();
  // Every engine a call made: the hooks their tasks started are waited for when the pi session ends.
  const engines = new Set<Engine>();
  const taskEvents =
    emit && ((p: TaskEventPayload) => emit(p.event === "taskStart" ? "subagents:task_start" : "subagents:task_end", p));
  let store: SessionStore | undefined;
  const guards = new SessionGuards(() => store);
  // /subagents may ask before any tool call (after a /reload): the store is known as soon as the runtime is.
  void getServices().then(
    (rt) => (store = rt.store),
    () => {},
  );
  return {
    services: getServices,
    guards,
    sessions,
    async settleHooks() {
      await Promise.all([...engines].map((e) => settleHooks(e)));
    },
    begin(ctx) {
      const session = sessions.for(ctx.sessionManager?.getSessionId?.());
      const allowed = session.allowedProfiles;
      const guard = async () => {
        store = (await getServices()).store;
        return guards.for(ctx.sessionManager?.getSessionId?.(), ctx.ui);
      };
      let cached: { engine: Engine; profiles: Map<string, Profile> } | null = null;
      const load = async () => {
        if (cached) return cached;
        const rt = await getServices();
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
            parentTools: activeTools?.(),
            parentPrompt: parentPrompt(ctx, toolDefs),
            projectHooks: await projectHooksConsent(ctx, settings, session),
          },
        );
        // Engines whose hooks are all done are forgotten (a long pi session makes one per call).
        for (const e of engines) if (!e.caches.hooksRunning?.size) engines.delete(e);
        engines.add(engine);
        cached = { engine, profiles };
        return cached;
      };
      const env: CallEnv = {
        session,
        engine: async () => (await load()).engine,
        profiles: () => cached?.profiles ?? new Map(),
        async refusedProfiles(names) {
          const { engine, profiles } = await load();
          const ui = ctx.hasUI ? ctx.ui : undefined;
          return projectProfileRefusals(engine.settings, profiles, names, allowed, ui && ((t, m) => ui.confirm(t, m)));
        },
        persistStart(input) {
          safely(() => appendEntry(ENTRY_TYPE, startEntry(input.sessionId ?? "", input, input.profile ?? "default")));
        },
        persist(outcome, input) {
          safely(() => appendEntry(ENTRY_TYPE, toEntry(outcome, input)));
        },
        front: (engine) => ({
          forkBranch: () => ctx.sessionManager?.getBranch?.() as ForkEntry[] | undefined,
          refusedProfiles: (names) => env.refusedProfiles(names),
          caps: { check: (c) => env.check(engine, c), admit: (c) => env.admit(engine, c) },
          confirmFanout: (tasks) => fanoutRefusal(ctx, engine.settings, tasks, process.env),
        }),
        async admit(engine, c) {
          return (await guard()).admit(engine.settings, c);
        },
        async check(engine, c) {
          return (await guard()).check(engine.settings, c);
        },
        async run(engine, input, hooks = {}) {
          const t = active && input.sessionId ? active.task(input.sessionId, hooks.signal) : null;
          try {
            const owner = await (await getServices()).owner();
            // Children's questions become dialogs when pi has a UI; without one they are answered "no one can answer now".
            // A background run's questions also wait for an answer from elsewhere; the model is told only when no dialog asks.
            const ask = ctx.hasUI && ctx.ui?.select && ctx.ui.input ? dialogAsker(ctx.ui as DialogUI) : undefined;
            const remoteAsk = hooks.remoteAsk && (ask ? {} : hooks.remoteAsk);
            const run = owner.wrap(
              (i, h) => runTask(engine, i, h),
              (i) => effectiveTimeout(engine, i),
            );
            const onTaskEvent = (p: TaskEventPayload) => {
              hooks.onTaskEvent?.(p);
              taskEvents?.(p);
            };
            return await (await guard()).runner(engine.settings, run)(input, {
              ...hooks,
              ask,
              remoteAsk,
              signal: t?.signal ?? hooks.signal,
              onTaskEvent,
            });
          } finally {
            t?.done();
          }
        },
        async adopt(tasks) {
          const owner = await (await getServices()).owner();
          owner.adopt(tasks);
          return () => owner.release(tasks.map((t) => t.sessionId));
        },
        async background(tasks) {
          const release = await env.adopt(tasks);
          const c = active?.link(undefined) ?? new AbortController();
          const done = () => {
            release();
            active?.release(c);
          };
          return {
            signal: c.signal,
            done,
            notify: (text) => safely(() => notify?.(text)),
            track: (batch) => active?.track(batch),
          };
        },
      };
      return env;
    },
  };
}
