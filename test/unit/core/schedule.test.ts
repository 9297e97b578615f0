// The pure parts of schedules and hooks: cron expressions, our crontab lines among the user's, what a schedule
// keeps of the environment, and how settings gather hooks (a project's kept apart, its consent the user's).
import { expect, test } from "bun:test";
import { cronProblem } from "../../../src/core/schedule/cron-expr.ts";
import {
  formatLine,
  lineProblem,
  lineAgentDir,
  lineTag,
  ourLines,
  renderLine,
  withLine,
  withoutLine,
} from "../../../src/core/schedule/crontab-lines.ts";
import { argsProblem, scheduleEnv } from "../../../src/core/schedule/definition.ts";
import { defaultSettings, mergeSettings } from "../../../src/core/settings.ts";

test("cron expressions: five fields in range, lists, ranges, steps, names, @-words; a clear reason otherwise", () => {
  for (const ok of [
    "* * * * *",
    "*/15 * * * *",
    "0 3 * * 1-5",
    "0,30 8-18/2 1,15 jan-mar mon-fri",
    "5 4 * * sun",
    "0 0 * * 7",
    "@daily",
    "@hourly",
  ])
    expect(cronProblem(ok), ok).toBeNull();
  const bad: [string, RegExp][] = [
    ["", /empty/],
    ["* * * *", /5 fields.*has 4/],
    ["* * * * * *", /has 6/],
    ["60 * * * *", /minute "60" is out of range 0–59/],
    ["* 24 * * *", /hour "24" is out of range 0–23/],
    ["* * 0 * *", /day of month "0" is out of range 1–31/],
    ["* * * 13 *", /month "13" is out of range 1–12/],
    ["* * * * 8", /day of week "8" is out of range 0–7/],
    ["*/0 * * * *", /step must be at least 1/],
    ["5-1 * * * *", /runs backwards/],
    ["x * * * *", /not a number/],
    ["@reboot", /not one of/],
    ["0 3 * * * % rm -rf", /may not contain/],
  ];
  for (const [expr, why] of bad) expect(cronProblem(expr), expr).toMatch(why);
});

test("crontab: only lines tagged # subagents:NAME are ours; adding, replacing and removing keep every other line byte for byte", () => {
  const foreign =
    "# mine\nMAILTO=me\n0 1 * * * backup # subagents:x is in my comment, not at the end \n\n15 2 * * * job\n";
  expect(ourLines(foreign).size).toBe(0);
  const line = renderLine({
    name: "nightly",
    cron: "0 3 * * *",
    command: ["/opt/sub agents/subagents"],
    env: { PI_CODING_AGENT_DIR: "/home/u/.pi/agent", SUBAGENTS_DB: "/tmp/50%.db" },
    log: "/home/u/it's.log",
  });
  expect(line).toBe(
    `0 3 * * * PI_CODING_AGENT_DIR='/home/u/.pi/agent' SUBAGENTS_DB='/tmp/50\\%.db' '/opt/sub agents/subagents' schedule run nightly --from-cron >>'/home/u/it'\\''s.log' 2>&1 # subagents:nightly`,
  );
  expect(lineTag(line)).toBe("nightly");
  expect(lineAgentDir(line)).toBe("/home/u/.pi/agent");
  const odd = "/home/o'b 100%/agent";
  expect(
    lineAgentDir(
      renderLine({ name: "n", cron: "0 3 * * *", command: ["/x"], env: { PI_CODING_AGENT_DIR: odd }, log: "/l" }),
    ),
  ).toBe(odd);
  expect(lineAgentDir("0 3 * * * /x schedule run n # subagents:n")).toBeNull();
  const added = withLine(foreign, "nightly", line);
  expect(added).toBe(`${foreign}${line}\n`);
  const replaced = withLine(added, "nightly", line.replace("0 3", "0 4"));
  expect(replaced).toBe(`${foreign}${line.replace("0 3", "0 4")}\n`);
  expect(withoutLine(replaced, "nightly")).toBe(foreign);
  expect(withoutLine(foreign, "nightly")).toBe(foreign);
  // A table without a final newline gets one only when we change it.
  expect(withLine("0 1 * * * a", "n", "x # subagents:n")).toBe("0 1 * * * a\nx # subagents:n\n");
  expect(withoutLine("", "n")).toBe("");
});

