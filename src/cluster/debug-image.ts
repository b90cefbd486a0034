// The debug Pod's default image, apart from the Pod code: flags' help names it without loading
// the live cluster's modules.

/**
 * One image for rules and probes: rules come from the node's own binaries through chroot, so
 * the image only brings sh, timeout, chroot and the probe tools (nc, ping, dig, curl). The tag
 * is for people; the kubelet runs the digest, so whoever can push the tag cannot change what
 * runs privileged on a node.
 */
export const DEFAULT_DEBUG_IMAGE =
  'nicolaka/netshoot:v0.13@sha256:a20c2531bf35436ed3766cd6cfe89d352b050ccc4d7005ce6400adf97503da1b';
