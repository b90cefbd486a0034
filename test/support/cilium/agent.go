package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cilium/hive/cell"
	"github.com/cilium/hive/script"
	"github.com/cilium/statedb"
	"github.com/cilium/statedb/reconciler"
	"github.com/spf13/pflag"

	daemonk8s "github.com/cilium/cilium/daemon/k8s"
	cmtypes "github.com/cilium/cilium/pkg/clustermesh/types"
	"github.com/cilium/cilium/pkg/datapath/tables"
	envoyCfg "github.com/cilium/cilium/pkg/envoy/config"
	"github.com/cilium/cilium/pkg/hive"
	k8sClient "github.com/cilium/cilium/pkg/k8s/client/testutils"
	k8sTables "github.com/cilium/cilium/pkg/k8s/tables"
	k8sTestutils "github.com/cilium/cilium/pkg/k8s/testutils"
	"github.com/cilium/cilium/pkg/k8s/version"
	"github.com/cilium/cilium/pkg/kpr"
	"github.com/cilium/cilium/pkg/lbipamconfig"
	"github.com/cilium/cilium/pkg/loadbalancer"
	lbcell "github.com/cilium/cilium/pkg/loadbalancer/cell"
	lbmaps "github.com/cilium/cilium/pkg/loadbalancer/maps"
	"github.com/cilium/cilium/pkg/loadbalancer/writer"
	"github.com/cilium/cilium/pkg/maglev"
	"github.com/cilium/cilium/pkg/metrics"
	"github.com/cilium/cilium/pkg/node"
	"github.com/cilium/cilium/pkg/node/addressing"
	nodeTypes "github.com/cilium/cilium/pkg/node/types"
	"github.com/cilium/cilium/pkg/nodeipamconfig"
	"github.com/cilium/cilium/pkg/option"
	"github.com/cilium/cilium/pkg/source"
)

// agent is Cilium's load-balancer control plane in a hive, with the handles cilium-ref uses.
type agent struct {
	h        *hive.Hive
	flags    *pflag.FlagSet
	log      *slog.Logger
	client   *k8sClient.FakeClientset
	lns      *node.LocalNodeStore
	db       *statedb.DB
	addrs    statedb.RWTable[tables.NodeAddress]
	w        *writer.Writer
	initWait loadbalancer.InitWaitFunc
	maps     lbmaps.LBMaps
}

// newAgent assembles the cells pkg/loadbalancer/tests/script_test.go puts together (less its
// test commands) and parses the agent flags: ours first, then any given after "--".
func newAgent(o options, fake bool) (*agent, error) {
	a := &agent{}
	var logOut io.Writer = io.Discard
	if o.verbose {
		logOut = os.Stderr
	}
	a.log = slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	app := cell.Group(
		k8sClient.FakeClientCell(),
		daemonk8s.ResourcesCell,
		k8sTables.TablesCell,
		cell.Config(envoyCfg.SecretSyncConfig{}),
		kpr.Cell,
		// TestConfig present = maps are unpinned kernel maps when root, in-memory when not.
		cell.Config(loadbalancer.TestConfig{}),
		metrics.Cell,
		maglev.Cell,
		lbipamconfig.Cell,
		nodeipamconfig.Cell,
		node.LocalNodeStoreTestCell,
		cell.Provide(
			func() cmtypes.ClusterInfo { return cmtypes.ClusterInfo{} },
			func(cfg loadbalancer.TestConfig) *loadbalancer.TestConfig { return &cfg },
			tables.NewNodeAddressTable,
			statedb.RWTable[tables.NodeAddress].ToTable,
			source.NewSources,
			func() *option.DaemonConfig {
				return &option.DaemonConfig{EnableIPv4: o.ipv4, EnableIPv6: o.ipv6}
			},
		),
		cell.Invoke(func(c *k8sClient.FakeClientset, s *node.LocalNodeStore, d *statedb.DB,
			t statedb.RWTable[tables.NodeAddress], w *writer.Writer, f loadbalancer.InitWaitFunc, m lbmaps.LBMaps) {
			a.client, a.lns, a.db, a.addrs, a.w, a.initWait, a.maps = c, s, d, t, w, f, m
		}),
		lbcell.Cell,
	)
	if fake && os.Getuid() == 0 {
		// root would get kernel maps; swap in the in-memory maps Cilium's unprivileged tests use
		app = cell.Decorate(func(lbmaps.LBMaps) lbmaps.LBMaps { return lbmaps.NewFakeLBMaps() }, app)
	}
	a.h = hive.New(app)
	a.flags = pflag.NewFlagSet("cilium", pflag.ContinueOnError)
	a.h.RegisterFlags(a.flags)
	settings := [][2]string{
		{"kube-proxy-replacement", fmt.Sprint(o.kpr)},
		{"bpf-lb-algorithm", o.algorithm},
		{"bpf-lb-mode", o.mode},
		{"bpf-lb-external-clusterip", fmt.Sprint(o.externalClusterIP)},
		{"lb-retry-backoff-min", "10ms"}, // quick retries, as the tests set
		{"lb-retry-backoff-max", "10ms"},
	}
	for _, kv := range settings {
		if err := a.flags.Set(kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("--%s: %w", kv[0], err)
		}
	}
	return a, a.flags.Parse(o.ciliumFlags)
}

