// An embedded child keeps Bun's native fetch unless a proxy variable is set (src/embedded/native-fetch.ts). What a
// user relies on either way: with HTTP_PROXY set, the child's model requests go through that proxy; without it,
// they go straight to the model. A recording forward proxy in front of the scripted model shows both.
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as net from "node:net";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
let proxy: net.Server;
let proxyUrl = "";
/** The host:port each proxied connection was for. */
const proxied: string[] = [];
beforeAll(async () => {
  world = await piWorld();
  // A forward proxy speaking both ways a client may use it: a CONNECT tunnel (pi's undici) or an absolute-form
  // request (Bun's fetch). Either way it records where to, then pipes bytes.
  proxy = net.createServer((client) => {
    client.once("data", (first) => {
      const [method, target] = first.toString("latin1").split(" ", 2);
      const to = method === "CONNECT" ? target : new URL(target).host;
      proxied.push(to);
      const [host, port] = to.split(":");
      const upstream = net.connect(Number(port), host, () => {
        if (method === "CONNECT") client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        else upstream.write(first);
        client.pipe(upstream).pipe(client);
      });
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  proxy.close();
  await world.close();
});

async function child(prompt: string, env: Record<string, string>): Promise<string> {
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "-p", "--no-session", prompt],
    cwd: world.workDir,
    env: { ...world.env, SUBAGENTS_ROLE: "pi", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  return out + err;
}

for (const variable of ["HTTP_PROXY", "http_proxy"]) {
  test(`with ${variable} set, an embedded child's model requests go through the proxy`, async () => {
    const before = proxied.length;
    const out = await child(`via proxy ${variable}`, { [variable]: proxyUrl });
    expect(out).toContain(`via proxy ${variable}`);
    expect(proxied.slice(before)).toContain(new URL(world.server.baseUrl).host);
  }, 60_000);
}

test("without proxy variables, an embedded child goes straight to the model", async () => {
  const before = proxied.length;
  const out = await child("direct", {});
  expect(out).toContain("direct");
  expect(proxied.length).toBe(before);
}, 60_000);

test("an idle timeout in the user's pi settings still holds in an embedded child (pi's own HTTP setup)", async () => {
  const slow = script([{ delayMs: 3000, text: "answered after 3 s" }]);
  world.setSubagentSettings({}, { httpIdleTimeoutMs: 1000, retry: { enabled: false } });
  try {
    expect(await child(`slow ${slow}`, {})).not.toContain("answered after 3 s");
  } finally {
    world.setSubagentSettings({});
  }
  // The same answer without that setting arrives (pi's default: 5 minutes).
  expect(await child(`slow ${slow}`, {})).toContain("answered after 3 s");
}, 60_000);
