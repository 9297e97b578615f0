// A scripted OpenAI-compatible chat-completions server on 127.0.0.1.
// Used by the tests, the benchmarks and `subagents demo`: pi talks to it like to any provider, and the
// conversation itself says what to answer, so many children can share one stateless server.
//
// Script: the newest user message containing `[[script:<JSON array>]]` drives the answers. Step i is used
// for the i-th assistant turn after that message (counted from the request's messages). Steps:
//   {"text": "...", "chunks"?: n}                    plain answer, streamed in n deltas
//   {"tool": "bash", "args": {...}}                  one tool call
//   {"tools": [{"name","args"}, ...]}                several tool calls in one turn
//   {"finalize": {"status","result"?,"error"?}}      call subagent_finalize
//   {"status": 500|400|..., "message"?: "..."}       answer with an HTTP error
//   {"cut": true, "text"?: "..."}                    start streaming, then drop the connection
//   {"delayMs": n, ...}                              wait before answering (combines with the above)
//   {"chunkDelayMs": n, ...}                         pause between streamed text chunks
//   {"status": 503, "times": 1, "then": {...}}       fail this turn once (retries resend it), then answer `then`
// Server-wide faults (`server.faults`, set by a test): a 429 with Retry-After for every request during a window
// after the first one that sees it, and a fixed HTTP error for every request to a named model.
// Prompt caching (`server.billing.cache`, off unless a test or bench turns it on): usage then reports the longest
// prefix a request repeats of the requests kept in the last minutes as `prompt_tokens_details.cached_tokens`, the
// way OpenAI-compatible providers do (prompt-cache.ts); pi counts it as cacheRead and prices it so.
// In arguments, {{lastSessionId}} stands for the last 16-hex id in the latest tool result.
// Past the last step, or with no script at all: call subagent_finalize if the request offers it,
// else answer with text. The default answer echoes the start of the prompt, so outputs differ per task.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import {
  cacheText,
  CHARS_PER_TOKEN,
  createPromptCache,
  type PromptCache,
  type PromptCacheOptions,
} from "./prompt-cache.ts";
import { chooseStep, type ScriptStep } from "./script.ts";

export { chooseStep, findScript, messageText, script, type ScriptStep } from "./script.ts";

type ChatMessage = { role: string; content?: unknown; tool_calls?: unknown[] };
type ChatRequest = {
  model?: string;
  messages?: ChatMessage[];
  tools?: { function?: { name?: string } }[];
  /** When the request arrived (performance.now() of the server's process), for latency benches. */
  receivedAt?: number;
  /** The HTTP status it was answered with (200 for a stream). */
  status?: number;
  /** The credentials it came with (the Authorization header), so a test can tell which key a child used. */
  authorization?: string;
  /** What it was billed (answered requests only): prompt tokens, the part of them read from the cache, output. */
  usage?: Usage;
};

export type Usage = { prompt: number; cached: number; output: number };

export type ServerFaults = {
  /** Every request answers 429 (with `Retry-After: retryAfterSec`) until `forMs` after the first one that saw this. */
  rateLimit?: { forMs: number; retryAfterSec: number; since?: number };
  /** Model id → an error every request to that model gets (a 400/404 is not retried by pi). */
  modelErrors?: Record<string, { status: number; message?: string }>;
};

export type ModelServer = {
  port: number;
  baseUrl: string;
  /** Every request body received, in order. */
  requests: ChatRequest[];
  faults: ServerFaults;
  /** `cache`: bill repeated prefixes as cache reads (a test or bench may switch it at any time). */
  billing: { cache: boolean };
  /** The kept prefixes (cleared by a test that wants a cold cache). */
  promptCache: PromptCache;
  close(): Promise<void>;
};

export type ModelServerOptions = { cache?: boolean } & PromptCacheOptions;

