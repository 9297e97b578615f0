// Scripted model APIs of other harnesses on 127.0.0.1, for running their real CLIs as children in tests:
// Anthropic Messages (Claude Code), OpenAI Responses (Codex) and Gemini's streamGenerateContent (Gemini CLI).
// One server answers all three by path. Each request is read into the chat shape of model-server.ts so the same
// `[[script:[...]]]` steps drive it (text and tool calls; tool names are the harness's own, e.g. Bash for Claude).
import { createServer, type Server, type ServerResponse } from "node:http";
import { chooseStep, listenLocal, readBody, type ScriptStep } from "./model-server.ts";

type Chat = { role: string; content: string };
export type HarnessRequest = {
  api: "anthropic" | "responses" | "gemini";
  path: string;
  model?: string;
  tools: string[];
  system: string;
  messages: Chat[];
};

export type HarnessServer = {
  port: number;
  /** http://127.0.0.1:port — each CLI takes its own suffix (Claude: none, Codex: /v1, Gemini: none). */
  origin: string;
  requests: HarnessRequest[];
  /** Requests this server does not answer (404), so a test can see what a CLI asked for. */
  unknown: string[];
  close(): Promise<void>;
};

const textOf = (content: unknown): string => {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => {
      if (!p || typeof p !== "object") return "";
      const o = p as Record<string, unknown>;
      if (typeof o.text === "string") return o.text;
      if (o.content !== undefined) return textOf(o.content);
      return "";
    })
    .join("");
};

function fromAnthropic(body: any): Chat[] {
  return (body.messages ?? []).map((m: any) => ({
    role: m.role === "assistant" ? "assistant" : "user",
    content: textOf(m.content),
  }));
}

function fromResponses(body: any): Chat[] {
  const out: Chat[] = [];
  for (const it of Array.isArray(body.input) ? body.input : []) {
    if (it.type === "message" || (it.role && !it.type))
      out.push({
        role: it.role === "assistant" ? "assistant" : it.role === "user" ? "user" : "system",
        content: textOf(it.content),
      });
    else if (it.type === "function_call" || it.type === "custom_tool_call" || it.type === "local_shell_call")
      out.push({ role: "assistant", content: "" });
    else if (it.type === "function_call_output" || it.type === "custom_tool_call_output")
      out.push({ role: "tool", content: typeof it.output === "string" ? it.output : JSON.stringify(it.output) });
  }
  return out;
}

function fromGemini(body: any): Chat[] {
  return (body.contents ?? []).map((c: any) => {
    const parts: any[] = c.parts ?? [];
    const isTool = parts.some((p) => p.functionResponse);
    return {
      role: c.role === "model" ? "assistant" : isTool ? "tool" : "user",
      content: parts
        .map((p) =>
          typeof p.text === "string"
            ? p.text
            : p.functionResponse
              ? JSON.stringify(p.functionResponse.response ?? {})
              : "",
        )
        .join(""),
    };
  });
}

const sse = (res: ServerResponse) =>
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
const send = (res: ServerResponse, event: string | null, data: unknown) =>
  res.write(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const calls = (s: ScriptStep) => s.tools ?? (s.tool ? [{ name: s.tool, args: s.args ?? {} }] : []);
const USAGE = { input: 120, output: 30 };

function anthropicAnswer(res: ServerResponse, step: ScriptStep, model: string, stream: boolean): void {
  const id = `msg_${Math.random().toString(36).slice(2, 10)}`;
  const tools = calls(step);
  const text = step.text ?? (tools.length ? "" : "ok");
  const stop = tools.length ? "tool_use" : "end_turn";
  const toolBlocks = tools.map((t, i) => ({ type: "tool_use", id: `toolu_${id}_${i}`, name: t.name, input: t.args }));
  if (!stream) {
    const content = [...(text ? [{ type: "text", text }] : []), ...toolBlocks];
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id,
        type: "message",
        role: "assistant",
        model,
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage: { input_tokens: USAGE.input, output_tokens: USAGE.output },
      }),
    );
    return;
  }
  sse(res);
  send(res, "message_start", {
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: USAGE.input,
        output_tokens: 1,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    },
  });
  let index = 0;
  if (text) {
    send(res, "content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
    send(res, "content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } });
    send(res, "content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  for (const b of toolBlocks) {
    send(res, "content_block_start", { type: "content_block_start", index, content_block: { ...b, input: {} } });
    send(res, "content_block_delta", {
      type: "content_block_delta",
      index,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) },
    });
    send(res, "content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  send(res, "message_delta", {
    type: "message_delta",
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: USAGE.output },
  });
  send(res, "message_stop", { type: "message_stop" });
  res.end();
}

