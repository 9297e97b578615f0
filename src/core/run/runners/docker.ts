// The docker runner: one container per child (`docker run --rm -i --init`), from `subagents.docker.image` (any
// image with a glibc). Our executable is mounted read-only at its own path and runs the pi built into it; the
// task's own copy of its folder (task-copy.ts: a daemon cannot enter our namespace, so there is no layer) is
// mounted read-write at the folder's own path — its owner takes back what changed when it ends, never the
// container — and the child's own session file at its path, pi's agent dir as in the
// sandbox (a private folder with the user's entries read-only, a credentials copy as auth.json, none of our
// records, no other sessions: child-files.ts). The
// container is read-only, has no capabilities and a private /tmp and home. `DOCKER_HOST` is honoured (the docker
// CLI reads it): a remote daemon must see the same paths (a shared filesystem) and the same executable.
//
// Only stdin/stdout/stderr cross `docker run`: events use pi's json mode on stdout, and there is no control pipe
// (no steering, no budget or rate-limit steers: budgets still stop the child). The kill protocol signals the
// docker client, which forwards the signal into the container (tini runs as its init); the container is named
// for the child and removed with `docker rm -f` on every end path. Containers of an owner that died (SIGKILL)
// are removed the next time this runner starts a child on the same machine.
// Its network is closed like the sandbox's (network.ts): `--network none` (a loopback only) and the owner's proxy
// socket mounted at the same path; subagents.docker.network applies only with subagents.sandboxNetwork "all".
import type { Host } from "../../host.ts";
import { agentDirMounts } from "./sandbox.ts";
import { closeNetwork } from "./network.ts";
import { childFiles, type ChildFiles } from "./child-files.ts";
import { ask, onPath, runCommand } from "./commands.ts";
import { assetCaches, folderNotConfinable, mappedOf, NO_TREE, writableOf } from "./sandbox-wrap.ts";
import type { ChildRunner, PlaceRequest, RunnerHealth } from "./types.ts";
import type { EngineSettings } from "../../runner-settings.ts";

/** Environment that crosses into the container: pi's, ours, locale, proxies and model-provider credentials. */
const ENV_CROSSES =
  /^(PI_|SUBAGENTS_|LANG$|LC_|TZ$|TERM$|NO_COLOR$|HOME$|USER$|(HTTPS?|NO|ALL)_PROXY$|(https?|no|all)_proxy$|[A-Z][A-Z0-9_]*_API_KEY$|ANTHROPIC_|OPENAI_|GEMINI_|GOOGLE_|AZURE_|AWS_|MISTRAL_|GROQ_|OPENROUTER_|XAI_|DEEPSEEK_|CEREBRAS_|COPILOT_|GH_TOKEN$|TRACEPARENT$|TRACESTATE$)/;

function ids(host: Host): string | null {
  const status = host.readText("/proc/self/status") ?? "";
  const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
  const gid = /^Gid:\s+(\d+)/m.exec(status)?.[1];
  return uid && gid ? `${uid}:${gid}` : null;
}

const hostname = (host: Host) => (host.readText("/proc/sys/kernel/hostname") ?? "").trim() || "unknown";

let reaped = false;
/** Removes the containers of owners on this machine that are gone (an owner killed with SIGKILL cannot). */
async function reapOrphans(host: Host, docker: string): Promise<void> {
  if (reaped) return;
  reaped = true;
  const me = hostname(host);
  const ps = await runCommand(
    host,
    [
      docker,
      "ps",
      "-a",
      "--filter",
      `label=subagents.host=${me}`,
      "--format",
      '{{.Names}} {{.Label "subagents.owner"}}',
    ],
    { timeoutMs: 10_000 },
  );
  const dead = ps.stdout
    .split("\n")
    .map((l) => l.trim().split(" "))
    .filter(([name, pid]) => name && Number(pid) > 0 && !host.isAlive(Number(pid)))
    .map(([name]) => name);
  if (dead.length) await runCommand(host, [docker, "rm", "-f", ...dead], { timeoutMs: 30_000 });
}

