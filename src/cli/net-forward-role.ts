// The executable's `net-forward` role: inside a sandbox whose network is closed, it starts the forwarder
// (src/host/net-forward.ts) and then the child's real command (another harness's CLI, or a pi that is not ours),
// with the proxy variables set. It passes on stdin/stdout/stderr and our fd 3 / fd 4 pipes, forwards the stop
// signals, and exits with the child's code. The sandbox's own pid namespace ends both if the owner dies.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { constants } from "node:os";
import { startForwarder } from "../host/net-forward.ts";

const isOpen = (fd: number) => {
  try {
    fs.fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};

export async function runNetForward(argv: string[]): Promise<number> {
  delete process.env.SUBAGENTS_ROLE;
  if (!argv.length) {
    process.stderr.write("subagents net-forward: no command\n");
    return 2;
  }
  if (!(await startForwarder(process.env))) {
    process.stderr.write("subagents: the sandbox's network forwarder could not listen inside the sandbox\n");
    return 1;
  }
  const stdio: (number | "inherit")[] = ["inherit", "inherit", "inherit", ...[3, 4].filter(isOpen)];
  const child = spawn(argv[0], argv.slice(1), { stdio, env: process.env });
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => child.kill(sig));
  return await new Promise<number>((resolve) => {
    child.once("error", (err) => {
      process.stderr.write(`subagents net-forward: ${argv[0]}: ${err.message}\n`);
      resolve(127);
    });
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 15) : 1)));
  });
}
