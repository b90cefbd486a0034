// The flags several commands share (how a live run reaches the nodes), and how a command adds
// its examples to --help. Each command defines its own flags beside its handler.
import { Option, type Command } from 'commander';
import { DEFAULT_DEBUG_IMAGE } from '../../cluster/debug-image.js';
import { DEFAULT_MAX_OUTPUT_MIB } from '../../core/facts/not-read.js';
import { SELF } from './invocation.js';
import { textWidth, type GlobalOptions } from './io.js';
import { wrap, wrapCommand } from '../../output/wrap.js';

/** What a command's action hands back: its exit code, to come. */
export type Run = (code: Promise<number>) => void;

/** How a command module adds itself under the program: its flags, help and action. */
export type Define = (parent: Command, run: Run, g: () => GlobalOptions) => void;

/** Examples at the end of the command's --help, naming kdebug as it was run. */
export function withExamples(c: Command, lines: string[]): Command {
  return c.addHelpText('after', () => {
    const width = textWidth().width;
    const shown = lines.map((l) => l.replace(/^kdebug\b/, SELF.join(' ')));
    // too narrow for "command   # what it does": the note above, the command wrapped to paste
    const examples = shown.flatMap((l) => {
      if (l.length + 2 <= width) return [`  ${l}`];
      const [command = '', note] = l.split(/(?<!\s)\s+# /);
      return [
        ...(note ? wrap(`# ${note}`, width, '  ', '    ') : []),
        ...wrapCommand(command.trim().split(' '), width, '  '),
      ];
    });
    return `\nExamples:\n${examples.join('\n')}`;
  });
}

/** --ssh-user ... --ssh-timeout: how SSH connects, wherever kdebug may use it. */
export function sshOptions(c: Command): Command {
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
export function nodeAccessOptions(c: Command): Command {
  return sshOptions(
    c
      .addOption(
        new Option(
          '--via <how>',
          "how to reach the nodes: auto tries exec in the kube-proxy Pod, then a debug Pod, then SSH (a Cilium agent's listings are always read by exec in its Pod)",
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
