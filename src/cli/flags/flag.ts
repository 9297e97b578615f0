// One command-line flag, described once (command-flags.ts lists every command's): what node's parseArgs reads, the
// line of the command's --help "Options:" block, and the word shell completion offers.
import type { ParseArgsConfig } from "node:util";

export type Flag = {
  name: string;
  /** The value's placeholder in --help ("S", "DIR"); a flag without one is a switch. */
  value?: string;
  short?: string;
  /** Repeatable (each value kept). */
  multiple?: boolean;
  help: string;
  /** How --help shows it when not `-s, --name VALUE` (one line naming its aliases). */
  label?: string;
  /** Read and completed, not shown in --help (an alias shown in another flag's label, an internal switch). */
  hidden?: boolean;
};

type Option<F extends Flag> = {
  type: F extends { value: string } ? "string" : "boolean";
  multiple: F extends { multiple: true } ? true : false;
  short?: string;
};

/** parseArgs' options for a list of flags, typed by each flag's kind. */
export type OptionsOf<L extends readonly Flag[]> = { [F in L[number] as F["name"]]: Option<F> };

export function parseOptions<L extends readonly Flag[]>(flags: L): OptionsOf<L> {
  const out: NonNullable<ParseArgsConfig["options"]> = {};
  for (const f of flags)
    out[f.name] = {
      type: f.value ? "string" : "boolean",
      multiple: !!f.multiple,
      ...(f.short ? { short: f.short } : {}),
    };
  return out as OptionsOf<L>;
}

/** Every --help is this wide at most (a word longer than a line stays whole). */
const WIDTH = 116;
/** Labels longer than this stand on a line of their own, their text under them. */
const MAX_LABEL = 20;

const labelOf = (f: Flag) => f.label ?? `${f.short ? `-${f.short}, ` : ""}--${f.name}${f.value ? ` ${f.value}` : ""}`;

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

/** The "Options:" block of a command's --help: each shown flag with its help, then -h, --help. */
export function optionsBlock(flags: readonly Flag[]): string {
  const shown = [...flags.filter((f) => !f.hidden), { name: "help", short: "h", help: "Show this help" }];
  const column = Math.min(MAX_LABEL, Math.max(...shown.map((f) => labelOf(f).length))) + 4;
  const lines = ["Options:"];
  for (const f of shown) {
    const label = `  ${labelOf(f)}`;
    const text = wrap(f.help, WIDTH - column);
    const indent = " ".repeat(column);
    if (label.length > column - 2) lines.push(label, ...text.map((t) => indent + t));
    else lines.push(label.padEnd(column) + text[0], ...text.slice(1).map((t) => indent + t));
  }
  return lines.join("\n");
}

/** What completion offers after the command: its flags (and `--help`). */
export const completionWords = (flags: readonly Flag[]) => [...flags.map((f) => `--${f.name}`), "--help"];
