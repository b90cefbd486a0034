// Questions from outside the TUI, asked inside it: an adapter about to create a debug Pod awaits
// the person's y or n. No Ink here, so cli.ts can make a channel without loading the TUI.

/** What is asked, in a few lines, and the warnings that go with it (shown apart). */
export interface Asked {
  lines: string[];
  warnings?: string[];
}

export interface Question extends Asked {
  answer(yes: boolean): void;
}

export interface Questions {
  /** Resolves with the person's answer; false if the TUI closes first. */
  ask(lines: string[], warnings?: string[]): Promise<boolean>;
  /** The TUI listens (questions asked before it did are handed over); returns the unlisten. */
  listen(onQuestion: (q: Question) => void): () => void;
}

export function questions(): Questions {
  const waiting: Question[] = [];
  let listener: ((q: Question) => void) | undefined;
  return {
    ask(lines, warnings) {
      return new Promise((resolve) => {
        const q: Question = { lines, ...(warnings ? { warnings } : {}), answer: resolve };
        if (listener) listener(q);
        else waiting.push(q);
      });
    },
    listen(onQuestion) {
      listener = onQuestion;
      for (const q of waiting.splice(0)) onQuestion(q);
      return () => {
        listener = undefined;
      };
    },
  };
}
