// `subagents completion bash|zsh|fish`: prints a shell completion script for commands and their options.
import { parse } from "../flags/args.ts";
import { COMMAND_FLAGS } from "../flags/command-flags.ts";
import { completionWords } from "../flags/flag.ts";
import { EXIT, UsageError } from "../errors.ts";

export const COMPLETION_HELP = `Usage: subagents completion bash|zsh|fish

Prints a completion script for your shell. Install it with:
  bash   subagents completion bash > ~/.local/share/bash-completion/completions/subagents
  zsh    subagents completion zsh > "\${fpath[1]}/_subagents"   (then restart zsh)
  fish   subagents completion fish > ~/.config/fish/completions/subagents.fish`;

/** Every command and what completion offers after it: its flags from their one list (command-flags.ts), and the
 *  words it takes (the CLI test checks this list against the commands main.ts knows). */
export const COMPLETIONS: Record<string, string[]> = Object.fromEntries(
  Object.entries(COMMAND_FLAGS).map(([cmd, c]) => [cmd, [...(c.words ?? []), ...completionWords(c.flags)]]),
);

const commands = () => Object.keys(COMPLETIONS).join(" ");

function bash(): string {
  const cases = Object.entries(COMPLETIONS)
    .map(([cmd, opts]) => `    ${cmd}) opts="${opts.join(" ")}" ;;`)
    .join("\n");
  return `# bash completion for subagents
_subagents() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" opts
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${commands()} --help --version" -- "$cur") )
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    *) opts="" ;;
  esac
  case "\${COMP_WORDS[COMP_CWORD-1]}" in
    --cwd) COMPREPLY=( $(compgen -d -- "$cur") ); return ;;
    --file|--tasks) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
complete -o default -F _subagents subagents
`;
}

function zsh(): string {
  const cases = Object.entries(COMPLETIONS)
    .map(([cmd, opts]) => `    ${cmd}) compadd -- ${opts.join(" ")} ;;`)
    .join("\n");
  return `#compdef subagents
# zsh completion for subagents
_subagents() {
  if (( CURRENT == 2 )); then
    compadd -- ${commands()} --help --version
    return
  fi
  case "$words[CURRENT-1]" in
    --cwd) _files -/; return ;;
    --file|--tasks) _files; return ;;
  esac
  case "$words[2]" in
${cases}
  esac
}
# Autoloaded from $fpath this file is the function itself; sourced, it registers one.
if [ "$funcstack[1]" = "_subagents" ]; then _subagents "$@"; else compdef _subagents subagents; fi
`;
}

function fish(): string {
  const lines = [
    "# fish completion for subagents",
    "complete -c subagents -f",
    `complete -c subagents -n __fish_use_subcommand -a "${commands()}"`,
  ];
  for (const [cmd, opts] of Object.entries(COMPLETIONS)) {
    for (const o of opts) {
      lines.push(
        o.startsWith("--")
          ? `complete -c subagents -n "__fish_seen_subcommand_from ${cmd}" -l ${o.slice(2)}`
          : `complete -c subagents -n "__fish_seen_subcommand_from ${cmd}" -a ${o}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

const SHELLS: Record<string, () => string> = { bash, zsh, fish };

export function cmdCompletion(argv: string[]): number {
  const { values, positionals } = parse("completion", argv, {});
  if (values.help) {
    console.log(COMPLETION_HELP);
    return EXIT.ok;
  }
  const shell = positionals[0];
  const make = shell === undefined ? undefined : SHELLS[shell];
  if (!make || positionals.length > 1)
    throw new UsageError(`completion: name one shell: bash, zsh or fish. See 'subagents completion --help'.`);
  process.stdout.write(make());
  return EXIT.ok;
}
