// The program: global flags, each command's flags and help, exit codes, signals and the one
// place a failure becomes a message. Each command lives in commands/, one file each.
import { SELF } from './commands/invocation.js';
import { Command, CommanderError, Option } from 'commander';
import { IptablesParseError, NoRulesError } from './core/iptables.js';
import { DriftInputError } from './core/drift.js';
import { IpvsParseError } from './core/ipvs/listing.js';
import { NftParseError } from './core/nftables/listing.js';
import { DEFAULT_MAX_OUTPUT_MIB, OutputLimitError } from './core/not-read.js';
import { sanitize } from './core/sanitize.js';
import { FactsSourceError } from './cluster/facts-source.js';
import { DEFAULT_DEBUG_IMAGE } from './cluster/node-pod.js';
import { SnapshotError } from './cluster/snapshot.js';
import { KubeApiError } from './cluster/kube/errors.js';
import { cleanupCommand, type CleanupFlags } from './commands/cleanup.js';
import { completeCommand, completionCommand } from './commands/completion.js';
import { driftCommand, type DriftFlags } from './commands/drift.js';
import { expectCommand, type ExpectOptions } from './commands/expect.js';
import {
  COMMIT,
  debugPodsHeld,
  EXIT,
  inert,
  onInterrupt,
  UsageError,
  VERSION,
  type GlobalOptions,
} from './commands/io.js';
import { rulesCommand, type RulesOptions } from './commands/rules.js';
import { snapshotSaveCommand, type SnapshotSaveFlags } from './commands/snapshot.js';
import { demoCommand } from './commands/demo.js';
import { svcCommand, type SvcOptions } from './commands/svc.js';
import { traceCommand, type TraceOptions } from './commands/trace.js';
import { versionCommand } from './commands/version.js';
import { mcpCommand } from './commands/mcp.js';
import { rbacCommand, type RbacFlags } from './commands/rbac.js';

const SIGNAL_EXIT: Record<string, number> = {
  SIGINT: EXIT.interrupted,
  SIGTERM: 143,
  SIGHUP: 129,
};

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Ctrl-C, SIGTERM and SIGHUP delete what kdebug created, then exit with 128 + the signal number;
 * debug Pods are mentioned only when there are some (otherwise, as kubectl, nothing is said).
 * A second Ctrl-C leaves at once (activeDeadlineSeconds and `kdebug cleanup` remain).
 */
