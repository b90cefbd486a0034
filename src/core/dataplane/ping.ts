// What a ping to a ClusterIP meets, in words, for each mode: the facts the Reachability step
// gathered (its probes, the Service), and the sentence that says why ping and a connection differ.
import { hostPort } from '../ipv6.js';

/** What the step knows when it explains a ping to a ClusterIP. */
export interface PingFacts {
  ip: string;
  /** The Service port's protocol ("TCP") and number, and every port of the Service. */
  protocol: string;
  port: number;
  ports: { port: number; protocol: string }[];
  /** A ping was recorded, and whether one got an answer. */
  pinged: boolean;
  answered: boolean;
  /** A recorded ping got neither a reply nor an ICMP error. */
  silent: boolean;
  /** The nodes whose interfaces were read (`ip -br addr`) and none holds the address. */
  notHeldOn: string[];
  /** What the node's rules do to a connection to the port, as walked (or a connect probe that
   * got through: forwarded); undefined where they were not read or tell neither. */
  connection?: 'forwarded' | 'rejected';
  /** The connection test a person runs ("curl 10.96.0.10:80"). */
  curl: string;
  /** The finding's title around the mode's own words ("ping … gets no answer, curl connects: …"). */
  title(normal: string): string;
}

/** Why ping to the ClusterIP and a connection to its port behave as they do. */
export interface PingExplained {
  title: string;
  text: string;
}

/** The address and port a person types: "10.96.0.10:80", "[fd00::a]:80". */
export const target = (p: PingFacts) => hostPort(p.ip, p.port);
