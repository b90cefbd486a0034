// The program: global flags, each command's flags and help, exit codes, signals and the one
// place a failure becomes a message. Each command (its flags, help and handler) lives in
// commands/, one file each, loaded when it runs.
import { Command, CommanderError, Help, Option, type HelpConfiguration } from 'commander';
import { wrap } from './output/wrap.js';
import type { Define, Run } from './commands/common/flags.js';
import { SELF, selfCommand } from './commands/common/invocation.js';
import {
  COMMIT,
  bundledHint,
  debugPodsHeld,
  EXIT,
  inert,
  onInterrupt,
  textWidth,
  UsageError,
  VERSION,
  type GlobalOptions,
} from './commands/common/io.js';
import { excerpt, sanitize } from './core/sanitize.js';

const SIGNAL_EXIT: Record<string, number> = {
  SIGINT: EXIT.interrupted,
  SIGTERM: 143,
  SIGHUP: 129,
};

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Ctrl-C, SIGTERM and SIGHUP delete what kdebug created, then exit with 128 + the signal number;
 * debug Pods are mentioned only when there are some (otherwise, as kubectl, nothing is said).
 * A second Ctrl-C leaves at once (activeDeadlineSeconds and `kdebug cleanup` remain). Listened
 * for only while there is something to release: otherwise the signal's own action ends kdebug,
 * which a handler cannot do while a synchronous read holds the thread.
 */
function cleanUpOnSignals(): void {
  let cleaning = false;
  let listening = false;
  const handler = (signal: NodeJS.Signals) => {
    const code = SIGNAL_EXIT[signal] ?? 1;
    const pods = debugPodsHeld();
    if (cleaning) {
      if (signal !== 'SIGINT') return; // the TUI re-raises SIGTERM/SIGHUP after restoring the screen
      if (pods > 0)
        process.stderr.write(
          `kdebug: interrupted again: leaving now (${selfCommand('cleanup')} removes what is left)\n`,
        );
      process.exit(code);
    }
    cleaning = true;
    if (pods > 0)
      process.stderr.write(
        `kdebug: ${signal === 'SIGINT' ? 'interrupted' : signal}: deleting the debug Pods kdebug created (${pods})\n`,
      );
    if (onInterrupt.size === 0) process.exit(code);
    void Promise.allSettled([...onInterrupt].map((f) => f())).then((results) => {
      for (const r of results)
        if (r.status === 'rejected')
          process.stderr.write(`kdebug: ${inert(messageOf(r.reason))}\n`);
      process.exit(code);
    });
  };
  onInterrupt.changed = () => {
    const want = cleaning || onInterrupt.size > 0;
    if (want === listening) return;
    listening = want;
    for (const s of Object.keys(SIGNAL_EXIT))
      if (want) process.on(s, handler);
      else process.off(s, handler);
  };
}

/** The help at the terminal's width: where the option column leaves too little room, each
 * option's description goes under it; a usage line too long wraps under itself. */
function helpLayout(width: number): HelpConfiguration {
  return {
    showGlobalOptions: true,
    helpWidth: width,
    minWidthToWrap: 20,
    styleUsage: (usage) => wrap(usage, width - 'Usage: '.length, '', '  ').join('\n'),
    formatItem(term, termWidth, description, helper) {
      if (!description || width - termWidth - 4 >= NARROW_HELP)
        return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
      return [`  ${term}`, ...wrap(description, width, '      ')].join('\n');
    },
  };
}

/** Fewer columns than this beside the options: their descriptions go under them. */
const NARROW_HELP = 30;

/** The commands, in --help's order; a command's module (flags, help, handler) loads only when
 * that command runs, or when --help or completion needs them all. */
