// Two lines on top: where you are (screens, context), and what is diagnosed (the Service, its
// type, ClusterIP:port, kube-proxy's mode).
import { Box } from 'ink';
import type { Service } from '../../core/kube.js';
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
  width: number;
}

/** "ClusterIP 10.1.190.219:8080/TCP", "ClusterIP None (headless) 80/TCP", "ExternalName → db.example.com". */
export function addressText(svc: Service): string {
  if (svc.type === 'ExternalName') return `ExternalName → ${svc.externalName ?? '?'}`;
  const ports = svc.ports.map((p) => `${p.port}/${p.protocol}`).join(',');
  if (svc.headless) return `${svc.type} None (headless) ${ports}`;
  return `${svc.type} ${svc.clusterIP ?? '?'}:${ports}`;
}

export function Header({ screen, report, service, source, context, width }: Props) {
  const target = report ? `${report.target.namespace}/${report.target.service}` : undefined;
  const ctx = report?.context ?? context;
  const mode = report?.service?.proxyMode;
  return (
    <Box flexDirection="column" width={width} flexShrink={0}>
      <Box justifyContent="space-between">
        <Box flexShrink={0}>
          <T>
            <S tone="title">kdebug</S>
            {SCREENS.map((s) => (
              <S key={s.name} tone={s.name === screen ? 'focus' : 'muted'} bold={s.name === screen}>
                {s.name === screen ? ` [${s.title}]` : `  ${s.title} `}
              </S>
            ))}
          </T>
        </Box>
        {ctx ? (
          <Box flexShrink={1}>
            <T tone="muted"> ctx {ctx}</T>
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
