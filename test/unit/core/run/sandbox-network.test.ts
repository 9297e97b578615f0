// The closed network's parts that need no engine: the allow list, the proxy's request parsing, the model's
// endpoint, who may set what, and the real proxy on a Unix socket (no sandbox: a client in this process).
import { expect, test } from "bun:test";
import * as net from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  allows,
  endpointOf,
  loopbackMirrors,
  parseAllow,
  refusedWarning,
} from "../../../../src/core/run/runners/network.ts";
import { proxyTarget, startNetProxy } from "../../../../src/host/net-proxy.ts";
import { modelEndpoints } from "../../../../src/core/run/model-endpoint.ts";
import { createBunHost } from "../../../../src/host/bun.ts";
import { defaultSettings, mergeSettings } from "../../../../src/core/settings.ts";
import { bwrapArgv } from "../../../../src/core/run/runners/sandbox.ts";

test("allow list: exact host (any port unless given), *.domain for subdomains only, v6 in brackets", () => {
  const rules = parseAllow(["example.com", "api.test:8443", "*.corp.io", "[::1]:9000", "127.0.0.1:4000"]);
  expect(allows(rules, "example.com", 443)).toBe(true);
  expect(allows(rules, "example.com", 22)).toBe(true);
  expect(allows(rules, "evil-example.com", 443)).toBe(false);
  expect(allows(rules, "api.test", 8443)).toBe(true);
  expect(allows(rules, "api.test", 443)).toBe(false);
  expect(allows(rules, "git.corp.io", 443)).toBe(true);
  expect(allows(rules, "corp.io", 443)).toBe(false);
  expect(allows(rules, "x.corp.io.evil.com", 443)).toBe(false);
  expect(allows(rules, "::1", 9000)).toBe(true);
  expect(allows(rules, "127.0.0.1", 4001)).toBe(false);
  expect(loopbackMirrors(rules)).toEqual(["[::1]:9000", "127.0.0.1:4000"]);
});

test("settings: sandboxAllowHosts is the person's alone; a project may close sandboxNetwork further, never open it", () => {
  expect(defaultSettings().sandboxNetwork).toBe("model");
  const user = mergeSettings(defaultSettings(), {
    sandboxAllowHosts: ["Example.com:443", "*.corp.io"],
    sandboxNetwork: "all",
  });
  expect(user.settings.sandboxAllowHosts).toEqual(["example.com:443", "*.corp.io"]);
  expect(user.settings.sandboxNetwork).toBe("all");
  const project = mergeSettings(
    defaultSettings(),
    { sandboxAllowHosts: ["evil.com"], sandboxNetwork: "all" },
    "proj",
    false,
  );
  expect(project.settings.sandboxAllowHosts).toEqual([]);
  expect(project.settings.sandboxNetwork).toBe("model");
  expect(project.warnings.join("\n")).toContain("subagents.sandboxAllowHosts may be set only in your own settings");
  expect(project.warnings.join("\n")).toContain("a project cannot open subagents.sandboxNetwork wider");
  expect(mergeSettings(defaultSettings(), { sandboxNetwork: "none" }, "proj", false).settings.sandboxNetwork).toBe(
    "none",
  );
  const bad = mergeSettings(defaultSettings(), { sandboxAllowHosts: ["https://x.com/path"], sandboxNetwork: "open" });
  expect(bad.warnings.join("\n")).toContain('not "https://x.com/path"');
  expect(bad.warnings.join("\n")).toContain('subagents.sandboxNetwork must be one of "none", "model", "all"');
});

test("proxy requests: CONNECT and absolute http:// URIs; hop-by-hop headers dropped, Connection: close added", () => {
  expect(proxyTarget("CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443")).toMatchObject({
    host: "api.anthropic.com",
    port: 443,
    connect: true,
  });
  const plain = proxyTarget(
    "GET http://127.0.0.1:8080/v1/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive",
  );
  expect(plain).toMatchObject({ host: "127.0.0.1", port: 8080, connect: false });
  expect((plain as { head: Buffer }).head.toString()).toBe(
    "GET /v1/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\n\r\n",
  );
  expect(proxyTarget("GET / HTTP/1.1")).toMatchObject({ status: 400 });
  expect(proxyTarget("CONNECT nohost HTTP/1.1")).toMatchObject({ status: 400 });
});