export function dockerArgv(
  req: PlaceRequest,
  opts: {
    docker: string;
    user: string | null;
    owner: number;
    host: string;
    agentEntries: string[];
    caches: string[];
    netSocket?: string;
    files?: Pick<ChildFiles, "sessionFile" | "auth">;
  },
): string[] {
  const home = req.env.HOME ?? "/root";
  const { image, network, args } = req.settings.docker;
  const exe = req.argv[0];
  // Each path once (docker refuses a second mount at the same place); the first mode given wins.
  const mounts = new Map<string, "ro" | "rw">();
  const agent = agentDirMounts(req.agentDir, opts.agentEntries).map((p) => [p, "ro"]);
  for (const [p, mode] of [
    [exe, "ro"],
    ...agent,
    [opts.files?.sessionFile ?? req.sessionFile, "rw"],
    ...writableOf(req).map((p) => [p, "rw"]),
    ...(req.tree?.readable ?? []).map((p) => [p, "ro"]),
    ...req.files.map((f) => [f, "ro"]),
    ...opts.caches.map((c) => [c, "ro"]),
    ...(opts.netSocket ? [[opts.netSocket, "rw"]] : []),
  ] as [string, "ro" | "rw"][]) {
    if (!mounts.has(p)) mounts.set(p, mode);
  }
  // Like a normal /tmp and home, scripts there may run (docker's tmpfs default is noexec).
  // pi's agent dir is a private writable folder (pi takes its lock files there) with the user's entries mounted in.
  const tmpfs = ["/tmp", home, req.agentDir].filter(
    (t) => ![...mounts.keys()].some((m) => m === t || t.startsWith(`${m}/`)),
  );
  const argv = [
    opts.docker,
    "run",
    "--rm",
    "-i",
    "--init",
    "--name",
    req.name,
    "--label",
    `subagents.owner=${opts.owner}`,
    "--label",
    `subagents.host=${opts.host}`,
  ];
  argv.push(
    "--network",
    opts.netSocket ? "none" : network,
    "--read-only",
    ...tmpfs.flatMap((t) => ["--tmpfs", `${t}:exec`]),
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
  );
  if (opts.user) argv.push("--user", opts.user);
  // A task's copy is shown at the folder's own path.
  const from = new Map(mappedOf(req).map((m) => [m.to, m.from]));
  for (const [p, mode] of mounts) argv.push("-v", `${from.get(p) ?? p}:${p}:${mode}`);
  const auth = opts.files?.auth;
  if (auth && "file" in auth) argv.push("-v", `${auth.file}:${req.agentDir}/auth.json:rw`);
  for (const k of Object.keys(req.env).sort())
    if (ENV_CROSSES.test(k) && k !== "PI_SUBAGENT_PARENT_PID") argv.push("-e", k);
  argv.push("-w", req.cwd, ...args, image, ...req.argv);
  return argv;
}

export const dockerRunner: ChildRunner = {
  name: "docker",
  local: false,
  confined: true,
  transport: "json",
  health: dockerHealth,
  notes: [
    "runner docker: no steering (only stdin/stdout cross docker run); budgets stop the child without a wrap-up message",
  ],
  async place(req) {
    const docker = onPath(req.host, "docker");
    if (!docker)
      return "The docker runner needs the docker CLI (Debian/Ubuntu package docker.io), which is not on PATH. Nothing was run.";
    // The pi that runs in the container is the one built into our single-file executable.
    // From source it is a runtime plus a script (`bun --no-install main.ts`), which would need the whole checkout.
    const script = req.argv[1] === "--no-install" || /\.(ts|js|mjs|cjs)$/.test(req.argv[1] ?? "");
    if (req.env.SUBAGENTS_ROLE !== "pi" || script || !req.host.stat(req.argv[0])?.isFile) {
      return "The docker runner runs the pi built into the subagents executable, but children here would run another pi. Run the subagents executable (not from source), and leave subagents.childPi at auto or embedded. Nothing was run.";
    }
    const unsafe = folderNotConfinable(req, req.host.homedir());
    if (unsafe) return unsafe;
    await reapOrphans(req.host, docker);
    const agentEntries = req.host.listDir(req.agentDir).map((e) => e.name);
    // The container is the sandbox: it writes its task's copy only, sandboxed or not.
    if (!req.tree) return NO_TREE;
    const net = await closeNetwork(req, req.argv, req.env);
    if (typeof net === "string") return net;
    const files = await childFiles(req);
    const netReq = net ? { ...req, env: net.env } : req;
    const argv = dockerArgv(netReq, {
      docker,
      user: ids(req.host),
      owner: req.host.pid,
      host: hostname(req.host),
      agentEntries,
      caches: assetCaches(req.env, req.env.HOME ?? "/root").filter((c) => req.host.stat(c)?.isDirectory),
      netSocket: net?.socket,
      files,
    });
    // The values of `-e NAME` come from the docker client's own environment, never from its argv.
    const { PI_SUBAGENT_PARENT_PID: _, ...env } = netReq.env;
    return {
      argv,
      env,
      netRefused: net ? () => net.proxy.refused() : undefined,
      warnings: files.warnings,
      cleanup: async () => {
        await runCommand(req.host, [docker, "rm", "-f", req.name], { timeoutMs: 30_000 });
        await net?.proxy.close();
        await files.close();
      },
    };
  },
};

/** The docker CLI, its daemon, and the image children start from. */
async function dockerHealth(host: Host, settings: EngineSettings): Promise<RunnerHealth> {
  const docker = onPath(host, "docker");
  if (!docker)
    return {
      status: "fail",
      detail: "subagents.runner is docker, but the docker CLI is not on PATH",
      fix: "apt-get install docker.io",
    };
  const info = await ask(host, [docker, "version", "--format", "{{.Server.Version}}"]);
  if (!info.ok)
    return {
      status: "fail",
      detail: `docker daemon not reachable${host.env.DOCKER_HOST ? ` at DOCKER_HOST=${host.env.DOCKER_HOST}` : ""}: ${info.out}`,
      fix: "start dockerd, or set DOCKER_HOST",
    };
  const { image: name, network } = settings.docker;
  const image = await ask(host, [docker, "image", "inspect", "--format", "{{.Id}}", name]);
  const detail = `docker ${info.out}, image ${name}${image.ok ? "" : " (not pulled yet)"}, network ${network}`;
  return image.ok ? { status: "ok", detail } : { status: "warn", detail, fix: `docker pull ${name}` };
}
