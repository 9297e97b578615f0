// JavaScriptCore's tier-up thresholds (Bun.unsafe.setJITPolicy): scaled up while a process starts, so code that
// runs once stays in the interpreter, and back to normal once the process does its long-running work. Only Bun
// has the knob; elsewhere (a Node pi loading the extension) these do nothing.
const STARTUP_SCALE = 8;

type JitBun = { unsafe?: { setJITPolicy?: (scale: number) => void } };

function set(scale: number): void {
  const bun = (globalThis as { Bun?: JitBun }).Bun;
  try {
    bun?.unsafe?.setJITPolicy?.(scale);
  } catch {
    // an older Bun without the knob: nothing to tune
  }
}

export const setStartupJitPolicy = () => set(STARTUP_SCALE);
export const setNormalJitPolicy = () => set(1);