test("the model's endpoint: models.json's baseUrl, else the built-in provider's hosts, else a warning", () => {
  const dir = mkdtempSync("/tmp/netmodel-");
  try {
    writeFileSync(
      join(dir, "models.json"),
      JSON.stringify({ providers: { fake: { baseUrl: "http://127.0.0.1:4321/v1", models: [{ id: "fake-model" }] } } }),
    );
    const host = createBunHost(() => {
      throw new Error("no db here");
    });
    const user = {
      providers: new Set(["fake"]),
      custom: new Map([["fake-model", "fake"]]),
      defaultModel: "fake/fake-model",
    };
    expect(modelEndpoints(host, dir, null, user).allow).toEqual(["127.0.0.1:4321"]);
    expect(modelEndpoints(host, dir, "fake-model", user).allow).toEqual(["127.0.0.1:4321"]);
    expect(modelEndpoints(host, dir, "anthropic/claude-sonnet-4-5", user).allow).toContain("api.anthropic.com:443");
    expect(modelEndpoints(host, dir, "nowhere/x", user).warning).toContain('no host is known for provider "nowhere"');
    expect(endpointOf("https://[::1]/v1")).toBe("[::1]:443");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bwrap: the host network only with sandboxNetwork all; otherwise the proxy socket is bound in and --share-net is gone", () => {
  const base = {
    argv: ["pi"],
    cwd: "/w",
    home: "/root",
    agentDir: "/root/.pi/agent",
    agentEntries: [],
    writable: ["/w"],
    readable: [],
  };
  expect(bwrapArgv(base)).toContain("--share-net");
  const closed = bwrapArgv({ ...base, netSocket: "/tmp/subagents-x/n1.sock" });
  expect(closed).not.toContain("--share-net");
  expect(closed.join(" ")).toContain("--bind /tmp/subagents-x/n1.sock /tmp/subagents-x/n1.sock");
  expect(closed.indexOf("--tmpfs")).toBeLessThan(closed.indexOf("/tmp/subagents-x/n1.sock"));
});

/** One request through the proxy socket; the raw answer. */
function ask(sock: string, request: string): Promise<string> {
  return new Promise((resolve) => {
    const c = net.connect(sock);
    let out = "";
    c.on("data", (d) => (out += d.toString()));
    c.on("close", () => resolve(out));
    c.on("error", () => resolve(out));
    c.write(request);
  });
}

test("the proxy: an allowed destination is forwarded, another gets 403 and is counted; close removes the socket", async () => {
  const dir = mkdtempSync("/tmp/netproxy-");
  const upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (r) => new Response(`hello ${new URL(r.url).pathname}`),
  });
  const proxy = await startNetProxy({
    socketPath: join(dir, "p.sock"),
    allow: (h, p) => h === "127.0.0.1" && p === upstream.port,
  });
  try {
    const ok = await ask(
      proxy.socketPath,
      `GET http://127.0.0.1:${upstream.port}/a HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\n\r\n`,
    );
    expect(ok).toContain("200 OK");
    expect(ok).toContain("hello /a");
    const no = await ask(proxy.socketPath, "CONNECT example.com:443 HTTP/1.1\r\n\r\n");
    expect(no).toContain("403 Forbidden");
    await ask(proxy.socketPath, "CONNECT example.com:443 HTTP/1.1\r\n\r\n");
    expect([...proxy.refused()]).toEqual([["example.com:443", 2]]);
    expect(refusedWarning(proxy.refused())).toContain("refused 2 connections to example.com:443 (2×)");
  } finally {
    await proxy.close();
    await upstream.stop(true);
  }
  expect(await Bun.file(proxy.socketPath).exists()).toBe(false);
  rmSync(dir, { recursive: true, force: true });
});
