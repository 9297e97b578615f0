// Stage "memory": an agent that remembers (its `memory` field) starts with its MEMORY.md in the system prompt,
// read at each run from the project the task was started in (agent-memory.ts says who may keep it).
import { memoryPrompt } from "../profiles/agent-memory.ts";
import type { TaskContext } from "./task-context.ts";

export function loadMemory(task: TaskContext): void {
  const { engine, profile, input } = task;
  if (!profile?.memory) return;
  const text = memoryPrompt(engine.host, profile, {
    agentDir: engine.agentDir,
    cwd: input.cwd,
    parentTools: engine.call.parentTools,
  });
  if (text) task.memory = text;
}
