#!/usr/bin/env bash
# Pins the lab's Kubernetes release: k8s.io/kubernetes as a dependency needs its staging modules
# replaced by their published v0.x.y, generated here from its own go.mod (the one place to change).
set -euo pipefail
cd "$(dirname "$0")"
K8S="${1:-$(cat VERSION)}"
STAGING="v0.${K8S#v1.}"
echo "$K8S" > VERSION
go mod download -json "k8s.io/kubernetes@$K8S" >/dev/null
MOD="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$K8S.mod"
args=()
for m in $(sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$MOD"); do
  args+=("-replace=$m=$m@$STAGING")
done
go mod edit -dropreplace=k8s.io/api "${args[@]}" -require="k8s.io/kubernetes@$K8S"
for t in kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubectl; do
  go get -tool "k8s.io/kubernetes/cmd/$t@$K8S"
done
go mod tidy
