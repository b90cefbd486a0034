package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/cilium/pkg/loadbalancer"
	lbmaps "github.com/cilium/cilium/pkg/loadbalancer/maps"
	"github.com/cilium/cilium/pkg/u8proto"
)

// faultKinds are the breakages --fault makes in the maps after Cilium reconciled, as a broken
// node's maps would show them while the agent's tables still say Done.
var faultKinds = map[string]func(m lbmaps.LBMaps, d mapsDump, arg string) (string, error){
	// FRONTEND's last backend slot gone: its service entry still counts it
	"slot": func(m lbmaps.LBMaps, d mapsDump, fe string) (string, error) {
		slots := d.slots(fe)
		if len(slots) == 0 {
			return "", fmt.Errorf("no backend slot of %s in the service map", fe)
		}
		last := slots[len(slots)-1]
		return fmt.Sprintf("deleted %s slot %d (backend ID %d)", fe, last.key.GetBackendSlot(), last.value.GetBackendID()),
			m.DeleteService(last.key)
	},
	// the backend entry ADDR:PORT/PROTO gone: every slot naming its ID points at nothing
	"backend": func(m lbmaps.LBMaps, d mapsDump, addr string) (string, error) {
		for _, b := range d.backends {
			if backendText(b.value) == addr {
				return fmt.Sprintf("deleted backend ID %d (%s)", b.key.GetID(), addr), m.DeleteBackend(b.key)
			}
		}
		return "", fmt.Errorf("no backend %s in the backend map", addr)
	},
	// FRONTEND's first slot points at a backend ID the backend map does not hold
	"dangling": func(m lbmaps.LBMaps, d mapsDump, fe string) (string, error) {
		slots := d.slots(fe)
		if len(slots) == 0 {
			return "", fmt.Errorf("no backend slot of %s in the service map", fe)
		}
		var unused loadbalancer.BackendID = 1000
		for _, b := range d.backends {
			unused = max(unused, b.key.GetID()+1000)
		}
		s := slots[0]
		was := s.value.GetBackendID()
		s.value.SetBackendID(unused)
		return fmt.Sprintf("pointed %s slot %d at backend ID %d (was %d), which does not exist", fe, s.key.GetBackendSlot(), unused, was),
			m.UpdateService(s.key, s.value)
	},
	// every service map entry of FRONTEND gone, its own and its slots'
	"frontend": func(m lbmaps.LBMaps, d mapsDump, fe string) (string, error) {
		n := 0
		for _, s := range d.services {
			if frontendOf(s.key) == fe {
				if err := m.DeleteService(s.key); err != nil {
					return "", err
				}
				n++
			}
		}
		if n == 0 {
			return "", fmt.Errorf("no entry of %s in the service map", fe)
		}
		return fmt.Sprintf("deleted %s from the service map (%d entries)", fe, n), nil
	},
}

type serviceEntry struct {
	key   lbmaps.ServiceKey
	value lbmaps.ServiceValue
}

type backendEntry struct {
	key   lbmaps.BackendKey
	value lbmaps.BackendValue
}

// mapsDump is the service and backend maps as read, in network order as the maps hold them.
type mapsDump struct {
	services []serviceEntry
	backends []backendEntry
}

func dumpMaps(m lbmaps.LBMaps) (d mapsDump, err error) {
	err = m.DumpService(func(k lbmaps.ServiceKey, v lbmaps.ServiceValue) {
		d.services = append(d.services, serviceEntry{k, v})
	})
	if err == nil {
		err = m.DumpBackend(func(k lbmaps.BackendKey, v lbmaps.BackendValue) {
			d.backends = append(d.backends, backendEntry{k, v})
		})
	}
	return d, err
}

// slots are the backend slots (1..count) of frontend fe, in slot order.
func (d mapsDump) slots(fe string) []serviceEntry {
	var out []serviceEntry
	for _, s := range d.services {
		if s.key.GetBackendSlot() > 0 && frontendOf(s.key) == fe {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b serviceEntry) int { return a.key.GetBackendSlot() - b.key.GetBackendSlot() })
	return out
}

// backendText is a backend as `bpf lb list` prints it: "10.244.1.3:80/TCP".
func backendText(v lbmaps.BackendValue) string {
	h := v.ToHost()
	return fmt.Sprintf("%s:%d/%s", h.GetAddress(), h.GetPort(), u8proto.U8proto(h.GetProtocol()).String())
}

// breakMaps makes each --fault KIND=WHAT in the maps, in order, and says what it did.
func breakMaps(m lbmaps.LBMaps, specs []string) ([]string, error) {
	var done []string
	for _, spec := range specs {
		kind, arg, _ := strings.Cut(spec, "=")
		f, ok := faultKinds[kind]
		if !ok || arg == "" {
			return nil, fmt.Errorf("--fault %q: want slot=FRONTEND, backend=ADDR:PORT/PROTO, dangling=FRONTEND or frontend=FRONTEND", spec)
		}
		d, err := dumpMaps(m) // again for each: an earlier fault may have changed what is there
		if err != nil {
			return nil, err
		}
		what, err := f(m, d, arg)
		if err != nil {
			return nil, fmt.Errorf("--fault %s: %w", spec, err)
		}
		done = append(done, what)
	}
	return done, nil
}
