// Two lines on top: where you are (screens, context), and what is diagnosed (the Service, its
// type, ClusterIP:port, kube-proxy's mode).
import { Box } from 'ink';
import type { Service } from '../../core/kube/objects.js';
import type { Report } from '../../core/model.js';
import { SCREENS, type ScreenName } from '../keymap.js';
import { S, T } from './text.js';

interface Props {
  screen: ScreenName;
  report?: Report;
  service?: Service;
  /** The second line when there is no Report (`kdebug rules`): where the rules came from. */
  source?: string;
  context?: string;
  /** The facts could not be read at all: the Service is "not read", not "not found". */
  unread?: boolean;
  /** Replaying a snapshot: its directory and when it was captured (shown instead of the context). */
  snapshot?: { label: string; capturedAt?: string };
  width: number;
}

/** "ClusterIP 10.1.190.219:8080/TCP", "ClusterIP None (headless) 80/TCP", "ExternalName → db.example.com". */
export function addressText(svc: Service): string {
  if (svc.type === 'ExternalName') return `ExternalName → ${svc.externalName ?? '?'}`;
  const ports = svc.ports.map((p) => `${p.port}/${p.protocol}`).join(',');
  if (svc.headless) return `${svc.type} None (headless) ${ports}`;
  return `${svc.type} ${svc.clusterIP ?? '?'}:${ports}`;
}

export function Header(props: Props) {
  const { screen, report, service, source, context, snapshot, unread, width } = props;
  const t = report?.target;
  const target = t && `${t.namespace}/${t.service}${t.port !== undefined ? `:${t.port}` : ''}`;
  const ctx = report?.context ?? context;
  const captured = snapshot?.capturedAt?.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, 'Z');
  const where = snapshot
    ? `${snapshot.label}${captured ? ` (captured ${captured})` : ''}`
    : ctx
      ? `ctx ${ctx}`
      : undefined;
  // where the facts come from matters more than the other screens' names: those go first
  const tabs = SCREENS.map((s) => (s.name === screen ? ` [${s.title}]` : `  ${s.title} `));
  const compact = 6 + tabs.join('').length + 1 + (where?.length ?? 0) > width;
  const mode = report?.service?.proxyMode;
  return (
    <Box flexDirection="column" width={width} flexShrink={0}>
      <Box justifyContent="space-between">
        <Box flexShrink={0}>
          <T>
            <S tone="title">kdebug</S>
            {SCREENS.map((s, i) =>
              compact && s.name !== screen ? null : (
                <S
                  key={s.name}
                  tone={s.name === screen ? 'focus' : 'muted'}
                  bold={s.name === screen}
                >
                  {tabs[i]}
                </S>
              ),
            )}
          </T>
        </Box>
        {where ? (
          <Box flexShrink={1}>
            <T tone="muted"> {where}</T>
          </Box>
        ) : null}
      </Box>
      <T>
        {target ? (
          <>
            <S bold>{target}</S>
            {service ? (
              <S tone="accent">
                {'  '}
                {addressText(service)}
              </S>
            ) : unread ? (
              <S tone="warn">{'  '}not read</S>
            ) : report?.steps.some((st) => st.status === 'pending') ? (
              <S tone="muted">{'  '}reading…</S>
            ) : (
              <S tone="bad">{'  '}not found</S>
            )}
            {mode ? (
              <>
                <S tone="muted">{'  mode '}</S>
                {mode}
              </>
            ) : null}
          </>
        ) : (
          <S tone="muted">{source ?? ''}</S>
        )}
      </T>
    </Box>
  );
}