function cleanUpOnSignals(): void {
  let cleaning = false;
  const handler = (signal: NodeJS.Signals) => {
    const code = SIGNAL_EXIT[signal] ?? 1;
    const pods = debugPodsHeld();
    if (cleaning) {
      if (signal !== 'SIGINT') return; // the TUI re-raises SIGTERM/SIGHUP after restoring the screen
      if (pods > 0)
        process.stderr.write(
          'kdebug: interrupted again: leaving now (kdebug cleanup removes what is left)\n',
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
  for (const s of Object.keys(SIGNAL_EXIT)) process.on(s, handler);
}

/** --ssh-user ... --ssh-timeout: how SSH connects, wherever kdebug may use it. */
function sshOptions(c: Command): Command {
  return c
    .option(
      '--ssh-user <user>',
      'SSH login (default: User from ~/.ssh/config, then your user name)',
    )
    .option('--ssh-key <file>', 'SSH private key, tried before IdentityFile and ssh-agent')
    .option('--ssh-config <file>', 'ssh config file (default: ~/.ssh/config; "none" for none)')
    .option('--known-hosts <file>', 'known_hosts file (default: ~/.ssh/known_hosts)')
    .option('--ssh-timeout <seconds>', 'SSH connect timeout per hop (default: 10)');
}

/** How a live run reaches the nodes: --via and what each way needs. */
function nodeAccessOptions(c: Command): Command {
  return sshOptions(
    c
      .addOption(
        new Option(
          '--via <how>',
          'how to reach the nodes: auto tries exec in the kube-proxy Pod, then a debug Pod, then SSH',
        )
          .choices(['auto', 'kube-proxy', 'pod', 'ssh'])
          .default('auto'),
      )
      .option('--yes', 'create privileged debug Pods without asking')
      .option('--image <image>', `debug Pod image (default: ${DEFAULT_DEBUG_IMAGE})`)
      .option(
        '--debug-namespace <ns>',
        'namespace for debug Pods (default: kdebug, created with your consent when absent; needs Pod Security "privileged")',
      )
      .option(
        '--node-timeout <seconds>',
        'how long a debug Pod may take to start, and each command on a node (default: 60)',
      )
      .option(
        '--max-output-mib <MiB>',
        `the most one node command (or --file) may print; past it the read fails (default: ${DEFAULT_MAX_OUTPUT_MIB}, at most 511)`,
      )
      .addOption(
        new Option('--ssh-address-type <type>', 'which Node address SSH connects to')
          .choices(['InternalIP', 'ExternalIP', 'Hostname'])
          .default('InternalIP'),
      ),
  );
}

/** Examples at the end of each command's --help. */
const EXAMPLES: Record<string, string[]> = {
  svc: [
    'kdebug svc nginx-svc                          # the current context and namespace',
    'kdebug svc shop/web --context prod -o json    # NS/NAME, like kubectl',
    'kdebug svc nginx-svc --snapshot DIR           # offline, from a snapshot',
  ],
  rules: [
    'sudo iptables-save | kdebug rules --file -',
    'kdebug rules --snapshot DIR --node node-a --search 10.244.1.7',
    'kdebug rules --ssh root@192.0.2.10',
  ],
  expect: ['kdebug expect --snapshot DIR --node node-a > expected.txt'],
  drift: ['kdebug drift --all-nodes', 'kdebug drift --snapshot DIR --node node-a -o json'],
  trace: ['kdebug trace --node node-a --src 10.244.0.5 --dst 10.96.0.10:53 --proto udp'],
  demo: ['kdebug demo', 'kdebug demo -o text'],
  cleanup: ['kdebug cleanup', 'kdebug cleanup -n kdebug'],
  rbac: [
    'kdebug rbac -n shop --user alice | kubectl apply -f -',
    'kdebug rbac --via pod --serviceaccount ci:kdebug',
    'kdebug rbac -A --via kube-proxy             # for snapshot save --all -A',
  ],
  completion: ['source <(kdebug completion bash)', 'kdebug completion fish | source'],
  version: ['kdebug version -o json'],
};

export function buildProgram(run: (code: Promise<number>) => void): Command {
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
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();
  const g = () => program.opts<GlobalOptions>();

  nodeAccessOptions(
    program
      .command('rules')
      .description("the Service -> KUBE-SVC -> KUBE-SEP -> DNAT trees of a node's rules")
      .option('--file <path>', 'iptables-save or iptables -S output ("-" for stdin)')
      .option('--snapshot <dir>', 'a recorded snapshot directory (default: the live cluster)')
      .option('--node <node>', 'the node whose rules to read')
      .addOption(
        new Option(
          '--table <table>',
          'the table of iptables -S output without *table lines',
        ).choices(['nat', 'filter', 'mangle', 'raw', 'security']),
      )
      .option('--search <query>', 'fuzzy search chains, comments, IPs, ports and Service names')
      .option('--ssh <[user@]host[:port]>', "read this host's rules over SSH (no cluster needed)"),
  ).action((o: RulesOptions) => run(rulesCommand(o, g())));

  program
    .command('expect')
    .description(
      "the rules kube-proxy would write on a node: iptables-save text (iptables mode), or its table's nft -f script (nftables mode)",
    )
    .option(
      '--snapshot <dir>',
      'a snapshot directory: its objects.json (default: the live cluster)',
    )
    .option('--node <node>', 'the node to compute the rules for')
    .addOption(new Option('--table <table>', 'only this table').choices(['nat', 'filter']))
    .addOption(
      new Option(
        '--family <family>',
        "which proxier's rules: ipv4 (iptables-save), ipv6 (ip6tables-save) or both (default: the cluster's primary family)",
      ).choices(['ipv4', 'ipv6', 'both']),
    )
    .option(
      '--no-random-fully',
      'the iptables binary lacks MASQUERADE --random-fully (iptables < 1.6.2)',
    )
    .option('--nfacct', 'the node has nfacct counters (kube-proxy 1.31+ adds -m nfacct rules)')
    .option('--no-nfacct', 'the node has no nfacct counters (default: read from its recordings)')
    .option('--tcp-be-liberal', 'sysctl nf_conntrack_tcp_be_liberal=1 (no INVALID drop rule)')
    .action((o: ExpectOptions) => run(expectCommand(o, g())));

  nodeAccessOptions(
    program
      .command('drift')
      .description(
        "what each node's rules do differently from what kube-proxy would write (exit 1 on drift)",
      )
      .option('--snapshot <dir>', 'a recorded snapshot directory (default: the live cluster)')
      .option('--node <node>', 'the node to check')
      .addOption(
        new Option(
          '--family <family>',
          'which rule set: ipv4 (iptables), ipv6 (ip6tables) or both (default: each one recorded)',
        ).choices(['ipv4', 'ipv6', 'both']),
      )
      .option('--all-nodes', 'every node')
      .option('--ssh <[user@]host[:port]>', "with --snapshot: that node's rules read over SSH now"),
  ).action((o: DriftFlags) => run(driftCommand(o, g())));

  nodeAccessOptions(
    program
      .command('trace')
      .description(
        "walk one packet through a node's rules: every outcome, its chance, the rules it matched",
      )
      .option('--snapshot <dir>', 'a recorded snapshot directory (default: the live cluster)')
      .option('--node <node>', 'the node whose rules to walk')
      .option('--src <ip>', 'source address (a Pod IP, or a client outside the cluster)')
      .option(
        '--dst <ip:port>',
        'destination, e.g. a ClusterIP and port or a node IP and node port',
      )
      .addOption(
        new Option('--proto <protocol>', 'protocol')
          .choices(['tcp', 'udp', 'sctp', 'icmp'])
          .default('tcp'),
      )
      .option(
        '--from-host',
        'sent by a process on the node (nat OUTPUT) rather than a Pod or the network',
      )
      .option('--ssh <[user@]host[:port]>', "with --snapshot: that node's rules read over SSH now"),
  ).action((o: TraceOptions) => run(traceCommand(o, g())));

  nodeAccessOptions(
    program
      .command('svc <name>')
      .description('the guided diagnosis of one Service, step by step, with evidence')
      .option('--snapshot <dir>', 'a recorded snapshot directory instead of the live cluster')
      .option('-v, --verbose', 'text: expand every finding, not only the failing ones'),
  ).action((name: string, o: SvcOptions) => run(svcCommand(name, o, g())));

  program
    .command('demo')
    .description('kdebug on the bundled demo snapshot (the nginx-svc cluster), no cluster needed')
    .action(() => run(demoCommand(g())));

  const snapshot = program
    .command('snapshot')
    .description('capture cluster facts into a directory that --snapshot replays');
  nodeAccessOptions(
    snapshot
      .command('save [dir]')
      .description('read a Service (or every Service) from the cluster and save it as a snapshot')
      .option('--service <name>', 'the Service to capture')
      .option('--all', 'every Service in the namespace (-n, default: the context namespace)')
      .option('-A, --all-namespaces', 'with --all: every Service in the cluster')
      .option(
        '--archive <file.tar.gz>',
        'also (or instead of a directory) one file to attach; --snapshot reads it',
      )
      .option(
        '--no-redact',
        'keep every field of every object and the context, user and server names (by default only the fields kdebug reads are kept and the names hashed)',
      ),
  ).action((dir: string | undefined, o: SnapshotSaveFlags) =>
    run(snapshotSaveCommand(dir, o, g())),
  );

  program
    .command('cleanup')
    .description(
      'delete the debug Pods a killed kdebug left behind (label app.kubernetes.io/managed-by=kdebug; all namespaces, or -n); those of live runs are spared',
    )
    .option('--all', 'also the Pods of kdebug runs that are still alive (asks first)')
    .option('--yes', 'with --all: do not ask')
    .action((o: CleanupFlags) => run(cleanupCommand(o, g())));

  program
    .command('rbac')
    .description('the ClusterRole and Roles kdebug needs for what you ask of it, as YAML to apply')
    .addOption(
      new Option(
        '--via <how>',
        'node access to grant too: none, kube-proxy, pod, ssh, or auto (all three)',
      )
        .choices(['none', 'ssh', 'kube-proxy', 'pod', 'auto'])
        .default('none'),
    )
    .option('-A, --all-namespaces', 'Services of every namespace (snapshot save --all -A)')
    .option('--debug-namespace <ns>', 'where debug Pods are made (default: kdebug)')
    .option('--name <name>', 'name of the roles and bindings', 'kdebug')
    .option('--user <name>', 'bind them to this user')
    .option('--group <name>', 'bind them to this group')
    .option('--serviceaccount <ns:name>', 'bind them to this ServiceAccount')
    .action((o: RbacFlags) => run(Promise.resolve(rbacCommand(o, g()))));

  program
    .command('version')
    .description('the version of kdebug (-o json: also of Node.js and the API server)')
    .action(() => run(versionCommand(g())));

  mcpCommand(program, run, g);

  program
    .command('completion <shell>')
    .description('a completion script for bash, zsh or fish (Service names come from the cluster)')
    .action((shell: string) => run(completionCommand(shell, g())));

  for (const [name, lines] of Object.entries(EXAMPLES))
    program.commands
      .find((c) => c.name() === name)
      ?.addHelpText(
        'after',
        `\nExamples:\n${lines.map((l) => `  ${l.replace(/^kdebug\b/, SELF.join(' '))}`).join('\n')}`,
      );
  // a wrong or missing argument: the reason and where to read more, not the whole help
  const path = (c: Command): string => (c.parent ? `${path(c.parent)} ${c.name()}` : c.name());
  const short = (c: Command): void => {
    c.showHelpAfterError(`see ${path(c)} --help`);
    c.commands.forEach(short);
  };
  short(program);
  return program;
}

const RBAC_HINT = '; kdebug rbac prints the Roles kdebug needs (README: Permissions)';

/** Turns any failure into a one-line message and exit 2; a stack trace only with KDEBUG_DEBUG. */
function fail(e: unknown): number {
  if (e instanceof IptablesParseError) {
    process.stderr.write(`${inert(e.message)}\n`); // FILE:LINE: message, then the line, escaped
  } else if (
    e instanceof OutputLimitError ||
    e instanceof SnapshotError ||
    e instanceof UsageError ||
    e instanceof NoRulesError ||
    e instanceof KubeApiError ||
    e instanceof DriftInputError ||
    e instanceof FactsSourceError ||
    e instanceof NftParseError ||
    e instanceof IpvsParseError
  ) {
    // names and paths are input; a refusal by RBAC says where the needed Roles are
    const rbac = e instanceof KubeApiError && /^access denied by RBAC/.test(e.message);
    process.stderr.write(`kdebug: ${inert(e.message)}${rbac ? RBAC_HINT : ''}\n`);
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
    process.exitCode = fail(e);
    void Promise.allSettled([...onInterrupt].map((f) => f())).then(() => process.exit(EXIT.failed));
  };
  process.on('uncaughtException', stray);
  process.on('unhandledRejection', stray);
}

export async function main(argv: string[]): Promise<number> {
  let pending: Promise<number> | undefined;
  const program = buildProgram((p) => (pending = p));
  // the completion scripts' question, words as typed: before commander reads any flag
  if (argv[2] === '__complete') return completeCommand(program, argv.slice(3));
  try {
    await program.parseAsync(argv);
    return pending ? await pending : EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.failed;
    return fail(e);
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
