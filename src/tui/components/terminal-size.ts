// The terminal's size, updated live on resize.
import { useStdout } from 'ink';
import { useEffect, useState } from 'react';

export interface Size {
  columns: number;
  rows: number;
}

export function useTerminalSize(fixed?: Size): Size {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => read(stdout));
  const live = fixed === undefined;
  useEffect(() => {
    if (!live) return;
    const update = () => setSize(read(stdout));
    stdout.on('resize', update);
    return () => {
      stdout.off('resize', update);
    };
  }, [stdout, live]);
  return fixed ?? size;
}

const read = (stdout: NodeJS.WriteStream): Size => ({
  columns: stdout.columns || 80,
  rows: stdout.rows || 24,
});
