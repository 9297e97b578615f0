// `subagents completion bash|zsh|fish`: prints a shell completion script for commands and their options.
import { parse } from "../flags/args.ts";
import { EXIT, UsageError } from "../errors.ts";

export const COMPLETION_HELP = `Usage: subagents completion bash|zsh|fish

Prints a completion script for your shell. Install it with:
  bash   subagents completion bash > ~/.local/share/bash-completion/completions/subagents
  zsh    subagents completion zsh > "\${fpath[1]}/_subagents"   (then restart zsh)
  fish   subagents completion fish > ~/.config/fish/completions/subagents.fish`;

const DELEGATE_FLAGS = [
  "--name",
  "--profile",
  "--model",
  "--cwd",
  "--timeout",
  "--concurrency",
  "--file",
  "--resume",
  "--tasks",
  "--json",
  "--quiet",
  "--no-color",
  "--background",
  "--isolation",
  "--sandbox",
  "--runner",
  "--runtime",
  "--gate",
  "--gate-timeout",
  "--gate-retries",
  "--fork",
  "--help",
];

/** Every command and its options (the CLI test checks this list against the commands main.ts knows). */
export const COMPLETIONS: Record<string, string[]> = {
  delegate: DELEGATE_FLAGS,
  // A workflow is a delegate call read from a file: the same options.
  flow: DELEGATE_FLAGS,
  run: [
    "--session",
    "--cwd",
    "--model",
    "--timeout",
    "--json",
    "--quiet",
    "--no-color",
    "--background",
    "--isolation",
    "--sandbox",
    "--runner",
    "--runtime",
    "--gate",
    "--gate-timeout",
    "--gate-retries",
    "--fork",
    "--help",
  ],
  output: ["--json", "--no-color", "--help"],
  session: ["--json", "--no-color", "--help"],
  sessions: ["--limit", "--wide", "--json", "--no-color", "--running", "--help"],
  profiles: ["--cwd", "--json", "--help"],
  demo: ["--json", "--quiet", "--no-color", "--help"],
  install: ["--uninstall", "--bin", "--prefix", "--help"],
  doctor: ["--cwd", "--json", "--help"],
  prune: ["--older-than", "--keep", "--dry-run", "--json", "--help"],
  apply: ["--cherry-pick", "--cwd", "--help"],
  completion: ["bash", "zsh", "fish"],
  wait: ["--timeout", "--json", "--help"],
  steer: ["--help"],
  answer: ["--help"],
  cancel: ["--all", "--help"],
  logs: ["--follow", "--help"],
  attach: ["--no-color", "--help"],
  schedule: ["add", "list", "rm", "run", "--cron", "--cwd", "--json", "--from-cron", "--help"],
  mcp: ["--cwd", "--help"],
};

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
