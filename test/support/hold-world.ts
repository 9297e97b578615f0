// Manual helper (not a test): keeps a pi world up and prints a shell env line for it.
import { piWorld } from "./pi-env.ts";
import { script } from "../../src/scripted/model-server.ts";
const w = await piWorld();
const keys = ["PI_CODING_AGENT_DIR", "SUBAGENTS_DB", "HOME", "PATH"];
console.log(keys.map((k) => `export ${k}='${w.env[k]}'`).join("; ") + `; cd '${w.workDir}'`);
console.log(JSON.stringify(script([{ tool: "bash", args: { command: "sleep 60" } }, { finalize: { status: "SUCCESS", result: "x" } }])));
setInterval(() => {}, 1000);
