/** Where a command writes: its answer on stdout, progress and errors on stderr (so stdout can be piped). */
export interface Output {
  out: (line: string) => void;
  info: (line: string) => void;
}

/** A wrong argument or a refused request: printed as one line, exit 2, no stack trace. */
export class CommandError extends Error {}