const COMMANDS: Record<string, () => Promise<{ define: Define }>> = {
  rules: () => import('./commands/rules.js'),
  expect: () => import('./commands/expect.js'),
  drift: () => import('./commands/drift.js'),
  trace: () => import('./commands/trace.js'),
  svc: () => import('./commands/svc.js'),
  demo: () => import('./commands/demo.js'),
  snapshot: () => import('./commands/snapshot.js'),
  cleanup: () => import('./commands/cleanup.js'),
  rbac: () => import('./commands/rbac.js'),
  version: () => import('./commands/version.js'),
  mcp: () => import('./commands/mcp.js'),
  completion: () => import('./commands/completion.js'),
};

/** Other names of a command (kubectl's for the resource): the module to load for them. */
const ALIASES: Record<string, string> = { service: 'svc', services: 'svc' };

/** The command the words run, when they name one (else every command is loaded: help). The
 * word after a global flag that takes a value is not the command. */
function commandOf(words: string[], program: Command): string | undefined {
  const valued = new Set(
    program.options
      .filter((o) => o.required || o.optional)
      .flatMap((o) => [o.short, o.long].filter((f): f is string => f !== undefined)),
  );
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (valued.has(w)) i++;
    else if (!w.startsWith('-')) {
      const name = ALIASES[w] ?? w;
      return Object.hasOwn(COMMANDS, name) ? name : undefined;
    }
  }
  return undefined;
}

/** The program with the global flags and the commands `words` need (all of them for help). */
export async function buildProgram(run: Run, words?: string[]): Promise<Command> {
  // Usage, examples and "see ... --help" name kdebug as it was run: `kubectl kdebug` as a plugin
  const program = new Command(SELF.join(' '))
    .description(
      "Why can't I reach my Service? kube-proxy's rules read back, checked and explained.",
    )
    .version(`kdebug ${VERSION} (commit ${COMMIT})`)
    .option('-n, --namespace <ns>', 'namespace of the Service (default: the context namespace)')
    .option('--context <name>', 'kubeconfig context to use')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
    .addOption(
      new Option('-o, --output <format>', 'tui on a terminal, else text').choices([
        'tui',
        'text',
        'json',
      ]),
    )
    .option('--no-color', 'no colours (NO_COLOR is honoured too)')
    .configureHelp(helpLayout(textWidth().width))
    .exitOverride();
  const g = () => program.opts<GlobalOptions>();
  const only = words && commandOf(words, program);
  const names = only ? [only] : Object.keys(COMMANDS);
  for (const m of await Promise.all(names.map((n) => COMMANDS[n]!()))) m.define(program, run, g);
  // a wrong or missing argument: one line, "kdebug: " as every other error, with the reason and
  // where to read more, not the whole help
  const path = (c: Command): string => (c.parent ? `${path(c.parent)} ${c.name()}` : c.name());
  const short = (c: Command): void => {
    c.configureOutput({
      outputError: (text, write) =>
        write(
          `kdebug: ${inert(
            text
              .trim()
              .replace(/^error: /, '')
              .replace(/\s*\n\s*/g, ' ')
              .replace(/\.$/, ''),
          )}; see ${path(c)} --help\n`,
        ),
    });
    c.commands.forEach(short);
  };
  short(program);
  placeFlags(program, words ?? []);
  return program;
}

/** A command's flag typed before the command (`kdebug --snapshot DIR svc web`): commander calls
 * it unknown; say where it goes instead. Commander has no hook for this but its unknownOption. */
function placeFlags(program: Command, words: string[]): void {
  const p = program as Command & { unknownOption(flag: string): void };
  const unknown = p.unknownOption.bind(p);
  p.unknownOption = (flag: string) => {
    // the command typed after it, else any command that has the flag
    const named = program.commands.find((c) =>
      words.some((w) => w === c.name() || c.aliases().includes(w)),
    );
    const has = (c: Command) => c.options.some((o) => o.long === flag || o.short === flag);
    const owner = named && has(named) ? named : named ? undefined : program.commands.find(has);
    if (!owner) return unknown(flag);
    program.error(
      `error: ${flag} is an option of the command, not of kdebug: put it after the command (${selfCommand(`${owner.name()} ... ${flag} ...`)})`,
      { code: 'commander.unknownOption' },
    );
  };
}

