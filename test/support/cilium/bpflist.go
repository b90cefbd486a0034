package main

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cilium/cilium/pkg/byteorder"
	"github.com/cilium/cilium/pkg/loadbalancer"
	lbmaps "github.com/cilium/cilium/pkg/loadbalancer/maps"
	"github.com/cilium/cilium/pkg/u8proto"
)

// bpfLBList prints the service and backend maps as `cilium-dbg bpf lb list` does: the entries
// of dumpSVC (cilium-dbg/cmd/bpf_lb_list.go, v1.20.2) laid out by its TablePrinter
// (cilium-dbg/cmd/helpers.go). cilium-dbg opens the maps by their pins; these are unpinned, so
// they are read through the LBMaps the agent writes them with. Rows are sorted by frontend and
// slot where cilium-dbg prints Go's map order, so that recordings compare.
func bpfLBList(m lbmaps.LBMaps) ([]byte, error) {
	backends := map[loadbalancer.BackendID]lbmaps.BackendValue{}
	err := m.DumpBackend(func(k lbmaps.BackendKey, v lbmaps.BackendValue) {
		backends[k.GetID()] = v.ToHost()
	})
	if err != nil {
		return nil, fmt.Errorf("dumping the backend maps: %w", err)
	}
	type row struct {
		frontend string
		slot     int
		svc      string // the first column: the frontend and its slot
		entry    string
	}
	var rows []row
	err = m.DumpService(func(key lbmaps.ServiceKey, value lbmaps.ServiceValue) {
		svc, frontend := key.String(), frontendOf(key)
		key, value = key.ToHost(), value.ToHost()
		slot := key.GetBackendSlot()
		revNAT := value.GetRevNat()
		flags := loadbalancer.ServiceFlags(value.GetFlags())
		var entry string
		if slot == 0 {
			ip := "0.0.0.0"
			if key.IsIPv6() {
				ip = "[::]"
			}
			extra := ""
			if flags.IsL7LB() {
				extra = fmt.Sprintf("(L7LB Proxy Port: %d)", byteorder.NetworkToHost16(uint16(value.GetBackendID())))
			}
			entry = fmt.Sprintf("%s:%d (%d) (%d) [%s] %s", ip, 0, revNAT, slot, flags, extra)
		} else if be, found := backends[value.GetBackendID()]; !found {
			entry = fmt.Sprintf("backend %d not found", value.GetBackendID())
		} else {
			format := "%s:%d/%s (%d) (%d)"
			if key.IsIPv6() {
				format = "[%s]:%d/%s (%d) (%d)"
			}
			entry = fmt.Sprintf(format, be.GetAddress(), be.GetPort(), u8proto.U8proto(be.GetProtocol()).String(), revNAT, slot)
		}
		rows = append(rows, row{frontend, slot, svc, entry})
	})
	if err != nil {
		return nil, fmt.Errorf("dumping the service maps: %w", err)
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.frontend, b.frontend), cmp.Compare(a.slot, b.slot))
	})
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 5, 0, 3, ' ', 0)
	fmt.Fprintf(w, "%s\t%s\n", "SERVICE ADDRESS", "BACKEND ADDRESS (REVNAT_ID) (SLOT)")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t\n", r.svc, r.entry)
	}
	err = w.Flush()
	return buf.Bytes(), err
}

// frontendOf is a service map key (in network order, as the map holds it) spelled as
// ServiceKey.String() spells it without its slot: "10.96.0.10:53/UDP", "[fd00::1]:80/TCP/i".
func frontendOf(k lbmaps.ServiceKey) string {
	s := k.String()
	return s[:strings.LastIndex(s, " (")]
}