test("crontab: a line break, carriage return or NUL in any value never reaches a line; rm takes every part of a line an older version broke", () => {
  const base = {
    name: "nightly",
    cron: "0 3 * * *",
    command: ["/opt/subagents"],
    env: { PI_CODING_AGENT_DIR: "/a", SUBAGENTS_DB: "/d.db" },
    log: "/a/schedules/nightly.log",
  };
  expect(lineProblem(base)).toBeNull();
  for (const evil of ["\n* * * * * touch /tmp/PWNED #", "\r\n* * * * * x", "a\u0000b", "a\u001bb"]) {
    for (const l of [
      { ...base, env: { ...base.env, SUBAGENTS_DB: `/d${evil}` } },
      { ...base, command: [`/opt/sub${evil}agents`] },
      { ...base, log: `/a/x${evil}.log` },
      { ...base, env: { ...base.env, [`X${evil}`]: "v" } },
    ]) {
      expect(lineProblem(l), JSON.stringify(l)).toMatch(/line break or another control character/);
      expect(() => renderLine(l)).toThrow(/not written to the crontab/);
    }
  }
  // The problem names the part, never the value (which may be anything).
  expect(lineProblem({ ...base, env: { ...base.env, SUBAGENTS_DB: "/d\nsecret" } })).toMatch(/^SUBAGENTS_DB holds/);
  // What an older version wrote for such a value: two lines, the first a job of its own without our tag.
  const broken = { ...base, env: { ...base.env, SUBAGENTS_DB: "/d\n* * * * * touch /tmp/PWNED #" } };
  const written = formatLine(broken);
  const user = "# mine\n15 2 * * * job\n";
  const table = `${user}${written}\n0 1 * * * after\n`;
  expect(table.split("\n").length).toBe(6);
  // The tag alone would leave half a line behind (the planted job carries the tag at its end).
  expect(withoutLine(table, "nightly")).toContain("SUBAGENTS_DB='/d\n0 1");
  expect(withoutLine(table, "nightly", written)).toBe(`${user}0 1 * * * after\n`);
  // A line that only shares the first part with ours is not taken.
  expect(withoutLine(`${written.split("\n")[0]}\nother\n`, "nightly", written)).toBe(
    `${written.split("\n")[0]}\nother\n`,
  );
});

test("a schedule keeps PATH and subagents'/pi's/OpenTelemetry's variables, never one that looks secret; it runs run, flow or delegate", () => {
  const { env, secret } = scheduleEnv({
    PATH: "/bin",
    HOME: "/h",
    PI_CODING_AGENT_DIR: "/a",
    SUBAGENTS_DB: "/d",
    SUBAGENTS_PI: "/p",
    ANTHROPIC_API_KEY: "sk",
    PI_AUTH_TOKEN: "t",
    SUBAGENTS_MARK: "m",
    PI_SUBAGENT_DEPTH: "1",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
    OTEL_EXPORTER_OTLP_HEADERS: "x-honeycomb-team=secret",
    TRACEPARENT: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  });
  expect(env).toEqual({
    PATH: "/bin",
    PI_CODING_AGENT_DIR: "/a",
    SUBAGENTS_DB: "/d",
    SUBAGENTS_PI: "/p",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
  });
  expect(secret).toEqual(["PI_AUTH_TOKEN", "OTEL_EXPORTER_OTLP_HEADERS"]);
  expect(argsProblem(["run", "a", "t"])).toBeNull();
  expect(argsProblem([])).toMatch(/nothing to run/);
  expect(argsProblem(["prune"])).toMatch(/runs run, flow, delegate/);
});

test("settings: hooks from the user's file run; a project's are marked as such and its own projectAgents grants them nothing", () => {
  const user = mergeSettings(
    defaultSettings(),
    { hooks: { taskEnd: ["notify-send done", ""], timeout: 5 } },
    "user.json",
    true,
  );
  expect(user.warnings).toEqual([]);
  expect(user.settings.hooks.commands).toEqual([
    { command: "notify-send done", event: "taskEnd", source: "user", file: "user.json" },
  ]);
  const project = mergeSettings(
    user.settings,
    { projectAgents: "allow", hooks: { taskStart: "curl evil", timeout: 60, taskStop: "x" } },
    "proj.json",
    false,
  );
  expect(project.settings.hooks.commands.at(-1)).toEqual({
    command: "curl evil",
    event: "taskStart",
    source: "project",
    file: "proj.json",
  });
  expect(project.settings.hooks.projectConsent).toBe("ask");
  expect(project.settings.hooks.timeout).toBe(5);
  expect(project.warnings.join("\n")).toMatch(/can only shorten it/);
  expect(project.warnings.join("\n")).toMatch(/unknown keys taskStop/);
  expect(mergeSettings(defaultSettings(), { hooks: "x" }, "u", true).warnings[0]).toMatch(/must be an object/);
  expect(mergeSettings(defaultSettings(), { projectAgents: "allow" }, "u", true).settings.hooks.projectConsent).toBe(
    "allow",
  );
});
