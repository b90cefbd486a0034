// `kdebug completion SHELL`, and the `__complete` question its scripts ask.
import type { Command } from 'commander';
import { EXIT, format, UsageError, write, type GlobalOptions } from './io.js';

export async function completionCommand(shell: string, g: GlobalOptions): Promise<number> {
  format(g, 'completion');
  const { completionScript } = await import('../completion.js');
  const script = completionScript(shell);
  if (!script) throw new UsageError(`no completion for "${shell}": give bash, zsh or fish`);
  write(script);
  return EXIT.ok;
}

/** What the completion scripts call: candidates one a line, then cobra's ":4" (no files). */
export async function completeCommand(program: Command, words: string[]): Promise<number> {
  const { complete } = await import('../completion.js');
  const candidates = await complete(program, words.length > 0 ? words : ['']);
  write([...candidates, ':4'].join('\n') + '\n');
  return EXIT.ok;
}