function chunk(id: string, delta: Record<string, unknown>, finish: string | null = null, usage?: unknown): string {
  const body: Record<string, unknown> = {
    id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: "fake-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  if (usage) body.usage = usage;
  return `data: ${JSON.stringify(body)}\n\n`;
}

function splitInto(text: string, n: number): string[] {
  const parts = Math.max(1, Math.min(n, text.length || 1));
  const size = Math.ceil(text.length / parts);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}

/** The fault this request meets, as an error step, or null. */
function faultFor(
  faults: ServerFaults,
  body: ChatRequest,
  now: number,
): (ScriptStep & { retryAfterSec?: number }) | null {
  const modelError = body.model ? faults.modelErrors?.[body.model] : undefined;
  if (modelError)
    return {
      status: modelError.status,
      message: modelError.message ?? `scripted ${modelError.status} for ${body.model}`,
    };
  const rl = faults.rateLimit;
  if (!rl) return null;
  rl.since ??= now;
  return now - rl.since < rl.forMs
    ? { status: 429, message: "Rate limit reached for requests", retryAfterSec: rl.retryAfterSec }
    : null;
}

/** Tokens billed for a request: prompt from the body's size, cached from the repeated prefix (never more than the prompt). */
export function usageOf(promptChars: number, cachedChars: number, step: ScriptStep): Usage {
  const prompt = Math.ceil(promptChars / CHARS_PER_TOKEN);
  return {
    prompt,
    cached: Math.min(prompt, Math.floor(cachedChars / CHARS_PER_TOKEN)),
    output: Math.ceil((step.text?.length ?? 20) / CHARS_PER_TOKEN),
  };
}

async function answer(
  res: ServerResponse,
  step: ScriptStep & { retryAfterSec?: number },
  billed: () => Usage,
): Promise<void> {
  if (step.delayMs) await new Promise((r) => setTimeout(r, step.delayMs));
  if (step.status && step.status >= 400) {
    res.writeHead(step.status, {
      "content-type": "application/json",
      ...(step.retryAfterSec !== undefined ? { "retry-after": String(step.retryAfterSec) } : {}),
    });
    res.end(JSON.stringify({ error: { message: step.message ?? `scripted error ${step.status}`, type: "scripted" } }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const id = `chatcmpl-${Math.random().toString(16).slice(2)}`;
  res.write(chunk(id, { role: "assistant", content: "" }));
  if (step.cut) {
    res.write(chunk(id, { content: step.text ?? "partial answer" }));
    res.socket?.destroy();
    return;
  }
  const calls = step.tools ?? (step.tool ? [{ name: step.tool, args: step.args ?? {} }] : []);
  if (step.finalize) calls.push({ name: "subagent_finalize", args: step.finalize });
  if (step.text) {
    // Write deltas in batches so a 5,000-delta answer does not cost 5,000 syscalls here.
    let batch = "";
    for (const part of splitInto(step.text, step.chunks ?? 1)) {
      batch += chunk(id, { content: part });
      if (step.chunkDelayMs) {
        res.write(batch);
        batch = "";
        await new Promise((r) => setTimeout(r, step.chunkDelayMs));
      } else if (batch.length > 32_768) {
        res.write(batch);
        batch = "";
      }
    }
    if (batch) res.write(batch);
  }
  calls.forEach((call, index) => {
    res.write(
      chunk(id, {
        tool_calls: [
          {
            index,
            id: `call_${index}_${Math.random().toString(16).slice(2, 10)}`,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.args) },
          },
        ],
      }),
    );
  });
  const u = billed();
  const usage = {
    prompt_tokens: u.prompt,
    completion_tokens: u.output,
    total_tokens: u.prompt + u.output,
    ...(u.cached ? { prompt_tokens_details: { cached_tokens: u.cached } } : {}),
  };
  res.write(chunk(id, {}, calls.length ? "tool_calls" : "stop", usage));
  res.end("data: [DONE]\n\n");
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

export async function startModelServer(port = 0, opts: ModelServerOptions = {}): Promise<ModelServer> {
  const requests: ChatRequest[] = [];
  const faults: ServerFaults = {};
  const billing = { cache: opts.cache ?? false };
  const promptCache = createPromptCache(opts);
  const served = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      const receivedAt = performance.now();
      const raw = await readBody(req);
      let body: ChatRequest;
      try {
        body = JSON.parse(raw) as ChatRequest;
      } catch {
        res.writeHead(400).end('{"error":{"message":"bad json"}}');
        return;
      }
      body.receivedAt = receivedAt;
      body.authorization = req.headers.authorization;
      requests.push(body);
      const step = faultFor(faults, body, Date.now()) ?? chooseStep(body, served);
      body.status = step.status && step.status >= 400 ? step.status : 200;
      // Billed when the answer starts, like a provider: a request answered with an error is neither billed nor kept.
      const billed = () =>
        (body.usage = usageOf(raw.length, billing.cache ? promptCache.read(cacheText(body)) : 0, step));
      await answer(res, step, billed);
    })().catch(() => res.destroy());
  });
  const listening = await listenLocal(server, port);
  return { ...listening, baseUrl: `http://127.0.0.1:${listening.port}/v1`, requests, faults, billing, promptCache };
}

/** Starts `server` on 127.0.0.1 (port 0: any free one); `close` also ends open keep-alive connections. */
export async function listenLocal(server: Server, port: number): Promise<{ port: number; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** Writes models.json + settings.json for an isolated pi agent dir that points at the server. */
export function piAgentConfig(baseUrl: string): { "models.json": string; "settings.json": string } {
  const models = {
    providers: {
      fake: {
        baseUrl,
        api: "openai-completions",
        apiKey: "x",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: "fake-model" }],
      },
    },
  };
  return {
    "models.json": JSON.stringify(models, null, 2),
    "settings.json": JSON.stringify({ defaultProvider: "fake", defaultModel: "fake-model" }, null, 2),
  };
}