// setNode describes the local node as its Node object (and the flags) do, and its NodePort
// addresses, before start: what `test/set-node-labels`, `test/set-node-ip` and
// `db/insert node-addresses` do in the scripts.
func (a *agent) setNode(o options, objs []object) error {
	labels, ips := nodeFacts(objs, o.nodeName)
	for _, kv := range o.labels {
		k, v, _ := strings.Cut(kv, "=")
		labels[k] = v
	}
	if o.nodeIP != "" {
		ips = []nodeTypes.Address{{Type: addressing.NodeInternalIP, IP: net.ParseIP(o.nodeIP)}}
	}
	a.lns.Update(func(n *node.LocalNode) { n.Labels, n.IPAddresses = labels, ips })
	txn := a.db.WriteTxn(a.addrs)
	defer txn.Abort()
	for _, list := range o.nodeAddrs {
		for _, s := range strings.Split(list, ",") {
			addr, err := netip.ParseAddr(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("--node-address: %w", err)
			}
			a.addrs.Insert(txn, tables.NodeAddress{Addr: addr, NodePort: true, Primary: true, DeviceName: "eth0"})
		}
	}
	txn.Commit()
	return nil
}

func run(o options) error {
	objs, err := readObjects(o.objects)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "cilium-ref-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	// Cilium's switch for "privileged test": its skip-LB maps are then created unpinned, so
	// this run pins nothing in any bpffs (its other maps are unpinned under TestConfig).
	os.Setenv("PRIVILEGED_TESTS", "true")
	// The fake clientset decides what the API "supports" from this global, as in Cilium's tests.
	check(version.Force(k8sTestutils.DefaultVersion))
	nodeTypes.SetName(o.nodeName)

	fake := o.mapsKind == "fake" || (o.mapsKind == "auto" && os.Getuid() != 0)
	if o.mapsKind == "real" && os.Getuid() != 0 {
		return errors.New("--maps=real needs root (run it through run.sh)")
	}
	if os.Getuid() == 0 {
		// as root Cilium's cells create BPF objects even with fake LB maps
		if err := sandboxed(); err != nil {
			return fmt.Errorf("as root only inside run.sh's private namespaces: %w", err)
		}
	}
	a, err := newAgent(o, fake)
	if err != nil {
		return err
	}
	before, bpfErr := bpfIDs()
	cmds, err := a.h.ScriptCommands(a.log) // populates the hive: newAgent's Invoke runs
	if err != nil {
		return err
	}
	maps.Insert(cmds, maps.All(k8sClient.FakeClientCommands(a.client)))
	maps.Insert(cmds, maps.All(script.DefaultCmds()))
	wr := a.w

	if err := a.setNode(o, objs); err != nil {
		return err
	}

	// One file per object for `k8s/add`. EndpointSlices (and Pods without a hostPort) go in
	// before start, the reflectors' initial sync; Services and hostPort Pods after, one at a
	// time in input order, each settled before the next: Cilium numbers services and backends
	// in the order it reconciles them, and an initial sync interleaves its streams at random.
	var early, late []string
	var names [][]loadbalancer.ServiceName // what each late object becomes in the services table
	hcLB := flagOn(a.flags, "kube-proxy-replacement") && flagOn(a.flags, "enable-health-check-nodeport") &&
		flagOn(a.flags, "enable-health-check-loadbalancer-ip")
	skipped := map[string]int{}
	for i, ob := range objs {
		if !fed[ob.kind] {
			skipped[ob.kind]++
			continue
		}
		f := fmt.Sprintf("%03d-%s.json", i, strings.ToLower(ob.kind))
		b, _ := json.Marshal(ob.raw)
		if err := os.WriteFile(filepath.Join(work, f), b, 0o644); err != nil {
			return err
		}
		switch {
		case ob.kind == "Service":
			n := []loadbalancer.ServiceName{loadbalancer.NewServiceName(ob.namespace, ob.name)}
			if hcLB && healthCheckedLB(ob.raw) {
				// the health server then adds a <name>:healthserver service on the LB address
				n = append(n, loadbalancer.NewServiceName(ob.namespace, ob.name+":healthserver"))
			}
			late, names = append(late, f), append(names, n)
		case ob.kind == "Pod" && hasHostPort(ob.raw):
			// its synthetic services are named <ns>/<name>:host-port:<port>:<uid>
			late, names = append(late, f), append(names, []loadbalancer.ServiceName{loadbalancer.NewServiceName(ob.namespace, ob.name+":host-port:")})
		default:
			early = append(early, f)
		}
	}
	if o.verbose {
		fmt.Fprintf(os.Stderr, "fed %d objects before start, %d after, ignored %v\n", len(early), len(late), skipped)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := script.NewState(ctx, work, nil)
	if err != nil {
		return err
	}
	eng := &script.Engine{Cmds: cmds, RetryInterval: 20 * time.Millisecond, MaxRetryInterval: 500 * time.Millisecond}
	exec := func(lines ...string) error {
		var buf bytes.Buffer
		err := eng.Execute(st, "cilium-ref", bufio.NewReader(strings.NewReader(strings.Join(lines, "\n")+"\n")), &buf)
		if o.verbose || err != nil {
			os.Stderr.Write(buf.Bytes())
		}
		return err
	}
	var script []string
	if len(early) > 0 {
		script = append(script, "k8s/add "+strings.Join(early, " "))
	}
	if err := exec(append(script, "hive start")...); err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			a.h.Stop(a.log, context.Background())
		}
	}()
	// Initial sync seen and every frontend reconciled at least once (the agent's own gate).
	if err := a.initWait(ctx); err != nil {
		return fmt.Errorf("waiting for the load-balancer to settle: %w", err)
	}
	for i, f := range late {
		if err := exec("k8s/add " + f); err != nil {
			return err
		}
		// a Service Cilium skips (headless, not for this node) never shows up: give it a moment
		for _, n := range names[i] {
			waitService(ctx, wr, n, time.Second)
			if err := settle(ctx, wr); err != nil {
				return err
			}
		}
	}
	if len(o.unhealthy) > 0 {
		if err := markUnhealthy(wr, o.unhealthy); err != nil {
			return err
		}
		if err := a.initWait(ctx); err != nil {
			return err
		}
	}
	if err := settle(ctx, wr); err != nil {
		return err
	}
	// Every frontends column but Since (the status's age), which would make runs differ.
	feCols := slices.DeleteFunc((&loadbalancer.Frontend{}).TableHeader(), func(c string) bool { return c == "Since" })
	if err := exec("db/show -o frontends.txt --columns="+strings.Join(feCols, ",")+" frontends",
		"db/show -o backends.txt backends"); err != nil {
		return err
	}
	sections := []section{
		{"frontends.txt", "frontends (db/show frontends, without Since)"},
		{"backends.txt", "backends (db/show backends)"},
	}
	if len(o.faults) > 0 {
		// the tables keep saying Done: only the maps are broken, as on a node whose maps were changed under the agent
		done, err := breakMaps(a.maps, o.faults)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, "faults.txt"), []byte(strings.Join(done, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		sections = append(sections, section{"faults.txt", "faults made in the BPF maps (--fault)"})
	}
	list, err := bpfLBList(a.maps)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "bpf-lb-list.txt"), list, 0o644); err != nil {
		return err
	}
	if err := exec("lb/maps-dump maps.txt"); err != nil {
		return err
	}
	sections = append(sections, section{"maps.txt", "maps (lb/maps-dump)"},
		section{"bpf-lb-list.txt", "bpf lb list (cilium-dbg bpf lb list, from the maps)"})
	during, _ := bpfIDs()
	if err := exec("hive stop"); err != nil {
		return err
	}
	stopped = true

	for _, s := range sections {
		b, err := os.ReadFile(filepath.Join(work, s.file))
		if err != nil {
			return err
		}
		if o.out != "" {
			if err := os.MkdirAll(o.out, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(o.out, s.file), b, 0o644); err != nil {
				return err
			}
			continue
		}
		fmt.Printf("=== %s ===\n%s", s.title, b)
	}

	// What this run loaded into the kernel: the objects alive during the run that were not
	// there before it. Those the hive does not close at stop (the socket-termination iterator
	// and the maps it holds) go when the process exits; run.sh checks that afterwards.
	kind := "fake (in-memory, Cilium's test LBMaps)"
	if !fake {
		kind = "real (unpinned kernel BPF maps)"
	}
	if bpfErr != nil {
		fmt.Fprintf(os.Stderr, "cilium-ref: maps %s; BPF object IDs not readable: %v\n", kind, bpfErr)
		return nil
	}
	var ours, held []string
	after, _ := bpfIDs()
	for _, id := range during {
		if !slices.Contains(before, id) {
			ours = append(ours, id)
			if slices.Contains(after, id) {
				held = append(held, id)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "cilium-ref: maps %s; %d BPF objects created (%s); after hive stop %d still held until exit\n",
		kind, len(ours), byName(ours), len(held))
	return nil
}

// section is one file cilium-ref writes (or prints under its title).
type section struct{ file, title string }

// waitService waits until a service whose name starts with `name` is in the services table,
// or for `limit`.
func waitService(ctx context.Context, w *writer.Writer, name loadbalancer.ServiceName, limit time.Duration) {
	deadline := time.After(limit)
	for {
		svcs, watch := w.Services().PrefixWatch(w.ReadTxn(), loadbalancer.ServiceByName(name))
		for range svcs {
			return
		}
		select {
		case <-watch:
		case <-deadline:
			return
		case <-ctx.Done():
			return
		}
	}
}

// settle waits until every frontend is Done (not Pending or Error), so the dump is final.
func settle(ctx context.Context, w *writer.Writer) error {
	for {
		fes, watch := w.Frontends().AllWatch(w.ReadTxn())
		var bad []string
		for fe := range fes {
			if fe.Status.Kind != reconciler.StatusKindDone {
				bad = append(bad, fe.Address.String()+" "+fe.Status.Kind.String())
			}
		}
		if len(bad) == 0 {
			return nil
		}
		select {
		case <-watch:
		case <-ctx.Done():
			return fmt.Errorf("frontends not reconciled: %s", strings.Join(bad, "; "))
		}
	}
}

// markUnhealthy applies a health checker's verdict, as `test/update-backend-health` does.
func markUnhealthy(w *writer.Writer, specs []string) error {
	txn := w.WriteTxn()
	for _, s := range specs {
		svc, addr, ok := strings.Cut(s, "=")
		ns, name, ok2 := strings.Cut(svc, "/")
		var be loadbalancer.L3n4Addr
		if !ok || !ok2 || be.ParseFromString(addr) != nil {
			txn.Abort()
			return fmt.Errorf("--unhealthy %q: want ns/name=ADDR:PORT/PROTO", s)
		}
		if _, err := w.UpdateBackendHealth(txn, loadbalancer.NewServiceName(ns, name), be, false); err != nil {
			txn.Abort()
			return err
		}
	}
	txn.Commit()
	return nil
}

// byName summarises "map:12(cilium_lb4_servi)" IDs as "map cilium_lb4_servi", counted.
func byName(ids []string) string {
	n := map[string]int{}
	for _, id := range ids {
		kind, rest, _ := strings.Cut(id, ":")
		_, name, _ := strings.Cut(rest, "(")
		n[kind+" "+strings.TrimSuffix(name, ")")]++
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		out = append(out, fmt.Sprintf("%s x%d", k, n[k]))
	}
	return strings.Join(out, ", ")
}