const RBAC_HINT = `; ${selfCommand('rbac')} prints the Roles kdebug needs (README: Permissions)`;

/** Turns any failure into a one-line message and exit 2; a stack trace only with KDEBUG_DEBUG.
 * The error classes load here, on the way out, so a run that fails on none never loads them. */
async function fail(e: unknown): Promise<number> {
  const [iptables, drift, ipvs, nft, cilium, notRead, factsSource, snapshot, kubeErrors] =
    await Promise.all([
      import('./core/dataplane/iptables/read/parse.js'),
      import('./core/dataplane/drift.js'),
      import('./core/dataplane/ipvs/read/listing.js'),
      import('./core/dataplane/nftables/read/listing.js'),
      import('./core/dataplane/cilium/read/listing.js'),
      import('./core/facts/not-read.js'),
      import('./cluster/facts-source.js'),
      import('./cluster/snapshot/read.js'),
      import('./cluster/kube/errors.js'),
    ]);
  if (e instanceof iptables.IptablesParseError) {
    // one line: FILE:LINE: message, and the line it is about, quoted and escaped
    const quoted = e.lineText ? `: "${excerpt(e.lineText, 120)}"` : '';
    process.stderr.write(`${inert(`${e.headline}${quoted}`)}\n`);
  } else if (
    e instanceof notRead.OutputLimitError ||
    e instanceof snapshot.SnapshotError ||
    e instanceof UsageError ||
    e instanceof iptables.NoRulesError ||
    e instanceof kubeErrors.KubeApiError ||
    e instanceof drift.DriftInputError ||
    e instanceof factsSource.FactsSourceError ||
    e instanceof nft.NftParseError ||
    e instanceof ipvs.IpvsParseError ||
    e instanceof cilium.CiliumParseError
  ) {
    // names and paths are input; a refusal by RBAC says where the needed Roles are
    const rbac = e instanceof kubeErrors.RbacDeniedError;
    const missing = e instanceof snapshot.SnapshotError && e.missing;
    const hint = rbac ? RBAC_HINT : missing ? bundledHint(e.file, SELF.join(' ')) : '';
    process.stderr.write(`kdebug: ${inert(e.message)}${inert(hint)}\n`);
  } else {
    // anything else, a RangeError from input too big to hold included: one line
    process.stderr.write(`kdebug: internal error: ${sanitize(messageOf(e))}\n`);
    if (process.env['KDEBUG_DEBUG'])
      process.stderr.write(`${inert(String((e as Error)?.stack))}\n`);
  }
  return EXIT.failed;
}

/**
 * A failure outside the command's promise (an event handler, a stream): the same one line and
 * exit 2, after deleting what kdebug created, never Node's stack trace.
 */
function failOnStray(): void {
  let failed = false;
  const stray = (e: unknown) => {
    if (failed) return; // one line, however many follow the first
    failed = true;
    void fail(e)
      .then((code) => (process.exitCode = code))
      .then(() => Promise.allSettled([...onInterrupt].map((f) => f())))
      .then(() => process.exit(EXIT.failed));
  };
  process.on('uncaughtException', stray);
  process.on('unhandledRejection', stray);
}

export async function main(argv: string[]): Promise<number> {
  let pending: Promise<number> | undefined;
  const run: Run = (p) => (pending = p);
  // the completion scripts' question, words as typed: before commander reads any flag
  if (argv[2] === '__complete') {
    const { completeCommand } = await import('./commands/completion.js');
    return completeCommand(await buildProgram(run), argv.slice(3));
  }
  const program = await buildProgram(run, argv.slice(2));
  try {
    await program.parseAsync(argv);
    return pending ? await pending : EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.failed;
    return await fail(e);
  }
}

if (process.env['KDEBUG_NO_MAIN'] === undefined) {
  cleanUpOnSignals();
  failOnStray();
  // `kdebug ... | head`: the reader left; end quietly with what was decided so far
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    throw e;
  });
  process.exitCode = await main(process.argv);
}
