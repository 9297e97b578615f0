// The `requestState` a server hands a client between the rounds of a tool call: the client echoes it back, so it
// is attacker-controlled input — signed with a key of this process (HMAC-SHA256) and bounded in time.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const b64 = (b: Buffer | string) => Buffer.from(b).toString("base64url");

export class RequestStateCodec<T> {
  private readonly key = randomBytes(32);

  constructor(private readonly ttlMs: number) {}

  mint(payload: T): string {
    const body = b64(JSON.stringify({ p: payload, exp: Date.now() + this.ttlMs }));
    return `${body}.${this.sign(body)}`;
  }

  /** The payload, or null for a state this process did not mint, one altered, or one past its time. */
  verify(state: string): T | null {
    const [body, mac] = state.split(".");
    if (!body || !mac) return null;
    const want = Buffer.from(this.sign(body));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
    try {
      const { p, exp } = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as { p: T; exp: number };
      return exp >= Date.now() ? p : null;
    } catch {
      return null;
    }
  }

  private sign(body: string): string {
    return createHmac("sha256", this.key).update(body).digest("base64url");
  }
}
