import { parseArgs } from 'node:util';

/**
 * The command line of every script (`npm run token`, `oracle:check`, the benches, soaks and
 * fixtures): node:util's parseArgs, plus what it leaves to its caller. `--help` (or `-h`)
 * prints the script's usage, what it does, its options and environment, and exits 0; a bad
 * argument prints one line naming it and the usage on stderr, and exits 1, never a stack trace.
 * A script imports its heavy modules (the server, a database, a load generator) with `await
 * import()` after its command line is read, so that both answer at once instead of after
 * seconds of loading what they will not use.
 */
export interface CommandOption {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly default?: string | boolean;
  /** `--name <placeholder>` in the usage. */
  readonly placeholder?: string;
  readonly description: string;
}

export interface Command<O extends Record<string, CommandOption>> {
  /** How it is run, e.g. `npm run bench:live --`. */
  readonly name: string;
  /** What it does, in a few lines. */
  readonly about: string;
  readonly options?: O;
  /** The arguments as the usage line shows them; `[options]` when absent. */
  readonly synopsis?: string;
  /** Whether it takes positional arguments (the synopsis names them). */
  readonly positionals?: boolean;
  /** Environment variables it reads, with their meaning. */
  readonly environment?: Readonly<Record<string, string>>;
}

type Values<O extends Record<string, CommandOption>> = {
  [K in keyof O]: O[K]['type'] extends 'boolean' ? boolean : string | undefined;
};

export interface Parsed<O extends Record<string, CommandOption>> {
  readonly values: Values<O>;
  readonly positionals: readonly string[];
  /** Reports a bad argument found after parsing, as a parse error is reported; exits 1. */
  fail(message: string): never;
}

/** The usage line, and where to read more: what a refusal ends with. */
export const usageOf = (command: Command<Record<string, CommandOption>>): string =>
  `${helpText(command).split('\n')[0]}\nRun it with --help for more.\n`;

export function helpText(command: Command<Record<string, CommandOption>>): string {
  const options = Object.entries(command.options ?? {});
  const usage = `usage: ${command.name} ${command.synopsis ?? '[options]'}`.trimEnd();
  const lines = [usage, '', command.about.trim(), ''];
  const rows: [string, string][] = options.map(([name, option]) => [
    `${option.short ? `-${option.short}, ` : ''}--${name}${
      option.type === 'string' ? ` <${option.placeholder ?? 'value'}>` : ''
    }`,
    `${option.description}${
      option.default !== undefined && option.default !== false && option.default !== ''
        ? ` (default ${option.default})`
        : ''
    }`,
  ]);
  rows.push(['-h, --help', 'print this help and exit']);
  const table = (entries: [string, string][]) => {
    const width = Math.max(...entries.map(([left]) => left.length));
    return entries.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
  };
  lines.push('options:', ...table(rows));
  const environment = Object.entries(command.environment ?? {});
  if (environment.length > 0) lines.push('', 'environment:', ...table(environment));
  return `${lines.join('\n')}\n`;
}

export function parseCommand<O extends Record<string, CommandOption>>(
  command: Command<O>,
  args: readonly string[] = process.argv.slice(2),
): Parsed<O> {
  const fail = (message: string): never => {
    process.stderr.write(`${command.name}: ${message}\n${usageOf(command)}`);
    process.exit(1);
  };
  const options = Object.fromEntries(
    Object.entries(command.options ?? {}).map(([name, option]) => [
      name,
      {
        type: option.type,
        ...(option.short ? { short: option.short } : {}),
        ...(option.default !== undefined ? { default: option.default } : {}),
      },
    ]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.positionals === true,
      strict: true,
    });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  if (parsed.values.help) {
    process.stdout.write(helpText(command));
    process.exit(0);
  }
  return { values: parsed.values as Values<O>, positionals: parsed.positionals, fail };
}
