/** The parent pi's system prompt and active tools' definitions (in order) at call time: what a cache-true fork
 *  repeats byte for byte (core/run/fork.ts, src/child-extension/fork-prompt.ts). */
export type ParentPrompt = {
  cwd: string;
  systemPrompt: string;
  tools: { name: string; description: string; parameters: unknown }[];
};