function responsesAnswer(res: ServerResponse, step: ScriptStep, model: string): void {
  const id = `resp_${Math.random().toString(36).slice(2, 10)}`;
  const tools = calls(step);
  sse(res);
  send(res, "response.created", {
    type: "response.created",
    response: { id, model, status: "in_progress", output: [] },
  });
  const output: unknown[] = [];
  let i = 0;
  if (step.text !== undefined || !tools.length) {
    const text = step.text ?? "ok";
    const item = {
      type: "message",
      id: `msg_${id}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text, annotations: [] }],
    };
    send(res, "response.output_item.added", {
      type: "response.output_item.added",
      output_index: i,
      item: { ...item, status: "in_progress", content: [] },
    });
    send(res, "response.output_text.delta", {
      type: "response.output_text.delta",
      item_id: item.id,
      output_index: i,
      content_index: 0,
      delta: text,
    });
    send(res, "response.output_item.done", { type: "response.output_item.done", output_index: i, item });
    output.push(item);
    i++;
  }
  for (const t of tools) {
    // Codex offers an MCP server's tools as one namespace (`mcp__SERVER`) and expects a call to name it apart:
    // a scripted `mcp__SERVER__TOOL` is sent that way.
    const ns = /^(mcp__.+?)__(.+)$/.exec(t.name);
    const item = {
      type: "function_call",
      id: `fc_${id}_${i}`,
      call_id: `call_${id}_${i}`,
      name: ns ? ns[2] : t.name,
      ...(ns ? { namespace: ns[1] } : {}),
      arguments: JSON.stringify(t.args),
      status: "completed",
    };
    send(res, "response.output_item.added", {
      type: "response.output_item.added",
      output_index: i,
      item: { ...item, arguments: "" },
    });
    send(res, "response.output_item.done", { type: "response.output_item.done", output_index: i, item });
    output.push(item);
    i++;
  }
  const usage = {
    input_tokens: USAGE.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: USAGE.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: USAGE.input + USAGE.output,
  };
  send(res, "response.completed", {
    type: "response.completed",
    response: { id, model, status: "completed", output, usage },
  });
  res.end();
}

function geminiAnswer(res: ServerResponse, step: ScriptStep, stream: boolean): void {
  const tools = calls(step);
  const parts = [
    ...(step.text !== undefined || !tools.length ? [{ text: step.text ?? "ok" }] : []),
    ...tools.map((t) => ({ functionCall: { name: t.name, args: t.args } })),
  ];
  const body = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: USAGE.input,
      candidatesTokenCount: USAGE.output,
      totalTokenCount: USAGE.input + USAGE.output,
    },
    modelVersion: "scripted",
  };
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    return;
  }
  sse(res);
  send(res, null, body);
  res.end();
}

/** One API this server speaks: which paths are its, what a request says, and how it answers or fails. */
type Api = {
  api: HarnessRequest["api"];
  match(path: string): RegExpExecArray | null;
  read(body: any, m: RegExpExecArray): Omit<HarnessRequest, "api" | "path">;
  /** The error body this API sends with a scripted status ≥ 400. */
  error(step: ScriptStep): unknown;
  answer(res: ServerResponse, step: ScriptStep, body: any, m: RegExpExecArray): void;
};

const APIS: Api[] = [
  {
    api: "anthropic",
    match: (path) => /\/messages$/.exec(path),
    read: (body) => ({
      model: body.model,
      tools: (body.tools ?? []).map((t: any) => t.name),
      system: textOf(body.system),
      messages: fromAnthropic(body),
    }),
    error: (step) => ({ type: "error", error: { type: "api_error", message: step.message ?? "scripted error" } }),
    answer: (res, step, body) => anthropicAnswer(res, step, body.model ?? "claude-scripted", body.stream === true),
  },
  {
    api: "responses",
    match: (path) => /\/responses$/.exec(path),
    read: (body) => ({
      model: body.model,
      tools: (body.tools ?? []).map((t: any) => t.name ?? t.type),
      system: textOf(body.instructions),
      messages: fromResponses(body),
    }),
    error: (step) => ({ error: { message: step.message ?? "scripted error", type: "invalid_request_error" } }),
    answer: (res, step, body) => responsesAnswer(res, step, body.model ?? "gpt-scripted"),
  },
  {
    api: "gemini",
    match: (path) => /\/models\/([^/:]+):(streamGenerateContent|generateContent)$/.exec(path),
    read: (body, m) => ({
      model: m[1],
      tools: (body.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((f: any) => f.name)),
      system: textOf(body.systemInstruction?.parts ?? body.systemInstruction),
      messages: fromGemini(body),
    }),
    error: (step) => ({
      error: { code: step.status, message: step.message ?? "scripted error", status: "INVALID_ARGUMENT" },
    }),
    answer: (res, step, _body, m) => geminiAnswer(res, step, m[2] === "streamGenerateContent"),
  },
];

export async function startHarnessServer(port = 0): Promise<HarnessServer> {
  const requests: HarnessRequest[] = [];
  const unknown: string[] = [];
  const served = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = req.url ?? "";
      const raw = req.method === "POST" ? await readBody(req) : "";
      let body: any = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        // not JSON: answered 404 below unless the path is known
      }
      const path = url.split("?")[0];
      for (const api of req.method === "POST" ? APIS : []) {
        const m = api.match(path);
        if (!m) continue;
        const r: HarnessRequest = { api: api.api, path, ...api.read(body, m) };
        requests.push(r);
        const step = chooseStep({ messages: r.messages }, served);
        if (step.delayMs) await sleep(step.delayMs);
        if (step.status && step.status >= 400)
          return void res
            .writeHead(step.status, { "content-type": "application/json" })
            .end(JSON.stringify(api.error(step)));
        return api.answer(res, step, body, m);
      }
      if (/:countTokens$/.test(path))
        return void res.writeHead(200, { "content-type": "application/json" }).end('{"totalTokens":100}');
      unknown.push(`${req.method} ${url}`);
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not scripted"}}');
    })().catch(() => res.destroy());
  });
  const listening = await listenLocal(server, port);
  return { ...listening, origin: `http://127.0.0.1:${listening.port}`, requests, unknown };
}
