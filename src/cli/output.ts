/** Where a command writes: its answer on stdout, progress and errors on stderr (so stdout can be piped). */
export interface Output {
  out: (line: string) => void;
  info: (line: string) => void;
}

/** A wrong argument or a refused request: printed as one line, exit 2, no stack trace. */
export class CommandError extends Error {}

/**
 * A module of the command, loaded when its command runs (the database layer and Argon2 take seconds to load on a
 * busy machine, so `--help` and a wrong argument answer at once). `path` is relative to src/cli/.
 */
export function lazy<T>(path: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(path) as T;
}
