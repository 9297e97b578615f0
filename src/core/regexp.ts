// A text matched as it is inside a regular expression built around it (a path, a secret's value).

/** `s` with every character a RegExp gives a meaning to escaped. */
export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
