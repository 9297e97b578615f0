// Where a child's own pi session file lives: pi's per-cwd folder convention under the agent dir.

/** pi's own convention for per-cwd folders: `/a/b` → `--a-b--`. */
export function cwdSlug(cwd: string): string {
  return `--${cwd.replace(/^[/\\]+/, "").replace(/[/\\:]+/g, "-")}--`;
}

export function childSessionFile(agentDir: string, cwd: string, agent: string, id: string): string {
  const safeAgent = agent.replace(/[^A-Za-z0-9_.-]/g, "_") || "default";
  return `${agentDir}/subagent-sessions/${cwdSlug(cwd)}/${safeAgent}_${id}.jsonl`;
}
