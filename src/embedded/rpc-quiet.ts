// A kept child (src/core/run/process/pool.ts) runs pi in RPC mode, which writes every session event to stdout as a
// JSON line — each streamed text delta and tool-output update too. The child extension already reports what the
// owner needs on fd 3, and the pool reads stdout only for command replies and dialogs: for a 40 KB answer streamed
// in 4,000 deltas those lines cost two tasks ~68 ms of CPU (child and owner) over print mode. In a kept child
// (PI_SUBAGENT_RPC=1) the embedded pi leaves streaming updates out of its RPC output; everything else is written
// as pi writes it.
const RPC_SUBSCRIBE = /(\w+)=(\w+)\.subscribe\((\w+)=>\{(\w+)\((\w+)\(\3\)\),\3\.type==="agent_settled"&&/;

/** Gates the RPC event output. null when the file does not have pi's RPC subscription in this shape. */
export function hookRpcQuiet(source: string): string | null {
  const m = RPC_SUBSCRIBE.exec(source);
  if (!m) return null;
  const [all, unsub, session, event, output, toJson] = m;
  const quiet = `(__subagentsQuietRpc&&(${event}.type==="message_update"||${event}.type==="tool_execution_update"))`;
  const hooked = `${unsub}=${session}.subscribe(${event}=>{${quiet}||${output}(${toJson}(${event})),${event}.type==="agent_settled"&&`;
  return `const __subagentsQuietRpc=process.env.PI_SUBAGENT_RPC==="1";\n${source.replace(all, hooked)}`;
}
