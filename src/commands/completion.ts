// `kdebug completion SHELL`, and the `__complete` question its scripts ask.
import type { Command } from 'commander';
import { EXIT, format, UsageError, write, type GlobalOptions } from './common/io.js';
import { withExamples, type Define } from './common/flags.js';
import type { Completion } from '../completion.js';

export async function completionCommand(shell: string, g: GlobalOptions): Promise<number> {
  format(g, 'completion');
  const { completionScript } = await import('../completion.js');
  const script = completionScript(shell);
  if (!script) throw new UsageError(`no completion for "${shell}": give bash, zsh or fish`);
  write(script);
  return EXIT.ok;
}

/** The longest TAB completion waits for its candidates. */
const COMPLETION_MS = 3000;

/** What the completion scripts call: candidates one a line, then cobra's directive: ":0" where
 * the shell should complete file names itself, else ":4" (no files). */
export async function completeCommand(program: Command, words: string[]): Promise<number> {
  const { complete } = await import('../completion.js');
  // a shell waits for this: a slow snapshot or cluster gets no candidates rather than a hang
  const late = new Promise<Completion>((r) =>
    setTimeout(() => r({ candidates: [] }), COMPLETION_MS).unref(),
  );
  const { candidates, files } = await Promise.race([
    complete(program, words.length > 0 ? words : ['']),
    late,
  ]);
  // readline puts a candidate on the command line as it is: only words a shell reads back as
  // themselves, whatever a kubeconfig, snapshot or cluster named (each kind is validated too)
  const { quote } = await import('../core/findings/next-command.js');
  const shown = candidates.filter((c) => quote(c) === c);
  const text = [...shown, files ? ':0' : ':4'].join('\n') + '\n';
  await new Promise((written) => process.stdout.write(text, written));
  process.exit(EXIT.ok); // a read still on its way is not waited for
}

/** `kdebug completion`: its help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    parent
      .command('completion <shell>')
      .description(
        'a completion script for bash, zsh or fish (Service names come from the cluster)',
      ),
    ['source <(kdebug completion bash)', 'kdebug completion fish | source'],
  ).action((shell: string) => run(completionCommand(shell, g())));
};
