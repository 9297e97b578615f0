// Errors the CLI turns into exit codes: usage and configuration problems exit 2 with one clear line.
export class UsageError extends Error {}
export class ConfigError extends Error {}

export const EXIT = { ok: 0, taskFailed: 1, usage: 2, sigint: 130, sigterm: 143 } as const;
