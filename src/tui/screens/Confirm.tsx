// A question kdebug must ask before it acts on the cluster (creating debug Pods): y or n.
import { Box } from 'ink';
import { Pane } from '../components/pane.js';
import { S, T } from '../components/text.js';
import type { Asked } from '../questions.js';

export function Confirm({ asked, width, height }: { asked: Asked; width: number; height: number }) {
  return (
    <Box flexDirection="column" width={width}>
      <Pane title="Create debug Pods?" info="y yes, n no" focused height={height} width={width}>
        {asked.lines.map((l, i) => (
          <T key={i} wrap="wrap">
            {l}
          </T>
        ))}
        {/* the question's warnings (a shared namespace, an image without a digest) stand out */}
        {(asked.warnings ?? []).map((w, i) => (
          <T key={`w${i}`} wrap="wrap" tone="warn">
            Warning: {w}
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
