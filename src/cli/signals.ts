// SIGINT/SIGTERM: abort every running child (the kill protocol runs in the engine), let the command record the
// statuses and restore the terminal, then exit 130/143. A second signal exits at once.
import { EXIT } from "./errors.ts";

export type Interrupt = { signal: AbortSignal; exitCode(): number | null; dispose(): void };

export function trapSignals(onSignal?: () => void): Interrupt {
  const controller = new AbortController();
  let code: number | null = null;
  const handler = (sig: NodeJS.Signals) => {
    if (code !== null) process.exit(code);
    code = sig === "SIGINT" ? EXIT.sigint : EXIT.sigterm;
    onSignal?.();
    controller.abort();
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return {
    signal: controller.signal,
    exitCode: () => code,
    dispose: () => {
      process.off("SIGINT", handler);
      process.off("SIGTERM", handler);
    },
  };
}
