// A question kdebug must ask before it acts on the cluster (creating debug Pods): y or n.
import { Box } from 'ink';
import { Pane } from '../components/pane.js';
import { S, T } from '../components/text.js';

export function Confirm({
  lines,
  width,
  height,
}: {
  lines: string[];
  width: number;
  height: number;
}) {
  return (
    <Box flexDirection="column" width={width}>
      <Pane title="Create debug Pods?" info="y yes, n no" focused height={height} width={width}>
        {lines.map((l, i) => (
          // the question's warnings (a shared namespace, an image without a digest) stand out
          <T key={i} wrap="wrap" tone={/^Warning: /.test(l) ? 'warn' : 'text'}>
            {l}
          </T>
        ))}
        <T> </T>
        <T>
          <S tone="key">y</S> create them and read the nodes{'   '}
          <S tone="key">n</S> go on without them
        </T>
      </Pane>
    </Box>
  );
}
